"""Cheap content checks: the interface (:mod:`.base`) and the registry (:mod:`.registry`),
which imports every check family of this package on its first lookup."""

from __future__ import annotations

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
