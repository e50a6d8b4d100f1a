"""Typed configuration of the sampled LLM judge.

:class:`JudgeSettings` is one frozen section of the process Settings (``judge:``). The endpoint,
key and capacity come from Settings; what to judge and how often (sample rates, metrics,
triggers, budgets) may also be written beside the rules, in a rule file's ``judge:`` mapping,
and applied with :meth:`JudgeSettings.merge` on every rule (re)load.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..errors import ConfigError
from ..llm.endpoint import EndpointSettings

__all__ = [
    "MERGEABLE",
    "METRICS",
    "JudgeSettings",
    "MetricName",
    "TriggerSettings",
]

MetricName = Literal[
    "answer_correctness",
    "answer_relevance",
    "answer_similarity",
    "bias",
    "toxicity",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "hallucination",
    "summary_coherence",
    "retrieval_precision",
    "average_precision",
    "reciprocal_rank",
    "hit_rate",
    "ndcg",
    "refusal",
    "attack_attempt",
    "rgb_negative_rejection",
    "rgb_error_detection",
    "rgb_error_correction",
]

METRICS: tuple[MetricName, ...] = get_args(MetricName)
"""Every metric the judge can score; also the bounded set of ``metric`` label values."""

MERGEABLE = frozenset(
    {
        "sample_rate",
        "route_rates",
        "metrics",
        "triggers",
        "min_samples_per_window",
        "window_s",
        "max_requests_per_s",
        "max_tokens_per_minute",
    }
)
"""Keys a rule file's ``judge:`` mapping may set; endpoint, key and capacity stay in Settings."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TriggerSettings(_Section):
    """Events judged whatever the sample rate says (weight 1).

    A trigger fires when a rule failed whose check is listed in ``failed_checks`` (the rule id
    to check name mapping comes from the loaded rule set) or whose id matches one of the
    shell-style patterns in ``failed_rules``, when the event is a red-team probe and
    ``attack`` is true, when an ``attack_attempt`` rule flagged the event and
    ``attack_attempt`` is true (an organic attack: the judge says whether it was one and
    whether the answer complied), or, with ``uncertain``, when a check said it could not tell (its
    detail starts with ``uncertain:``, as ``jailbreak_success`` does near its threshold).
    """

    failed_checks: list[str] = Field(default_factory=lambda: ["refusal", "prompt_leakage"])
    failed_rules: list[str] = Field(default_factory=list)
    attack: bool = True
    attack_attempt: bool = True
    uncertain: bool = True

    @field_validator("failed_checks")
    @classmethod
    def _known_checks(cls, v: list[str]) -> list[str]:
        from ..checks import registered

        known = registered()
        unknown = [name for name in v if name not in known]
        if unknown:
            raise ValueError(
                f"no check is named {', '.join(map(repr, unknown))} (a trigger on it would "
                "never fire); checks: " + ", ".join(sorted(known))
            )
        return v


class JudgeSettings(EndpointSettings):
    """The LLM judge: endpoint (:class:`EndpointSettings`), capacity, sampling and budgets."""

    enabled: bool = False

    # -- capacity --------------------------------------------------------------------------
    queue_size: int = Field(1000, ge=1)
    drain_timeout_s: float = Field(10.0, ge=0)
    """Default deadline of ``stop()`` for finishing queued judgements."""
    cache_size: int = Field(10_000, ge=0)
    cache_ttl_s: float = Field(3600.0, gt=0)

    # -- scale-out mode --------------------------------------------------------------------
    topic: str | None = None
    """If set, the check path publishes sampled events to this Kafka topic instead of judging
    them itself, and ``llm-sidecar judge`` workers consume it (committing after judging)."""
    group_id: str | None = None
    """Consumer group of the judge workers; default: the check path's group + ``-judge``."""
    workers: int = Field(1, ge=1, le=1000)
    """Judge workers sharing ``max_requests_per_s`` and ``max_tokens_per_minute``: each worker
    enforces its share, the budget divided by ``workers`` (the chart sets it to the worker
    replica count, or to KEDA's maximum when workers autoscale)."""
    batch_timeout_s: float = Field(60.0, gt=0, lt=300)
    """A worker's whole batch: events not judged by then are queued again on the judge topic
    and the batch is committed. Below the consumer's max poll interval (aiokafka's 300 s)."""
    max_attempts: int = Field(3, ge=1, le=100)
    """Batches an event may time out in before a worker gives up on it (counted)."""

    # -- sampling --------------------------------------------------------------------------
    sample_rate: float = Field(0.01, ge=0.0, le=1.0)
    route_rates: dict[str, float] = Field(default_factory=dict)
    """Per-route sample rates; routes not listed use ``sample_rate``."""
    sample_salt: str = ""
    """Mixed into the event-id hash; every replica must use the same value to agree."""
    metrics: list[MetricName] = Field(default_factory=lambda: list(METRICS), min_length=1)
    """The judged metrics; an event is scored on those its fields allow (``[]`` is an error:
    to judge nothing, leave ``enabled`` off)."""
    triggers: TriggerSettings = TriggerSettings()
    min_samples_per_window: int = Field(0, ge=0)
    window_s: float = Field(60.0, gt=0)
    max_requests_per_s: float | None = Field(None, gt=0)
    """Judge HTTP requests per second (requests are paced; admission stops in deficit)."""
    max_tokens_per_minute: int | None = Field(None, gt=0)
    """Prompt plus completion tokens in any sliding minute; admission stops when spent."""
    min_rate_factor: float = Field(0.01, gt=0.0, le=1.0)
    """Floor of the load-shedding multiplier applied to every sample rate."""
    recover_s: float = Field(10.0, gt=0)
    """Quiet time after which a lowered sample rate is doubled back towards the configured one."""

    @model_validator(mode="after")
    def _check(self) -> JudgeSettings:
        for route, rate in self.route_rates.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"route_rates[{route!r}] must be between 0 and 1, got {rate}")
        return self

    def rate_for(self, route: str | None) -> float:
        if route is not None:
            rate = self.route_rates.get(route)
            if rate is not None:
                return rate
        return self.sample_rate

    def worker_share(self, workers: int | None = None) -> JudgeSettings:
        """These settings with the budgets divided among ``workers`` (default: the scale-out
        ``workers`` setting): one worker's share."""
        n = self.workers if workers is None else workers
        if n == 1:
            return self
        tokens = self.max_tokens_per_minute
        requests = self.max_requests_per_s
        return self.model_copy(
            update={
                "max_tokens_per_minute": None if tokens is None else max(1, tokens // n),
                "max_requests_per_s": None if requests is None else requests / n,
            }
        )

    def merge(self, overrides: Mapping[str, Any]) -> JudgeSettings:
        """These settings with a rule file's ``judge:`` mapping applied on top.

        Only the keys in :data:`MERGEABLE` may be overridden; ``triggers`` merges key by key.

        Raises:
            ConfigError: an unknown key or an invalid value, named.
        """
        if not overrides:
            return self
        unknown = sorted(set(overrides) - MERGEABLE)
        if unknown:
            raise ConfigError(
                f"judge settings in rule files may set {', '.join(sorted(MERGEABLE))}; "
                f"not {', '.join(unknown)}"
            )
        data = self.model_dump()
        for key, value in overrides.items():
            if key == "triggers" and isinstance(value, Mapping):
                data["triggers"] = {**data["triggers"], **value}
            else:
                data[key] = value
        try:
            return JudgeSettings.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'judge'}: {e['msg']}"
                for e in exc.errors(include_url=False)[:5]
            )
            raise ConfigError(f"invalid judge settings in rule files: {problems}") from None
