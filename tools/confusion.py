"""Confusion counts of a binary detector against labels, for the trainer and the benches."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    def __iadd__(self, other: Confusion) -> Confusion:
        self.tp += other.tp
        self.fp += other.fp
        self.tn += other.tn
        self.fn += other.fn
        return self

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0

    def accuracy_interval(self, z: float = 1.96) -> tuple[float, float]:
        """Wilson score interval of the accuracy (95 % by default): how far the figure could
        move on another sample of the same size."""
        n = self.n
        if not n:
            return 0.0, 1.0
        p = self.accuracy
        centre = p + z * z / (2 * n)
        spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        scale = 1 + z * z / n
        return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)

    def row(self) -> str:
        return (
            f"n={self.n:5d}  acc {self.accuracy:.3f}  P {self.precision:.3f}  "
            f"R {self.recall:.3f}  F1 {self.f1:.3f}"
        )
