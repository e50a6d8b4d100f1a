"""One frozen Settings for the whole process.

Sources, in priority order: keyword arguments (the CLI), environment variables
(``LLM_SIDECAR_`` prefix, nested with ``__``: ``LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS``), and an
optional YAML file (``--config``). Components receive the typed section they need and never
read the environment themselves. Secrets are ``SecretStr`` so they never reach logs or reprs.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import ssl
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Union, cast, get_args, get_origin

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    YamlConfigSettingsSource,
)

from .errors import ConfigError
from .formats.config import InputSettings
from .judge.config import JudgeSettings
from .probe.config import ProbeSettings

if TYPE_CHECKING:
    from .rules import RuleSet

__all__ = [
    "ApiSettings",
    "DetectorSettings",
    "ExportSettings",
    "HttpSettings",
    "InputSettings",
    "JoinSettings",
    "JudgeSettings",
    "KafkaSettings",
    "LabelSettings",
    "LimitSettings",
    "MqttSettings",
    "RobustnessCorrectionSettings",
    "Settings",
    "WindowSettings",
    "load_ruleset",
    "load_settings",
    "rule_paths",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


KAFKA_PORT = 9092
"""The port of a bootstrap server given without one, as the Kafka client assumes."""


def kafka_server(entry: str) -> tuple[str, int]:
    """``host``, ``host:port``, ``[ipv6]``, ``[ipv6]:port`` or a bare IPv6 address as (host,
    port), read as the Kafka client reads them; ValueError says what is wrong."""
    entry = entry.strip()
    if not entry:
        raise ValueError("an empty server name")
    if "://" in entry:
        raise ValueError(f"{entry!r}: give host:port, without a scheme")
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r}: an IPv6 address is written [address]:port")
        port = rest[1:] if rest else None
    elif entry.count(":") > 1:
        try:
            ipaddress.IPv6Address(entry)
        except ValueError:
            raise ValueError(f"{entry!r}: an IPv6 address is written [address]:port") from None
        host, port = entry, None
    else:
        host, colon, after = entry.partition(":")
        port = after if colon else None
    if "/" in host:
        raise ValueError(f"{entry!r}: give host:port, without a path")
    if not host:
        raise ValueError(f"{entry!r}: no host")
    if port is None:
        return host, KAFKA_PORT
    if not port.isdigit() or not 1 <= int(port) <= 65_535:
        raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535")
    return host, int(port)


def _no_password() -> str:
    return ""


def kafka_ssl_context(cfg: KafkaSettings) -> ssl.SSLContext:
    """The TLS context of the Kafka clients, from ``cfg``'s files."""
    context = ssl.create_default_context(
        ssl.Purpose.SERVER_AUTH, cafile=str(cfg.ssl_cafile) if cfg.ssl_cafile else None
    )
    if cfg.ssl_certfile is not None:
        context.load_cert_chain(
            str(cfg.ssl_certfile),
            str(cfg.ssl_keyfile) if cfg.ssl_keyfile else None,
            # Without one, OpenSSL would prompt on the terminal for an encrypted key's.
            cfg.ssl_password.get_secret_value() if cfg.ssl_password else _no_password,
        )
    context.check_hostname = cfg.ssl_check_hostname
    return context


