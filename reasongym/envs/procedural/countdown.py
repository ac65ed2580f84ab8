"""Countdown: combine the given numbers with + - * / to reach a target (reasongym/Countdown-v0).

Example (difficulty 3)::

    question: Using the numbers 3, 5, 7, 1, each exactly once, and the operations +, -, *
              (with parentheses), write an expression equal to 24.
    answer:   target=24; numbers=3,5,7,1
    solution: 7-3=4. 5+1=6. 4*6=24. \\boxed{(7-3)*(5+1)}

Each puzzle is built by combining the shuffled numbers into one random expression, so a solution
always exists; every intermediate value of the reference solution is a positive integer (the
classic rules), although the verifier also accepts fractional intermediates.

Difficulty levels:

1. Three numbers 1-10 with ``+`` and ``-``.
2. Three numbers 1-10 with ``+ - *``; target up to 100.
3. Four numbers 1-20 with ``+ - *``; target up to 200.
4. Four numbers 1-50 with ``+ - * /``; target up to 500.
5. Five numbers 1-100 with ``+ - * /``; target 100-999.

Scoring: answer type ``"countdown"``; the gold encodes the puzzle (format in
:mod:`reasongym.verifiers.countdown`). The completion is correct when its expression (last
``<answer>...</answer>``, last ``\\boxed{}`` or "Answer: ...") uses only the given numbers, each
exactly once (or at most once, with ``source(exactly_once=False)``), and equals the target.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, pick, randint, two_distinct
from reasongym.envs.sources import GeneratorSource
from reasongym.verifiers.countdown import format_countdown_gold

DIFFICULTIES = (1, 2, 3, 4, 5)
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


@dataclass(frozen=True)
class _Level:
    """The shape of the puzzles at one difficulty."""

    count: int
    """How many numbers are given."""
    largest: int
    """Largest given number."""
    operators: str
    """Operators the reference solution may use."""
    targets: range
    """Targets allowed."""


_LEVELS = {
    1: _Level(3, 10, "+-", range(1, 31)),
    2: _Level(3, 10, "+-*", range(1, 101)),
    3: _Level(4, 20, "+-*", range(1, 201)),
    4: _Level(4, 50, "+-*/", range(1, 501)),
    5: _Level(5, 100, "+-*/", range(100, 1000)),
}


@dataclass(frozen=True)
class _Term:
    """A partial expression: its value, its text and the precedence of its last operator."""

    value: int
    text: str
    precedence: int = 3


def _combine(left: _Term, operator: str, right: _Term) -> _Term | None:
    """``left operator right`` when the result is a positive integer (classic rules), else None."""
    if operator == "-" and left.value <= right.value:
        return None
    if operator == "/" and (right.value <= 1 or left.value % right.value):
        return None
    if operator == "*" and 1 in (left.value, right.value):
        return None  # "x*1" teaches nothing
    value = {
        "+": left.value + right.value,
        "-": left.value - right.value,
        "*": left.value * right.value,
        "/": left.value // max(right.value, 1),
    }[operator]
    precedence = _PRECEDENCE[operator]
    left_text = f"({left.text})" if left.precedence < precedence else left.text
    tight = operator in "-/"  # a - (b + c) and a / (b * c) need their parentheses
    right_text = f"({right.text})" if right.precedence < precedence + tight else right.text
    return _Term(value, f"{left_text}{operator}{right_text}", precedence)


def _build(rng: np.random.Generator, numbers: list[int], level: _Level) -> tuple[_Term, list[str]] | None:
    """Merge random pairs until one expression is left; None when a merge has no valid operator.

    Merges whose value passes the largest target are skipped: they rarely come back into range, and
    skipping them makes a usable puzzle several times more likely per draw.
    """
    pool, steps = [_Term(n, str(n)) for n in numbers], []
    while len(pool) > 1:
        i, j = two_distinct(rng, len(pool))
        left, right = pool[i], pool[j]
        options = [
            (op, t)
            for op in level.operators
            if (t := _combine(left, op, right)) is not None and t.value < level.targets.stop
        ]
        if not options:
            return None
        operator, merged = pick(rng, options)
        steps.append(f"{left.value}{operator}{right.value}={merged.value}.")
        pool = [t for k, t in enumerate(pool) if k not in (i, j)] + [merged]
    return pool[0], steps


def generate(rng: np.random.Generator, difficulty: int, exactly_once: bool = True) -> Problem:
    """One Countdown puzzle at ``difficulty`` (1-5, see the module docstring)."""
    level = _LEVELS[difficulty]
    while True:
        numbers = [randint(rng, 1, level.largest) for _ in range(level.count)]
        built = _build(rng, numbers, level)
        if built is not None and built[0].value in level.targets:
            break
    expression, steps = built
    rule = "each exactly once" if exactly_once else "each at most once"
    listed = ", ".join(map(str, numbers))
    operators = ", ".join(level.operators)
    return Problem(
        question=(
            f"Using the numbers {listed}, {rule}, and the operations {operators} (with parentheses), "
            f"write an expression equal to {expression.value}."
        ),
        answer=format_countdown_gold(
            expression.value, numbers, "each_once" if exactly_once else "at_most_once"
        ),
        answer_type="countdown",
        solution=" ".join(steps) + f" {boxed(expression.text)}",
        metadata={"target": expression.value, "numbers": numbers, "reference": expression.text},
    )


def source(seed: int = 0, exactly_once: bool = True) -> GeneratorSource:
    """Infinite seeded Countdown puzzles, difficulty 1-5.

    Args:
        seed: Seed of the problem universe.
        exactly_once: Each number must be used exactly once (the classic task); False allows using
            a subset, each number at most once.
    """
    generate_puzzle = functools.partial(generate, exactly_once=exactly_once)
    return GeneratorSource("countdown", generate_puzzle, "countdown", DIFFICULTIES, seed=seed)
