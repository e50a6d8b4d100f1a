"""The learned half of attack-attempt detection: a linear model over words and word pairs.

The signals (:mod:`sidecar.checks.attack_signals`) are precise but miss attacks worded their
own way: a role-play set-up with no "you are now", an optimised paraphrase, a template that
lists rules for an unfiltered persona. One logistic head reads every word of the prompt's
first :data:`HEAD_CHARS` and last :data:`TAIL_CHARS` characters, casefolded, with each
adjacent pair, and the names of the signals found. A prompt longer than that, its runs of
blanks counted once, is also read in windows (:func:`windows`), for a template hidden in
ordinary text. ``tools/train_attack.py``
fits it on the prompt sources in ``DATA.md`` and writes ``sidecar/data/attack_model.json.gz``;
nothing is downloaded at run time.

Scoring reuses the refusal model's machinery (:mod:`sidecar.checks.refusal_batch`): weights
in whole units of 1/:data:`~sidecar.checks.refusal_model.FIXED`, so a sum is exact in any
order, and for a batch the words are hashed over one array of code points by the same
:func:`~sidecar.checks.refusal_batch.tokens`, their pairs by
:func:`~sidecar.checks.refusal_batch.join_hashes`, and looked up in the same
open-addressing :class:`~sidecar.checks.refusal_batch.Table`, with no string made per word.
Where the package was built with a C compiler, ``_refusal_native.c`` does the same from the
strings (:func:`~sidecar.checks.refusal_batch.native_word_sums`), for any number of texts:
the same hash, the same table, the same sums. One text, numpy's batch and the compiled
scorer give the same bits (the tests hold them equal). That machinery (and numpy) is
imported when the model first scores, not with this module: looking the check up, or a
process whose rules never run it, does without numpy.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..scan import RE2
from .refusal_model import FIXED, ModelFile, WeightsFile, sigmoid

if TYPE_CHECKING:
    from .refusal_batch import Table

__all__ = [
    "BATCH_MIN",
    "CUE",
    "HEAD_CHARS",
    "MODEL_FILE",
    "PADDING",
    "TAIL_CHARS",
    "WINDOW_CHARS",
    "WINDOW_STEP",
    "AttackModel",
    "default_model",
    "features",
    "model_text",
    "model_view",
    "named_features",
    "read_length",
    "windows",
]

MODEL_FILE = "attack_model.json.gz"
FORMAT = "llm-sidecar/attack-linear/2"
_FORMAT_1 = "llm-sidecar/attack-linear/1"
"""The first format named a signal's feature ``s:<cue>``, which a prompt can type as a word;
:meth:`AttackModel.from_json` reads it with those names changed to :data:`CUE`'s."""
CUE = "s\x1f"
"""The start of a signal's feature name: ``s``, then the unit separator (U+001F), which
``str.split`` and the batch scorers take for a blank, so no word a user types is named like a
signal (a batch would count it twice, one text's scorer once)."""
HEAD_CHARS = 1500
TAIL_CHARS = 500
"""The model reads the first and last characters of a prompt (a 2 KB window in all): set-ups
lead, and injected instructions and optimised suffixes often close."""
WINDOW_CHARS = 1000
WINDOW_STEP = 500
"""A long prompt is also read in windows of this many characters (its words cut at a
window's edge left out; a word longer than a window is in none), one every
:data:`WINDOW_STEP`, the last ending where the prompt ends: a template behind or before a few
KB of ordinary text is read with little of that text around it, which would outweigh it."""
BATCH_MIN = 4
"""From this many texts, :meth:`AttackModel.score_many` hashes them together with numpy
(where the compiled scorer is not built; that one reads any number)."""


def model_view(folded: str) -> tuple[str, str | None]:
    """What the model reads of a casefolded prompt, and the text a long one's windows are cut
    from (None for a prompt it reads whole), its runs of blanks made one space once for both.
    A prompt that is short with each run made one space is read so (the runs must not push it
    out of what is read); a longer one's head and tail are cut from the text as written (as
    the model was trained), its :func:`windows` from the text with the runs made one space
    (blanks neither make a prompt long nor spread it thin)."""
    if len(folded) <= HEAD_CHARS + TAIL_CHARS:
        return folded, None
    text = folded.strip()
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text, None
    joined = " ".join(text.split())
    if len(joined) <= HEAD_CHARS + TAIL_CHARS:
        return joined, None
    return text[:HEAD_CHARS] + " " + text[-TAIL_CHARS:], joined


