"""Estimators over n graded samples per problem: pass@k, pass^k, maj@k, avg@n, and bootstrap intervals.

All functions are pure and cheap; they know nothing about models or environments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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


def majority_vote(
    answers: Sequence[str | None],
    correct: Sequence[bool],
    k: int,
    equivalent: Callable[[str, str], bool] | None = None,
) -> bool:
    """maj@k for one problem: is the most common answer among the first ``k`` samples correct?

    Answers that ``equivalent`` deems equal vote together (``"1/2"`` and ``"0.5"`` are one candidate);
    samples with no extracted answer do not vote. Ties go to the candidate whose first vote came earliest,
    a rule that depends only on sample order, so it is reproducible. With no votes at all the result is
    False.

    Args:
        answers: The extracted answer of each sample (None when nothing was extracted).
        correct: Whether each sample was graded correct.
        k: How many leading samples vote, ``1 <= k <= len(answers)``.
        equivalent: Decides whether two extracted answers are the same candidate; exact string equality
            when None.

    Returns:
        Whether the winning candidate is correct.

    Example:
        >>> majority_vote(["3", "4", "3"], [True, False, True], k=3)
        True
    """
    if len(answers) != len(correct):
        raise ConfigError(f"majority_vote: {len(answers)} answers but {len(correct)} correctness flags")
    if not 1 <= k <= len(answers):
        raise ConfigError(f"majority_vote: k must lie in [1, {len(answers)}], got {k}")
    same = equivalent or (lambda a, b: a == b)
    # Each cluster: [representative answer, votes, representative's correctness], in order of first vote.
    clusters: list[list] = []
    by_text: dict[str, list] = {}
    for answer, is_correct in zip(answers[:k], correct[:k], strict=True):
        if answer is None:
            continue
        cluster = by_text.get(answer)
        if cluster is None:
            cluster = next((c for c in clusters if same(c[0], answer)), None)
            if cluster is None:
                cluster = [answer, 0, bool(is_correct)]
                clusters.append(cluster)
            by_text[answer] = cluster
        cluster[1] += 1
    if not clusters:
        return False
    best = max(clusters, key=lambda c: c[1])  # max keeps the first of equal counts: earliest first vote
    return best[2]


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
