"""Cheap content checks. Importing this package registers every built-in check family."""

from __future__ import annotations

# Importing a family module registers its checks.
from . import (  # noqa: F401
    analysis,
    attack,
    fuzzy,
    json,
    leakage,
    links,
    pii,
    reachability,
    reference,
    refusal,
    regex,
    rgb,
    text,
)
from .base import Check, CheckContext, CheckResult, NoParams, Params, ValueKind
from .registry import get_check, register, registered

__all__ = [
    "Check",
    "CheckContext",
    "CheckResult",
    "NoParams",
    "Params",
    "ValueKind",
    "get_check",
    "register",
    "registered",
]
