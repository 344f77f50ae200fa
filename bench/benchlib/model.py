"""What a scenario measures, and how samples become table rows."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchlib.clis import REFERENCE, WISP, Cli

Unit = Literal["s", "MB", "x", "B", "chars"]


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: Unit
    # Target on wisp/reference (medians), and/or on wisp's own median.
    ratio_target: float | None = None
    abs_target: float | None = None


@dataclass
class RunResult:
    values: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ctx:
    base_url: str
    work: Path  # a scratch directory for this scenario (the CLIs' cwd)
    quick: bool


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    metrics: tuple[Metric, ...]
    run: Callable[[Cli, Ctx], RunResult]
    variants: frozenset[str] = frozenset({WISP, REFERENCE})
    max_reps: int | None = None  # long scenarios run fewer times than --n
    needs_sdk: bool = False


@dataclass(frozen=True)
class Summary:
    n: int
    min: float
    median: float
    max: float


def summarize(samples: list[float]) -> Summary | None:
    if not samples:
        return None
    return Summary(len(samples), min(samples), statistics.median(samples), max(samples))


def ratio(wisp: Summary | None, ref: Summary | None) -> float | None:
    if wisp is None or ref is None or ref.median == 0:
        return None
    return wisp.median / ref.median


def verdict(metric: Metric, wisp: Summary | None, r: float | None) -> str:
    """"met", "MISSED" or "—" (no target, or nothing to judge)."""
    checks: list[bool] = []
    if metric.ratio_target is not None and r is not None:
        checks.append(r <= metric.ratio_target)
    if metric.abs_target is not None and wisp is not None:
        checks.append(wisp.median <= metric.abs_target)
    if not checks:
        return "—"
    return "met" if all(checks) else "MISSED"
