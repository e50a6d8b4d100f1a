"""Reads JSON Lines from a file or stdin: the source behind ``replay``.

Each line is one record; its offset is the zero-based line index, so a record's line number
is ``offset + 1``. Empty lines are skipped. Binary records (``otlp-proto``) are read from
length-prefixed files instead: each record is a 4-byte big-endian length and that many bytes,
what ``kcat -C -t TOPIC -f '%R%s'`` writes when it captures a topic.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from ..errors import ConfigError
from .base import Record, Source

__all__ = ["MAX_FRAME_BYTES", "CutOff", "FileSource", "read_batches", "read_framed_batches"]

MAX_FRAME_BYTES = 64 * 1_048_576
"""A length prefix above this means the file is not length-prefixed records."""


_BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors (and PowerShell's redirection) put first."""


def read_batches(stream: BinaryIO, name: str, batch_size: int) -> Iterator[list[Record]]:
    """Batches of non-empty lines as records (synchronous; used by replay). A UTF-8
    byte-order mark before the first line is not part of it."""
    batch: list[Record] = []
    for index, line in enumerate(stream):
        if index == 0 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        batch.append(Record(value=line, topic=name, partition=0, offset=index))
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


class CutOff(ConfigError):
    """The file ends inside its last record: a capture stopped while writing it (``kcat``
    interrupted). The records before it were all yielded."""


def read_framed_batches(stream: BinaryIO, name: str, batch_size: int) -> Iterator[list[Record]]:
    """Batches of length-prefixed records; the offset is the record's zero-based index.

    Raises :class:`ConfigError` on a length prefix that cannot be right, and :class:`CutOff`,
    once every whole record is yielded, when the file ends inside a record.
    """
    batch: list[Record] = []
    index = 0
    while True:
        head = stream.read(4)
        if not head:
            break
        if len(head) < 4:
            if batch:
                yield batch
            raise CutOff(f"{name}: record {index + 1} is cut off inside its length prefix")
        size = int.from_bytes(head, "big")
        if size > MAX_FRAME_BYTES:
            raise ConfigError(
                f"{name}: record {index + 1} declares {size} bytes; the file is not "
                "length-prefixed records (4-byte big-endian length, then the bytes)"
            )
        value = stream.read(size)
        if len(value) < size:
            if batch:
                yield batch
            raise CutOff(f"{name}: record {index + 1} is cut off ({len(value)} of {size} bytes)")
        batch.append(Record(value=value, topic=name, partition=0, offset=index))
        index += 1
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
