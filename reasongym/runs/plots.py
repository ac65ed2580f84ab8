"""A run's curves as one picture (``metrics.png``): panels in rows of at most three, each titled in words, the
run and environment above them.

What a reader should not trip on: two panels that draw the same curve are one panel (a 0/1 reward makes
``rollout/reward_mean`` and ``rollout/correct_rate`` equal), a 0/1 flag is not a curve (the step an entropy
collapse was flagged is a marked line in the entropy panel), steps are whole numbers, a curve of a few
points shows its points, a long noisy one is drawn faint under its running mean, a legend names curves by whole
words (max, mean, min), a long title wraps, and a y axis near 1 reads as itself (no offset). matplotlib is
imported only here, when a picture is drawn.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError
from reasongym.runs.metrics import METRICS_FILE, RESERVED_KEYS, read_metrics

DEFAULT_PLOT_KEYS: tuple[str, ...] = ("rollout/reward", "eval/", "rollout/entropy", "loss/")
"""Panels of ``plot_metrics``: each entry draws every key that starts with it."""
PANEL_TITLES = {
    "rollout/reward": "reward",
    "rollout/reward_mean": "reward (batch mean)",
    "rollout/correct_rate": "correct samples (share)",
    "rollout/len_mean": "completion length (tokens)",
    "eval/": "held-out pass@1 (greedy)",
    "eval/pass@1": "held-out pass@1 (greedy)",
    "train/entropy": "token entropy",
    "rollout/entropy": "token entropy",
    "train/clip": "fraction of tokens clipped",
    "loss/": "losses",
    "loss/sft": "SFT loss (NLL per token)",
    "rollout/zero_std_group_frac": "groups with equal rewards (share)",
    "rollout/all_": "groups all correct or all wrong (share)",
    "train/ratio_": "importance ratio, new / old policy",
    "train/advantage_": "advantages",
    "train/grad_norm": "gradient norm (before clipping)",
    "rollout/truncation_rate": "completions cut at max_new_tokens (share)",
    "star/kept_": "rationales kept (count)",
    "star/train_accuracy": "training problems solved without the hint",
    "distill/": "divergence to the teacher (per token)",
}
"""Panel titles in words, by panel entry; an entry without one is titled by its key."""
FLAG_KEYS = frozenset(
    {"train/entropy_collapsed", "train/skipped_nonfinite", "train/skipped_empty", "dapo/partial_batch"}
)
"""0/1 flags: never drawn as curves (an entropy collapse is marked in the entropy panel instead)."""
MAX_COLUMNS = 3
TITLE_WIDTH = 44
"""Characters per line of a panel title (a panel is 4.2 inches wide): longer titles wrap instead of running into
the next panel's."""
SMOOTH_FROM = 20
"""Curves of this many points or more are drawn faint, under their running mean (per-step values are noisy)."""
GROUP_PANELS = ("rollout/zero_std_group_frac", "rollout/all_", "train/advantage_")
"""Panels about groups of samples of one prompt: constant, and left out, when a run samples one per prompt
(distillation's ``group_size`` 1: every "group" has one reward and no advantage)."""
SHARE_WORDS = ("share", "pass@1", "solved")
"""A panel whose title has one of these draws a share: its y axis is 0 to 1, so a flat 0 reads as 0."""

Series = tuple[str, list[float], list[float]]


def plot_metrics(
    metrics_jsonl: str | os.PathLike[str],
    out_png: str | os.PathLike[str],
    keys: Sequence[str] = DEFAULT_PLOT_KEYS,
    *,
    title: str | None = None,
    x_label: str = "step",
) -> Path:
    """Draw the main curves of a run against ``step`` into one PNG, one panel per entry of ``keys``.

    Args:
        metrics_jsonl: A ``metrics.jsonl`` file or the run folder holding it.
        out_png: Where to write the PNG.
        keys: Panels; each entry draws every metric key that starts with it (``"loss/"`` draws all losses).
            Entries that match nothing are left out, as are panels that repeat an earlier one's curve.
        title: The figure's title; None: `plot_title` of the run folder.
        x_label: What a step is (``"iteration"`` for STaR).

    Returns:
        The path of the PNG.

    Raises:
        ConfigError: No entry of ``keys`` matches a logged key (the message lists the logged keys).
    """
    figure = metrics_figure(metrics_jsonl, keys, title=title, x_label=x_label)
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_png, dpi=100)
    return out_png


