"""``Check.missing``: what an event lacks, said before the call, exactly as the call says it.

The pipeline asks ``missing`` first and, when it answers, gives the event the outcome the
call's ``CheckError`` would have given, without calling. So for every check that answers,
the answer must be the error the call raises, on every combination of the fields checks
need, and None wherever the call runs.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from sidecar.checks import leakage
from sidecar.checks.base import Check, CheckContext, asks_missing
from sidecar.checks.registry import registered
from sidecar.errors import CheckError
from sidecar.events import Event
from sidecar.pipeline import NOT_APPLICABLE, Pipeline
from sidecar.rules import load_rules

TEXT = "The capital of France is Paris, the assistant said after reading the passages."
CONTEXT = CheckContext(system_prompts={"acme": "You are the Acme support assistant. Be brief."})

# Every combination of the fields that checks need: absent, empty, present.
FIELDS: dict[str, list[Any]] = {
    "ground_truths": [None, [], ["Paris"]],
    "counterfactual_answers": [None, [], ["Lyon"]],
    "contexts": [None, [], ["Paris is the capital of France."]],
    "prompt": [None, "What is the capital of France?"],
    "system_prompt": [None, "You are the Acme support assistant."],
    "system_prompt_id": [None, "acme", "unknown"],
    "labels": [{}, {"canary": None}, {"canary": "TOKEN-4411-ORCHID"}],
}
EVENTS = [
    Event(id=f"e{n}", response=TEXT, **dict(zip(FIELDS, values, strict=True)))
    for n, values in enumerate(itertools.product(*FIELDS.values()))
]

# Parameters for checks that need some, and each source of the checks that read one.
PARAMS: dict[str, list[dict[str, Any]]] = {
    name: [{"source": s} for s in ("contexts", "prompt", "system_prompt")]
    for name in ("coverage", "density", "compression", "abstractness")
} | {"secret_leak": [{"from_labels": ["canary"]}]}

# The checks that must answer: one that stops answering (or a new one) fails below.
EXPECTED = {
    "prompt_leakage",
    "rouge",
    "bleu",
    "keyword_inclusion",
    "rgb_answer_correct",
    "rgb_error_detected",
    "rgb_error_corrected",
    "coverage",
    "density",
    "compression",
    "abstractness",
    "secret_leak",
}


def answering() -> list[tuple[str, Check[Any]]]:
    out = []
    for name, cls in sorted(registered().items()):
        if name.startswith("test_"):
            continue
        for params in PARAMS.get(name, [{}]):
            try:
                check = cls(cls.params_model.model_validate(params), CONTEXT)
            except Exception:  # a check with required parameters of its own
                continue
            if asks_missing(check):
                out.append((f"{name}{params or ''}", check))
    return out


CHECKS = answering()


def test_the_checks_that_need_event_fields_answer() -> None:
    assert {label.split("{")[0] for label, _ in CHECKS} == EXPECTED


@pytest.mark.parametrize(("label", "check"), CHECKS, ids=[label for label, _ in CHECKS])
def test_missing_says_what_the_call_raises(label: str, check: Check[Any]) -> None:
    said = 0
    for event in EVENTS:
        why = check.missing(event)
        if why is None:
            check(TEXT, event)  # runs: raises nothing
        else:
            with pytest.raises(CheckError) as raised:
                check(TEXT, event)
            assert str(raised.value) == why, (label, event)
            said += 1
    assert 0 < said < len(EVENTS)  # both answers occur


def test_the_pipeline_does_not_call_a_check_on_an_event_that_lacks_its_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - {id: leak, check: prompt_leakage, max: 0.5}\n")
    p = Pipeline(load_rules([path], system_prompts=CONTEXT.system_prompts))
    called: list[str] = []
    original = leakage.PromptLeakage.__call__

    def spy(self: leakage.PromptLeakage, text: str, event: Event) -> Any:
        called.append(event.id)
        return original(self, text, event)

    monkeypatch.setattr(leakage.PromptLeakage, "__call__", spy)
    events = [
        Event(id="none", response="hello"),
        Event(id="unknown", response="hello", system_prompt_id="other"),
        Event(
            id="registered",
            response="You are the Acme support assistant. Be brief.",
            system_prompt_id="acme",
        ),
        Event(id="inline", response="hello", system_prompt="Never say hello."),
    ]
    verdicts, stats = p.run(events)
    assert called == ["registered", "inline"]
    details = [v.checks["leak"].detail for v in verdicts]
    assert details[:2] == [
        "not applicable: no system_prompt",
        "not applicable: system_prompt_id is not registered",
    ]
    assert verdicts[2].checks["leak"].passed is False and verdicts[3].checks["leak"].passed
    assert stats.counts[0][NOT_APPLICABLE] == 2
    # The reasons' outcomes are shared, as the call's errors' are.
    again, _ = p.run([Event(id="none2", response="x")])
    assert again[0].checks["leak"] is verdicts[0].checks["leak"]
