"""Roots of quadratics and cubics built from chosen rational roots (reasongym/PolynomialRoots-v0).

Example (difficulty 1)::

    question: Find all roots of x^2 + 2x - 3 = 0. List them separated by commas.
    answer:   -3, 1
    solution: Roots with product -3 and sum -2: -3 and 1. x^2 + 2x - 3 = (x + 3)(x - 1).
              Roots: -3, 1. \\boxed{-3, 1}

Every polynomial has distinct rational roots, so the answer is a list of 2 or 3 numbers.

Difficulty levels:

1. Monic quadratic ``x^2 + bx + c`` with integer roots in -12..12.
2. A quadratic with a common factor 2-5 in front of such a monic one (divide it out first).
3. A quadratic ``(px - q)(rx - s)`` with rational roots (denominators up to 4, at least one > 1).
4. A monic cubic with integer roots in -6..6: check one root, divide it out, factor the rest.
5. A cubic with one integer root and two rational roots (denominators up to 3, not both 1).

Scoring: answer type ``"math"``; the completion is correct when its final answer (last ``\\boxed{}``)
is the list of roots in any order (``-3, 1`` and ``1, -3`` are both correct), each root exactly
once, checked by the math verifier's unordered-list comparison.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, fraction_text, randint, terms_text
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)
INSTRUCTION = "List them separated by commas."


def _multiply(first: list[int], second: list[int]) -> list[int]:
    """Product of two polynomials given as coefficient lists, highest power first."""
    product = [0] * (len(first) + len(second) - 1)
    for i, a in enumerate(first):
        for j, b in enumerate(second):
            product[i + j] += a * b
    return product


def _polynomial_text(coefficients: list[int]) -> str:
    degree = len(coefficients) - 1
    names = [
        "x^" + str(degree - i) if degree - i > 1 else ("x" if degree - i == 1 else "")
        for i in range(degree + 1)
    ]
    return terms_text(list(zip(coefficients, names, strict=True)))


def _factor(root: Fraction) -> tuple[list[int], str]:
    """The integer linear factor ``(qx - p)`` of the root ``p/q``, as coefficients and text."""
    coefficients = [root.denominator, -root.numerator]
    text = terms_text([(coefficients[0], "x"), (coefficients[1], "")])
    return coefficients, text if root == 0 else f"({text})"


def _expand(roots: list[Fraction], scale: int = 1) -> list[int]:
    coefficients = [scale]
    for root in roots:
        coefficients = _multiply(coefficients, _factor(root)[0])
    return coefficients


def _factored(roots: list[Fraction]) -> str:
    return "".join(_factor(root)[1] for root in roots)


def _distinct(rng: np.random.Generator, count: int, draw) -> list[Fraction]:
    """``count`` distinct roots from the zero-argument sampler ``draw``."""
    roots: list[Fraction] = []
    while len(roots) < count:
        root = draw()
        if root not in roots:
            roots.append(root)
    return roots


def _rational(rng: np.random.Generator, largest_denominator: int) -> Fraction:
    return Fraction(randint(rng, -6, 6), randint(rng, 1, largest_denominator))


def _sum_product(roots: list[Fraction]) -> str:
    """Level 1-2 reasoning: for ``x^2 + bx + c`` the roots multiply to c and add up to -b."""
    product, total = roots[0] * roots[1], roots[0] + roots[1]
    return f"Roots with product {product} and sum {total}: {roots[0]} and {roots[1]}."


def _check_root(coefficients: list[int], root: Fraction) -> str:
    """``Check x = 2: 8 - 8 - 2 + 2 = 0.``: the term values of a cubic at an integer root."""
    degree = len(coefficients) - 1
    values = [int(c * root ** (degree - i)) for i, c in enumerate(coefficients)]
    return f"Check x = {root}: {terms_text([(v, '') for v in values])} = 0."


def _quadratic(rng: np.random.Generator, difficulty: int) -> tuple[list[Fraction], list[int], str]:
    if difficulty == 3:
        while True:
            roots = _distinct(rng, 2, lambda: _rational(rng, 4))
            if any(root.denominator > 1 for root in roots):
                break
        polynomial = _expand(roots)
        return roots, polynomial, f"Factor: {_polynomial_text(polynomial)} = {_factored(roots)}."
    roots = _distinct(rng, 2, lambda: Fraction(randint(rng, -12, 12)))
    monic = _expand(roots)
    work = f"{_sum_product(roots)} {_polynomial_text(monic)} = {_factored(roots)}."
    if difficulty == 1:
        return roots, monic, work
    scale = randint(rng, 2, 5)
    return roots, [scale * c for c in monic], f"Divide by {scale}: {_polynomial_text(monic)} = 0. {work}"


def _cubic(rng: np.random.Generator, difficulty: int) -> tuple[list[Fraction], list[int], str]:
    checked = Fraction(randint(rng, -6, 6))
    if difficulty == 4:
        others = _distinct(rng, 2, lambda: Fraction(randint(rng, -6, 6)))
    else:
        others = [Fraction(0)]
        while all(root.denominator == 1 for root in others):
            others = _distinct(rng, 2, lambda: _rational(rng, 3))
    while checked in others:
        checked = Fraction(randint(rng, -6, 6))
    roots = [checked, *others]
    polynomial = _expand(roots)
    rest = _expand(others)
    work = (
        f"{_check_root(polynomial, checked)} Divide by {_factor(checked)[1]}: "
        f"{_polynomial_text(rest)} = {_factored(others)}."
    )
    return roots, polynomial, work


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One polynomial-roots problem at ``difficulty`` (1-5, see the module docstring)."""
    if difficulty <= 3:
        roots, polynomial, work = _quadratic(rng, difficulty)
    else:
        roots, polynomial, work = _cubic(rng, difficulty)
    answer = ", ".join(fraction_text(root) for root in sorted(roots))
    equation = f"{_polynomial_text(polynomial)} = 0"
    return Problem(
        question=f"Find all roots of {equation}. {INSTRUCTION}",
        answer=answer,
        answer_type="math",
        solution=f"{work} Roots: {answer}. {boxed(answer)}",
        metadata={"coefficients": polynomial, "roots": [fraction_text(r) for r in roots]},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded polynomial-roots problems, difficulty 1-5."""
    return GeneratorSource("polynomial_roots", generate, "math", DIFFICULTIES, seed=seed)
