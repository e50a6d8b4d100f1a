"""``llm-sidecar probe``: red-team probes as events, so robustness and leakage are measured live.

Probing is a producer, not a second pipeline: :mod:`.attacks` is the attack library (data with
a schema, like rules), :mod:`.schedule` decides which vector goes when within the budget, and
:mod:`.runner` sends each vector to the target through the shared
:class:`~sidecar.llm.client.ChatClient` and writes the answer as an event where every other
event goes. The windows that already exist compute robustness and leakage from them.
"""