class KafkaSettings(_Section):
    """The Kafka source and the topics llm-sidecar writes. SASL/SSL keys use aiokafka's names."""

    bootstrap_servers: str = "localhost:9092"
    topics: list[str] = Field(default_factory=lambda: ["llm-events"], min_length=1)
    group_id: str = "llm-sidecar"
    group_instance_id: str | None = Field(None, min_length=1, max_length=249)
    """Static group membership: a restarted member with the same id takes its partitions back
    at once instead of waiting out its session. Unique per replica (the chart uses the pod
    name); None is dynamic membership."""
    client_id: str = "llm-sidecar"
    dlq_topic: str | None = "llm-sidecar-dlq"
    """Where malformed records go; None disables the DLQ (they are still counted and logged)."""
    verdict_topic: str | None = None
    """If set, every verdict is published here, keyed by event id."""
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    max_batch: int = Field(500, ge=1, le=100_000)
    """Most records taken by one ``getmany``; also bounds duplicates after a crash."""
    fetch_timeout_ms: int = Field(500, ge=10)
    fetch_max_wait_ms: int = Field(500, ge=1, le=60_000)
    """How long the broker may hold a fetch for data (aiokafka's ``fetch_max_wait_ms``). Kafka
    answers as soon as a record is there; some compatible brokers (the embedded one) hold every
    fetch this long, which then bounds the latency from record to verdict."""
    isolation_level: Literal["read_committed", "read_uncommitted"] = "read_committed"
    """``read_committed`` never reads records of aborted transactions (an exactly-once
    producer that failed and retried); ``read_uncommitted`` reads them too, so the scores would
    count events that never happened upstream."""
    compression_type: Literal["gzip", "snappy", "lz4", "zstd"] | None = None
    """How the verdict and dead-letter producers compress their batches; None sends them
    uncompressed. Reading takes every codec whatever this says."""
    on_undecodable: Literal["pause", "skip"] = "pause"
    """A record batch that cannot be read (an unknown codec, a corrupt batch): ``pause`` stops
    reading that partition and says so in the log, a metric and ``/readyz`` until the process
    restarts (nothing is lost; the other partitions go on); ``skip`` goes past the batch and
    logs the offsets it skipped."""
    session_timeout_ms: int = Field(10_000, ge=1_000)
    heartbeat_interval_ms: int = Field(3_000, ge=100)
    rebalance_timeout_ms: int | None = None
    request_timeout_ms: int = Field(30_000, ge=1_000)
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: SecretStr | None = None
    ssl_cafile: Path | None = None
    ssl_certfile: Path | None = None
    ssl_keyfile: Path | None = None
    ssl_password: SecretStr | None = None
    ssl_check_hostname: bool = True

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers(cls, value: str) -> str:
        # The Kafka client raises a bare int() error (a traceback) on a port that is not a
        # number, and an empty list would be waited for as if the cluster were down.
        if not value.strip():
            raise ValueError("give at least one host:port")
        for entry in value.split(","):
            kafka_server(entry)
        return value

    @model_validator(mode="after")
    def _tls_loads(self) -> KafkaSettings:
        # What the client would raise at the first connection (a traceback): a missing file,
        # one that is not PEM, a key that does not match its certificate, a wrong password.
        if not self.security_protocol.endswith("SSL"):
            return self
        files = {
            name: path
            for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile")
            if (path := getattr(self, name)) is not None
        }
        for name, path in files.items():
            if not path.is_file():
                raise ValueError(
                    f"{name} {path}: {'a directory' if path.is_dir() else 'no such file'}"
                )
        try:
            kafka_ssl_context(self)
        except (ssl.SSLError, OSError) as exc:
            named = ", ".join(f"{name} {path}" for name, path in files.items())
            raise ValueError(
                f"the TLS files do not load ({named or 'system CAs'}): {exc.strerror or exc}"
            ) from None
        return self

    @model_validator(mode="after")
    def _joins_can_finish(self) -> KafkaSettings:
        # The broker holds a join request for up to the rebalance timeout (aiokafka's default:
        # the session timeout); a shorter request timeout times every join out, and the
        # consumer then retries for ever without a word and without consuming.
        wait = self.rebalance_timeout_ms or self.session_timeout_ms
        if self.request_timeout_ms <= wait:
            which = "rebalance_timeout_ms" if self.rebalance_timeout_ms else "session_timeout_ms"
            raise ValueError(
                f"request_timeout_ms ({self.request_timeout_ms}) must be above {which} "
                f"({wait}): a request to join the group may wait that long, so every join "
                "would time out and nothing would be consumed"
            )
        return self

    @model_validator(mode="after")
    def _sasl_needs_credentials(self) -> KafkaSettings:
        if self.security_protocol.startswith("SASL") and not (
            self.sasl_plain_username and self.sasl_plain_password
        ):
            raise ValueError(
                f"security_protocol {self.security_protocol} needs sasl_plain_username "
                "and sasl_plain_password"
            )
        return self


def mqtt_filter_problem(topic: str) -> str | None:
    """What makes ``topic`` an invalid MQTT topic filter (MQTT 3.1.1 and 5, section 4.7), or
    None: it is not empty and at most 65,535 bytes of UTF-8 without NUL; ``+`` stands alone
    in its level; ``#`` stands alone in the last level."""
    if not topic:
        return "it is empty"
    if "\x00" in topic:
        return "it holds a NUL character"
    if len(topic.encode("utf-8", "surrogatepass")) > 65_535:
        return "it is longer than 65,535 bytes"
    levels = topic.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            return "'#' must be a whole level, and the last one ('a/#')"
        if "+" in level and level != "+":
            return "'+' must be a whole level ('a/+/b')"
    return None


