"""The page and render cost of the judge-corrected robustness, with it off and on, one run.

    python bench/robustness_render.py [--routes 20] [--repeat 10]

Fills windows with attack probes over (route, model, category) cells, every probe judged at
weight 2, then renders /metrics with ``windows.robustness_correction.enabled`` false and true,
alternating twice, and prints the live series, the best render time and the page size of each.
"""

from __future__ import annotations

import argparse
import time

from prometheus_client import CollectorRegistry

from sidecar.events import Attack, Event
from sidecar.metrics import render
from sidecar.pipeline import Outcome, Verdict
from sidecar.settings import LabelSettings, RobustnessCorrectionSettings, WindowSettings
from sidecar.windows import Windows


class _Rule:
    def __init__(self, rule_id: str, check: str) -> None:
        self.id, self.check_name, self.field = rule_id, check, "response"


def fill(enabled: bool, n_routes: int) -> tuple[CollectorRegistry, Windows]:
    routes = [f"/r{i}" for i in range(n_routes)]
    models = [f"m{i}" for i in range(5)]
    registry = CollectorRegistry()
    settings = WindowSettings(
        max_series=10_000,
        robustness_correction=RobustnessCorrectionSettings(enabled=enabled, min_judged=5),
    )
    labels = LabelSettings(routes=routes, models=models, tenants=["t"])
    w = Windows(settings, registry, labels=labels)
    w.bind_rules([_Rule("refuse", "refusal")], "v1")  # type: ignore[list-item]
    verdicts = []
    for r in routes:
        for m in models:
            for c in ("basic", "intermediate", "advanced"):
                for k in range(10):
                    e = Event(
                        id=f"e{len(verdicts)}",
                        response="x",
                        route=r,
                        model=m,
                        tenant="t",
                        attack=Attack(category=c),  # type: ignore[arg-type]
                    )
                    verdicts.append(Verdict(e, {"refuse": Outcome(k % 2 == 0, True)}, "v1"))
    w.observe_verdicts(verdicts)
    for i, v in enumerate(verdicts):
        w.observe_scores(v, {"refusal": float(i % 3 == 0)}, 2.0)
    return registry, w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    for enabled in (False, True, False, True):
        registry, w = fill(enabled, args.routes)
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            page = render(registry)
            best = min(best, time.perf_counter() - t)
        lines = page.count(b"\n")
        print(
            f"correction {'on ' if enabled else 'off'}: {w.series_count} live series, "
            f"render {best * 1000:.1f} ms (best of {args.repeat}), "
            f"{lines} lines, {len(page) // 1024} KiB"
        )


if __name__ == "__main__":
    main()
