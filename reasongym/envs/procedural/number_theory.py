"""Elementary number theory with integer answers (reasongym/NumberTheory-v0).

Example (difficulty 1)::

    question: What is the greatest common divisor of 84 and 36?
    answer:   12
    solution: 84 = 2*36 + 12. 36 = 3*12 + 0. gcd = 12. \\boxed{12}

Question kinds: greatest common divisor (Euclid's algorithm), least common multiple (via the gcd),
number of positive divisors (via the prime factorisation), remainder of a division, and modular
powers ``a^b mod m`` (step by step for small b, by repeated squaring for large b).

Difficulty levels (each problem draws one of the kinds its level lists):

1. gcd of two distinct numbers up to 100; remainder of a number 10-100 divided by 2-12.
2. gcd or lcm of two numbers up to 200; number of divisors of a number up to 100.
3. gcd or lcm of two numbers up to 999; divisors of a number up to 1,000; ``a^b mod m`` with
   b <= 8, m <= 20.
4. gcd of three numbers up to 1,000 or lcm of three up to 60; divisors up to 100,000; ``a^b mod m``
   with b <= 100, m <= 50.
5. As 4, but divisors up to 1,000,000 and ``a^b mod m`` with b <= 10,000, m <= 1,000.

Scoring: answer type ``"math"`` (answers can exceed 999, outside the AIME range of the
``"integer"`` kind); the completion is correct when its final answer (last ``\\boxed{}``) equals
the exact integer.
"""

from __future__ import annotations

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, pick, randint
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)
_SEQUENTIAL_POWER_LIMIT = 12


def _euclid(a: int, b: int) -> tuple[str, int]:
    """Euclid's algorithm written out: ``84 = 2*36 + 12. 36 = 3*12 + 0.``."""
    a, b = max(a, b), min(a, b)
    steps = []
    while b:
        steps.append(f"{a} = {a // b}*{b} + {a % b}.")
        a, b = b, a % b
    return " ".join(steps), a


def _with_common_factor(rng: np.random.Generator, largest: int, count: int) -> list[int]:
    """``count`` distinct numbers up to ``largest`` that often share a factor (the gcd is not always 1)."""
    factor = randint(rng, 1, max(1, largest // 10))
    numbers: list[int] = []
    while len(numbers) < count:
        number = factor * randint(rng, 2, largest // factor)
        if number not in numbers:
            numbers.append(number)
    return numbers


def _gcd(numbers: list[int]) -> tuple[str, str, int]:
    steps, value = [], numbers[0]
    for number in numbers[1:]:
        work, value_next = _euclid(value, number)
        steps.append(work)
        value = value_next
    names = ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"
    return f"What is the greatest common divisor of {names}?", " ".join(steps) + f" gcd = {value}.", value


def _lcm(numbers: list[int]) -> tuple[str, str, int]:
    steps, value = [], numbers[0]
    for number in numbers[1:]:
        work, divisor = _euclid(value, number)
        combined = value * number // divisor
        steps.append(f"{work} lcm({value}, {number}) = {value}*{number}/{divisor} = {combined}.")
        value = combined
    names = ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"
    return f"What is the least common multiple of {names}?", " ".join(steps), value


def _prime_factors(n: int) -> dict[int, int]:
    """Prime factorisation by trial division (n stays below 10^7 here)."""
    factors: dict[int, int] = {}
    divisor = 2
    while divisor * divisor <= n:
        while n % divisor == 0:
            factors[divisor] = factors.get(divisor, 0) + 1
            n //= divisor
        divisor += 1
    if n > 1:
        factors[n] = factors.get(n, 0) + 1
    return factors


def _divisor_count(n: int) -> tuple[str, str, int]:
    factors = _prime_factors(n)
    question = f"How many positive divisors does {n} have?"
    if factors == {n: 1}:
        return question, f"{n} is prime, so its divisors are 1 and {n}.", 2
    product = " * ".join(f"{p}^{e}" if e > 1 else str(p) for p, e in factors.items()) or "1"
    count = 1
    for exponent in factors.values():
        count *= exponent + 1
    terms = "".join(f"({e}+1)" for e in factors.values()) or "1"
    return question, f"{n} = {product}. Number of divisors = {terms} = {count}.", count


def _remainder(a: int, m: int) -> tuple[str, str, int]:
    question = f"What is the remainder when {a} is divided by {m}?"
    return question, f"{a} = {a // m}*{m} + {a % m}.", a % m


def _power_mod(a: int, b: int, m: int) -> tuple[str, str, int]:
    question = f"What is the remainder when {a}^{b} is divided by {m}?"
    steps = [f"{a} = {a % m} (mod {m})."] if a >= m else []
    base = a % m
    if b <= _SEQUENTIAL_POWER_LIMIT:
        value = base
        for exponent in range(2, b + 1):
            raw = value * base
            value = raw % m
            steps.append(f"{a}^{exponent} = {raw} = {value} (mod {m}).")
        return question, " ".join(steps), base if b == 1 else value
    squares, square, exponent = [], base, 1
    while exponent <= b:
        squares.append((exponent, square))
        square, exponent = square * square % m, exponent * 2
    steps.append(f"Squares mod {m}: " + ", ".join(f"{a}^{e} = {s}" for e, s in squares) + ".")
    used = [(e, s) for e, s in squares if b & e]
    steps.append(f"{b} = " + " + ".join(str(e) for e, _ in reversed(used)) + ".")
    value = 1
    for _, s in reversed(used):
        raw = value * s
        steps.append(f"{value}*{s} = {raw} = {raw % m} (mod {m})." if value != 1 else f"Start with {s}.")
        value = raw % m
    return question, " ".join(steps), value


_KINDS = {1: ("gcd", "remainder"), 2: ("gcd", "lcm", "divisors"), 3: ("gcd", "lcm", "divisors", "power")}


def _draw(rng: np.random.Generator, difficulty: int, kind: str) -> tuple[str, str, int]:
    """One question of ``kind`` at ``difficulty``: (question, worked steps, answer)."""
    if kind == "remainder":
        return _remainder(randint(rng, 10, 100), randint(rng, 2, 12))
    if kind == "gcd":
        count, largest = (3, 1000) if difficulty >= 4 else (2, (100, 200, 999)[difficulty - 1])
        return _gcd(_with_common_factor(rng, largest, count))
    if kind == "lcm":
        count, largest = (3, 60) if difficulty >= 4 else (2, (200, 999)[difficulty - 2])
        return _lcm(_with_common_factor(rng, largest, count))
    if kind == "divisors":
        return _divisor_count(randint(rng, 2, (100, 1_000, 100_000, 1_000_000)[difficulty - 2]))
    largest_exponent, largest_modulus = {3: (8, 20), 4: (100, 50)}.get(difficulty, (10_000, 1_000))
    return _power_mod(
        randint(rng, 2, 30), randint(rng, 2, largest_exponent), randint(rng, 3, largest_modulus)
    )


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One number-theory problem at ``difficulty`` (1-5, see the module docstring)."""
    kind = pick(rng, _KINDS.get(difficulty, _KINDS[3]))
    question, work, value = _draw(rng, difficulty, kind)
    return Problem(
        question=question,
        answer=str(value),
        answer_type="math",
        solution=f"{work} {boxed(str(value))}",
        metadata={"kind": kind},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded number-theory problems, difficulty 1-5."""
    return GeneratorSource("number_theory", generate, "math", DIFFICULTIES, seed=seed)
