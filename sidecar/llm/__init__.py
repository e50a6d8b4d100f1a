"""Calling an OpenAI-compatible chat model: the one package the judge and the probe share.

:mod:`.endpoint` holds the settings every such endpoint has (URL, model, key, time limits,
retries, circuit breaker) and :mod:`.client` the client that applies them: the judge asks it
questions about events, ``llm-sidecar probe`` sends it attack vectors.
"""