def metrics_figure(
    metrics_jsonl: str | os.PathLike[str],
    keys: Sequence[str] = DEFAULT_PLOT_KEYS,
    *,
    title: str | None = None,
    x_label: str = "step",
) -> Any:
    """The matplotlib ``Figure`` `plot_metrics` saves (same arguments; tests look at its panels and legends)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: plotting is rare
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    path = Path(metrics_jsonl)
    folder = path if path.is_dir() else path.parent
    records = read_metrics(path)
    logged = sorted({key for record in records for key in record if key not in RESERVED_KEYS})
    if _group_size(folder) == 1:
        keys = [key for key in keys if key not in GROUP_PANELS]
    panels = _panels(records, keys)
    if not panels:
        raise ConfigError(f"keys={list(keys)!r} match no logged metric; logged keys: {logged}")
    columns = min(MAX_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(4.2 * columns, 3.0 * rows + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    # a long title (a model's path) wraps at the figure's width instead of running off both edges
    figure.suptitle(textwrap.fill(title or plot_title(folder), TITLE_WIDTH * columns), fontsize="medium")
    grid = figure.subplots(rows, columns, squeeze=False)
    collapse = _first_step(records, "train/entropy_collapsed")
    for axes, (panel_title, series) in zip(grid.flat, panels, strict=False):
        _panel(axes, panel_title, series, collapse if "entropy" in panel_title else None)
        axes.set_xlabel(x_label)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        steps = {x for _, xs, _ in series for x in xs}
        if len(steps) == 1:  # one step: whole numbers around it, not 0.945 ... 1.050
            axes.set_xlim(min(steps) - 1, min(steps) + 1)
    for axes in list(grid.flat)[len(panels) :]:
        axes.set_visible(False)
    return figure


def _panel(axes: Any, title: str, series: Sequence[Series], collapse: int | None) -> None:
    """One panel: its curves, the step an entropy collapse was flagged, its title, its y range, its legend."""
    for label, xs, ys in series:
        _draw(axes, label, xs, ys, several=len(series) > 1 or " = " in label)
    if collapse is not None:
        axes.axvline(collapse, color="grey", linestyle=":", label="entropy collapse flagged")
    axes.set_title(textwrap.fill(title, TITLE_WIDTH), fontsize="medium")
    if any(word in title for word in SHARE_WORDS):
        axes.set_ylim(-0.03, 1.03)
    elif "(count)" in title:  # counts start at 0, drawn just above the axis (a line of zeros on it is hidden)
        top = max(1.0, *(max(ys) * 1.1 for _, _, ys in series))
        axes.set_ylim(-0.03 * top, top)
    axes.grid(alpha=0.3)
    formatter = axes.yaxis.get_major_formatter()
    if hasattr(formatter, "set_useOffset"):  # 1.0000010 reads as itself, not "1e-6 + 1" above the axis
        formatter.set_useOffset(False)
    labels = axes.get_legend_handles_labels()[1]
    if labels:  # under the panel, where it covers no curve (inside, "best" still hid a ratio's min)
        axes.legend(
            fontsize="small",
            loc="upper center",
            bbox_to_anchor=(0.5, -0.2),
            ncol=min(3, len(labels)),
            frameon=False,
        )


def _draw(axes: Any, label: str, xs: list[float], ys: list[float], *, several: bool) -> None:
    """One curve: its points when there are few; a long noisy one faint, with its running mean over it."""
    if len(xs) < SMOOTH_FROM:
        axes.plot(
            xs, ys, label=label if several else None, marker="o" if len(xs) <= 12 else None, markersize=3
        )
        return
    window = max(5, len(xs) // 10)
    means = [
        sum(ys[max(0, i - window + 1) : i + 1]) / len(ys[max(0, i - window + 1) : i + 1])
        for i in range(len(ys))
    ]
    (raw,) = axes.plot(xs, ys, alpha=0.3, linewidth=1)
    name = f"{label}, " if several else ""
    axes.plot(xs, means, color=raw.get_color(), label=f"{name}mean of last {window} steps")


def _panels(records: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[tuple[str, list[Series]]]:
    """(title, curves) of each panel: flags left out, a panel equal to an earlier one merged into its title."""
    logged = sorted({key for record in records for key in record if key not in RESERVED_KEYS})
    panels: list[tuple[str, list[Series]]] = []
    for entry in keys:
        matched = [key for key in logged if key.startswith(entry) and key not in FLAG_KEYS]
        series: list[Series] = []
        for label, xs, ys in (_series(records, key, matched) for key in matched):
            twin = next((i for i, (_, x, y) in enumerate(series) if (x, y) == (xs, ys)), None)
            if twin is not None:  # e.g. loss/total = loss/policy without a KL term: one line, both names
                series[twin] = (f"{series[twin][0]} = {label}", xs, ys)
            elif xs:
                series.append((label, xs, ys))
        if not series:
            continue
        title = PANEL_TITLES.get(entry, entry)
        same = next((i for i, (_, drawn) in enumerate(panels) if _same_curves(drawn, series)), None)
        if same is not None:  # e.g. mean reward = correct rate when the reward is 0/1 (not two flat lines)
            panels[same] = (f"{panels[same][0]} = {title}", panels[same][1])
            continue
        panels.append((title, series))
    return panels


def _series(records: Sequence[dict[str, Any]], key: str, siblings: Sequence[str]) -> Series:
    """``key``'s logged points, labelled by what sets it apart from the panel's other keys."""
    points = [(r["step"], r[key]) for r in records if isinstance(r.get(key), int | float)]
    if len(siblings) > 1:  # what the panel's keys do not share: clip_high_frac, clip_low_frac -> high, low
        head = _whole_words(os.path.commonprefix(list(siblings)))
        tail = _whole_words(os.path.commonprefix([name[::-1] for name in siblings]))[::-1]
        label = key[len(head) : len(key) - len(tail)].strip("_/") or key
    else:
        label = key
    return label, [float(p[0]) for p in points], [float(p[1]) for p in points]


def _whole_words(shared: str) -> str:
    """``shared`` cut back to its last ``_`` or ``/``: ratio_max, ratio_mean share ``ratio_``, not ``ratio_m``."""
    cut = max(shared.rfind("_"), shared.rfind("/"))
    return shared[: cut + 1]


def _same_curves(first: Sequence[Series], second: Sequence[Series]) -> bool:
    """Whether two panels draw one curve that moves: two flat lines (all zero, say) are equal by chance."""
    moving = all(len(set(ys)) > 1 for _, _, ys in first)
    return moving and [(xs, ys) for _, xs, ys in first] == [(xs, ys) for _, xs, ys in second]


def _group_size(folder: Path) -> int | None:
    """The run's samples per prompt (``config.json``'s rollout section), or None when it does not say."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    size = (config.get("rollout") or {}).get("group_size") if isinstance(config, dict) else None
    return size if isinstance(size, int) else None


def _first_step(records: Sequence[dict[str, Any]], flag: str) -> int | None:
    return next((int(r["step"]) for r in records if r.get(flag)), None)


def plot_title(folder: str | os.PathLike[str], what: str | None = None, env: str | None = None) -> str:
    """``grpo on reasongym/Arithmetic-v0, model tiny: grpo-...-s0-20261203-101500`` from the run folder's
    ``run.json`` (or ``config.json``); the folder's name alone when neither names them."""
    folder = Path(folder)
    info: dict[str, Any] = {}
    for name in ("run.json", "config.json"):
        try:
            loaded = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(loaded, dict):
            info = {**loaded, **info}
    algo = what or info.get("algo")
    env, model = env or info.get("env"), info.get("model")
    parts = [str(algo) if algo else "", f"on {env}" if env else "", f"model {model}" if model else ""]
    head = " ".join(part for part in parts[:2] if part) + (f", {parts[2]}" if parts[2] else "")
    name = folder.resolve().name if (folder / METRICS_FILE).exists() else folder.name
    return f"{head}: {name}" if head.strip() else name