def read_length(folded: str, shortest: int) -> int:
    """The length of a folded text as the readers of short prompts (the frame, harm, hijack and
    subversion models, which read at most ``shortest`` characters or more) count it: a run of
    more than :data:`PADDING` blanks as one character, so that blanks put around a framed
    request do not take it out of their reach (they read words), while a long text laid out
    as people lay out text (paragraphs, indented code) stays long. Its length as it is where
    it is at most ``shortest``."""
    if len(folded) <= shortest or _PADDED.search(folded) is None:  # RE2: ~1.5 µs a KB
        return len(folded)
    return len(folded) - sum(len(run) - 1 for run in _PADDED.findall(folded))


PADDING = 16
"""The longest run of blanks :func:`read_length` counts in full: deeper than code's usual
indentation, shorter than any padding that would matter."""
_BLANKS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u1680\u2028\u2029"
"""What ``str.split`` takes for a blank and folding leaves (it makes Unicode's wide and
non-breaking spaces plain ones)."""
_PADDED: Any = (RE2 or re).compile(f"[{_BLANKS}]{{{PADDING + 1},}}")


def model_text(folded: str) -> str:
    """What the model reads whole of a casefolded prompt (see :func:`model_view`): all of
    it, or the head and tail of a long one."""
    return model_view(folded)[0]


def windows(text: str) -> list[str]:
    """The windows the model reads of a long prompt's text with its runs of blanks made one
    space (:func:`model_view`; :data:`WINDOW_CHARS`)."""
    if len(text) <= WINDOW_CHARS:
        return [text] if text else []
    found = []
    last = len(text) - WINDOW_CHARS
    for at in (*range(0, last, WINDOW_STEP), last):
        start, end = at, at + WINDOW_CHARS
        if start and text[start - 1] != " ":  # the word cut at the start
            start = text.find(" ", start, end) + 1
            if not start:
                continue  # inside a word longer than a window, which no window holds
        if end < len(text) and text[end] != " ":  # and at the end
            end = text.rfind(" ", start, end)
            if end < start:
                continue
        found.append(text[start:end])
    return found


def named_features(cues: Sequence[str], length: int) -> list[str]:
    """The features that are not words: the signals found. (A length bucket was tried: the
    attack sources are long and most benign ones short, so it learned length, and flagged
    long benign prompts of sources it had not seen. ``length`` stays for the format.)"""
    return [CUE + c for c in cues]


def features(read: str, cues: Sequence[str], length: int) -> list[str]:
    """Every feature name of one text (``read``: its :func:`model_text`), each once: the
    words, their adjacent pairs, then :func:`named_features`. A feature counts once however
    often it occurs: with counts, the words every long text repeats ("and", "you", "=") added
    up to an attack's score in long benign prompts (pasted code, documents)."""
    tokens = read.split()
    found = tokens + list(map(" ".join, pairwise(tokens))) + named_features(cues, length)
    return list(dict.fromkeys(found))


_BATCH_LOCK = threading.Lock()


