from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from sidecar.errors import RuleSetError
from sidecar.events import Event, validate
from sidecar.rules import load_rules
from tests.conftest import IN_CI

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_every_shipped_rule_pack_loads() -> None:
    ruleset = load_rules([REPO / "rules"])
    assert len(ruleset.rules) >= 3
    assert len(ruleset.version) == 12


def test_errors_name_the_file_and_rule_and_all_are_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        """
rules:
  - {id: a, check: no_such_check}
  - {id: b, check: length_less_than, params: {value: -1}}
  - {id: c, check: length_less_than, params: {value: 5, colour: red}}
  - {id: d, check: length_less_than, params: {value: 5}, min: 0.5}
  - {id: a, check: contains_any, params: {keywords: [x]}}
  - {id: e, check: contains_any, params: {keywords: [x]}, severity: apocalyptic}
""",
    )
    with pytest.raises(RuleSetError) as info:
        load_rules([path])
    errors = {(e.rule_id, e.reason.split(":")[0]) for e in info.value.errors}
    text = str(info.value)
    assert all(str(path) in str(e) for e in info.value.errors)
    assert "unknown check 'no_such_check'" in text
    assert "params.value" in text
    assert "params.colour" in text
    assert "use expect, not min/max" in text
    assert "duplicate rule id" in text
    assert any(rid == "e" for rid, _ in errors)  # schema error located by rule id


def test_yaml_syntax_errors_and_missing_files_are_reported(tmp_path: Path) -> None:
    bad = write(tmp_path, "broken.yaml", "rules: [\n")
    with pytest.raises(RuleSetError) as info:
        load_rules([bad, tmp_path / "missing.yaml"])
    reasons = [e.reason for e in info.value.errors]
    assert any("not valid YAML" in r for r in reasons)
    assert any("no such file" in r for r in reasons)


