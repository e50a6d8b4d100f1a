"""The tree holds the product, not its by-products, and installs are reproducible."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LIMIT = 1 << 20

LARGE_FILES_ALLOWED: dict[str, str] = {
    # A tracked file over 1 MB must be listed here with the reason it belongs in the tree
    # (data the package ships or the tests read, which cannot be generated at test time).
    # Benchmark output, generated streams and downloaded data sets never qualify: they are
    # ignored (.gitignore) and rebuilt by their command.
    "bench/data/injected_passages.json": "passages the project wrote by hand, read by "
    "bench/injection_eval.py and tests/checks/test_attack_documents.py (DATA.md)",
}


def too_large(sizes: dict[str, int]) -> list[str]:
    """Files over the limit that the allowlist does not name."""
    return sorted(p for p, n in sizes.items() if n > LIMIT and p not in LARGE_FILES_ALLOWED)


def tracked_sizes() -> dict[str, int]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    sizes = {}
    for path in filter(None, out.split("\0")):
        full = REPO / path
        if full.is_file():  # a deletion not yet committed is gone from the work tree
            sizes[path] = full.stat().st_size
    return sizes


def test_no_tracked_file_over_1_mb_unless_allowed() -> None:
    assert too_large(tracked_sizes()) == []


def test_the_allowlist_names_only_large_tracked_files() -> None:
    sizes = tracked_sizes()
    stale = [p for p in LARGE_FILES_ALLOWED if sizes.get(p, 0) <= LIMIT]
    assert stale == [], "allowlisted, but not a tracked file over 1 MB"


def test_the_size_check_finds_a_large_file() -> None:
    assert too_large({"events.jsonl": 21_000_000, "small.txt": 10, "edge": LIMIT}) == [
        "events.jsonl"
    ]


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string."""
    name = re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def constraints() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"not pinned to one version: {line}"
            pins[_name(name)] = version
    return pins


def test_constraints_pin_every_declared_dependency() -> None:
    """A dependency added to pyproject.toml without refreshing constraints.txt (the command
    in docs/development.md) would be resolved afresh on every build."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    names = {_name(r) for r in declared} - {"llm-sidecar"}
    pins = constraints()
    assert "llm-sidecar" not in pins, "constraints.txt must not pin the project itself"
    assert sorted(names - set(pins)) == []


def test_the_image_and_ci_install_with_the_constraints() -> None:
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^COPY [^\n]*constraints\.txt", dockerfile, flags=re.M)
    assert re.search(r"^RUN pip wheel [^\n]*-c constraints\.txt", dockerfile, flags=re.M)
    assert "!constraints.txt" in (REPO / ".dockerignore").read_text(encoding="utf-8")
    assert "-c constraints.txt" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_links_between_the_docs_pages_resolve() -> None:
    """A page moved or renamed leaves no dead relative link in docs/ (external links and the
    README, which also links pages other changes add, are not checked here)."""
    dead = []
    for page in sorted((REPO / "docs").glob("*.md")):
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                dead.append(f"{page.name}: {target}")
    assert dead == []


def _anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub makes them: lower case, marks but
    hyphens and underscores dropped, spaces made hyphens, a repeated one numbered."""
    found: set[str] = set()
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def test_anchors_of_links_to_the_docs_pages_resolve() -> None:
    """A link to a section of a page (``page.md#section``, or ``#section`` within a page)
    names a heading that page has, from the README and from every page of docs/."""
    dead = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)\s#]*)#([^)\s]+)\)", text):
            if "://" in target:
                continue
            linked = page.parent / target if target else page
            if linked.suffix == ".md" and linked.exists() and anchor not in _anchors(linked):
                dead.append(f"{page.name}: {target}#{anchor}")
    assert dead == []
