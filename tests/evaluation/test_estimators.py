from __future__ import annotations

import itertools
import math
import random
import re
from fractions import Fraction

import numpy as np
import pytest

from reasongym.errors import ConfigError
from reasongym.evaluation import (
    Votes,
    avg_at_n,
    bootstrap_ci,
    count_votes,
    maj_at_k,
    pass_at_k,
    pass_hat_k,
)


def closed_form(n: int, c: int, k: int) -> float:
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (1, 0, 1, 0.0),
        (1, 1, 1, 1.0),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (5, 2, 1, 0.4),  # pass@1 is the plain accuracy
        (10, 0, 10, 0.0),  # n = k with nothing correct
        (10, 1, 10, 1.0),  # n = k with one correct
        (10, 3, 3, 1 - 35 / 120),  # C(7,3) = 35, C(10,3) = 120
    ],
)
def test_pass_at_k_small_cases(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_matches_closed_form_for_every_k() -> None:
    for n in range(1, 21):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(closed_form(n, c, k), abs=1e-12), (n, c, k)


def test_pass_at_k_is_stable_for_large_n() -> None:
    # C(1000, 500) overflows floats; the product form does not.
    assert pass_at_k(1000, 1, 500) == pytest.approx(0.5)
    assert 0.0 < pass_at_k(1024, 1, 3) < 0.01


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (0, 0, 1, "n must be >= 1, got 0"),
        (4, 5, 1, "c must lie in [0, n=4], got 5"),
        (4, 1, 5, "k must lie in [1, n=4], got 5"),
        (4, 1, 0, "k must lie in [1, n=4], got 0"),
        (4.0, 1, 1, "n must be an int, got 4.0"),
    ],
)
def test_pass_at_k_rejects_bad_counts(n, c, k, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        pass_at_k(n, c, k)


def brute_force_maj_at_k(answers: list[str | None], correct: list[bool], k: int) -> Fraction:
    """maj@k by voting in every k-subset, the rule written out once more: correct samples vote for the gold,
    wrong ones for their answer text, unparsed wrong ones not at all; a tie of t answers gives each 1/t."""
    won = Fraction(0)
    for subset in itertools.combinations(range(len(answers)), k):
        tally: dict[str, int] = {}
        for i in subset:
            choice = "<gold>" if correct[i] else answers[i]
            if choice is not None:
                tally[choice] = tally.get(choice, 0) + 1
        top = max(tally.values(), default=0)
        leaders = [choice for choice, votes in tally.items() if votes == top]
        if "<gold>" in leaders:
            won += Fraction(1, len(leaders))
    return won / math.comb(len(answers), k)


def test_maj_at_k_equals_the_vote_of_every_subset_with_ties_and_unparsed_samples() -> None:
    rng = random.Random(0)
    checked = 0
    for _ in range(300):
        n = rng.randint(1, 9)
        answers = [rng.choice(["7", "8", "9", None, "gold"]) for _ in range(n)]
        correct = [answer == "gold" for answer in answers]
        if rng.random() < 0.2 and n:  # a judge may accept a text the rules could not read
            correct[0], answers[0] = True, None
        votes = count_votes(answers, correct)
        for k in range(1, n + 1):
            assert maj_at_k(votes, k) == pytest.approx(
                float(brute_force_maj_at_k(answers, correct, k)), abs=1e-12
            )
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize(
    ("answers", "correct", "k", "expected"),
    [
        # 2-2 tie among 4 samples: half the vote, whatever the order
        (["7", "8", "8", "7"], [True, False, False, True], 4, Fraction(1, 2)),
        (["8", "7", "7", "8"], [False, True, True, False], 4, Fraction(1, 2)),
        # pairs of 3 samples (gold, gold, wrong): 1 of 3 pairs is both gold, 2 of 3 tie: 1/3 + 2/3 * 1/2
        (["5", "5", "6"], [True, True, False], 2, Fraction(2, 3)),
        # unparsed samples do not vote: the gold wins every pair with one of them, and the pair of them is lost
        ([None, None, "5"], [False, False, True], 2, Fraction(2, 3)),
        ([None, None], [False, False], 2, Fraction(0)),
    ],
)
def test_maj_at_k_hand_counted(answers: list, correct: list, k: int, expected: Fraction) -> None:
    assert maj_at_k(count_votes(answers, correct), k) == pytest.approx(float(expected), abs=1e-12)


def test_maj_at_1_is_pass_at_1_and_maj_at_k_does_not_depend_on_sample_order() -> None:
    rng = random.Random(1)
    for _ in range(200):
        n = rng.randint(1, 12)
        answers = [rng.choice(["1", "2", None, "gold"]) for _ in range(n)]
        correct = [answer == "gold" for answer in answers]
        votes = count_votes(answers, correct)
        assert maj_at_k(votes, 1) == pytest.approx(pass_at_k(n, sum(correct), 1), abs=1e-15)
        order = list(range(n))
        rng.shuffle(order)
        shuffled = count_votes([answers[i] for i in order], [correct[i] for i in order])
        for k in range(1, n + 1):
            assert maj_at_k(shuffled, k) == pytest.approx(maj_at_k(votes, k), abs=1e-12)


def test_maj_at_k_stays_exact_for_large_n() -> None:
    # 1,024 samples, 40 answers of about 26 votes each, the gold one of them: by symmetry the gold wins about
    # 1/40 of the votes; and 200 right of 201 wins every vote of 3 or more but the one with the wrong answer
    votes = Votes(right=26, wrong=(26,) * 22 + (25,) * 17, silent=1)
    assert votes.n == 1024
    assert 0.015 < maj_at_k(votes, 512) < 0.035
    assert maj_at_k(Votes(right=200, wrong=(1,), silent=0), 3) == pytest.approx(1.0)
    assert maj_at_k(Votes(right=200, wrong=(1,), silent=0), 2) == pytest.approx(
        1 - 200 / math.comb(201, 2) / 2
    )


def test_count_votes_puts_equivalent_wrong_answers_together_and_every_correct_one_with_the_gold() -> None:
    def equivalent(a: str, b: str) -> bool:
        return float(Fraction(a)) == float(Fraction(b))

    answers = ["1/2", "0.5", "3", "3.0", "2/4", None]
    correct = [True, True, False, False, True, False]
    assert count_votes(answers, correct) == Votes(right=3, wrong=(1, 1), silent=1)
    assert count_votes(answers, correct, equivalent) == Votes(right=3, wrong=(2,), silent=1)


def test_count_votes_asks_equivalent_once_per_new_text() -> None:
    calls = []

    def equivalent(a: str, b: str) -> bool:  # as costly as a verifier call: never repeat one
        calls.append((a, b))
        return a == b

    assert count_votes(["3", "3", "4", "3", "4"], [False] * 5, equivalent) == Votes(0, (3, 2), 0)
    assert calls == [("3", "4")]  # repeats of a seen text reuse its cluster


def test_avg_at_n_and_bootstrap() -> None:
    assert avg_at_n([True, False, True, True]) == 0.75
    low, high = bootstrap_ci([0.0, 1.0] * 50, seed=1)
    assert low < 0.5 < high
    assert 0.35 < low and high < 0.65
    assert bootstrap_ci([0.0, 1.0] * 50, seed=1) == (low, high)


@pytest.mark.parametrize(
    ("confidence", "expected"),
    [
        # 100 values of 0 and 1: the mean's standard error is sqrt(0.25 / 100) = 0.05, so the normal
        # approximation gives 0.5 +- 1.96 * 0.05 = [0.402, 0.598] and 0.5 +- 1.645 * 0.05 = [0.418, 0.582];
        # bootstrap means lie on a 0.01 grid. A 95% interval cut with 5% in each tail is the 90% row.
        (0.95, (0.40, 0.60)),
        (0.90, (0.42, 0.58)),
    ],
)
def test_bootstrap_interval_width_on_a_fixed_sample(confidence: float, expected: tuple[float, float]) -> None:
    low, high = bootstrap_ci([0.0, 1.0] * 50, confidence=confidence, seed=1)
    assert (low, high) == pytest.approx(expected, abs=0.011)  # one grid step of slack for the RNG stream


def test_maj_at_k_and_count_votes_reject_bad_arguments() -> None:
    with pytest.raises(ConfigError, match=r"^count_votes: 2 answers but 1 correctness flags$"):
        count_votes(["1", "2"], [True])
    for k in (0, 3):
        with pytest.raises(ConfigError, match=rf"^maj_at_k: k must lie in \[1, n=2\], got {k}$"):
            maj_at_k(Votes(right=1, wrong=(1,), silent=0), k)


def test_avg_at_n_refuses_no_samples_and_bootstrap_defaults_are_the_documented_ones() -> None:
    with pytest.raises(ConfigError, match="^avg_at_n: needs at least one sample$"):
        avg_at_n([])
    values = [0.0, 1.0, 1.0, 0.5, 0.25]
    assert bootstrap_ci(values) == bootstrap_ci(values, confidence=0.95, resamples=1000, seed=0)
    assert bootstrap_ci(values) != bootstrap_ci(values, resamples=1001)  # the count changes the interval


def test_bootstrap_follows_its_definition_on_a_small_draw() -> None:
    # Five resamples of four problems: the seed's draws, their means, and the 10%/90% quantiles of them.
    data = np.array([0.0, 1.0, 10.0, 100.0])
    means = data[np.random.default_rng(3).integers(0, 4, size=(5, 4))].mean(axis=1)
    expected = tuple(float(q) for q in np.quantile(means, [0.1, 0.9]))
    assert bootstrap_ci(list(data), confidence=0.8, resamples=5, seed=3) == pytest.approx(expected)
    low, high = bootstrap_ci([2.0, 4.0], resamples=1)  # one resample: one mean, a zero-width interval
    assert low == high and low in (2.0, 3.0, 4.0)


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        ([1.0], {"confidence": 0.0}, "bootstrap_ci: confidence must lie in (0, 1), got 0.0"),
        ([1.0], {"confidence": 1.0}, "bootstrap_ci: confidence must lie in (0, 1), got 1.0"),
        ([1.0], {"confidence": 1.5}, "bootstrap_ci: confidence must lie in (0, 1), got 1.5"),
        ([1.0], {"resamples": 0}, "bootstrap_ci: resamples must be >= 1, got 0"),
        ([], {}, "bootstrap_ci: needs at least one value"),
    ],
)
def test_bootstrap_refuses_bad_arguments(values: list, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        bootstrap_ci(values, **kwargs)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (4.0, 1, 2, "pass_at_k: n must be an int, got 4.0"),
        (4, 1.5, 2, "pass_at_k: c must be an int, got 1.5"),
        (4, 1, True, "pass_at_k: k must be an int, got True"),
    ],
)
def test_pass_at_k_names_the_argument_that_is_not_an_int(
    n: object, c: object, k: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        pass_at_k(n, c, k)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # pass^1 is the plain accuracy, like pass@1
        (4, 2, 2, 1 / 6),  # C(2,2) / C(4,2): both draws from the two right ones
        (4, 3, 2, 0.5),  # C(3,2) / C(4,2) = 3/6
        (8, 8, 8, 1.0),  # all right
        (8, 7, 8, 0.0),  # one wrong sample: never all k = n right
        (10, 5, 3, (5 * 4 * 3) / (10 * 9 * 8)),  # 1/12
    ],
)
def test_pass_hat_k_small_cases(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_hat_k_matches_the_binomial_ratio_and_sits_below_pass_at_k() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                expected = math.comb(c, k) / math.comb(n, k)
                assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-12), (n, c, k)
                assert pass_hat_k(n, c, k) <= pass_at_k(n, c, k) + 1e-12


def test_pass_hat_k_is_unbiased_over_draws() -> None:
    # For a problem solved with probability p, E[C(c,k)/C(n,k)] over c ~ Binomial(n, p) is exactly p^k.
    n, k, p = 6, 3, 0.7
    expectation = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * pass_hat_k(n, c, k) for c in range(n + 1))
    assert expectation == pytest.approx(p**k, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [(4, 5, 2, r"pass_hat_k: c must lie in \[0, n=4\]"), (4, 2, 5, "k must lie in")],
)
def test_pass_hat_k_rejects_bad_counts(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        pass_hat_k(n, c, k)
