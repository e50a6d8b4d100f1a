"""Train the frame model shipped in ``sidecar/data/frame_model.json.gz``.

The model (:mod:`sidecar.checks.attack_frame_model`) reads whether a prompt gives a request to
an assistant as the text of a language task. Positives: the framed requests, harmful and
harmless, of the written sets in :data:`TRAINED_SETS` (``bench/data/written_prompts/``).
Negatives: the framed sets' texts that are not requests in the same frames and ordinary
prompts in a task's words, the benign rows of the near-miss sets in :data:`TRAINED_SETS`, and
every benign prompt of the training sources ``tools/fetch_detector_data.py`` writes (the
attack model's held-out sources are never read); of each, the prompts of at most
:data:`~sidecar.checks.attack_frame_model.READ_MAX` characters, the only ones the model reads.
The written sets in :data:`HELD_OUT_SETS` are never trained on: ``bench/prompt_sets_eval.py``
and the tests measure on them.

The threshold (the model's ``alone``) is the lowest probability at which the model, reading
rows it was not fitted on (five folds), finds at most :data:`FPR_BUDGET` of the benign rows
framed: each is a judge call where ``uncertain: true`` is set.

    python tools/train_frames.py --data OUT_DIR [--out sidecar/data/frame_model.json.gz]

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.attack_frame_model import FRAME_MODEL_FILE, READ_MAX, frame_cues  # noqa: E402
from sidecar.checks.attack_model import AttackModel, features, model_text  # noqa: E402
from sidecar.checks.refusal_text import fold  # noqa: E402
from tools.train_attack import (  # noqa: E402
    HELD_OUT,
    Row,
    fit_linear,
    load,
    reader_main,
)
from tools.written_prompts import written_rows  # noqa: E402

DEFAULT_OUT = ROOT / "sidecar" / "data" / FRAME_MODEL_FILE
TRAINED_SETS = (
    *("framed_b", "framed_c", "framed_d", "framed_e", "framed_f", "framed_g"),
    *("nearmiss_a", "nearmiss_b", "symbols_a", "symbols_b"),
    *("pasted_a", "labelled_a", "labelled_b", "planted_a", "planted_b"),
)
"""The written sets trained on: the framed prompts, and the benign rows of the near misses
(prompts in jailbreaks' words, prompts that end in symbols, pasted documents) the signals
were tuned on."""
HELD_OUT_SETS = (
    *("framed_a", "framed_h", "framed_i", "framed_j", "framed_k", "framed_l"),
    *("nearmiss_c", "symbols_c", "symbols_d", "symbols_e", "planted_c", "planted_d"),
    "ordinary_b",
)
"""Written sets the model never sees."""
REQUESTS = frozenset({"framed_harmful", "framed_benign_request"})
"""The kinds of row that are requests given as a task's text (the rest are not)."""
C = 4.0
FPR_BUDGET = 0.005
"""At most this share of benign training prompts (out of fold) may read as framed."""


def _args(text: str) -> tuple[str, list[str], int]:
    read = model_text(fold(text))
    return read, frame_cues(read), len(text)


def featurise(text: str) -> list[str]:
    return features(*_args(text))


def fit(rows: Sequence[Row], **kwargs: float) -> AttackModel:
    return fit_linear([featurise(r.prompt) for r in rows], [r.attack for r in rows], C, **kwargs)


def training_rows(data: Path, sets: Sequence[str] = TRAINED_SETS) -> list[Row]:
    """The written sets' rows (``attack``: a request in a frame) and the training sources'
    benign prompts, each of at most the length the model reads."""
    held = set(sets) & set(HELD_OUT_SETS)
    if held:
        raise ValueError(f"held-out written sets are never trained on: {sorted(held)}")
    rows = [
        Row(s, r["prompt"], r["kind"] in REQUESTS)
        for s in sets
        for r in written_rows(s)
        if r["kind"] in REQUESTS or not r["attack"]  # another technique's attack is neither
    ]
    rows += [
        Row(r.source, r.prompt, False)
        for r in load(data)
        if r.source not in HELD_OUT and not r.attack
    ]
    return [r for r in rows if len(fold(r.prompt)) <= READ_MAX]


def main(argv: Sequence[str] | None = None) -> int:
    return reader_main(
        argv,
        description=__doc__.split("\n\n")[0],
        default_out=DEFAULT_OUT,
        sets=TRAINED_SETS,
        training_rows=training_rows,
        fitter=fit,
        scored=_args,
        budget=FPR_BUDGET,
        label="framed",
        meta={"held_out_sets": list(HELD_OUT_SETS), "C": C},
    )


if __name__ == "__main__":
    sys.exit(main())
