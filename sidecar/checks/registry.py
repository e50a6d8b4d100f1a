"""Maps check names to check classes. A new check is one module with one ``@register``.

Every module of this package is imported on the first lookup, so that each registers its
checks: a new family is a module in ``sidecar/checks/``, listed nowhere, and the package does
not import its families (which import the registry) back.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from pathlib import Path
from typing import Any, TypeVar

from .base import Check

__all__ = ["get_check", "register", "registered"]

_C = TypeVar("_C", bound=type[Check[Any]])
_REGISTRY: dict[str, type[Check[Any]]] = {}
_loaded = False
_loading = threading.RLock()
_ON_DEMAND = frozenset({"refusal_batch"})
"""Modules that register nothing and are imported only when first used: the refusal model's
batch scorer loads numpy, which a process whose rules never score a batch does without."""


def register(cls: _C) -> _C:
    """Class decorator: make ``cls`` available to rules under ``cls.name``."""
    name = cls.name
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"check name {name!r} is registered twice")
    _REGISTRY[name] = cls
    return cls


def _load_families() -> None:
    """Import every public module of the package once (in name order, but those imported on
    demand), so their ``@register`` lines run before anything is looked up."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if _loaded:
            return
        for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
            if not module.name.startswith("_") and module.name not in _ON_DEMAND:
                importlib.import_module(f"{__package__}.{module.name}")
        _loaded = True


def get_check(name: str) -> type[Check[Any]] | None:
    _load_families()
    return _REGISTRY.get(name)


def registered() -> dict[str, type[Check[Any]]]:
    """A copy of the registry, name to class."""
    _load_families()
    return dict(_REGISTRY)
