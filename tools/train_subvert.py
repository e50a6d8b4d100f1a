"""Train the subversion model shipped in ``sidecar/data/subvert_model.json.gz``.

The model (:mod:`sidecar.checks.attack_subvert_model`) reads whether a short prompt is an
attempt, in the user's own words, to get around an assistant's setup: to reveal its hidden
instructions, drop them, claim authority over it, give it a character without its rules, or
make it say what its operator would not. Positives: the attacks of the written sets in
:data:`TRAINED_SETS` (``bench/data/written_prompts/``), users' attempts on customer-facing
assistants. Negatives: their near misses, the benign rows of every other written set that is
not held out (:data:`BENIGN_SETS`), and every benign prompt of the training sources
``tools/fetch_detector_data.py`` writes (the attack model's held-out sources are never read).
Of each, only the prompts the model reads: at most
:data:`~sidecar.checks.attack_subvert_model.READ_MAX` characters. The written sets in
:data:`HELD_OUT_SETS` are never trained on: ``bench/prompt_sets_eval.py`` and the tests
measure on them.

The thresholds are the lowest probabilities at which the model, reading rows it was not fitted
on (five folds), finds at most a budget of the written sets' benign rows to be such attempts:
the near misses in the same words, in fifteen languages, are where it errs (at these
thresholds it reads almost none of the sources' benign prompts so). ``alone``, from which the
check flags a prompt whether ``uncertain`` is set or not, within :data:`FPR_BUDGET`; ``agree``,
from which a prompt is uncertain with ``uncertain: true`` (a judge call), within
:data:`UNCERTAIN_BUDGET`.

    python tools/train_subvert.py --data OUT_DIR [--out sidecar/data/subvert_model.json.gz]

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.attack_hijack_model import hijack_read  # noqa: E402
from sidecar.checks.attack_subvert_model import READ_MAX, SUBVERT_MODEL_FILE  # noqa: E402
from sidecar.checks.refusal_text import fold  # noqa: E402
from tools.train_attack import (  # noqa: E402
    Row,
    read_args,
    read_fitter,
    reader_main,
    written_reader_rows,
)
from tools.written_prompts import written_sets  # noqa: E402

DEFAULT_OUT = ROOT / "sidecar" / "data" / SUBVERT_MODEL_FILE
TRAINED_SETS = ("nearmiss_d", "nearmiss_e", "nearmiss_g", "nearmiss_i", "organic_a", "organic_c")
"""The written sets of users' own attempts trained on: their attacks and their near misses."""
BENIGN_SETS = (
    *("nearmiss_a", "nearmiss_b", "hijack_a", "hijack_c", "hijack_f", "hijack_g", "hijack_h"),
    *("hijack_i", "fiction_a", "fiction_b", "framed_b", "framed_c", "framed_d", "framed_e"),
    *("framed_f", "framed_g", "harm_a", "harm_c", "harm_d", "harm_e", "harm_f", "harm_g"),
    *("harm_h", "pasted_a", "labelled_a", "labelled_b", "planted_a", "planted_b"),
    *("ordinary_a", "symbols_a", "symbols_b", "rag_a", "rag_b"),
)
"""Written sets whose benign rows are negatives (their attacks are other techniques')."""
HELD_OUT_SETS = (
    *("nearmiss_c", "nearmiss_f", "nearmiss_h", "organic_b", "hijack_b", "hijack_d"),
    *("hijack_e", "fiction_c", "fiction_d", "framed_a", "framed_h", "framed_i", "framed_j"),
    *("framed_k", "framed_l", "harm_b", "harm_i", "harm_j", "harm_k", "harm_l", "planted_c"),
    *("planted_d", "ordinary_b", "symbols_c", "symbols_d", "symbols_e", "rag_c"),
    *("harm_m", "harm_n", "harm_o", "harm_p", "harm_q", "harm_r"),
    *("hijack_j", "hijack_k", "hijack_l", "hijack_m"),
)
"""Written sets the model never sees."""
C = 1.0
FPR_BUDGET = 0.0005
"""At most this share of the written sets' benign rows (out of fold) may read as an attempt
(``alone``): the check flags each."""
UNCERTAIN_BUDGET = 0.002
"""The same, for ``agree``: each is a judge call where ``uncertain: true`` is set."""


def read(text: str) -> str | None:
    """What the model reads of a prompt, or None where it reads none of it."""
    folded = fold(text)
    return None if len(folded) > READ_MAX else hijack_read(folded)


_args = read_args(read)
fit = read_fitter(read, C)


def training_rows(data: Path, sets: Sequence[str] = TRAINED_SETS) -> list[Row]:
    """The rows of the written sets of attempts, the benign rows of :data:`BENIGN_SETS` and
    the training sources' benign prompts, each one the model reads."""
    return written_reader_rows(data, sets, BENIGN_SETS, HELD_OUT_SETS, read)


def main(argv: Sequence[str] | None = None) -> int:
    written = {s["name"] for s in written_sets()}
    return reader_main(
        argv,
        description=__doc__.split("\n\n")[0],
        default_out=DEFAULT_OUT,
        sets=TRAINED_SETS,
        training_rows=training_rows,
        fitter=fit,
        scored=_args,
        budget=FPR_BUDGET,
        label="attempt",
        meta={"held_out_sets": list(HELD_OUT_SETS), "C": C, "budgets_count": "written sets"},
        counted=lambda r: r.source in written,
        agree_budget=UNCERTAIN_BUDGET,
        agree_counted=lambda r: r.source in written,
    )


if __name__ == "__main__":
    sys.exit(main())
