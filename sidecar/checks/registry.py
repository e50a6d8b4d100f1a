"""Maps check names to check classes. A new check is one module with one ``@register``."""

from __future__ import annotations

from typing import Any, TypeVar

from .base import Check

__all__ = ["get_check", "register", "registered"]

_C = TypeVar("_C", bound=type[Check[Any]])
_REGISTRY: dict[str, type[Check[Any]]] = {}


def register(cls: _C) -> _C:
    """Class decorator: make ``cls`` available to rules under ``cls.name``."""
    name = cls.name
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"check name {name!r} is registered twice")
    _REGISTRY[name] = cls
    return cls


def get_check(name: str) -> type[Check[Any]] | None:
    return _REGISTRY.get(name)


def registered() -> dict[str, type[Check[Any]]]:
    """A copy of the registry, name to class."""
    return dict(_REGISTRY)
