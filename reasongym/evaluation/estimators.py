"""Estimators over n graded samples per problem: pass@k, pass^k, maj@k, avg@n, and bootstrap intervals.

All functions are pure and cheap; they know nothing about models or environments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from reasongym.errors import ConfigError


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of Chen et al. (2021), eq. 1: ``1 - C(n-c, k) / C(n, k)``.

    Computed as ``1 - prod_{i=n-c+1}^{n} (1 - k/i)``, which never forms the huge binomials, so it is exact
    to float precision for any ``k <= n`` (not only powers of two).

    Args:
        n: Samples drawn for the problem.
        c: How many of them were correct.
        k: The budget being estimated, ``1 <= k <= n``.

    Returns:
        The probability that at least one of ``k`` samples drawn without replacement is correct.

    Raises:
        ConfigError: If the counts are inconsistent.

    Example:
        >>> pass_at_k(n=4, c=1, k=2)
        0.5
    """
    _check_counts("pass_at_k", n, c, k)
    if n - c < k:
        return 1.0
    ratio = np.prod(1.0 - k / np.arange(n - c + 1, n + 1, dtype=np.float64))
    return float(1.0 - ratio)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: the probability that ALL of ``k`` samples are correct, ``C(c, k) / C(n, k)``.

    The reliability metric of tau-bench (Yao et al., 2024, arXiv:2406.12045): pass@k asks whether
    any of k tries succeeds, pass^k whether every one does. The mean over problems of ``C(c, k) / C(n, k)``
    is unbiased for it from n >= k samples (k samples drawn without replacement from the n), computed as
    ``prod_{i=0}^{k-1} (c - i) / (n - i)``. ``pass^1`` equals ``pass@1``.

    Args:
        n: Samples drawn for the problem.
        c: How many of them were correct.
        k: The number of tries that must all succeed, ``1 <= k <= n``.

    Returns:
        The probability that ``k`` samples drawn without replacement are all correct.

    Raises:
        ConfigError: If the counts are inconsistent.

    Example:
        >>> round(pass_hat_k(n=4, c=2, k=2), 6)
        0.166667
    """
    _check_counts("pass_hat_k", n, c, k)
    if c < k:
        return 0.0
    return float(np.prod((c - np.arange(k, dtype=np.float64)) / (n - np.arange(k, dtype=np.float64))))


def _check_counts(name: str, n: int, c: int, k: int) -> None:
    """Raise ConfigError naming ``name``'s first count that is not an int or out of range."""
    for field, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ConfigError(f"{name}: {field} must be an int, got {value!r}")
    if n < 1:
        raise ConfigError(f"{name}: n must be >= 1, got {n}")
    if not 0 <= c <= n:
        raise ConfigError(f"{name}: c must lie in [0, n={n}], got {c}")
    if not 1 <= k <= n:
        raise ConfigError(f"{name}: k must lie in [1, n={n}], got {k}")


def avg_at_n(correct: Sequence[bool]) -> float:
    """Mean accuracy over the n samples of one problem (DAPO's avg@32 on AIME)."""
    if len(correct) == 0:
        raise ConfigError("avg_at_n: needs at least one sample")
    return float(np.mean(np.asarray(correct, dtype=np.float64)))


@dataclass(frozen=True)
class Votes:
    """How the n samples of one problem vote: the clusters of maj@k, counted once per record.

    Every sample graded correct votes for the gold answer (they all agree with it, whatever their text);
    the wrong samples vote by extracted answer, answers that ``equivalent`` deems equal together; a wrong
    sample with no extracted answer does not vote.
    """

    right: int
    """Samples graded correct: the gold answer's votes."""
    wrong: tuple[int, ...]
    """Votes of each wrong answer (one count per cluster of equivalent wrong answers)."""
    silent: int
    """Wrong samples with no extracted answer: they do not vote."""

    @property
    def n(self) -> int:
        """All samples."""
        return self.right + sum(self.wrong) + self.silent


