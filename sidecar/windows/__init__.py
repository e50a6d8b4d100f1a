"""Rolling scores over time windows, with sample counts and confidence bounds.

Every score (a pass rate, a judged mean, a detector's agreement with the judge, ...) is kept as
six sums per time bucket, in rings of buckets per window, so memory is bounded whatever the
event rate; values and bounds are computed from those sums only at scrape time. The package:

* :mod:`~sidecar.windows.ring`: the six sums, the time buckets and the rings;
* :mod:`~sidecar.windows.scores`: which scores exist, their kinds, which rules feed them, and
  how each value and bound (Wilson, Student t, bootstrap, F1, the judge-corrected robustness)
  is computed from sums;
* :mod:`~sidecar.windows.export`: the Prometheus collector that renders the series as the
  export settings (``windows.export``) select them;
* :mod:`~sidecar.windows.fleet`: the cumulative sums every process exports and the recording
  rules that compute the fleet's figures from them in Prometheus;
* :mod:`~sidecar.windows.core`: the series table, fed by the App and the judge.

:class:`Windows` is that table with its exporter registered: the exporter reads the table, and
the table knows nothing of the exporter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from prometheus_client import CollectorRegistry

from ..rules import CompiledRule
from ..settings import DetectorSettings, LabelSettings, WindowSettings, parse_duration
from . import core
from .export import _WindowCollector, check_export
from .ring import ALL
from .scores import SCORES, t_interval, t_quantile, wilson_interval
from .scores import _t_cdf as _t_cdf

__all__ = [
    "ALL",
    "SCORES",
    "DetectorSettings",
    "WindowSettings",
    "Windows",
    "parse_duration",
    "t_interval",
    "t_quantile",
    "wilson_interval",
]


class Windows(core.Windows):
    """The rolling windows, exported on ``registry`` when one is given."""

    def __init__(
        self,
        settings: WindowSettings | None = None,
        registry: CollectorRegistry | None = None,
        *,
        labels: LabelSettings | None = None,
        rules: Callable[[], Sequence[CompiledRule]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_export((settings or WindowSettings()).export)
        super().__init__(settings, labels=labels, rules=rules, clock=clock)
        if registry is not None:
            registry.register(_WindowCollector(self))
