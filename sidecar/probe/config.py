"""Settings of ``llm-sidecar probe`` (the ``probe:`` section).

The target is an OpenAI-compatible endpoint like the judge's (:class:`EndpointSettings`); the
rest says what to send (the library, the system prompt), how fast (the budget) and where the
events go. Retries are off: a retry is one more request to the target, and the budget counts
requests; a ``Retry-After`` pauses the schedule instead.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from ..llm.endpoint import EndpointSettings

__all__ = ["ProbeSettings"]


class ProbeSettings(EndpointSettings):
    """The probe's target, library, budget and output."""

    enabled: bool = False
    """Only read by the chart (it renders the probe Deployment); the command always runs."""

    # -- what the target sees ---------------------------------------------------------------
    system_prompt_id: str | None = None
    """An id of ``system_prompts``: the service's system prompt, and the events carry the id."""
    system_prompt_file: Path | None = None
    """Or a file holding it; the events then carry the text itself."""
    attacks: list[Path] = Field(default_factory=list)
    """Attack files or directories added to the library."""
    builtin_attacks: bool = True
    """Load the library bundled with llm-sidecar (off: only ``attacks``)."""
    categories: list[str] = Field(
        default_factory=lambda: ["basic", "intermediate", "advanced"], min_length=1
    )
    """Attack categories to probe."""
    canary_prefix: str = Field("LSC", pattern=r"^[A-Za-z][A-Za-z0-9]{1,15}$")
    """Start of the canary planted in each leakage probe's copy of the system prompt."""

    # -- the budget -------------------------------------------------------------------------
    probes_per_hour: float = Field(360.0, gt=0, le=360_000)
    """Requests to the target in any hour, never more; probes start at least
    ``3600 / probes_per_hour`` seconds apart."""
    tokens_per_minute: int | None = Field(None, gt=0)
    """Prompt plus completion tokens in any sliding minute; a probe that could go over (its
    prompt plus ``max_tokens``) is skipped and counted."""
    jitter: float = Field(0.2, ge=0.0, le=1.0)
    """Each gap is lengthened by up to this share of itself, at random (never shortened)."""
    max_tokens: int = Field(512, ge=16)
    json_mode: bool = False
    max_retries: int = Field(0, ge=0, le=0)
    """Always 0: see the module docstring."""
    timeout_s: float = Field(30.0, gt=0)
    deadline_s: float = Field(30.0, gt=0)
    circuit_failures: int = Field(5, ge=1)
    circuit_reset_s: float = Field(60.0, gt=0)

    # -- the events -------------------------------------------------------------------------
    topic: str | None = None
    """Kafka topic the events go to; default the first of ``kafka.topics``."""
    route: str | None = None
    """The ``route`` of the events: the service route the target serves."""
    event_model: str | None = None
    """The ``model`` of the events; default ``model``."""

    @model_validator(mode="after")
    def _check(self) -> ProbeSettings:
        if self.system_prompt_id is not None and self.system_prompt_file is not None:
            raise ValueError("give system_prompt_id or system_prompt_file, not both")
        unknown = sorted(set(self.categories) - {"basic", "intermediate", "advanced"})
        if unknown:
            raise ValueError(
                f"categories: {', '.join(unknown)} (the categories are basic, intermediate, "
                "advanced)"
            )
        return self