def count_votes(
    answers: Sequence[str | None],
    correct: Sequence[bool],
    equivalent: Callable[[str, str], bool] | None = None,
) -> Votes:
    """The `Votes` of one problem's samples: the gold answer's, each wrong answer cluster's, the silent ones.

    Args:
        answers: The extracted answer of each sample (None when nothing was extracted).
        correct: Whether each sample was graded correct.
        equivalent: Decides whether two extracted wrong answers are the same candidate (asked once per new
            text); exact string equality when None.

    Example:
        >>> count_votes(["3", "4", None, "4"], [True, False, False, False])
        Votes(right=1, wrong=(2,), silent=1)
    """
    if len(answers) != len(correct):
        raise ConfigError(f"count_votes: {len(answers)} answers but {len(correct)} correctness flags")
    same = equivalent or (lambda a, b: a == b)
    clusters: list[list[Any]] = []  # [representative answer, votes], in order of first vote
    by_text: dict[str, list[Any]] = {}
    right = silent = 0
    for answer, is_correct in zip(answers, correct, strict=True):
        if is_correct:
            right += 1
        elif answer is None:
            silent += 1
        else:
            cluster = by_text.get(answer) or next((c for c in clusters if same(c[0], answer)), None)
            if cluster is None:
                cluster = [answer, 0]
                clusters.append(cluster)
            by_text[answer] = cluster
            cluster[1] += 1
    return Votes(right, tuple(votes for _, votes in clusters), silent)


def maj_at_k(votes: Votes, k: int) -> float:
    """maj@k of one problem, exactly: the share of the C(n, k) subsets of k samples whose vote the gold wins.

    The estimator pass@k is to "any of k samples right", for "the most voted answer of k samples right":
    the mean over every k-subset of the n samples, not the first k (which depends on sample order), so maj@1
    equals pass@1 on every record. Tie rule: when t answers share the most votes of a subset, each wins 1/t
    of it (a tie broken uniformly at random); a subset in which nobody votes wins nothing.

    Counted, not enumerated: for each number v of gold votes, the subsets in which every wrong answer has at
    most v votes, by how many have exactly v (they tie), from the binomial counts of each cluster; wrong
    answers with fewer than v votes in all and the silent samples pool into one binomial (Vandermonde). The
    sums run in float64 on a rescaled table, exact to about 1e-12.

    Args:
        votes: The problem's `Votes` (`count_votes`).
        k: Samples per vote, ``1 <= k <= n``.

    Returns:
        The probability that the gold answer wins the vote of k samples drawn without replacement.

    Raises:
        ConfigError: A k out of range.

    Example:
        >>> maj_at_k(Votes(right=2, wrong=(1,), silent=1), k=2)  # 6 pairs: gold+gold, 2 gold+silent, 2 ties at half
        0.6666666666666666
    """
    n = votes.n
    if not 1 <= k <= n:
        raise ConfigError(f"maj_at_k: k must lie in [1, n={n}], got {k}")
    if k == 1:  # a vote of one sample is that sample: pass@1 exactly
        return votes.right / n
    total = 0.0
    for v in range(1, min(votes.right, k) + 1):
        total += _gold_wins_with(votes, v, k)
    return min(1.0, max(0.0, total))


def _gold_wins_with(votes: Votes, v: int, k: int) -> float:
    """The share of k-subsets in which the gold has exactly v votes and wins (ties split)."""
    rivals = [w for w in votes.wrong if w >= v]  # the clusters that could reach v votes
    pool = votes.silent + sum(w for w in votes.wrong if w < v)  # never reach v: any number of them
    room = k - v  # samples left for the rivals and the pool
    # ways[s, t]: rival samples chosen (s), rivals at exactly v votes (t), each rival at most v; scaled by
    # exp(log_scale) so that large binomials do not overflow
    ways = np.zeros((room + 1, len(rivals) + 1))
    ways[0, 0], log_scale = 1.0, 0.0
    for w in rivals:
        grown = np.zeros_like(ways)
        for x in range(min(v, room) + 1):
            weight = math.comb(w, x)
            if x < v:
                grown[x:, :] += weight * ways[: room + 1 - x, :]
            else:
                grown[x:, 1:] += weight * ways[: room + 1 - x, :-1]
        peak = grown.max()
        ways, log_scale = grown / peak, log_scale + math.log(peak)
    ties = 1.0 / np.arange(1, len(rivals) + 2)  # a tie with t rivals wins 1 / (t + 1)
    per_size = ways @ ties  # [s]
    fixed = log_scale + _log_comb(votes.right, v) - _log_comb(votes.n, k)
    return float(
        sum(
            per_size[s] * math.exp(fixed + _log_comb(pool, room - s))
            for s in range(room + 1)
            if room - s <= pool and per_size[s] > 0
        )
    )


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def bootstrap_ci(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-problem ``values`` (problems resampled).

    Example:
        >>> bootstrap_ci([1.0, 1.0, 1.0])
        (1.0, 1.0)
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"bootstrap_ci: confidence must lie in (0, 1), got {confidence}")
    if resamples < 1:
        raise ConfigError(f"bootstrap_ci: resamples must be >= 1, got {resamples}")
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ConfigError("bootstrap_ci: needs at least one value")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)
