"""What a study writes: the JSON record (with the machine it ran on), the markdown table and the plot, one
function each."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness.machine import Snapshot


def write_record(
    path: Path, record: dict[str, Any], started: Snapshot | None = None, *, append: bool = False
) -> dict[str, Any]:
    """Write ``record`` as JSON (one line with ``append``, added to a JSONL file); with ``started``, the machine
    since then under ``"machine"`` (`Snapshot.since`). Returns what was written."""
    if started is not None:
        record = {**record, "machine": started.since()}
    path.parent.mkdir(parents=True, exist_ok=True)
    if append:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    else:
        path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, right: Iterable[int] = ()) -> str:
    """A markdown table: ``header``, then ``rows`` (cells as text); the columns numbered in ``right`` are
    right-aligned (numbers)."""
    right = set(right)
    rule = ["---:" if column in right else "---" for column in range(len(header))]
    lines = [header, rule, *[[str(cell) for cell in row] for row in rows]]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


@dataclass
class Line:
    """One line of a plot: points, their error bars or band, and how it is drawn."""

    x: Sequence[float]
    y: Sequence[float]
    label: str
    yerr: Any = None
    """Half-widths, or ``[below, above]``."""
    xerr: Any = None
    band: tuple[Sequence[float], Sequence[float]] | None = None
    """A shaded range (a seeds' minimum and maximum)."""
    style: dict[str, Any] = field(default_factory=dict)
    """Matplotlib's line keywords: ``linestyle``, ``color``, ``marker``."""


def plot(
    path: Path,
    lines: Sequence[Line],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    levels: Sequence[tuple[float, str, dict[str, Any]]] = (),
    size: tuple[float, float] = (8, 5),
    ylim: tuple[float, float] | None = None,
) -> None:
    """Write the figure of ``lines`` to ``path`` (PNG): each with its error bars and band, and ``levels``
    (y, label, style) as horizontal lines (a teacher, a reference that samples nothing, chance)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    for line in lines:
        style = {"marker": "o", **line.style}
        drawn = axes.errorbar(
            line.x, line.y, yerr=line.yerr, xerr=line.xerr, label=line.label, capsize=3, **style
        )
        if line.band is not None:
            axes.fill_between(line.x, *line.band, color=drawn.lines[0].get_color(), alpha=0.12)
    for level, label, style in levels:
        axes.axhline(level, label=label, **{"color": "gray", **style})
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if ylim is not None:
        axes.set_ylim(*ylim)
    if title:
        axes.set_title(title, fontsize=9)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=8)
    figure.savefig(path, dpi=110)