@dataclass(slots=True)
class AttackModel(ModelFile):
    """Vocabulary with one weight each, the bias, and the two thresholds the trainer chose:
    ``alone`` (the model calls an attack with no sure signal) and ``agree`` (it confirms a
    cue, a signal that is not sure on its own).

    A model read from a file (:meth:`load`, :meth:`from_package`) lets its vocabulary go once
    the compiled scorer holds it (:meth:`native_sums`): the scorer's slots are all scoring
    needs but the weights of the signals' names, and the names and weights as Python objects
    took about as much memory again as the slots (30 MiB for the default check's readers).
    ``weights`` then reads them from the file again when asked for (:class:`WeightsFile`)."""

    weights: Mapping[str, float]
    bias: float
    alone: float = 0.9
    agree: float = 0.5
    meta: dict[str, Any] = field(default_factory=dict)
    _fixed: dict[str, int] = field(init=False, repr=False)
    """The weights scoring reads, in units of 1/FIXED: every feature's, or once the compiled
    scorer holds the words and pairs of a model read from a file, the signals' names' only."""
    _bias: int = field(init=False, repr=False)
    _table: Table | None = field(init=False, repr=False, default=None)
    _native: tuple[Callable[[list[str]], list[int]] | None] | None = field(
        init=False, repr=False, default=None
    )
    _file: Callable[[], bytes] | None = field(init=False, repr=False, default=None)
    """How to read the model's file again (set by :meth:`load` and :meth:`from_package`)."""

    def __post_init__(self) -> None:
        self._fixed = fixed_weights(self.weights)
        self._bias = round(self.bias * FIXED)

    def score(self, read: str, cues: Sequence[str], length: int) -> float:
        """The probability that one text is an attack attempt."""
        weights = self._fixed  # read before _native: a model lets its words go after it is set
        if self._native is not None and self._native[0] is not None:
            return self.score_many([read], [cues], [length])[0]
        z = sum(map(weights.get, features(read, cues, length), repeat(0)), self._bias)
        return sigmoid(z / FIXED)

    def score_many(
        self, reads: Sequence[str], cues: Sequence[Sequence[str]], lengths: Sequence[int]
    ) -> list[float]:
        """:meth:`score` of each text; from :data:`BATCH_MIN` texts, their words and pairs
        hashed and summed together (see the module)."""
        if not (len(reads) == len(cues) == len(lengths)):
            raise ValueError("score_many: one cue list and one length per text")
        native = self.native_sums()
        if native is None and len(reads) < BATCH_MIN:
            return [self.score(r, c, n) for r, c, n in zip(reads, cues, lengths, strict=True)]
        from .refusal_batch import chunks

        weights = self._fixed
        out: list[float] = []
        if native is not None:
            sums, spans = native(list(reads)), [(0, len(reads))]
        else:
            sums, spans = [], list(chunks([len(r) + 1 for r in reads]))
        for lo, hi in spans:
            if native is None:
                sums = self._word_sums(reads[lo:hi])
            for e in range(lo, hi):
                z = sums[e - lo] + self._bias
                z = sum(map(weights.get, named_features(cues[e], lengths[e]), repeat(0)), z)
                out.append(sigmoid(z / FIXED))
        return out

    def score_reads(
        self, reads: Sequence[Sequence[str]], cues: Sequence[Sequence[str]], lengths: Sequence[int]
    ) -> list[list[float]]:
        """Per text, the :meth:`score` of each of its reads (its :func:`model_text`, then any
        :func:`windows`), all of the batch's reads scored together."""
        if not (len(reads) == len(cues) == len(lengths)):
            raise ValueError("score_reads: one cue list and one length per text")
        owner = [i for i, some in enumerate(reads) for _ in some]
        flat = [r for some in reads for r in some]
        scores = self.score_many(flat, [cues[i] for i in owner], [lengths[i] for i in owner])
        out: list[list[float]] = [[] for _ in reads]
        for i, p in zip(owner, scores, strict=True):
            out[i].append(p)
        return out

    def native_sums(self) -> Callable[[list[str]], list[int]] | None:
        """The compiled scorer of the words and pairs, with this model's table, made on first
        use; None where it is not built (:func:`~sidecar.checks.refusal_model.native_state`)."""
        if self._native is None:
            from .refusal_batch import native_word_sums

            table = self.table()
            with _BATCH_LOCK:
                if self._native is None:
                    self._native = (native_word_sums(table),)
                    if self._native[0] is not None:
                        # the compiled scorer holds the slots it reads; numpy's table is made
                        # again only if asked for (4 MiB for 50,000 features), and the
                        # vocabulary read again from the file
                        self._table = None
                        if self._file is not None:
                            self._fixed = {n: f for n, f in self._fixed.items() if n[:2] == CUE}
                            self.weights = WeightsFile(self._file, file_weights)
        return self._native[0]

    def table(self) -> Table:
        """The hash table of the vocabulary, made on first use (shared by threads); numpy's
        batch scorer reads it, and the compiled one a copy of its slots, after which it is let
        go."""
        if self._table is None:
            with _BATCH_LOCK:
                if self._table is None:
                    import numpy as np

                    from .refusal_batch import Table, hash_names

                    fixed = self._all_fixed()
                    names = list(fixed)
                    column = np.fromiter(
                        (fixed[n] for n in names), dtype=np.float64, count=len(names)
                    )
                    self._table = Table(hash_names(names), [column])
        return self._table

    def _word_sums(self, reads: Sequence[str]) -> list[int]:
        """Per text, the sum of its words' and pairs' weights (in units of 1/FIXED), with
        numpy (:meth:`native_sums` computes the same in C)."""
        import numpy as np

        from .refusal_batch import join_hashes, tokens

        n = len(reads)
        t_hash, t_len, first, up = tokens(reads)
        count = np.diff(first)
        event = np.repeat(np.arange(n), count)
        rank = np.arange(len(t_hash)) - first[event]
        second = np.flatnonzero(rank >= 1)
        pairs = join_hashes(t_hash[second - 1], t_len[second - 1], t_hash[second], up)
        table = self.table()
        slot = table.find(np.concatenate([t_hash, pairs]))
        owner = np.concatenate([event, event[second]])
        # each feature once per text (see features): one (text, slot) pair each
        once = np.unique(owner.astype(np.int64) * (len(table.keys) + 1) + slot)
        owner, slot = once // (len(table.keys) + 1), once % (len(table.keys) + 1)
        sums = np.bincount(owner, weights=table.weights[0][slot], minlength=n)
        return sums.astype(np.int64).tolist()  # type: ignore[no-any-return]

    def explain(
        self, read: str, cues: Sequence[str], length: int, top: int = 5
    ) -> list[tuple[str, float]]:
        """The features that pushed the score most (weight times count), for debugging."""
        fixed = self._all_fixed()
        pushed: dict[str, float] = {}
        for name in features(read, cues, length):
            if name in fixed:
                pushed[name] = pushed.get(name, 0.0) + fixed[name] / FIXED
        return sorted(pushed.items(), key=lambda kv: -abs(kv[1]))[:top]

    def _all_fixed(self) -> dict[str, int]:
        """Every feature's weight in units of 1/FIXED, from the file again where the model let
        its vocabulary go."""
        if isinstance(self.weights, WeightsFile):
            return fixed_weights(self.weights)
        return self._fixed

    # --- the weights file -------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        names = sorted(self.weights)
        return {
            "format": FORMAT,
            "alone": self.alone,
            "agree": self.agree,
            "bias": self.bias,
            "features": names,
            "weights": [round(self.weights[n], 5) for n in names],
            "meta": self.meta,
        }

    def save(self, path: Path) -> None:
        data = json.dumps(self.to_json(), separators=(",", ":"), sort_keys=True).encode()
        path.write_bytes(gzip.compress(data, mtime=0))

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> AttackModel:
        return cls(
            file_weights(doc),
            float(doc["bias"]),
            float(doc["alone"]),
            float(doc["agree"]),
            dict(doc.get("meta", {})),
        )


def file_weights(doc: dict[str, Any]) -> dict[str, float]:
    """The weights by name of a model file's document (either format)."""
    if doc.get("format") not in (FORMAT, _FORMAT_1):
        raise ValueError(f"not an attack model file (format {doc.get('format')!r})")
    names: list[str] = doc["features"]
    if doc["format"] == _FORMAT_1:  # every name with this start was a signal's
        names = [CUE + n[2:] if n.startswith("s:") else n for n in names]
    weights: list[float] = doc["weights"]
    if len(names) != len(weights):
        raise ValueError("attack model file: feature and weight lists differ in length")
    return dict(zip(names, map(float, weights), strict=True))


def fixed_weights(weights: Mapping[str, float]) -> dict[str, int]:
    """Weights in whole units of 1/FIXED, those that round to 0 left out."""
    return {n: f for n, w in weights.items() if (f := round(w * FIXED))}


@cache
def default_model() -> AttackModel:
    """The model shipped with llm-sidecar, loaded once per process."""
    return AttackModel.from_package(MODEL_FILE)
