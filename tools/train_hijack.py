"""Train the hijack model shipped in ``sidecar/data/hijack_model.json.gz``.

The model (:mod:`sidecar.checks.attack_hijack_model`) reads whether a prompt that gives a
sentence is goal hijacking. Positives: the hijacks of the written sets in :data:`TRAINED_SETS`
(``bench/data/written_prompts/``). Negatives: their near misses, the benign rows of the other
written sets in :data:`BENIGN_SETS`, and every benign prompt of the training sources
``tools/fetch_detector_data.py`` writes (the attack model's held-out sources are never read).
Of each, only the prompts the model reads: at most
:data:`~sidecar.checks.attack_hijack_model.READ_MAX` characters that give a sentence
(:func:`~sidecar.checks.attack_hijack.gives_a_sentence`). The written sets in
:data:`HELD_OUT_SETS` are never trained on: ``bench/prompt_sets_eval.py`` and the tests
measure on them.

The threshold (the model's ``alone``) is the lowest probability at which the model, reading
rows it was not fitted on (five folds), finds at most :data:`FPR_BUDGET` of the benign rows
to be hijacking: each is a judge call where ``uncertain: true`` is set.

    python tools/train_hijack.py --data OUT_DIR [--out sidecar/data/hijack_model.json.gz]

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.attack_hijack import gives_a_sentence  # noqa: E402
from sidecar.checks.attack_hijack_model import (  # noqa: E402
    HIJACK_MODEL_FILE,
    READ_MAX,
    hijack_read,
)
from sidecar.checks.refusal_text import fold  # noqa: E402
from tools.train_attack import (  # noqa: E402
    Row,
    read_args,
    read_fitter,
    reader_main,
    written_reader_rows,
)

DEFAULT_OUT = ROOT / "sidecar" / "data" / HIJACK_MODEL_FILE
TRAINED_SETS = ("hijack_a", "hijack_c", "hijack_f", "hijack_g", "hijack_h", "hijack_i")
"""The written hijack sets trained on: their hijacks and their near misses."""
BENIGN_SETS = (
    *("nearmiss_a", "nearmiss_b", "nearmiss_d", "nearmiss_e", "nearmiss_g", "nearmiss_i"),
    *("framed_b", "framed_c", "framed_d", "framed_e", "framed_f", "framed_g"),
    *("pasted_a", "labelled_a", "labelled_b", "planted_a", "planted_b", "ordinary_a"),
    *("symbols_a", "symbols_b", "rag_a", "rag_b"),
)
"""Written sets whose benign rows are negatives (their attacks are other techniques')."""
HELD_OUT_SETS = (
    *("hijack_b", "hijack_d", "hijack_e", "nearmiss_c", "nearmiss_f", "nearmiss_h"),
    *("framed_a", "framed_h", "framed_i", "framed_j", "framed_k", "framed_l"),
    *("planted_c", "planted_d", "ordinary_b", "symbols_c", "symbols_d", "symbols_e", "rag_c"),
    *("hijack_j", "hijack_k", "hijack_l", "hijack_m"),
)
"""Written sets the model never sees."""
C = 1.0
FPR_BUDGET = 0.005
"""At most this share of benign training prompts (out of fold) may read as hijacking."""


def read(text: str) -> str | None:
    """What the model reads of a prompt, or None where it reads none of it."""
    folded = fold(text)
    if len(folded) > READ_MAX or not gives_a_sentence(folded):
        return None
    return hijack_read(folded)


_args = read_args(read)
fit = read_fitter(read, C)


def training_rows(data: Path, sets: Sequence[str] = TRAINED_SETS) -> list[Row]:
    """The written hijack sets' rows, the benign rows of :data:`BENIGN_SETS` and the training
    sources' benign prompts, each one the model reads."""
    return written_reader_rows(data, sets, BENIGN_SETS, HELD_OUT_SETS, read)


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
        label="hijack",
        meta={"held_out_sets": list(HELD_OUT_SETS), "C": C},
    )


if __name__ == "__main__":
    sys.exit(main())
