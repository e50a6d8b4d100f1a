"""Train the harm model shipped in ``sidecar/data/harm_model.json.gz``.

The model (:mod:`sidecar.checks.attack_harm_model`) reads whether a request given as a
language task's text, or behind a pretext of fiction, is one an assistant should not carry
out. Positives: the harmful framed requests of the framed sets in :data:`TRAINED_SETS`, the
fictional framings of its fiction sets and the harmful requests of its harm sets
(``bench/data/written_prompts/``; a harm set's rows are no attacks, its ``harmful`` field says
which). Negatives: the rest of those sets (harmless requests in the same frames, dark fiction
that asks for nothing usable, harmless requests in the same alarming words), the benign rows
of the written sets in :data:`BENIGN_SETS`, and the benign prompts of the training sources
``tools/fetch_detector_data.py`` writes except
:data:`NOT_READ` (the attack model's held-out sources are never read); of each, the prompts of
at most :data:`~sidecar.checks.attack_harm_model.READ_MAX` characters, the only ones the model
reads. The written sets in :data:`HELD_OUT_SETS` are never trained on.

The threshold for a framed request (the model's ``alone``) is the lowest probability at which
the model, reading rows it was not fitted on (five folds), reads at most :data:`FPR_BUDGET` of
the harmless rows of :data:`TRAINED_SETS` as harmful: the hard cases, near the prompts it is
asked about. A row is read whole and, where the frame rules find a request in a language task,
that request on its own, as the check reads it; the higher probability counts. The threshold for a prompt that sets up fiction (``agree``) is the same within
:data:`FICTION_BUDGET`, of those harmless rows that set up fiction. Each such read is a false
positive of the check.

    python tools/train_harm.py --data OUT_DIR [--out sidecar/data/harm_model.json.gz]

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.attack_fiction import sets_up_fiction  # noqa: E402
from sidecar.checks.attack_frames import framed_text  # noqa: E402
from sidecar.checks.attack_harm_model import HARM_MODEL_FILE, READ_MAX  # noqa: E402
from sidecar.checks.attack_hijack_model import hijack_read  # noqa: E402
from sidecar.checks.attack_model import AttackModel, features  # noqa: E402
from sidecar.checks.refusal_text import fold  # noqa: E402
from tools.train_attack import (  # noqa: E402
    HELD_OUT,
    Row,
    fit_linear,
    load,
    reader_main,
)
from tools.written_prompts import written_rows  # noqa: E402

DEFAULT_OUT = ROOT / "sidecar" / "data" / HARM_MODEL_FILE
TRAINED_SETS = (
    *("framed_b", "framed_c", "framed_d", "framed_e", "framed_f", "framed_g"),
    *("harm_a", "harm_c", "harm_d", "harm_e", "harm_f", "harm_g", "harm_h"),
    *("fiction_a", "fiction_b"),
)
"""The written sets trained on: framed requests, harmful and harmless, requests asked
directly, harmful and harmless in the same words, and fiction as a pretext and as itself."""
BENIGN_SETS = (
    *("nearmiss_a", "nearmiss_b", "nearmiss_d", "nearmiss_e", "nearmiss_g", "nearmiss_i"),
    *("pasted_a", "labelled_a", "labelled_b", "planted_a", "planted_b", "ordinary_a"),
    *("symbols_a", "symbols_b", "rag_a", "rag_b"),
)
"""Written sets whose benign rows are negatives (their attacks are other techniques')."""
HELD_OUT_SETS = (
    *("framed_a", "framed_h", "framed_i", "framed_j", "framed_k", "framed_l"),
    *("harm_b", "harm_i", "harm_j", "harm_k", "harm_l"),
    *("harm_m", "harm_n", "harm_o", "harm_p", "harm_q", "harm_r"),
    *("fiction_c", "fiction_d"),
    *("nearmiss_c", "nearmiss_f", "nearmiss_h", "ordinary_b", "rag_c"),
)
"""Written sets the model never sees."""
NOT_READ = frozenset({"self_instruct_seed", "coconot_pref_prompts"})
"""Training sources left out: the held-out ``embedded_tasks`` puts their prompts in frames as
its harmless requests, and the model must meet those as it meets a user's."""
C = 3.0
FPR_BUDGET = 0.02
"""At most this share of the harmless rows of :data:`TRAINED_SETS` (out of fold) may read as
harmful: the threshold for a framed request (``alone``)."""
FICTION_BUDGET = 0.01
"""The same, for a prompt that sets up fiction, role-play or a hypothetical (``agree``), of
the harmless rows of :data:`TRAINED_SETS` that set one up (dark fiction, mostly): such
pretexts are more common in ordinary prompts than framed requests are, and the check flags
them whether ``uncertain`` is set or not."""


def harmful(row: dict[str, object]) -> bool:
    """Whether a written row is a harmful request: a framed or fiction set's attacks, a harm
    set's rows marked ``harmful``."""
    return bool(row.get("harmful", row["attack"]))


def _args(text: str) -> tuple[str, list[str], int]:
    read = hijack_read(fold(text))
    return read, [], len(read)  # as the check scores it


def _request_args(text: str) -> tuple[str, list[str], int] | None:
    """The request a language task carries, read on its own as the check reads it (where
    the frame rules find one)."""
    request = framed_text(fold(text))
    if request is None:
        return None
    read = hijack_read(request)
    return read, [], len(read)


def fit(rows: Sequence[Row], **kwargs: float) -> AttackModel:
    return fit_linear(
        [features(*_args(r.prompt)) for r in rows], [r.attack for r in rows], C, **kwargs
    )


def training_rows(data: Path, sets: Sequence[str] = TRAINED_SETS) -> list[Row]:
    """The written sets' rows (``attack``: harmful), the benign rows of :data:`BENIGN_SETS`
    and the training sources' benign prompts, each of at most the length the model reads."""
    held = (set(sets) | set(BENIGN_SETS)) & set(HELD_OUT_SETS)
    if held:
        raise ValueError(f"held-out written sets are never trained on: {sorted(held)}")
    rows = [Row(s, r["prompt"], harmful(r)) for s in sets for r in written_rows(s)]
    rows += [
        Row(s, r["prompt"], False) for s in BENIGN_SETS for r in written_rows(s) if not r["attack"]
    ]
    rows += [
        Row(r.source, r.prompt, False)
        for r in load(data)
        if r.source not in HELD_OUT and r.source not in NOT_READ and not r.attack
    ]
    return [r for r in rows if len(fold(r.prompt)) <= READ_MAX]


def main(argv: Sequence[str] | None = None) -> int:
    sets: set[str] = set()

    def rows(data: Path, chosen: Sequence[str]) -> list[Row]:
        sets.update(chosen)
        return training_rows(data, chosen)

    return reader_main(
        argv,
        description=__doc__.split("\n\n")[0],
        default_out=DEFAULT_OUT,
        sets=TRAINED_SETS,
        training_rows=rows,
        fitter=fit,
        scored=_args,
        budget=FPR_BUDGET,
        label="harmful",
        meta={
            "held_out_sets": list(HELD_OUT_SETS),
            "not_read": sorted(NOT_READ),
            "C": C,
            "alone_reads": ["the prompt", "the request a language task carries"],
        },
        counted=lambda r: r.source in sets,
        agree_budget=FICTION_BUDGET,
        agree_counted=lambda r: r.source in sets and sets_up_fiction(fold(r.prompt)),
        also=_request_args,
    )


if __name__ == "__main__":
    sys.exit(main())