class MqttSettings(_Section):
    """The MQTT source (``source: mqtt``)."""

    host: str = Field("127.0.0.1", min_length=1)
    port: int = Field(1883, ge=1, le=65535)
    topics: list[str] = Field(default_factory=lambda: ["llm/events/#"], min_length=1)
    client_id: str = Field("llm-sidecar", min_length=1)
    """Names the persistent session, so it cannot be empty (a broker would pick one of its
    own per connection and the session would be lost)."""
    username: str | None = None
    password: SecretStr | None = None
    tls: bool = False
    max_batch: int = Field(200, ge=1, le=100_000)
    batch_timeout_ms: int = Field(200, ge=1)
    queue_size: int = Field(10_000, ge=1)

    @field_validator("host")
    @classmethod
    def _host_name(cls, value: str) -> str:
        # A name that cannot be a host (an empty label, one over 63 characters) would
        # otherwise fail inside the MQTT client at every connection attempt.
        if "://" in value:
            raise ValueError(f"{value!r}: give the host alone, without a scheme (mqtt.tls: true)")
        if ":" in value:
            try:
                ipaddress.IPv6Address(value)
            except ValueError:
                raise ValueError(f"{value!r}: give the host alone, the port as mqtt.port") from None
            return value
        try:
            value.encode("idna")
        except UnicodeError:
            raise ValueError(f"{value!r} is not a host name") from None
        return value

    @field_validator("topics")
    @classmethod
    def _topic_filters(cls, value: list[str]) -> list[str]:
        # The MQTT client would raise these at subscribe time, as a traceback.
        for topic in value:
            problem = mqtt_filter_problem(topic)
            if problem is not None:
                raise ValueError(f"{topic!r} is not an MQTT topic filter: {problem}")
        return value


class HttpSettings(_Section):
    """The HTTP endpoint: /metrics, /healthz, /readyz."""

    host: str = "0.0.0.0"
    port: int = Field(9464, ge=0, le=65535)
    """0 picks a free port (tests)."""


class ApiSettings(_Section):
    """``POST /v1/check``: synchronous checks for gateways."""

    enabled: bool = True
    token: SecretStr | None = None
    """If set, requests need ``Authorization: Bearer <token>``. Whitespace around it (a
    token file's newline) is dropped; an empty token is an error, not "no authentication"."""

    @field_validator("token", mode="after")
    @classmethod
    def _usable(cls, v: SecretStr | None) -> SecretStr | None:
        if v is None:
            return None
        token = v.get_secret_value().strip()
        if not token:
            raise ValueError(
                "is empty (an unset variable, or an empty secret?): remove the setting to "
                "serve the API without authentication"
            )
        return SecretStr(token)

    max_body_bytes: int = Field(1_048_576, ge=1024)
    max_events: int = Field(100, ge=1)
    concurrency: int = Field(1, ge=1, le=256)
    """Batches of requests checked at once, each in a worker thread; the requests that arrive
    while all are busy wait in a queue and go together in the next batch. The checks hold
    Python's global interpreter lock, so more than one batch at a time only adds thread
    switching (measured: 15-30 % more CPU per request at 4 than at 1); raise it only so that a
    slow batch does not hold up the next one."""
    max_queue: int = Field(1024, ge=1)
    """Requests waiting for a batch; beyond this a request gets 503 at once."""
    deadline_ms: int = Field(500, ge=10)
    """A request that cannot be answered within this gets 504 (and a gateway fails open or
    closed as it chooses); one still waiting for a batch at its deadline gets 503."""


class LimitSettings(_Section):
    """Bounds that keep one bad record or rule from hurting the rest."""

    max_event_bytes: int = Field(1_048_576, ge=256)
    """Records larger than this go to the DLQ with reason ``too_large``."""
    dlq_max_bytes: int = Field(65_536, ge=0)
    """The original bytes kept in a DLQ record; the rest is cut (a header says so)."""
    regex_timeout_ms: int = Field(50, ge=1)
    """Default budget of one user regex on one event."""
    check_timeouts_to_disable: int = Field(5, ge=1)
    """A rule that times out this many times in a row is disabled until the next reload."""
    drain_timeout_s: float = Field(20.0, gt=0)
    """On SIGTERM, finish in-flight work within this; keep it below the pod's grace period."""
    verdict_slice: int = Field(100, ge=1, le=100_000)
    """Records checked at a time within a batch. Each slice's verdicts are counted as soon as
    it is done, and the event loop turns between slices (fetches, commits, ``/metrics``), so a
    record does not wait for the rest of its batch; the batch is still written and committed
    as one."""
    empty_records: Literal["skip", "dead_letter"] = "skip"
    """Records with no value (Kafka tombstones, empty MQTT payloads): ``skip`` counts them in
    ``llm_sidecar_records_skipped_total{reason="empty"}``; ``dead_letter`` sends them to the
    DLQ with reason ``empty``."""
    tune_gc: bool = True
    """Tune Python's cyclic garbage collector for batch checking once the rules are loaded
    (and again after each reload): what is alive then is frozen out of its scans, and the
    youngest generation is collected every 50,000 allocations instead of 700. Costs a full
    collection (tens of milliseconds) per start and reload."""


