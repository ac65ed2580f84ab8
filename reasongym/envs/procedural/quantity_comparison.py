"""Multiple-choice reasoning about quantities and units (reasongym/QuantityComparison-v0).

Example (difficulty 1)::

    question: Which is heavier: 3 kg of feathers or 2,500 g of iron?
    choices:  (A) 2,500 g of iron  (B) They weigh the same  (C) 3 kg of feathers
    answer:   C
    solution: 3 kg = 3,000 g. 3,000 g > 2,500 g, so 3 kg of feathers is heavier. The answer is (C).

The options are shuffled, so the correct label is uniformly distributed over the 3-4 labels.

Difficulty levels:

1. Compare two whole-number quantities in neighbouring units (kg and g, km and m, hours and
   minutes, litres and millilitres); never equal.
2. As 1 with one decimal place, and a third of the time the two are equal ("They weigh the same").
3. Convert a quantity to the smaller unit; four numeric options with the usual slips (x10, x100).
4. Pick the heaviest / lightest (longest, shortest, ...) of four quantities in mixed units (listed
   in the question too, so that no two problems share a question text with different options).
5. Rates: compare a speed in km/h with one in m/s, or find the distance covered at a speed in km/h
   for some minutes; four options for the distance.

Scoring: answer type ``"choice"``; the completion is correct when the option it picks ("The
answer is (C).", a boxed label, ...) is the gold label, as graded by the choice verifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import choice_answer, grouped, pick, randint, shuffled
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)
LABELS = "ABCDE"


@dataclass(frozen=True)
class _Pair:
    """Two neighbouring units of one quantity and the words that go with them."""

    big: str
    small: str
    ratio: int
    """How many small units make one big unit."""
    comparative: str
    """``heavier``: the question's adjective."""
    same: str
    """``They weigh the same``: the option for equal quantities."""
    extremes: tuple[str, str]
    """Superlatives for the largest and the smallest (``heaviest``, ``lightest``)."""
    small_name: str
    """The smaller unit in words, for conversion questions (``grams``)."""
    things: tuple[str, ...] = ()
    """Materials for ``3 kg of feathers``; empty for bare quantities."""


_PAIRS = (
    _Pair(
        "kg",
        "g",
        1000,
        "heavier",
        "They weigh the same",
        ("heaviest", "lightest"),
        "grams",
        ("feathers", "iron", "sand", "rice", "flour", "cotton"),
    ),
    _Pair(
        "t",
        "kg",
        1000,
        "heavier",
        "They weigh the same",
        ("heaviest", "lightest"),
        "kilograms",
        ("steel", "hay", "coal", "wood"),
    ),
    _Pair("km", "m", 1000, "longer", "They are the same length", ("longest", "shortest"), "metres"),
    _Pair("m", "cm", 100, "longer", "They are the same length", ("longest", "shortest"), "centimetres"),
    _Pair("hours", "minutes", 60, "longer", "They last the same time", ("longest", "shortest"), "minutes"),
    _Pair("minutes", "seconds", 60, "longer", "They last the same time", ("longest", "shortest"), "seconds"),
    _Pair(
        "L",
        "mL",
        1000,
        "more",
        "They are the same amount",
        ("most", "least"),
        "millilitres",
        ("water", "juice", "milk", "oil"),
    ),
)
_VEHICLES = {"car": (40, 120), "bus": (30, 80), "train": (60, 200), "cyclist": (10, 30), "runner": (6, 15)}
"""Speed ranges in km/h that make each traveller plausible."""


def _decimal(value: Fraction) -> str:
    """``2,500``, ``1.5`` or ``0.25``: the exact decimal of a value with a terminating expansion."""
    whole, part = divmod(value.numerator, value.denominator)
    if part == 0:
        return grouped(whole)
    digits = ""
    while part and len(digits) < 6:
        part *= 10
        digit, part = divmod(part, value.denominator)
        digits += str(digit)
    return f"{grouped(whole)}.{digits}"


