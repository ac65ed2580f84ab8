"""Two linear equations in two unknowns (reasongym/LinearSystem-v0).

Example (difficulty 1)::

    question: Solve the system: x + y = 7 and x - y = 1. Give the answer as (x, y).
    answer:   (4, 3)
    solution: D = 1*(-1) - 1*1 = -2. x = (7*(-1) - 1*1)/(-2) = -8/(-2) = 4.
              y = (1*1 - 7*1)/(-2) = -6/(-2) = 3. \\boxed{(4, 3)}

The solution always uses Cramer's rule for ``ax + by = c, dx + ey = f``:
``D = ae - bd``, ``x = (ce - bf)/D``, ``y = (af - cd)/D`` (one regular pattern to learn).

Difficulty levels:

1. ``x + y = s`` and ``x - y = d`` (in either order); whole-number solution 0-20.
2. Coefficients 1-3; whole-number solution 0-10.
3. Coefficients -6..6 (not 0); integer solution -10..10.
4. Coefficients -9..9 (not 0); the solution may be fractions.
5. As 4, but each equation is written with its terms moved across the ``=`` (``3x - 12 = -2y``).

Scoring: answer type ``"math"``; the completion is correct when its final answer (last ``\\boxed{}``)
is the ordered pair ``(x, y)`` with both entries equal to the exact solution, checked by the math
verifier.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, fraction_text, operand_text, randint, terms_text
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)
INSTRUCTION = "Give the answer as (x, y)."

_Row = tuple[int, int, int]  # a, b, c of ax + by = c


def _coefficient(rng: np.random.Generator, largest: int, allow_negative: bool) -> int:
    value = randint(rng, 1, largest)
    return -value if allow_negative and rng.integers(2) else value


def _rows(rng: np.random.Generator, difficulty: int) -> tuple[_Row, _Row]:
    """The two equations ``ax + by = c`` of one problem; the determinant is never 0."""
    if difficulty == 1:
        x, y = randint(rng, 0, 20), randint(rng, 0, 20)
        rows = ((1, 1, x + y), (1, -1, x - y))
        return rows if rng.integers(2) else rows[::-1]
    largest, negative = {2: (3, False), 3: (6, True)}.get(difficulty, (9, True))
    while True:
        a, b, d, e = (_coefficient(rng, largest, negative) for _ in range(4))
        if a * e - b * d != 0:
            break
    if difficulty <= 3:
        low = 0 if difficulty == 2 else -10
        x, y = randint(rng, low, 10), randint(rng, low, 10)
        return (a, b, a * x + b * y), (d, e, d * x + e * y)
    return (a, b, randint(rng, -20, 20)), (d, e, randint(rng, -20, 20))


def _standard_text(row: _Row) -> str:
    a, b, c = row
    return f"{terms_text([(a, 'x'), (b, 'y')])} = {c}"


def _rearranged_text(rng: np.random.Generator, row: _Row) -> str:
    """``ax + by - c = 0`` with a random non-empty proper subset of its terms on the left."""
    a, b, c = row
    terms = [(a, "x"), (b, "y"), (-c, "")]
    terms = [term for term in terms if term[0] != 0]
    while True:
        on_left = [bool(rng.integers(2)) for _ in terms]
        if any(on_left) and not all(on_left):
            break
    left = [term for term, keep in zip(terms, on_left, strict=True) if keep]
    right = [
        (-coefficient, name) for (coefficient, name), keep in zip(terms, on_left, strict=True) if not keep
    ]
    return f"{terms_text(left)} = {terms_text(right)}"


def _cramer(first: _Row, second: _Row) -> tuple[str, Fraction, Fraction]:
    """Cramer's rule written out, and the solution."""
    (a, b, c), (d, e, f) = first, second
    determinant = a * e - b * d
    x, y = Fraction(c * e - b * f, determinant), Fraction(a * f - c * d, determinant)
    o = operand_text
    divisor = o(determinant)
    steps = (
        f"D = {a}*{o(e)} - {o(b)}*{o(d)} = {determinant}.",
        f"x = ({c}*{o(e)} - {o(b)}*{o(f)})/{divisor} = {c * e - b * f}/{divisor} = {fraction_text(x)}.",
        f"y = ({a}*{o(f)} - {o(c)}*{o(d)})/{divisor} = {a * f - c * d}/{divisor} = {fraction_text(y)}.",
    )
    return " ".join(steps), x, y


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One 2x2 linear system at ``difficulty`` (1-5, see the module docstring)."""
    first, second = _rows(rng, difficulty)
    if difficulty == 5:
        equations = (_rearranged_text(rng, first), _rearranged_text(rng, second))
    else:
        equations = (_standard_text(first), _standard_text(second))
    work, x, y = _cramer(first, second)
    answer = f"({fraction_text(x)}, {fraction_text(y)})"
    if difficulty == 5:
        work = f"Standard form: {_standard_text(first)}; {_standard_text(second)}. {work}"
    return Problem(
        question=f"Solve the system: {equations[0]} and {equations[1]}. {INSTRUCTION}",
        answer=answer,
        answer_type="math",
        solution=f"{work} {boxed(answer)}",
        metadata={"equations": list(equations)},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded 2x2 linear systems, difficulty 1-5."""
    return GeneratorSource("linear_system", generate, "math", DIFFICULTIES, seed=seed)
