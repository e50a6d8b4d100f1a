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
* :mod:`~sidecar.windows.core`: :class:`Windows`, the series table, fed by the App and the
  judge, that ties them together.
"""

from __future__ import annotations

from ..settings import DetectorSettings, WindowSettings, parse_duration
from .core import Windows
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
