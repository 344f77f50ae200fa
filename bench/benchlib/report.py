"""The markdown table and the JSON results file."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchlib.clis import REFERENCE, WISP, WISP_SRC
from benchlib.model import Metric, Scenario, Summary, ratio, summarize, verdict

# samples[scenario][cli][metric] -> values; notes[scenario][cli] -> note lines
Samples = dict[str, dict[str, dict[str, list[float]]]]
Notes = dict[str, dict[str, list[str]]]

HEADER = (
    "| scenario | metric | wisp min / med / max | wisp, no .pyc (med) "
    "| reference min / med / max | wisp/ref | target | |"
)
RULE = "|---|---|---|---|---|---|---|---|"


def table(scenarios: list[Scenario], samples: Samples) -> list[str]:
    lines = [HEADER, RULE]
    for scenario in scenarios:
        per_cli = samples.get(scenario.name, {})
        for metric in scenario.metrics:
            lines.append(_row(scenario, metric, per_cli))
    return lines


def notes_block(scenarios: list[Scenario], notes: Notes) -> list[str]:
    lines: list[str] = []
    for scenario in scenarios:
        for cli, items in notes.get(scenario.name, {}).items():
            for item in dict.fromkeys(items):  # identical notes from repeated runs once
                lines.append(f"- {scenario.title}, {cli}: {item}")
    return lines


def write_json(path: Path, meta: dict[str, Any], scenarios: list[Scenario], samples: Samples,
               notes: Notes) -> None:
    rows = []
    for scenario in scenarios:
        per_cli = samples.get(scenario.name, {})
        for metric in scenario.metrics:
            wisp = summarize(per_cli.get(WISP, {}).get(metric.key, []))
            ref = summarize(per_cli.get(REFERENCE, {}).get(metric.key, []))
            src = summarize(per_cli.get(WISP_SRC, {}).get(metric.key, []))
            r = ratio(wisp, ref)
            rows.append({
                "scenario": scenario.name,
                "metric": metric.key,
                "label": metric.label,
                "unit": metric.unit,
                "wisp": asdict(wisp) if wisp else None,
                "wisp_src": asdict(src) if src else None,
                "reference": asdict(ref) if ref else None,
                "ratio": r,
                "ratio_target": metric.ratio_target,
                "abs_target": metric.abs_target,
                "verdict": verdict(metric, wisp, r),
            })
    payload = {"meta": meta, "rows": rows, "samples": samples, "notes": notes}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n")


def _row(scenario: Scenario, metric: Metric, per_cli: dict[str, dict[str, list[float]]]) -> str:
    wisp = summarize(per_cli.get(WISP, {}).get(metric.key, []))
    src = summarize(per_cli.get(WISP_SRC, {}).get(metric.key, []))
    ref = summarize(per_cli.get(REFERENCE, {}).get(metric.key, []))
    r = ratio(wisp, ref)
    cells = [
        scenario.title,
        metric.label,
        _triple(wisp, metric),
        _fmt(src.median, metric) if src else "—",
        _triple(ref, metric) if ref else "absent",
        f"{r:.2f}" if r is not None else "—",
        _target(metric),
        verdict(metric, wisp, r),
    ]
    return "| " + " | ".join(cells) + " |"


def _triple(s: Summary | None, metric: Metric) -> str:
    if s is None:
        return "—"
    if s.n == 1:
        return f"{_fmt(s.median, metric)} (n=1)"
    return " / ".join(_fmt(v, metric) for v in (s.min, s.median, s.max))


def _fmt(value: float, metric: Metric) -> str:
    if metric.unit == "s":
        if value < 0.01:  # per-turn times and CPU: a whole millisecond is too coarse
            return f"{value * 1000:.1f} ms"
        return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"
    if metric.unit == "MB":
        return f"{value:.1f} MB"
    if metric.unit == "x":
        return f"{value:.2f}×"
    if metric.unit == "B":
        return _bytes(value)
    return f"{value:,.0f}"


def _bytes(value: float) -> str:
    if value >= 1 << 20:
        return f"{value / (1 << 20):.1f} MiB"
    if value >= 1 << 10:
        return f"{value / (1 << 10):.0f} KiB"
    return f"{value:.0f} B"


def _target(metric: Metric) -> str:
    parts = []
    if metric.ratio_target is not None:
        parts.append(f"ratio ≤ {metric.ratio_target:g}")
    if metric.abs_target is not None:
        parts.append(f"wisp ≤ {_fmt(metric.abs_target, metric)}")
    return ", ".join(parts) or "—"
