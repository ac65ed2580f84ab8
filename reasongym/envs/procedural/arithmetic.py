"""Multi-step integer arithmetic (reasongym/Arithmetic-v0).

Example (difficulty 1)::

    question: What is 47 + 38?
    answer:   85
    solution: 7+8=15, write 5 carry 1. 4+3+1=8, write 8. \\boxed{85}

Difficulty levels:

1. Two 2-digit numbers added; the solution works column by column with carries.
2. Two 3-digit numbers added or subtracted (never a negative result); column by column with
   carries or borrows.
3. Two or three operations among ``+ - *`` without parentheses, operands up to 99 (up to 12 next to
   ``*``), every intermediate value in 0..999; the solution does one operation per step, in
   evaluation order (left to right, each product before it is added or subtracted).
4. Three or four operations, usually one pair of parentheses around a span holding ``+`` or ``-``,
   operands up to 99 (up to 20 next to ``*``); intermediate values may be negative, |value| <= 9,999.
5. Four or five operations, parentheses as in 4, operands up to 999 (up to 30 next to ``*``),
   |value| <= 99,999.

Scoring: answer type ``"math"`` (answers can be negative or above 999, outside the AIME range of
the ``"integer"`` kind); the completion is correct when its final answer (last ``\\boxed{}``)
equals the integer value of the expression under the usual operator precedence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, operand_text, pick, randint
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class _Level:
    """How expressions at one difficulty look (levels 3-5)."""

    operations: tuple[int, int]
    """Fewest and most operators."""
    largest_operand: int
    """Largest operand of ``+`` and ``-``."""
    largest_factor: int
    """Largest operand next to ``*``."""
    parentheses: bool
    """Whether one pair of parentheses is added."""
    allow_negative: bool
    """Whether intermediate values may be negative."""
    largest_value: int
    """Largest absolute value of any intermediate result."""


_LEVELS = {
    3: _Level((2, 3), 99, 12, parentheses=False, allow_negative=False, largest_value=999),
    4: _Level((3, 4), 99, 20, parentheses=True, allow_negative=True, largest_value=9_999),
    5: _Level((4, 5), 999, 30, parentheses=True, allow_negative=True, largest_value=99_999),
}

_Node = int | tuple[str, "_Node", "_Node"]


def _column_addition(a: int, b: int) -> str:
    """Add equal-length numbers column by column: ``7+8=15, write 5 carry 1. ...``."""
    top, bottom = str(a)[::-1], str(b)[::-1]
    carry, steps = 0, []
    for column, (x, y) in enumerate(zip(top, bottom, strict=True)):
        total = int(x) + int(y) + carry
        sum_text = f"{x}+{y}" + ("+1" if carry else "") + f"={total}"
        if column == len(top) - 1 or total < 10:
            steps.append(f"{sum_text}, write {total}.")
            carry = 0
        else:
            steps.append(f"{sum_text}, write {total - 10} carry 1.")
            carry = 1
    return " ".join(steps)


def _column_subtraction(a: int, b: int) -> str:
    """Subtract equal-length numbers (``a >= b``) column by column with borrows."""
    top, bottom = str(a)[::-1], str(b)[::-1]
    borrow, steps = 0, []
    for x, y in zip(top, bottom, strict=True):
        needs_borrow = int(x) - borrow < int(y)
        start = int(x) + (10 if needs_borrow else 0)
        difference = start - borrow - int(y)
        sub_text = f"{start}" + ("-1" if borrow else "") + f"-{y}={difference}"
        steps.append(f"{sub_text}, write {difference}" + (" borrow 1." if needs_borrow else "."))
        borrow = 1 if needs_borrow else 0
    return " ".join(steps)


def _column_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    """Levels 1-2: one addition or subtraction, solved column by column."""
    digits = difficulty + 1
    low, high = 10 ** (digits - 1), 10**digits - 1
    a, b = randint(rng, low, high), randint(rng, low, high)
    subtract = difficulty == 2 and bool(rng.integers(2))
    if subtract:
        a, b = max(a, b), min(a, b)
        value, symbol, work = a - b, "-", _column_subtraction(a, b)
    else:
        value, symbol, work = a + b, "+", _column_addition(a, b)
    return Problem(
        question=f"What is {a} {symbol} {b}?",
        answer=str(value),
        answer_type="math",
        solution=f"{work} {boxed(str(value))}",
        metadata={"expression": f"{a} {symbol} {b}", "operations": 1},
    )


def _expression_text(rng: np.random.Generator, level: _Level) -> str:
    """A flat expression ``n op n op n ...``, maybe with parentheses around a span holding + or -."""
    count = randint(rng, *level.operations)
    operators = [pick(rng, "+-*") for _ in range(count)]
    numbers = []
    for i in range(count + 1):
        next_to_times = (i > 0 and operators[i - 1] == "*") or (i < count and operators[i] == "*")
        numbers.append(
            randint(rng, 2, level.largest_factor) if next_to_times else randint(rng, 1, level.largest_operand)
        )
    parts = [str(n) for n in numbers]
    # Only spans that change the reading order are worth parentheses: not the whole, not a pure product.
    spans = [
        (first, last)
        for first in range(count)
        for last in range(first + 1, count + 1)
        if (first, last) != (0, count) and any(op in "+-" for op in operators[first:last])
    ]
    if level.parentheses and spans:
        first, last = pick(rng, spans)
        parts[first], parts[last] = "(" + parts[first], parts[last] + ")"
    return parts[0] + "".join(f" {op} {part}" for op, part in zip(operators, parts[1:], strict=True))


def _parse(text: str) -> _Node:
    """Parse the generator's own expressions (integers, ``+ - *``, parentheses) into a tree."""
    chars = text.replace(" ", "")
    position = 0

    def expression() -> _Node:
        nonlocal position
        node = term()
        while position < len(chars) and chars[position] in "+-":
            operator = chars[position]
            position += 1
            node = (operator, node, term())
        return node

    def term() -> _Node:
        nonlocal position
        node = atom()
        while position < len(chars) and chars[position] == "*":
            position += 1
            node = ("*", node, atom())
        return node

    def atom() -> _Node:
        nonlocal position
        if chars[position] == "(":
            position += 1
            node = expression()
            position += 1  # the closing parenthesis
            return node
        start = position
        while position < len(chars) and chars[position].isdigit():
            position += 1
        return int(chars[start:position])

    return expression()