class LabelSettings(_Section):
    """Allowlists for label values; anything else is exported as ``other``."""

    routes: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    tenants: list[str] = Field(default_factory=list)


# -- rolling windows (used by sidecar.windows) ---------------------------------------------

Dimension = Literal["route", "model", "tenant"]
DIMENSIONS: Final[tuple[Dimension, ...]] = ("route", "model", "tenant")
ATTACK_CATEGORIES: Final = ("basic", "intermediate", "advanced")
ROBUSTNESS_DETECTOR_PREFIX: Final = "robustness:"
"""Detector series of the robustness correction are named ``robustness:<category>``."""

_DURATION = re.compile(r"^([1-9][0-9]*)([smhd])$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int:
    """``"90s"``, ``"5m"``, ``"1h"``, ``"1d"`` -> seconds."""
    m = _DURATION.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a duration like 30s, 5m, 1h or 1d")
    return int(m.group(1)) * _UNITS[m.group(2)]


class DetectorSettings(_Section):
    """A cheap check compared with the judge on events both scored (detector agreement).

    The cheap side is the first rule (in rule-set order) that produced a value on the event
    among the rules with check name ``check``, or whose id matches the shell pattern ``rule``.
    It says "positive" when its value is true (``positive: value``) or when the rule failed
    (``positive: failed``, for rules written as "must not contain"). The judge says "positive"
    when the score of ``judge_metric`` is at least ``judge_threshold`` (``judge_positive:
    above``) or below it (``below``). The judge is the reference.
    """

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    check: str | None = None
    rule: str | None = None
    positive: Literal["value", "failed"] = "value"
    judge_metric: str = Field(min_length=1)
    judge_threshold: float = 0.5
    judge_positive: Literal["above", "below"] = "above"

    @field_validator("rule")
    @classmethod
    def _check_or_rule(cls, v: str | None) -> str | None:
        return v or None


class ExportSettings(_Section):
    """What ``/metrics`` carries of the rolling windows. The defaults export what the bundled
    dashboards and alert rules read; the rest is computed all the same and can be switched on."""

    everything: bool = False
    """Export every figure of every series and window (overrides the settings below)."""
    window_weight: bool = False
    """``llm_sidecar_window_weight`` (the sum of observation weights) of every series."""
    samples_scores: list[str] = Field(
        default_factory=lambda: [
            "adversarial_robustness",
            "adversarial_robustness_corrected",
            "detector_f1",
            "event_pass_rate",
            "judge_score",
            "leakage_risk",
        ]
    )
    """Scores whose ``llm_sidecar_window_samples`` is exported (alerts require a minimum count;
    the dashboards list routes, models and tenants from event_pass_rate's)."""
    rollup_only_scores: list[str] = Field(
        default_factory=lambda: ["adversarial_robustness_judged", "rule_pass_rate"]
    )
    """Scores exported only as their ``*``/``*``/``*`` roll-up, not per segment (one series
    per rule and segment is most of a page otherwise). The robustness correction's agreement
    series (``detector_*{subject="robustness:<category>"}``) follow
    ``adversarial_robustness_judged``: the corrected robustness itself stays per segment."""
    cumulative_scores: list[str] = Field(
        default_factory=lambda: [
            "adversarial_robustness",
            "adversarial_robustness_judged",
            "detector_f1",
            "detector_precision",
            "detector_recall",
            "event_pass_rate",
            "judge_score",
            "leakage_risk",
            "refusal_rate",
            "rgb_error_correction_rate",
            "rgb_error_detection_rate",
            "rgb_negative_rejection_rate",
            "rgb_noise_robustness_accuracy",
            "rule_pass_rate",
            "unsuccessful_request_rate",
        ]
    )
    """Scores whose cumulative counters (``llm_sidecar_score_*_total``: the sums of
    :mod:`sidecar.windows.fleet`) are exported: every score with sums of its own, by default,
    since the fleet figures the bundled alerts and dashboards read are computed from them by
    the recording rules (``llm_sidecar:fleet_*``), across replicas, workers and scale-out judge
    workers. A score left out has no fleet figure."""
    new_counter_hold: float = Field(60.0, ge=0)
    """Seconds a new series' ``llm_sidecar_score_*_total`` counters read zero before their
    value: at least the scrape interval, so that every Prometheus sees the zero a counter
    starts from and ``increase()`` counts a new process's (or segment's) first observations."""
    created_series: bool = False
    """The ``_created`` timestamp series prometheus_client adds to counters and histograms."""


class RobustnessCorrectionSettings(_Section):
    """The judge's correction of adversarial robustness, per attack category.

    The cheap side is the refusal outcome the robustness itself counts (see
    ``refusal_rule``); the judge says "refused" when ``judge_metric`` is at least
    ``judge_threshold``. On attack probes both scored, the precision P and recall R of the
    cheap "refused" against the judge are kept per category (detector series named
    ``robustness:<category>``), and the corrected robustness is the observed share times
    P / R, clamped to [0, 1]. It is exported only where the window holds at least
    ``min_judged`` probes both scored; below that there is no corrected value.
    """

    enabled: bool = True
    judge_metric: str = Field("refusal", min_length=1)
    judge_threshold: float = 0.5
    min_judged: int = Field(20, ge=1)
    """Probes of the category, in the window and segment, that both the cheap refusal and the
    judge scored before a corrected value is exported."""


def _default_detectors() -> list[DetectorSettings]:
    return [
        DetectorSettings(name="refusal", check="refusal", judge_metric="refusal"),
        # The refusal-aware jailbreak check says "complied": the judge agrees when it finds
        # no refusal.
        DetectorSettings(
            name="jailbreak",
            check="jailbreak_success",
            judge_metric="refusal",
            judge_positive="below",
        ),
        DetectorSettings(
            name="toxicity", rule="*toxic*", positive="failed", judge_metric="toxicity"
        ),
        # Precision of the attack-attempt check on live traffic: the judge says whether what
        # it flagged (and what the sampler sent besides) was an attack.
        DetectorSettings(
            name="attack_attempt", check="attack_attempt", judge_metric="attack_attempt"
        ),
    ]


class WindowSettings(_Section):
    """Rolling windows: which windows, how fine, how many series, and how scores are read."""

    enabled: bool = True
    windows: list[str] = Field(default_factory=lambda: ["1m", "5m", "1h"], min_length=1)
    """Window lengths (the ``window`` label), each a ring of ``buckets`` time buckets."""
    buckets: int = Field(12, ge=2, le=600)
    """Buckets per window: a window covers between ``(buckets-1)/buckets`` of its length and
    all of it, and memory per series is ``len(windows) * buckets * 56`` bytes."""
    confidence: float = Field(0.95, gt=0.5, lt=1.0)
    """Two-sided level of the exported lower and upper bounds."""
    intervals: Literal["analytic", "bootstrap"] = "analytic"
    """How bounds of rates are computed: ``analytic`` (Wilson) or ``bootstrap`` (BCa, as unitxt
    computes it, on the exact bootstrap distribution) for windows of at most
    ``bootstrap_max_samples`` unweighted outcomes, Wilson above that and for weighted rates.
    Means keep Student t either way (a window keeps sums, not the observations)."""
    bootstrap_max_samples: int = Field(200, ge=2, le=100_000)
    """Largest window (outcomes) that gets the bootstrap interval; the work is O(n) per series
    at scrape time."""
    max_series: int = Field(2000, ge=1)
    """Live segment series beyond this fold into the all-``other`` segment (counted)."""
    segment_labels: list[Dimension] = Field(default_factory=lambda: list(DIMENSIONS))
    """Dimensions the scores break down by; the others are exported as ``*``. Every score
    also has a ``*``/``*``/``*`` roll-up series."""
    refusal_rule: str | None = None
    """The rule id whose value is "the" refusal; default: the first rule, in rule-set order,
    with check ``refusal`` on the ``response`` field that produced a value on the event."""
    attack_ranks: dict[str, int] = Field(
        default_factory=lambda: {"basic": 4, "intermediate": 3, "advanced": 2}
    )
    """Leakage weight of an attack without an ``attack.rank`` field of its own (1 to 4; 4 is
    the vector easiest to exploit)."""
    unsuccessful_tasks: list[str] = Field(default_factory=lambda: ["qa", "rag"])
    """Tasks whose refusals and negative rejections count as unsuccessful requests."""
    disparity_min_samples: int = Field(20, ge=1)
    """A segment enters the disparity only with at least this many samples in the window."""
    detectors: list[DetectorSettings] = Field(default_factory=_default_detectors)
    robustness_correction: RobustnessCorrectionSettings = RobustnessCorrectionSettings()
    export: ExportSettings = ExportSettings()

    @field_validator("detectors")
    @classmethod
    def _detector_names(cls, v: list[DetectorSettings]) -> list[DetectorSettings]:
        for name in (d.name for d in v):
            if name.startswith(ROBUSTNESS_DETECTOR_PREFIX):
                raise ValueError(
                    f"detector name {name!r}: the prefix {ROBUSTNESS_DETECTOR_PREFIX!r} is kept "
                    "for the robustness correction's own agreement series"
                )
        return v

    @field_validator("windows")
    @classmethod
    def _durations(cls, v: list[str]) -> list[str]:
        seconds = [parse_duration(w) for w in v]
        if len(set(seconds)) != len(seconds):
            raise ValueError("two windows have the same length")
        return [w for _, w in sorted(zip(seconds, v, strict=True))]

    @field_validator("attack_ranks")
    @classmethod
    def _ranks(cls, v: dict[str, int]) -> dict[str, int]:
        for category, rank in v.items():
            if category not in ATTACK_CATEGORIES:
                raise ValueError(f"unknown attack category {category!r}")
            if not 1 <= rank <= 4:
                raise ValueError(f"rank of {category} must be 1 to 4, not {rank}")
        return v


def _container(annotation: Any) -> type | None:
    """``list`` or ``dict`` when ``annotation`` is one (``X | None`` unwrapped), else None."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        kinds = {_container(a) for a in get_args(annotation) if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set, frozenset):
        return list
    if origin is dict or annotation is dict:
        return dict
    return None


def split_list(value: str) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]`` (empty items dropped; ``""`` is the empty list)."""
    return [item.strip() for item in value.split(",") if item.strip()]


def split_mapping(value: str) -> dict[str, str]:
    """``"a=1, b=2"`` -> ``{"a": "1", "b": "2"}``; raises ValueError on an item without ``=``."""
    out: dict[str, str] = {}
    for item in split_list(value):
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(
                f"{item!r} is not key=value (write the mapping as key=value,key=value or as JSON)"
            )
        out[key.strip()] = val.strip()
    return out


class _EnvSource(EnvSettingsSource):
    """The environment, where a list may also be written ``a,b,c`` and a mapping ``k=v,k2=v2``.

    JSON still works (``'["a", "b"]'``, ``'{"k": "v"}'``); a value that starts like JSON must
    be valid JSON, so a typo in one is reported instead of being split on commas.
    """

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError as exc:
            kind = _container(field.annotation) if field is not None else None
            text = str(value).strip()
            if kind is None or text.startswith(("[", "{", '"')):
                raise _EnvValueError(
                    f"{field_name}: {text[:80]!r} is not valid JSON ({exc})"
                ) from None
            try:
                return split_list(text) if kind is list else split_mapping(text)
            except ValueError as bad:
                raise _EnvValueError(f"{field_name}: {bad}") from None


class _EnvValueError(ValueError):
    """A value in the environment that is neither JSON nor the plain list/mapping form."""


class JoinSettings(_Section):
    """Prompt and response logged as two events, joined by request id (see sidecar.join)."""

    enabled: bool = False
    key: str = Field("request_id", min_length=1)
    """The field both halves carry; a half without it is keyed by its ``id``."""
    ttl_s: float = Field(30.0, gt=0, le=3600)
    """How long a half waits for its pair before it is checked alone (an orphan)."""
    max_pending: int = Field(10_000, ge=1, le=1_000_000)
    """Most halves waiting at once; beyond it the oldest is checked alone (counted)."""


class Settings(BaseSettings):
    """Everything llm-sidecar can be told. docs/configuration.md lists every field."""

    model_config = SettingsConfigDict(
        env_prefix="LLM_SIDECAR_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    source: Literal["kafka", "mqtt"] = "kafka"
    rules: list[Path] = Field(default_factory=list)
    """Rule files or directories; empty means the default pack bundled with llm-sidecar."""
    reload_interval_s: float = Field(2.0, ge=0)
    """How often rule files are checked for changes; 0 turns polling off (SIGHUP still works)."""
    system_prompts: dict[str, str] = Field(default_factory=dict)
    """System prompts by id, for events that carry ``system_prompt_id``."""
    secrets: dict[str, SecretStr] = Field(default_factory=dict)
    """Canaries and secrets by name that must never appear in a response."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["text", "json"] = "text"
    kafka: KafkaSettings = KafkaSettings()  # frozen, so sharing the default is safe
    mqtt: MqttSettings = MqttSettings()  # frozen, so sharing the default is safe
    http: HttpSettings = HttpSettings()  # frozen, so sharing the default is safe
    limits: LimitSettings = LimitSettings()  # frozen, so sharing the default is safe
    labels: LabelSettings = LabelSettings()  # frozen, so sharing the default is safe
    judge: JudgeSettings = JudgeSettings()  # frozen, so sharing the default is safe
    api: ApiSettings = ApiSettings()  # frozen, so sharing the default is safe
    windows: WindowSettings = WindowSettings()  # frozen, so sharing the default is safe
    input: InputSettings = InputSettings()  # frozen, so sharing the default is safe
    join: JoinSettings = JoinSettings()
    probe: ProbeSettings = ProbeSettings()  # frozen, so sharing the default is safe

    @model_validator(mode="after")
    def _join_needs_offsets(self) -> Settings:
        if self.join.enabled and self.source == "mqtt":
            raise ValueError(
                "join.enabled needs source kafka: waiting halves hold back an offset commit, "
                "and MQTT acknowledges messages one by one"
            )
        return self

    @model_validator(mode="after")
    def _outputs_are_not_inputs(self) -> Settings:
        # A topic llm-sidecar writes and also reads is a loop: one bad record became 1,281
        # dead letters in 24 s with the DLQ on the input topic, and one attack event was
        # checked 775 times in 15 s with the judge's samples there.
        if self.source != "kafka":
            return self
        outputs = {
            "kafka.dlq_topic": self.kafka.dlq_topic,
            "kafka.verdict_topic": self.kafka.verdict_topic,
            "judge.topic": self.judge.topic,
        }
        for name, topic in outputs.items():
            if topic is not None and topic in self.kafka.topics:
                raise ValueError(
                    f"{name} {topic!r} is also in kafka.topics: llm-sidecar would read "
                    "back what it writes there, in a loop"
                )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # A YAML file only when load_settings() made a subclass that names one.
        return (init_settings, _EnvSource(settings_cls), YamlConfigSettingsSource(settings_cls))


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Build Settings from the environment, an optional YAML file and overrides.

    Raises :class:`ConfigError` with a one-line-per-problem message instead of a traceback.
    """
    cls = Settings
    if config is not None:
        if not config.is_file():
            what = "is a directory" if config.is_dir() else "does not exist"
            raise ConfigError(f"config file {config} {what}")
        from .rules import load_yaml

        try:
            loaded = load_yaml(config.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file {config} is not UTF-8 (byte {exc.start})") from None
        except yaml.YAMLError as exc:
            from .rules import yaml_problem

            raise ConfigError(
                f"config file {config} is not valid YAML: {yaml_problem(exc)}"
            ) from None
        except OSError as exc:
            raise ConfigError(f"cannot read config file {config}: {exc.strerror}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"config file {config} must hold a mapping at the top level")
        rules = loaded.get("rules") if loaded else None
        if isinstance(rules, list) and any(isinstance(rule, dict) for rule in rules):
            raise ConfigError(
                f"config file {config} is a rule file (its rules: are rules, not paths): "
                "give rule files with --rules, or list their paths under rules: in the "
                "settings (LLM_SIDECAR_RULES)"
            )
        config_dict = SettingsConfigDict(**{**Settings.model_config, "yaml_file": config})
        cls = cast("type[Settings]", type("Settings", (Settings,), {"model_config": config_dict}))
    _check_environment()
    where = f" (from {config} and the environment)" if config else " (from the environment)"
    try:
        return cls(**overrides)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings{where}:{format_validation_error(exc)}") from None
    except SettingsError as exc:  # a value the environment source could not decode
        cause = exc.__cause__
        reason = str(cause) if isinstance(cause, _EnvValueError) else str(exc)
        raise ConfigError(f"invalid settings{where}: {reason}") from None


_NOT_SETTINGS = frozenset({"LLM_SIDECAR_TANSU_BIN"})
"""Variables with our prefix that are read elsewhere, not by Settings."""


def rule_paths(settings: Settings) -> list[Path]:
    """The configured rule files, or the bundled default pack when none are configured."""
    from .rules import bundled_path

    return list(settings.rules) or [bundled_path("default.yaml")]


def load_ruleset(settings: Settings, paths: Sequence[Path] | None = None) -> RuleSet:
    """The rules of the configured files (or of ``paths``), with the settings' system
    prompts, secrets and regex timeout."""
    from .rules import load_rules

    return load_rules(
        paths if paths is not None else rule_paths(settings),
        system_prompts=settings.system_prompts,
        secrets={k: v.get_secret_value() for k, v in settings.secrets.items()},
        regex_timeout_s=settings.limits.regex_timeout_ms / 1000,
    )


def _check_environment() -> None:
    """Refuse ``LLM_SIDECAR_*`` variables that name no setting.

    pydantic-settings ignores them, so ``LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS`` (one underscore
    short of nesting) would silently leave the default in place.
    """
    fields = {name.upper() for name in Settings.model_fields}
    # Names are read without regard to case (llm_sidecar_source is the source), so they are
    # checked the same way: a lower-case typo must not be ignored either.
    links = _service_links(os.environ)
    unknown = sorted(
        key
        for key in os.environ
        if key.upper().startswith("LLM_SIDECAR_")
        and key.upper() not in _NOT_SETTINGS
        and key.upper().removeprefix("LLM_SIDECAR_").split("__", 1)[0] not in fields
        and key not in links
    )
    if unknown:
        hints = [h for h in (_hint(key.upper()) for key in unknown) if h]
        hint = (
            f" (did you mean {', '.join(hints)}?)"
            if hints
            else " (nested settings take a double underscore, e.g. LLM_SIDECAR_KAFKA__TOPICS)"
        )
        raise ConfigError(f"unknown setting in the environment: {', '.join(unknown)}{hint}")


_LINK_SUFFIX = re.compile(
    r"_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT(?:_\d+_(?:TCP|UDP|SCTP)(?:_PROTO|_PORT|_ADDR)?)?)"
)


def _service_links(environ: Mapping[str, str]) -> set[str]:
    """The variables Kubernetes gives every pod for each Service of its namespace
    (``<NAME>_SERVICE_HOST``, ``<NAME>_PORT_9464_TCP`` ...): a Service named
    ``llm-sidecar``, as the chart's release is usually called, makes ``LLM_SIDECAR_...``
    ones, which name no setting and must not stop the process. Recognised by their shape,
    and only for names that also have their ``_SERVICE_HOST``, which Kubernetes always sets."""
    services = {
        key.removesuffix("_SERVICE_HOST")
        for key in environ
        if key.startswith("LLM_SIDECAR_") and key.endswith("_SERVICE_HOST")
    }
    return {
        key
        for key in environ
        for service in services
        if key.startswith(service) and _LINK_SUFFIX.fullmatch(key, len(service))
    }


def _env_names() -> list[str]:
    """Every top-level and section-level setting as an environment variable name."""
    names = []
    for name, field in Settings.model_fields.items():
        names.append(f"LLM_SIDECAR_{name.upper()}")
        section = field.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names += [f"LLM_SIDECAR_{name.upper()}__{sub.upper()}" for sub in section.model_fields]
    return names


def _hint(key: str) -> str | None:
    """The variable a misspelled ``key`` most likely meant, if one is close."""
    names = _env_names()
    # Compare without underscores first: LOGLEVEL -> LOG_LEVEL, KAFKA_TOPICS -> KAFKA__TOPICS.
    squashed = {n.replace("_", ""): n for n in names}
    if key.replace("_", "") in squashed:
        return squashed[key.replace("_", "")]
    # Compared without the prefix they share, which would make every name look close.
    tails = {n.removeprefix("LLM_SIDECAR_"): n for n in names}
    close = difflib.get_close_matches(key.removeprefix("LLM_SIDECAR_"), tails, n=1, cutoff=0.8)
    if close:
        return tails[close[0]]
    # A setting's own name without its section: LLM_SIDECAR_PORT -> LLM_SIDECAR_HTTP__PORT.
    tail = "__" + key.removeprefix("LLM_SIDECAR_")
    within = [n for n in names if n.endswith(tail)]
    return " or ".join(within[:3]) if within else None


def _message(msg: str) -> str:
    """pydantic's message without its ``Value error, `` / ``Assertion failed, `` prefix."""
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def format_validation_error(exc: ValidationError, limit: int = 20) -> str:
    """``path: message`` without pydantic's URLs and prefixes: after a space for one problem,
    one indented line each for several."""
    problems = []
    for err in exc.errors(include_url=False)[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        message = _message(str(err["msg"]))
        if err["type"] in ("list_type", "dict_type") and err.get("input") == "":
            # An environment variable set to nothing (VAR= in a shell, an unset $X in a
            # manifest): say what an empty one looks like.
            empty = "[]" if err["type"] == "list_type" else "{}"
            message += f", not an empty string (for an empty one write {empty}, or unset it)"
        problems.append(f"{loc}: {message}")
    if len(problems) == 1:
        return f" {problems[0]}"
    return "".join(f"\n  {p}" for p in problems)
