"""Reads JSON Lines from a file or stdin: the source behind ``replay``.

Each line is one record; its offset is the zero-based line index, so a record's line number
is ``offset + 1``. Empty lines are skipped.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from .base import Record, Source

__all__ = ["FileSource", "read_batches"]


def read_batches(stream: BinaryIO, name: str, batch_size: int) -> Iterator[list[Record]]:
    """Batches of non-empty lines as records (synchronous; used by replay)."""
    batch: list[Record] = []
    for index, line in enumerate(stream):
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        batch.append(Record(value=line, topic=name, partition=0, offset=index))
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


class FileSource(Source):
    """A finite source: a JSONL file, or ``-`` for standard input."""

    name = "file"

    def __init__(self, path: str | Path, *, batch_size: int = 500) -> None:
        self.path = str(path)
        self.batch_size = batch_size
        self._stream: BinaryIO | None = None
        self._stopping = False
        self.acked = 0

    async def start(self) -> None:
        if self._stream is None:
            if self.path == "-":
                self._stream = sys.stdin.buffer
            else:
                self._stream = await asyncio.to_thread(open, self.path, "rb")

    async def stop(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None and stream is not sys.stdin.buffer:
            stream.close()

    def stop_fetching(self) -> None:
        self._stopping = True

    async def batches(self) -> AsyncIterator[list[Record]]:
        assert self._stream is not None, "start() the source first"
        for batch in read_batches(self._stream, self.path, self.batch_size):
            yield batch
            if self._stopping:
                return
            await asyncio.sleep(0)

    async def ack(self, batch: Sequence[Record]) -> None:
        self.acked += len(batch)
