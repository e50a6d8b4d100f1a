"""The lifecycle every long-lived component shares: ``start()``, idempotent ``stop()``, and
``async with`` (which is just the two)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["Lifecycle"]


class Lifecycle(ABC):
    """Base of components with a start and an idempotent stop."""

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def stop(self) -> None:
        """Release everything; safe to call twice and after a failed start."""

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
