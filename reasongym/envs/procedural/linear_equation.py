"""One linear equation in one unknown (reasongym/LinearEquation-v0).

Example (difficulty 2)::

    question: Solve for x: 3x + 4 = 19
    answer:   5
    solution: 3x = 19 - 4 = 15. x = 15/3 = 5. \\boxed{5}

Difficulty levels:

1. ``x + b = c`` or ``x - b = c``; whole-number solution 0-20.
2. ``ax + b = c`` with a in 2-9; integer solution -10..10.
3. ``ax + b = c`` with a in ±2..12; the solution may be a fraction.
4. ``ax + b = cx + d`` (x on both sides), coefficients -12..12; the solution may be a fraction.
5. ``a(x + b) = c(x + d) + e``; expand, collect, divide; the solution may be a fraction.

Scoring: answer type ``"math"``; the completion is correct when its final answer (last ``\\boxed{}``)
equals the exact solution (``5``, ``-7/3``), checked by the math verifier.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, fraction_text, operand_text, randint, terms_text
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)


def _nonzero(rng: np.random.Generator, largest: int) -> int:
    """A uniform int in ``[-largest, largest]`` other than 0."""
    value = randint(rng, 1, largest)
    return value if rng.integers(2) else -value


def _x_operand(coefficient: int) -> str:
    """``4x``, ``x`` or, as a right operand, ``(-4x)``."""
    text = terms_text([(coefficient, "x")])
    return f"({text})" if coefficient < 0 else text


def _scaled(factor: int, shift: int) -> str:
    """``3(x - 2)``, ``(x + 5)`` or ``-(x + 1)``."""
    prefix = {1: "", -1: "-"}.get(factor, str(factor))
    return f"{prefix}({terms_text([(1, 'x'), (shift, '')])})"


def _divide(coefficient: int, constant: int) -> tuple[str, Fraction]:
    """``x = 15/3 = 5``: the last step, dividing ``constant`` by ``coefficient`` (nothing when it is 1)."""
    value = Fraction(constant, coefficient)
    if coefficient == 1:
        return "", value
    text = f"x = {constant}/{operand_text(coefficient)}"
    if fraction_text(value) != f"{constant}/{coefficient}":
        text += f" = {fraction_text(value)}"
    return text + ".", value


def _level_one(rng: np.random.Generator) -> tuple[str, str, Fraction]:
    x, b = randint(rng, 0, 20), randint(rng, 1, 20)
    if rng.integers(2):
        return f"x + {b} = {x + b}", f"x = {x + b} - {b} = {x}.", Fraction(x)
    return f"x - {b} = {x - b}", f"x = {x - b} + {b} = {x}.", Fraction(x)


def _ax_plus_b(a: int, c: int, b: int) -> tuple[str, str, Fraction]:
    """``ax + b = c``: subtract b, then divide by a."""
    moved = f"{c} - {b}" if b > 0 else f"{c} + {-b}"
    division, value = _divide(a, c - b)
    work = f"{terms_text([(a, 'x')])} = {moved} = {c - b}. {division}".rstrip()
    return f"{terms_text([(a, 'x'), (b, '')])} = {c}", work, value


def _both_sides(rng: np.random.Generator) -> tuple[str, str, Fraction]:
    """``ax + b = cx + d``: gather x on the left, numbers on the right, divide."""
    a, c = _nonzero(rng, 12), _nonzero(rng, 12)
    while c == a:
        c = _nonzero(rng, 12)
    b, d = _nonzero(rng, 20), _nonzero(rng, 20)
    question = f"{terms_text([(a, 'x'), (b, '')])} = {terms_text([(c, 'x'), (d, '')])}"
    gathered = f"{terms_text([(a, 'x')])} - {_x_operand(c)} = {d} - {operand_text(b)}"
    coefficient, constant = a - c, d - b
    division, value = _divide(coefficient, constant)
    collected = terms_text([(coefficient, "x")])
    return question, f"{gathered}, so {collected} = {constant}. {division}".rstrip(), value


def _brackets(rng: np.random.Generator) -> tuple[str, str, Fraction]:
    """``a(x + b) = c(x + d) + e``: expand both sides, then solve as ``ax + b = cx + d``."""
    a, c = _nonzero(rng, 9), _nonzero(rng, 9)
    while c == a:
        c = _nonzero(rng, 9)
    b, d, e = _nonzero(rng, 9), _nonzero(rng, 9), _nonzero(rng, 20)
    question = f"{_scaled(a, b)} = {_scaled(c, d)} {'+' if e > 0 else '-'} {abs(e)}"
    expanded = f"{terms_text([(a, 'x'), (a * b, '')])} = {terms_text([(c, 'x'), (c * d + e, '')])}"
    coefficient, constant = a - c, c * d + e - a * b
    division, value = _divide(coefficient, constant)
    collected = terms_text([(coefficient, "x")])
    return question, f"Expand: {expanded}. So {collected} = {constant}. {division}".rstrip(), value


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One linear equation at ``difficulty`` (1-5, see the module docstring)."""
    if difficulty == 1:
        equation, work, value = _level_one(rng)
    elif difficulty == 2:
        a, x, b = randint(rng, 2, 9), randint(rng, -10, 10), _nonzero(rng, 20)
        equation, work, value = _ax_plus_b(a, a * x + b, b)
    elif difficulty == 3:
        equation, work, value = _ax_plus_b(_nonzero(rng, 12), randint(rng, -30, 30), _nonzero(rng, 20))
    elif difficulty == 4:
        equation, work, value = _both_sides(rng)
    else:
        equation, work, value = _brackets(rng)
    answer = fraction_text(value)
    return Problem(
        question=f"Solve for x: {equation}",
        answer=answer,
        answer_type="math",
        solution=f"{work} {boxed(answer)}",
        metadata={"equation": equation},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded linear equations in one unknown, difficulty 1-5."""
    return GeneratorSource("linear_equation", generate, "math", DIFFICULTIES, seed=seed)
