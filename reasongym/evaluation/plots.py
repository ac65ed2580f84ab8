"""pass@k against k, for one or more evaluation files: the picture ``reasongym compare --plot`` and the demo draw.

matplotlib is imported only when a picture is drawn; nothing here imports torch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reasongym.errors import ConfigError
from reasongym.evaluation.estimators import pass_at_k
from reasongym.evaluation.report import load_records


def pass_at_k_curve(records: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[float]]:
    """Mean pass@k over gradable problems for every k from 1 to the smallest sample count."""
    counts = [
        (len(r["correct"]), int(sum(r["correct"])))
        for r in records
        if r.get("correct") and all(flag is not None for flag in r["correct"])
    ]
    if not counts:
        raise ConfigError("no gradable records to plot")
    n = min(count for count, _ in counts)
    ks = list(range(1, n + 1))
    return ks, [float(np.mean([pass_at_k(total, c, k) for total, c in counts])) for k in ks]


def plot_pass_at_k(
    paths: Sequence[str | os.PathLike[str]],
    png_path: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
) -> Path:
    """Plot pass@k against k (log2 axis) for one or more evaluation files into a PNG.

    The title names the environment and split (when the files share them); each curve's label gives its
    problem count and sampling temperature, so curves over different problems are not read as comparable.

    Returns:
        The PNG path.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(labels) if labels is not None else [Path(p).stem for p in paths]
    figure, axis = plt.subplots(figsize=(6.4, 4.2))
    curves = [(label, load_records(path)) for path, label in zip(paths, labels, strict=True)]
    longest: list[int] = []
    for label, records in curves:
        ks, values = pass_at_k_curve(records)
        longest = ks if len(ks) > len(longest) else longest
        axis.plot(
            ks, values, marker="o" if len(ks) <= 16 else None, label=f"{label} ({_curve_note(records)})"
        )
    axis.set_xscale("log", base=2)
    ticks = [k for k in longest if k & (k - 1) == 0 or k == longest[-1]]
    axis.set_xticks(ticks, [str(k) for k in ticks])
    axis.minorticks_off()
    axis.set_xlabel("k (samples drawn per problem)")
    axis.set_ylabel("pass@k (share of problems solved)")
    axis.set_ylim(-0.02, 1.02)
    axis.set_title(_pass_at_k_title([records for _, records in curves]), fontsize="medium")
    axis.grid(alpha=0.3)
    axis.legend(fontsize="small")
    figure.tight_layout()
    png_path = Path(png_path)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png_path, dpi=120)
    plt.close(figure)
    return png_path


def _curve_note(records: Sequence[Mapping[str, Any]]) -> str:
    """``64 problems, T=0.6``: what a curve is an average over, and how it was sampled."""
    settings = records[0].get("settings") or {}
    temperature = settings.get("temperature")
    return f"{len(records)} problems" + (
        f", T={temperature:g}" if isinstance(temperature, int | float) else ""
    )


def _pass_at_k_title(files: Sequence[Sequence[Mapping[str, Any]]]) -> str:
    """``pass@k on reasongym/AIME24-v0 (test split)``, or plain ``pass@k`` when the files differ."""
    envs = {records[0].get("env_id") for records in files}
    splits = {records[0].get("split") for records in files}
    if len(envs) != 1 or None in envs:
        return "pass@k"
    split = f" ({splits.pop()} split)" if len(splits) == 1 and None not in splits else ""
    return f"pass@k on {envs.pop()}{split}"