def test_a_key_given_twice_is_an_error_not_a_silent_override(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys: a second ``rules:`` block used to hide the
    first one's rules, and validate said "ok: 1 rules"."""
    twice = write(
        tmp_path,
        "twice.yaml",
        "rules:\n  - {id: a, check: length_greater_than, params: {value: 0}}\n"
        "rules:\n  - {id: b, check: length_greater_than, params: {value: 0}}\n",
    )
    with pytest.raises(RuleSetError) as info:
        load_rules([twice])
    [error] = info.value.errors
    assert error.reason == (
        "not valid YAML: line 3, column 1: while reading a mapping (its key 'rules' first at "
        "line 1): key 'rules' is given twice"
    )
    # A key after a merge (<<) overrides the merged one, as YAML means it to.
    merged = write(
        tmp_path,
        "merged.yaml",
        "rules:\n  - {id: a, check: length_greater_than, params: &p {value: 0}}\n"
        "  - {id: b, check: length_greater_than, params: {<<: *p, value: 3}}\n",
    )
    assert [r.id for r in load_rules([merged]).rules] == ["a", "b"]


def test_a_bad_judge_mapping_is_reported_with_its_file(tmp_path: Path) -> None:
    """It used to surface only when merged with the process's settings, as "invalid judge
    settings in rule files", with no file named."""
    rule = "rules:\n  - {id: a, check: length_greater_than, params: {value: 0}}\n"
    good = write(tmp_path, "good.yaml", "judge: {sample_rate: 0.5}\n" + rule)
    assert load_rules([good]).judge == {"sample_rate": 0.5}
    bad = write(tmp_path, "bad.yaml", "judge: {sample_rate: 2}\n" + rule.replace(" a,", " b,"))
    with pytest.raises(RuleSetError) as info:
        load_rules([good, bad])
    [error] = info.value.errors
    assert error.file == str(bad)
    assert error.reason == "judge: sample_rate: Input should be less than or equal to 1"


def test_a_linked_rule_file_is_named_as_given(tmp_path: Path) -> None:
    """A ConfigMap mounts files as links into a timestamped directory: errors named that
    directory instead of the path the user configured. Includes are still found beside the
    file the link points to."""
    real = tmp_path / "..2026_11_26_00_00_00.1"
    real.mkdir()
    write(
        real,
        "base.yaml",
        "rules:\n  - {id: base, check: length_greater_than, params: {value: 0}}\n",
    )
    write(real, "main.yaml", "include: [base.yaml]\nrules:\n  - {id: bad, check: nope}\n")
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    (mounted / "rules.yaml").symlink_to(real / "main.yaml")
    with pytest.raises(RuleSetError) as info:
        load_rules([mounted / "rules.yaml"])
    [error] = info.value.errors
    assert error.file == str(mounted / "rules.yaml")
    (real / "main.yaml").write_text("include: [base.yaml]\nrules: []\n")
    assert [r.id for r in load_rules([mounted / "rules.yaml"]).rules] == ["base"]


def test_includes_defaults_and_disabled_rules(tmp_path: Path) -> None:
    write(
        tmp_path,
        "base.yaml",
        "rules:\n  - {id: base, check: length_greater_than, params: {value: 0}}\n",
    )
    main = write(
        tmp_path,
        "main.yaml",
        """
include: [base.yaml]
defaults: {field: prompt, severity: error, when: {route: /chat}}
rules:
  - {id: short, check: length_less_than, params: {value: 10}}
  - {id: disabled, check: length_less_than, params: {value: 10}, enabled: false}
  - {id: anywhere, check: length_less_than, params: {value: 10}, when: {task: [qa, rag]}}
""",
    )
    ruleset = load_rules([main])
    rules = {r.id: r for r in ruleset.rules}
    assert set(rules) == {"base", "short", "anywhere"}  # "disabled" is not compiled
    assert rules["short"].field == "prompt" and rules["short"].severity == "error"
    assert rules["base"].field == "response"
    chat = Event(id="1", prompt="p", route="/chat")
    qa = Event(id="2", prompt="p", route="/api", task="qa")
    assert (
        rules["short"].when is not None
        and rules["short"].when(chat)
        and not rules["short"].when(qa)
    )
    assert (
        rules["anywhere"].when is not None
        and rules["anywhere"].when(qa)
        and not rules["anywhere"].when(chat)
    )


def test_missing_include_is_an_error(tmp_path: Path) -> None:
    main = write(tmp_path, "main.yaml", "include: [nope.yaml]\nrules: []\n")
    with pytest.raises(RuleSetError, match=r"nope\.yaml does not exist"):
        load_rules([main])


def test_attack_filters(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "r.yaml",
        """
rules:
  - {id: probes, check: length_greater_than, params: {value: 0}, when: {attack: true}}
  - {id: normal, check: length_greater_than, params: {value: 0}, when: {attack: false}}
  - {id: advanced, check: length_greater_than, params: {value: 0}, when: {attack_category: advanced}}
""",
    )
    r = {x.id: x.when for x in load_rules([path]).rules}
    plain = Event(id="1", response="x")
    basic = validate({"id": "2", "response": "x", "attack": {"category": "basic"}})
    adv = validate({"id": "3", "response": "x", "attack": {"category": "advanced"}})
    assert r["probes"] and not r["probes"](plain) and r["probes"](basic)
    assert r["normal"] and r["normal"](plain) and not r["normal"](adv)
    assert r["advanced"] and r["advanced"](adv) and not r["advanced"](basic)


def test_version_is_a_content_hash(tmp_path: Path) -> None:
    path = write(
        tmp_path, "r.yaml", "rules:\n  - {id: a, check: length_less_than, params: {value: 5}}\n"
    )
    v1 = load_rules([path]).version
    assert load_rules([path]).version == v1
    path.write_text("rules:\n  - {id: a, check: length_less_than, params: {value: 6}}\n")
    assert load_rules([path]).version != v1


def test_a_schema_file_is_part_of_the_version_and_of_the_watched_files(tmp_path: Path) -> None:
    """Editing a schema file changed the verdicts but not rules_version, and the running
    sidecar never reloaded it."""
    from sidecar.rules import RuleWatcher

    schema = tmp_path / "s.json"
    schema.write_text('{"type": "object", "required": ["name"]}')
    path = write(
        tmp_path,
        "r.yaml",
        "rules:\n  - {id: a, check: json_schema, params: {schema_file: s.json}}\n",
    )
    first = load_rules([path])
    assert schema.resolve() in first.files

    async def reload() -> None:
        pass

    watcher = RuleWatcher(0, lambda: first.files, reload)
    watcher.mark()
    schema.write_text('{"type": "object", "required": ["name", "age"]}')
    os.utime(schema, (1, 1))  # a different mtime, however fast the write
    assert watcher.changed()
    second = load_rules([path])
    assert second.version != first.version


def test_expectations(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "r.yaml",
        """
rules:
  - {id: t, check: length_less_than, params: {value: 5}}
  - {id: f, check: length_less_than, params: {value: 5}, expect: false}
""",
    )
    rules = {r.id: r for r in load_rules([path]).rules}
    assert rules["t"].passed(True) and not rules["t"].passed(False)
    assert rules["f"].passed(False) and not rules["f"].passed(True)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "{id: r, check: fuzzy_match, params: {value: x}, min: 80}",
            "fuzzy_match scores run from 0 to 1: with min 80 the rule fails every event",
        ),
        (
            "{id: r, check: coverage, max: -0.1}",
            "coverage scores run from 0 to 1: with max -0.1 the rule fails every event",
        ),
        ("{id: r, check: rouge, min: .nan}", "min: must be a finite number"),
        (
            "{id: r, check: contains_email, when: {attack_category: expert}}",
            "when.attack_category.0: Input should be 'basic', 'intermediate' or 'advanced'",
        ),
        (
            "{id: r, check: contains_email, when: {attack: false, attack_category: basic}}",
            "attack: false and attack_category exclude each other",
        ),
    ],
)
def test_rules_that_can_never_pass_or_never_apply_are_refused(
    tmp_path: Path, rule: str, message: str
) -> None:
    """Each of these validated, then failed every event or applied to none."""
    path = write(tmp_path, "r.yaml", f"rules:\n  - {rule}\n")
    with pytest.raises(RuleSetError, match=re.escape(message)):
        load_rules([path])


