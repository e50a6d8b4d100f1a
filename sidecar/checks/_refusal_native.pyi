"""Types of the compiled part of the refusal scorer (``_refusal_native.c``)."""

from typing_extensions import Buffer

SOURCE_SHA256: str
"""SHA-256 of the C file this module was built from."""

def sums(
    heads: list[str],
    openings: list[str],
    afters: list[str],
    tails: list[str],
    base: int,
    prefixes: tuple[tuple[int, int], ...],
    limits: tuple[int, int, int, int],
    slots: Buffer,
    shift: int,
    reach: int,
    /,
) -> tuple[list[int], list[int]]: ...
def word_sums(
    texts: list[str], base: int, slots: Buffer, shift: int, reach: int, /
) -> list[int]: ...
def unspaced_read(text: str, /) -> str: ...
