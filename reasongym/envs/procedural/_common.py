"""Small helpers shared by the procedural generators: integer draws, number formatting, answers."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def randint(rng: np.random.Generator, low: int, high: int) -> int:
    """A uniform Python int in ``[low, high]``, both ends included."""
    return int(rng.integers(low, high + 1))


def pick(rng: np.random.Generator, options: Sequence[T]) -> T:
    """One element of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]


def shuffled(rng: np.random.Generator, items: Sequence[T]) -> list[T]:
    """A uniformly shuffled copy of ``items``."""
    return [items[int(i)] for i in rng.permutation(len(items))]


def fraction_text(value: Fraction) -> str:
    """``3/4``, ``-3/4`` or, for whole numbers, ``2``: the plain form the solutions use."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def operand_text(value: Fraction | int) -> str:
    """A number as the right-hand operand of a step: negatives in parentheses, ``5 - (-3)``."""
    text = fraction_text(Fraction(value))
    return f"({text})" if value < 0 else text


def boxed(answer: str) -> str:
    """The final-answer marker the math and integer prompts ask for."""
    return f"\\boxed{{{answer}}}"


def choice_answer(label: str) -> str:
    """The final-answer sentence the multiple-choice prompts ask for."""
    return f"The answer is ({label})."


def grouped(value: int) -> str:
    """An integer with thousands separators, ``2,500``."""
    return f"{value:,}"


def terms_text(terms: Sequence[tuple[int, str]]) -> str:
    """A sum of integer-coefficient terms, ``[(3, "x"), (-1, "y"), (5, "")]`` -> ``3x - y + 5``.

    Zero terms are skipped, a coefficient of 1 is not written before a variable, and an empty sum
    reads ``0``.
    """
    pieces: list[str] = []
    for coefficient, variable in terms:
        if coefficient == 0:
            continue
        size = abs(coefficient)
        body = variable if variable and size == 1 else f"{size}{variable}"
        if not pieces:
            pieces.append(body if coefficient > 0 else f"-{body}")
        else:
            pieces.append(f"{'+' if coefficient > 0 else '-'} {body}")
    return " ".join(pieces) if pieces else "0"


def two_distinct(rng: np.random.Generator, count: int) -> tuple[int, int]:
    """Two different indices in ``range(count)``, uniformly (cheaper than ``rng.choice``)."""
    first = int(rng.integers(count))
    second = int(rng.integers(count - 1))
    return first, second + (second >= first)