def test_score_ranges_that_reach_past_one_are_allowed(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", "rules:\n  - {id: r, check: density, min: 2.5}\n")
    assert load_rules([path]).rules[0].lo == 2.5


def test_patterns_a_user_most_likely_did_not_mean_get_notes(tmp_path: Path) -> None:
    from sidecar.rules import rule_notes

    path = write(
        tmp_path,
        "r.yaml",
        "rules:\n"
        '  - {id: backspace, check: regex, params: {pattern: "\\bpassword\\b"}}\n'
        '  - {id: empty, check: regex, params: {pattern: "x*"}}\n'
        '  - {id: comment, check: regex, params: {pattern: "#todo", flags: [VERBOSE]}}\n'
        "  - {id: fine, check: regex, params: {pattern: '\\bpassword\\b'}}\n"
        "  - {id: anchored, check: regex, params: {pattern: '^$'}}\n",
    )
    notes = rule_notes(load_rules([path]))
    assert len(notes) == 3, notes
    assert "rule 'backspace': the pattern holds control characters (\\x08)" in notes[0]
    assert "rule 'empty': the pattern matches an empty string anywhere" in notes[1]
    assert notes[2].endswith("(with VERBOSE, # starts a comment)")


def test_disabled_rules_and_clashing_judge_settings_get_notes(tmp_path: Path) -> None:
    """A broken disabled rule validated fine and broke the deploy that enabled it; two rule
    files setting the judge's sample rate differently were merged without a word."""
    from sidecar.rules import rule_notes

    a = write(
        tmp_path,
        "a.yaml",
        "judge: {sample_rate: 0.1}\n"
        "rules:\n"
        '  - {id: off-regex, check: regex, params: {pattern: "(("}, enabled: false}\n'
        "  - {id: off-check, check: no_such_check, enabled: false}\n"
        "  - {id: live, check: contains_email}\n",
    )
    b = write(tmp_path, "b.yaml", "judge: {sample_rate: 0.5}\nrules: []\n")
    ruleset = load_rules([a, b])
    assert [r.id for r in ruleset.rules] == ["live"]
    assert ruleset.judge == {"sample_rate": 0.5}
    notes = rule_notes(ruleset)
    assert notes[0] == (
        f"judge.sample_rate is 0.1 in {a} and 0.5 in {b}: the later file's value, 0.5, is used"
    )
    assert notes[1].startswith(f"{a}: rule 'off-regex' is disabled, and would not load: ")
    assert notes[2].startswith(f"{a}: rule 'off-check' is disabled, and would not load: unknown")
    assert len(notes) == 3


def test_string_and_length_bounds_that_cannot_hold_get_notes(tmp_path: Path) -> None:
    from sidecar.rules import rule_notes

    path = write(
        tmp_path,
        "r.yaml",
        "rules:\n"
        '  - {id: eq, check: equals_to, params: {value: "  yes  "}}\n'
        '  - {id: sw, check: starts_with, params: {value: " Sure"}}\n'
        '  - {id: sw-ok, check: starts_with, params: {value: "Sure "}}\n'
        '  - {id: eq-ok, check: equals_to, params: {value: "  yes  ", strip: false}}\n'
        "  - {id: short, check: length_less_than, params: {value: 0}}\n",
    )
    notes = rule_notes(load_rules([path]))
    assert [n.split(": ")[1] for n in notes] == ["rule 'eq'", "rule 'sw'", "rule 'short'"]
    assert "strip: true removes from the text" in notes[0]
    assert notes[2].endswith("no text is shorter than 0 characters: the check is never true")
    bad = write(
        tmp_path, "b.yaml", "rules:\n  - {id: b, check: length_less_than, params: {value: true}}\n"
    )
    with pytest.raises(RuleSetError, match="must be a whole number, not true or false"):
        load_rules([bad])


def test_registered_secrets_no_rule_looks_for_get_a_note(tmp_path: Path) -> None:
    """A canary registered in the settings was never looked for with the default pack, and
    nothing said so: a leak of it passed."""
    from sidecar.rules import rule_notes

    plain = write(tmp_path, "a.yaml", "rules:\n  - {id: e, check: contains_email}\n")
    [note] = rule_notes(load_rules([plain], secrets={"override": "ZEBRA-7731"}))
    assert note.startswith("the settings register 1 secret(s), but no enabled rule uses")
    leak = write(tmp_path, "b.yaml", "rules:\n  - {id: s, check: secret_leak, expect: false}\n")
    assert rule_notes(load_rules([plain, leak], secrets={"override": "ZEBRA-7731"})) == []


def test_rule_files_are_read_with_libyaml_and_errors_still_show_the_line() -> None:
    """libyaml reads a large rule file three times as fast; its marks carry no snippet, so a
    text it refuses is read again in Python, whose error shows the offending line."""
    import yaml

    from sidecar import rules as rules_mod

    if not yaml.__with_libyaml__:  # a PyYAML built without it: the Python reader alone
        message = "PyYAML has no libyaml here"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    assert rules_mod._FastLoader is not None
    packs = [REPO / "sidecar" / "data" / "default.yaml", *sorted((REPO / "rules").glob("*.yaml"))]
    for pack in packs:
        text = pack.read_text(encoding="utf-8")
        slow = yaml.load(text, Loader=rules_mod._StrictLoader)
        assert rules_mod.load_yaml(text) == slow, pack
    for broken in ["rules:\n  - id: a\n    check: x\n   check: y\n", "rules: []\nrules: []\n"]:
        with pytest.raises(yaml.YAMLError) as info:
            rules_mod.load_yaml(broken)
        assert info.value.problem_mark.get_snippet()  # type: ignore[attr-defined]
    with pytest.raises(yaml.constructor.ConstructorError, match="given twice"):
        rules_mod.load_yaml("a: 1\nb: {c: 1, c: 2}\n")
