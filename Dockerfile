# syntax=docker/dockerfile:1
# llm-sidecar container image.
#
#   docker build -t llm-sidecar:0.1.0 .
#   docker run --rm -p 9464:9464 \
#     -e LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS=kafka:9092 \
#     -v "$PWD/rules:/etc/llm-sidecar/rules:ro" llm-sidecar:0.1.0
#
# Stage 1 builds llm-sidecar and every dependency into wheels; stage 2 installs those wheels
# offline into a clean slim image, so no compiler or build backend reaches the final image.

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# A C compiler for the refusal model's compiled scorer (setup.py); only this stage has it.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md constraints.txt ./
COPY sidecar ./sidecar
# The mqtt and otlp extras, so one image serves both sources and every input format, at the
# versions the tests passed with (constraints.txt).
RUN pip wheel --wheel-dir /wheels -c constraints.txt ".[mqtt,otlp]"

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LLM_SIDECAR_RULES='["/etc/llm-sidecar/rules"]'

RUN groupadd --system --gid 10001 llm-sidecar \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin llm-sidecar

# Only the wheels built above, no index: the versions are the ones resolved in the build stage.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --no-compile /wheels/*.whl

# The default rule pack, so the image runs as it is; mounting a volume (a ConfigMap in
# Kubernetes) over /etc/llm-sidecar/rules replaces it, and edits there are hot-reloaded.
COPY sidecar/data/default.yaml /etc/llm-sidecar/rules/default.yaml
# Fail the build, not the first pod, if the installed package cannot load and check rules.
RUN llm-sidecar validate /etc/llm-sidecar/rules
VOLUME ["/etc/llm-sidecar/rules"]

# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
EXPOSE 9464

# slim has no curl: ask /healthz with the standard library (HTTPError on 503 exits non-zero).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('LLM_SIDECAR_HTTP__PORT', '9464'), timeout=4)"]

# SIGTERM drains in-flight work (limits.drain_timeout_s) and commits offsets before exiting.
STOPSIGNAL SIGTERM
ENTRYPOINT ["llm-sidecar"]
CMD ["run"]
