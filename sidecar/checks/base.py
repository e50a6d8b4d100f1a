"""The one interface every cheap check implements.

A check is a small callable compiled once per rule: its constructor receives the rule's
validated parameters (a pydantic model the check declares) and a :class:`CheckContext`; each
call receives the rule's field text and the whole event and returns a :class:`CheckResult`.
A check computes a value — a boolean (did the condition hold?) or a score — and never decides
pass or fail: the rule's ``expect``/``min``/``max`` does that, so one check serves many rules.

Checks must be pure and fast: they run synchronously on the hot path for every event. Anything
slow (network, models) belongs to the judge.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from ..events import Event
from ..scan import ScanPattern

__all__ = [
    "UNCERTAIN_PREFIX",
    "Check",
    "CheckContext",
    "CheckResult",
    "NoParams",
    "Params",
    "ValueKind",
    "asks_missing",
    "describe",
]

ValueKind = Literal["bool", "score"]

UNCERTAIN_PREFIX = "uncertain: "
"""A detail starting with this says the check could not tell with confidence; the judge's
``triggers.uncertain`` takes such events."""


class CheckResult(NamedTuple):
    """What a check found: its value, and a short human-readable detail (never event text)."""

    value: bool | float
    detail: str | None = None


class Params(BaseModel):
    """Base for a check's parameters: unknown keys are errors, so typos surface at load."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(Params):
    """For checks that take no parameters."""


@dataclass(frozen=True, slots=True)
class CheckContext:
    """What a check may need beyond its parameters, fixed at rule-load time."""

    base_dir: Path = field(default_factory=Path.cwd)
    """Directory of the rule file, for parameters that name other files (schemas, lists)."""
    system_prompts: Mapping[str, str] = field(default_factory=dict)
    """Registered system prompts by id, for events that carry only ``system_prompt_id``."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Registered secrets and canaries by name, which must never appear in a response."""
    regex_timeout_s: float = 0.05
    """Default wall-clock budget of one user regex search on one event."""
    files_read: list[Path] = field(default_factory=list)
    """Files a check read besides its rule file (a ``schema_file``): the loader adds their
    content to the rules version and watches them for changes like the rule files."""


P = TypeVar("P", bound=Params)


class Check(ABC, Generic[P]):
    """Base class of all checks; subclasses set ``name`` and register with the registry.

    ``Check[MyParams]`` types ``self.params``; ``params_model`` must be the same class, since
    the rule loader validates a rule's ``params`` with it before construction.
    """

    name: ClassVar[str]
    """The name rules use in ``check:``."""
    params_model: ClassVar[type[Params]] = NoParams
    value_kind: ClassVar[ValueKind] = "bool"
    score_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    """The values a score check gives (``value_kind`` "score"): a rule whose ``min`` lies
    above it, or whose ``max`` below it, fails every event and is refused at load."""
    default_field: ClassVar[str] = "response"
    requires_text: ClassVar[bool] = True
    """If True the rule is skipped (not failed) on events whose field is absent."""
    max_input_chars: ClassVar[int] = 200_000
    """Longer field text is truncated before the call, bounding every check's cost."""
    scan_absent_is_fixed: ClassVar[bool] = False
    """True when :meth:`from_scan` with none of its patterns found depends on neither the text
    nor the event, so the pipeline computes that result once instead of once per event."""

    needs: ClassVar[tuple[str, ...]] = ()
    """Event fields the check cannot do without (``ground_truths``, say): on an event whose
    field is empty, :meth:`missing` gives ``no <field>``, the reason ``__call__`` raises
    :class:`CheckError` with."""

    prepares: bool = False
    """True when :meth:`prepare` does something: only then does the pipeline gather a batch's
    texts for it."""

    def __init__(self, params: P, ctx: CheckContext) -> None:
        self.params = params
        self.ctx = ctx

    def prepare(self, texts: Sequence[str]) -> None:
        """Called by the pipeline, when :attr:`prepares` is set and a rule has more than
        one call to make on a batch, before those calls, with their texts in order, and
        with none after them, to let go of what it kept. A check whose cost is mostly the overhead of one call per text
        works them out here together and answers the calls from that. A call on a text that
        was not prepared must get the same result."""

    def missing(self, event: Event) -> str | None:
        """Why ``event`` lacks what the check needs: the reason ``__call__`` would raise
        :class:`CheckError` with before looking at the text, or None. The pipeline asks
        first (when :func:`asks_missing`), so that the usual event without ground truths or a
        system prompt costs a test, not an exception; ``__call__`` must still raise on its own.
        """
        for name in self.needs:
            if not getattr(event, name):
                return f"no {name}"
        return None

    @abstractmethod
    def __call__(self, text: str, event: Event) -> CheckResult:
        """Compute the value for one event; ``text`` is the rule's field ("" if absent)."""

    def notes(self) -> list[str]:
        """Things about these parameters a user most likely did not mean (``validate``,
        ``replay`` and ``run`` print them): valid, so not errors."""
        return []

    def scan_patterns(self) -> Sequence[ScanPattern]:
        """What this check wants found in its field by the shared scan (see
        :mod:`sidecar.scan`); empty (the default) keeps the check on its plain path.

        Each pattern must occur in every ASCII text on which ``__call__`` could find
        something, so that its absence proves there is nothing to find.
        """
        return ()

    def keyer(self) -> Callable[[str], Hashable] | None:
        """A function of the text on which alone the result depends (its length, say), for
        :meth:`from_key`; None (the default) when the result needs the text itself or the event.
        The pipeline then takes every text's key in one pass and makes each distinct key's
        outcome once. ``self(text, event)`` must equal ``self.from_key(keyer(text))``."""
        return None

    def from_key(self, key: Hashable) -> CheckResult:
        """The result for a text whose key (see :meth:`keyer`) is ``key``."""
        raise NotImplementedError(f"{type(self).__name__} has no key")

    def from_scan(self, found: frozenset[int], text: str, event: Event) -> CheckResult:
        """The same result as ``__call__`` on an ASCII ``text``, given the indices (into
        :meth:`scan_patterns`) of the patterns that occur in it. The default ignores the scan;
        a check overrides it to skip its own walk over the text when nothing was found."""
        return self(text, event)


def asks_missing(check: Check[Any]) -> bool:
    """Whether :meth:`Check.missing` can say anything for this check (it has ``needs`` or its
    own ``missing``): the pipeline asks only then."""
    return bool(check.needs) or type(check).missing is not Check.missing


def describe(checks: Mapping[str, type[Check[Any]]]) -> dict[str, dict[str, object]]:
    """A JSON-able catalogue of checks, used by the schema and the docs."""
    return {
        name: {
            "value": cls.value_kind,
            "field": cls.default_field,
            "params": cls.params_model.model_json_schema(),
        }
        for name, cls in sorted(checks.items())
    }
