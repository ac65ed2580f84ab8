"""The intervals of the studies, in one place: a t-interval over seeds, and a paired bootstrap over seeds and
problems for a difference of accuracies."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

T_95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
"""Student's t at 97.5% by degrees of freedom (1.96 past 9)."""


def t_interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% t-interval (nan with one value)."""
    mean = statistics.mean(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, T_95.get(len(values) - 1, 1.96) * statistics.stdev(values) / math.sqrt(len(values))


def bootstrap_difference(
    a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], reps: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """Mean accuracy of ``a`` minus ``b``, with a 95% bootstrap interval: each is one row per seed of 0/1
    per problem (the same problems, in the same order, in every row).

    Each replicate resamples the seeds of each side (with replacement) and the problems (paired: the same
    resampled problems for both), so the interval holds both seed-to-seed and problem sampling noise.
    """
    rng = np.random.default_rng(seed)
    rows_a, rows_b = np.array(a, dtype=float), np.array(b, dtype=float)  # [seeds, problems] each
    problems = rows_a.shape[1]
    draws = np.empty(reps)
    for rep in range(reps):
        columns = rng.integers(0, problems, problems)
        pick_a, pick_b = rng.integers(0, len(rows_a), len(rows_a)), rng.integers(0, len(rows_b), len(rows_b))
        draws[rep] = rows_a[np.ix_(pick_a, columns)].mean() - rows_b[np.ix_(pick_b, columns)].mean()
    low, high = np.percentile(draws, [2.5, 97.5])
    return {
        "difference": round(float(rows_a.mean() - rows_b.mean()), 4),
        "ci95": [round(float(low), 4), round(float(high), 4)],
        "clear_of_zero": bool(low > 0),
    }


def accuracy_interval(rows: Sequence[Sequence[float]]) -> dict[str, Any]:
    """An accuracy with its 95% interval (seeds and problems resampled): `bootstrap_difference` against a
    baseline that is never right."""
    return bootstrap_difference(rows, [[0.0] * len(rows[0])])