def _amount(value: Fraction, unit: str) -> str:
    """``3 kg``, ``1 hour``, ``90 minutes``."""
    if value == 1 and unit in ("hours", "minutes", "seconds"):
        unit = unit[:-1]
    return f"{_decimal(value)} {unit}"


def _with_thing(amount: str, thing: str | None) -> str:
    return f"{amount} of {thing}" if thing else amount


def _options(
    rng: np.random.Generator, correct: str, others: list[str]
) -> tuple[tuple[tuple[str, str], ...], str]:
    """Shuffle the options, label them A, B, ...; return the choices and the correct label."""
    texts = shuffled(rng, [correct, *others])
    choices = tuple((LABELS[i], text) for i, text in enumerate(texts))
    return choices, LABELS[texts.index(correct)]


def _compare_two(rng: np.random.Generator, difficulty: int) -> tuple[str, str, list[str], str]:
    """Levels 1-2: which of two quantities is larger (or are they equal)."""
    pair = pick(rng, _PAIRS)
    tenths = difficulty == 2
    big = Fraction(randint(rng, 11, 99), 10) if tenths else Fraction(randint(rng, 1, 9))
    # Level 1 steps the small amount by a tenth of the big unit, level 2 by a hundredth (closer calls).
    step = max(1, pair.ratio // (100 if tenths else 10))
    small = big * pair.ratio if tenths and rng.random() < 1 / 3 else None
    while small is None or (small == big * pair.ratio and not tenths):
        small = Fraction(randint(rng, 1, 10 * pair.ratio // step) * step)
    things = list(pair.things)
    first_thing = pick(rng, things) if things else None
    second_thing = pick(rng, [t for t in things if t != first_thing]) if things else None
    first = _with_thing(_amount(big, pair.big), first_thing)
    second = _with_thing(_amount(small, pair.small), second_thing)
    question = f"Which is {pair.comparative}: {first} or {second}?"
    converted = f"{_amount(big, pair.big)} = {_amount(big * pair.ratio, pair.small)}."
    big_small = big * pair.ratio
    if big_small == small:
        return question, pair.same, [first, second], f"{converted} That equals {_amount(small, pair.small)}."
    winner = first if big_small > small else second
    sign = ">" if big_small > small else "<"
    comparison = f"{_amount(big_small, pair.small)} {sign} {_amount(small, pair.small)}"
    others = [second if winner == first else first, pair.same]
    return question, winner, others, f"{converted} {comparison}, so {winner} is {pair.comparative}."


def _convert(rng: np.random.Generator) -> tuple[str, str, list[str], str]:
    """Level 3: how many small units are in a quantity of big units."""
    pair = pick(rng, _PAIRS)
    value = Fraction(randint(rng, 11, 99), 10)
    correct = value * pair.ratio
    slips = [value, value * 10, value * 100, value * 1000, correct * 10, correct / 10]
    distractors: list[Fraction] = []
    for slip in slips:
        if slip != correct and slip not in distractors and slip.denominator in (1, 2, 5, 10, 100):
            distractors.append(slip)
    chosen = [distractors[int(i)] for i in sorted(rng.choice(len(distractors), size=3, replace=False))]
    question = f"How many {pair.small_name} are in {_amount(value, pair.big)}?"
    work = f"1 {pair.big.rstrip('s')} = {grouped(pair.ratio)} {pair.small}, so {_decimal(value)}*{grouped(pair.ratio)} = {_decimal(correct)}."
    return question, _decimal(correct), [_decimal(d) for d in chosen], work


def _extreme(rng: np.random.Generator) -> tuple[str, str, list[str], str]:
    """Level 4: the largest or smallest of four quantities in mixed units."""
    pair = pick(rng, _PAIRS)
    step = pair.ratio // 20 if pair.ratio % 20 == 0 else pair.ratio // 10
    values = [Fraction(int(v) * step) for v in rng.choice(np.arange(10, 61), size=4, replace=False)]
    shown = []
    for value in values:
        in_big = value / pair.ratio
        nice = in_big.denominator in (1, 2, 4, 5, 10, 20)
        shown.append(_amount(in_big, pair.big) if nice and rng.random() < 0.5 else _amount(value, pair.small))
    largest = bool(rng.integers(2))
    word = pair.extremes[0 if largest else 1]
    target = max(values) if largest else min(values)
    correct = shown[values.index(target)]
    question = f"Which is the {word}: {', '.join(shown[:-1])} or {shown[-1]}?"
    listed = ", ".join(_decimal(v) for v in values)
    work = f"In {pair.small}: {listed}. The {word} is {_amount(target, pair.small)}"
    work += "." if correct == _amount(target, pair.small) else f", which is {correct}."
    return question, correct, [s for s in shown if s != correct], work


def _speeds(rng: np.random.Generator) -> tuple[str, str, list[str], str]:
    """Level 5: a speed in km/h against one in m/s (1 m/s = 3.6 km/h)."""
    metres = randint(rng, 5, 40)
    kmh = Fraction(metres * 18, 5) if rng.random() < 1 / 3 else Fraction(randint(rng, 18, 144))
    first, second = f"{_decimal(kmh)} km/h", f"{metres} m/s"
    converted = Fraction(metres * 18, 5)
    work = f"{metres} m/s = {metres}*3.6 km/h = {_decimal(converted)} km/h."
    question = f"Which is faster: {first} or {second}?"
    same = "They are equally fast"
    if converted == kmh:
        return question, same, [first, second], f"{work} That equals {first}."
    winner, loser = (second, first) if converted > kmh else (first, second)
    sign = ">" if converted > kmh else "<"
    return (
        question,
        winner,
        [loser, same],
        f"{work} {_decimal(converted)} {sign} {_decimal(kmh)}, so {winner} is faster.",
    )


def _distance(rng: np.random.Generator) -> tuple[str, str, list[str], str]:
    """Level 5: distance from a speed in km/h and a time in minutes, four options."""
    vehicle = pick(rng, sorted(_VEHICLES))
    distance = Fraction(1, 3)
    while distance.denominator not in (1, 2, 4, 5, 10):
        minutes = pick(rng, (10, 12, 15, 20, 30, 40, 45, 50, 90))
        speed = randint(rng, *_VEHICLES[vehicle])
        distance = Fraction(speed * minutes, 60)
    slips = [Fraction(speed * minutes, 100), distance * 2, distance / 2, Fraction(speed * minutes, 10)]
    distractors: list[Fraction] = []
    for slip in slips:
        if slip != distance and slip not in distractors and slip.denominator in (1, 2, 4, 5, 10, 20):
            distractors.append(slip)
    question = f"A {vehicle} travels at {speed} km/h for {minutes} minutes. What distance is covered?"
    hours = Fraction(minutes, 60)
    work = f"{minutes} minutes = {hours.numerator}/{hours.denominator} hour. {speed}*{minutes}/60 = {_decimal(distance)} km."
    return question, f"{_decimal(distance)} km", [f"{_decimal(d)} km" for d in distractors[:3]], work


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One multiple-choice quantity problem at ``difficulty`` (1-5, see the module docstring)."""
    if difficulty <= 2:
        question, correct, others, work = _compare_two(rng, difficulty)
    elif difficulty == 3:
        question, correct, others, work = _convert(rng)
    elif difficulty == 4:
        question, correct, others, work = _extreme(rng)
    else:
        question, correct, others, work = (_speeds if rng.integers(2) else _distance)(rng)
    choices, label = _options(rng, correct, others)
    return Problem(
        question=question,
        answer=label,
        answer_type="choice",
        choices=choices,
        solution=f"{work} {choice_answer(label)}",
        metadata={"correct_text": correct},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded multiple-choice quantity problems, difficulty 1-5."""
    return GeneratorSource("quantity_comparison", generate, "choice", DIFFICULTIES, seed=seed)
