"""Fraction arithmetic with answers in lowest terms (reasongym/Fractions-v0).

Example (difficulty 2)::

    question: What is 1/4 + 2/3? Give the answer in lowest terms.
    answer:   11/12
    solution: 1/4 + 2/3 = 3/12 + 8/12 = 11/12. \\boxed{11/12}

Fractions are written ``a/b`` and bind tighter than the operators ``+ - × ÷`` (school notation), so
``1/2 ÷ 3/4`` means (1/2) ÷ (3/4).

Difficulty levels:

1. Two proper fractions with the same denominator (2-12) added or subtracted; result >= 0.
2. Two proper fractions with different denominators (2-12) added or subtracted; result >= 0.
3. Two fractions (numerators and denominators 1-12, never whole numbers) multiplied or divided.
4. Three fractions, two operations among ``+ - × ÷``, parentheses where the grouping needs them;
   numerators and denominators up to 12.
5. Four fractions, three operations, some operands negative; numerators and denominators up to 10.

Scoring: answer type ``"math"``; the completion is correct when its final answer (last ``\\boxed{}``)
equals the exact value (``11/12``, ``-5/6``, ``2``), checked by the math verifier (an unreduced but
equal fraction is accepted there; the question asks for lowest terms and the gold is reduced).
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, fraction_text, operand_text, pick, randint, two_distinct
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)
INSTRUCTION = "Give the answer in lowest terms."
_PRECEDENCE = {"+": 1, "-": 1, "×": 2, "÷": 2}

_Node = Fraction | tuple[str, "_Node", "_Node"]


def _proper(rng: np.random.Generator, denominator: int) -> Fraction:
    """A proper fraction that keeps ``denominator`` in lowest terms (so ``2/6`` never shows as ``1/3``)."""
    numerators = [n for n in range(1, denominator) if gcd(n, denominator) == 1]
    return Fraction(pick(rng, numerators), denominator)


def _non_integer(rng: np.random.Generator, largest: int) -> Fraction:
    """A fraction in lowest terms with numerator and denominator up to ``largest``, never a whole number."""
    while True:
        value = Fraction(randint(rng, 1, largest), randint(rng, 2, largest))
        if value.denominator != 1:
            return value


def _sum_step(left: Fraction, operator: str, right: Fraction) -> tuple[str, Fraction]:
    """``1/4 + 2/3 = 3/12 + 8/12 = 11/12``: rewrite over the common denominator, then combine."""
    value = left + right if operator == "+" else left - right
    text = f"{fraction_text(left)} {operator} {operand_text(right)}"
    common = lcm(left.denominator, right.denominator)
    if left.denominator != right.denominator:
        scaled_left = f"{left.numerator * common // left.denominator}/{common}"
        scaled_right = f"{right.numerator * common // right.denominator}/{common}"
        if right < 0:
            scaled_right = f"({scaled_right})"
        text += f" = {scaled_left} {operator} {scaled_right}"
    raw_numerator = value.numerator * common // value.denominator
    if value.denominator != common:
        text += f" = {raw_numerator}/{common}"
    return text, value


def _product_step(left: Fraction, operator: str, right: Fraction) -> tuple[str, Fraction]:
    """``2/3 ÷ 3/4 = 2/3 × 4/3 = 8/9``: flip a divisor, multiply across."""
    text = f"{fraction_text(left)} {operator} {operand_text(right)}"
    if operator == "÷":
        if right == 0:
            raise ZeroDivisionError("division by a zero intermediate value")
        right = 1 / right
        text += f" = {fraction_text(left)} × {operand_text(right)}"
    numerator, denominator = left.numerator * right.numerator, left.denominator * right.denominator
    value = Fraction(numerator, denominator)
    if value.denominator != denominator and denominator != 1:
        text += f" = {numerator}/{denominator}"
    return text, value


def _step(left: Fraction, operator: str, right: Fraction) -> tuple[str, Fraction]:
    """One operation as solution text ending in the reduced value, and that value."""
    text, value = (_sum_step if operator in "+-" else _product_step)(left, operator, right)
    reduced = fraction_text(value)
    if not text.endswith(f"= {reduced}") and text != reduced:
        text += f" = {reduced}"
    return text + ".", value


def _evaluate(node: _Node, steps: list[str]) -> Fraction:
    """Value of ``node``, appending one solution step per operation in evaluation order."""
    if isinstance(node, Fraction):
        return node
    operator, left_node, right_node = node
    left, right = _evaluate(left_node, steps), _evaluate(right_node, steps)
    text, value = _step(left, operator, right)
    steps.append(text)
    return value


def _needs_parentheses(child: _Node, operator: str, is_right: bool) -> bool:
    if isinstance(child, Fraction):
        return False
    child_precedence, precedence = _PRECEDENCE[child[0]], _PRECEDENCE[operator]
    return child_precedence < precedence or (is_right and child_precedence == precedence)


def _render(node: _Node, leading: bool = True) -> str:
    """The expression with only the parentheses its grouping needs; ``leading`` = nothing printed before."""
    if isinstance(node, Fraction):
        return fraction_text(node) if leading else operand_text(node)
    operator, left, right = node
    wrap_left, wrap_right = (
        _needs_parentheses(left, operator, False),
        _needs_parentheses(right, operator, True),
    )
    left_text = _render(left, leading or wrap_left)
    right_text = _render(right, wrap_right)
    if wrap_left:
        left_text = f"({left_text})"
    if wrap_right:
        right_text = f"({right_text})"
    return f"{left_text} {operator} {right_text}"


def _random_tree(rng: np.random.Generator, operations: int, largest: int, negatives: bool) -> _Node:
    """A random expression tree with ``operations`` operators over random fractions."""
    if operations == 0:
        value = _non_integer(rng, largest)
        return -value if negatives and rng.random() < 0.3 else value
    left_operations = randint(rng, 0, operations - 1)
    left = _random_tree(rng, left_operations, largest, negatives)
    right = _random_tree(rng, operations - 1 - left_operations, largest, negatives)
    return (pick(rng, "+-×÷"), left, right)


def _tree(rng: np.random.Generator, difficulty: int) -> _Node:
    """The expression tree of one problem at ``difficulty``."""
    if difficulty <= 2:
        first, second = (
            (d + 2 for d in two_distinct(rng, 11)) if difficulty == 2 else (randint(rng, 2, 12),) * 2
        )
        a, b, operator = _proper(rng, first), _proper(rng, second), pick(rng, "+-")
        if operator == "-" and a < b:
            a, b = b, a  # keep the result >= 0
        return (operator, a, b)
    if difficulty == 3:
        return (pick(rng, "×÷"), _non_integer(rng, 12), _non_integer(rng, 12))
    if difficulty == 4:
        return _random_tree(rng, 2, 12, negatives=False)
    return _random_tree(rng, 3, 10, negatives=True)


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One fraction problem at ``difficulty`` (1-5, see the module docstring)."""
    while True:
        tree = _tree(rng, difficulty)
        steps: list[str] = []
        try:
            value = _evaluate(tree, steps)
        except ZeroDivisionError:
            continue
        break
    expression = _render(tree)
    return Problem(
        question=f"What is {expression}? {INSTRUCTION}",
        answer=fraction_text(value),
        answer_type="math",
        solution=" ".join(steps) + f" {boxed(fraction_text(value))}",
        metadata={"expression": expression, "operations": len(steps)},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded fraction problems, difficulty 1-5."""
    return GeneratorSource("fractions", generate, "math", DIFFICULTIES, seed=seed)