def _evaluate(node: _Node, steps: list[str]) -> int:
    """Value of ``node``, appending one ``a*b=c.`` step per operation in evaluation order."""
    if isinstance(node, int):
        return node
    operator, left_node, right_node = node
    left, right = _evaluate(left_node, steps), _evaluate(right_node, steps)
    value = left + right if operator == "+" else left - right if operator == "-" else left * right
    steps.append(f"{left}{operator}{operand_text(right)}={value}.")
    return value


def _expression_problem(rng: np.random.Generator, difficulty: int) -> Problem:
    """Levels 3-5: a multi-operation expression, one operation per solution step."""
    level = _LEVELS[difficulty]
    while True:
        expression = _expression_text(rng, level)
        steps: list[str] = []
        value = _evaluate(_parse(expression), steps)
        results = [int(step[step.rindex("=") + 1 : -1]) for step in steps]
        small = all(abs(r) <= level.largest_value for r in results)
        if small and (level.allow_negative or min(results) >= 0):
            break
    return Problem(
        question=f"What is {expression}?",
        answer=str(value),
        answer_type="math",
        solution=" ".join(steps) + f" {boxed(str(value))}",
        metadata={"expression": expression, "operations": len(steps)},
    )


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One arithmetic problem at ``difficulty`` (1-5, see the module docstring)."""
    if difficulty <= 2:
        return _column_problem(rng, difficulty)
    return _expression_problem(rng, difficulty)


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded arithmetic problems, difficulty 1-5."""
    return GeneratorSource("arithmetic", generate, "math", DIFFICULTIES, seed=seed)
