"""Time to render /metrics with N live rolling-window series, and the size of the page.

    python bench/metrics_render.py [--series 2000] [--repeat 5] [--everything]

Fills the windows with events spread over enough (route, model, tenant) segments to reach
about N live series, then renders the registry as Prometheus text the way a scrape does, and
prints the best of ``--repeat`` renders with the page's lines and bytes, for the default
export settings (or ``--everything``), with llm-sidecar's renderer and with
prometheus_client's ``generate_latest`` (the same bytes), and in the OpenMetrics format that
Prometheus asks for.
"""

from __future__ import annotations

import argparse
import time

from prometheus_client import CollectorRegistry, generate_latest

from sidecar.events import Event
from sidecar.metrics import render
from sidecar.pipeline import Outcome, Verdict
from sidecar.settings import ExportSettings, LabelSettings, WindowSettings
from sidecar.windows import Windows


class _Rule:
    def __init__(self, rule_id: str, check: str) -> None:
        self.id, self.check_name, self.field = rule_id, check, "response"


RULES = [_Rule(f"rule-{i}", "contains_none") for i in range(6)] + [_Rule("refuse", "refusal")]


def fill(n_series: int, everything: bool = False) -> tuple[CollectorRegistry, Windows]:
    routes = [f"/r{i}" for i in range(20)]
    models = [f"m{i}" for i in range(10)]
    tenants = [f"t{i}" for i in range(10)]
    labels = LabelSettings(routes=routes, models=models, tenants=tenants)
    registry = CollectorRegistry()
    settings = WindowSettings(max_series=n_series, export=ExportSettings(everything=everything))
    windows = Windows(settings, registry, labels=labels)
    windows.bind_rules(RULES, "v1")  # type: ignore[arg-type]
    batch: list[Verdict] = []
    i = 0
    while windows.series_count < n_series and i < 200_000:
        e = Event(
            id=str(i),
            response="x",
            route=routes[i % 20],
            model=models[(i // 20) % 10],
            tenant=tenants[(i // 200) % 10],
        )
        checks = {r.id: Outcome(True, i % 7 != 0) for r in RULES}
        batch.append(Verdict(e, checks, "v1", True))
        i += 1
        if len(batch) == 500:
            windows.observe_verdicts(batch)
            batch = []
            windows.snapshot()
    if batch:
        windows.observe_verdicts(batch)
    return registry, windows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--series", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--everything", action="store_true", help="export every figure")
    args = ap.parse_args()
    registry, windows = fill(args.series, args.everything)
    pages = []

    def openmetrics(registry: CollectorRegistry) -> bytes:
        return render(registry, openmetrics=True)

    for name, fn in (
        ("render", render),
        ("generate_latest", generate_latest),
        ("render openmetrics", openmetrics),
    ):
        best = float("inf")
        page = b""
        for _ in range(args.repeat):
            t = time.perf_counter()
            page = fn(registry)
            best = min(best, time.perf_counter() - t)
        pages.append(page)
        lines = page.count(b"\n")
        print(
            f"{windows.series_count} live series, {name}: {best * 1000:.1f} ms "
            f"(best of {args.repeat}), {lines} lines, {len(page) / 1024:.0f} KiB"
        )
    print("same bytes as generate_latest:", pages[0] == pages[1])


if __name__ == "__main__":
    main()
