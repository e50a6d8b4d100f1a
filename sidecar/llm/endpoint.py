"""Settings of one OpenAI-compatible chat-completions endpoint.

:class:`EndpointSettings` is what the judge's endpoint and the probe's target have in common;
``JudgeSettings`` and ``ProbeSettings`` extend it with what each does with the model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

__all__ = ["EndpointSettings", "url_problem"]


def url_problem(url: str) -> str | None:
    """What the HTTP client would raise on ``url`` at the first request (a traceback), or
    what would fail every request (no host, a port out of range), or None."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return str(exc)
    if not parsed.host:
        return "no host"
    if parsed.port is not None and not 1 <= parsed.port <= 65_535:
        return f"port {parsed.port} is not from 1 to 65535"
    return None


class EndpointSettings(BaseModel):
    """An OpenAI-compatible chat endpoint: where, who, and how long to wait for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = "http://127.0.0.1:8000/v1"
    """Up to, not including, ``/chat/completions``: ``https://api.openai.com/v1``,
    ``http://localhost:11434/v1`` (Ollama), ``http://localhost:8080/v1`` (llama.cpp),
    or for Azure ``https://NAME.openai.azure.com/openai/deployments/DEPLOYMENT``."""
    model: str = Field("gpt-4o-mini", min_length=1)
    api_key: SecretStr | None = None
    """Whitespace around it (a key file's newline) is dropped: it is never part of a key, and
    kept it makes every request fail as a malformed header. Empty means no key."""
    api_version: str | None = None
    """Azure OpenAI: when set, the key goes in an ``api-key`` header and the version in the
    ``api-version`` query parameter (instead of ``Authorization: Bearer``)."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    json_mode: bool = True
    """Ask for ``response_format: json_object``; turn off for servers that reject it."""
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, ge=16)

    # -- time limits and retries -----------------------------------------------------------
    timeout_s: float = Field(20.0, gt=0)
    """One HTTP attempt, connect to last byte."""
    deadline_s: float = Field(60.0, gt=0)
    """One call, every retry, backoff and repair attempt included."""
    max_retries: int = Field(3, ge=0, le=10)
    backoff_base_s: float = Field(0.5, gt=0)
    backoff_max_s: float = Field(10.0, gt=0)
    circuit_failures: int = Field(5, ge=1)
    """Consecutive failed attempts that open the circuit."""
    circuit_reset_s: float = Field(30.0, gt=0)
    """How long the circuit stays open before one half-open probe is let through."""
    concurrency: int = Field(4, ge=1, le=256)

    # -- cost ------------------------------------------------------------------------------
    price_per_1k_prompt_tokens: float = Field(0.0, ge=0.0)
    price_per_1k_completion_tokens: float = Field(0.0, ge=0.0)

    @field_validator("api_key", mode="after")
    @classmethod
    def _trimmed(cls, v: SecretStr | None) -> SecretStr | None:
        if v is None:
            return None
        key = v.get_secret_value().strip()
        return SecretStr(key) if key else None

    @model_validator(mode="after")
    def _check_endpoint(self) -> EndpointSettings:
        if self.deadline_s < self.timeout_s:
            raise ValueError("deadline_s must be at least timeout_s")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must be an http:// or https:// URL")
        if self.base_url.rstrip("/").endswith("/chat/completions"):
            raise ValueError(
                f"base_url {self.base_url!r} ends in /chat/completions, which llm-sidecar adds "
                "itself: give the URL up to it (for example https://api.openai.com/v1)"
            )
        problem = url_problem(self.base_url)
        if problem is not None:
            raise ValueError(f"base_url {self.base_url!r}: {problem}")
        return self
