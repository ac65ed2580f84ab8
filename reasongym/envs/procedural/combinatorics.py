"""AIME-style counting problems with integer answers 0-999 (reasongym/Combinatorics-v0).

Example (difficulty 1)::

    question: In how many ways can a committee of 3 be chosen from 7 people?
    answer:   35
    solution: C(7,3) = 7*6*5/(3*2*1) = 35. \\boxed{35}

Difficulty levels (each problem draws one of the kinds its level lists):

1. Orders of n people, books or runners (n!), committees or teams (C(n,k)), ordered roles (P(n,k)),
   handshakes (C(n,2)), codes with repetition (n^k).
2. Arrangements of letters with repeats (multinomial), seats around a round table ((n-1)!),
   identical balls into distinct boxes (stars and bars).
3. Restrictions: two people next to each other or never next to each other, committees with at
   least one woman (complement), boxes that may not be empty.
4. Shortest grid paths, grid paths through a given point, committees with a chairperson.
5. Large versions (committees from up to 40, lines of up to 15, words of up to 12 letters, grids up
   to 15 x 15, at-least-one committees): the question asks for the count modulo 1000.

Levels 1-4 only draw parameters whose count is at most 999, so every answer is in 0-999.

Scoring: answer type ``"integer"``; the completion is correct when its final answer (last
``\\boxed{}``) equals the exact count (level 5: the count modulo 1000).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from math import comb, factorial, perm, prod

import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.procedural._common import boxed, pick, randint, shuffled, two_distinct
from reasongym.envs.sources import GeneratorSource

DIFFICULTIES = (1, 2, 3, 4, 5)
LARGEST_ANSWER = 999
_NAMES = ("Ann", "Ben", "Cara", "Dev", "Eli", "Fay", "Gus", "Hana")
_ROLES = ("a president", "a vice-president", "a treasurer", "a secretary")
_LINES = (
    "{n} people stand in a line",
    "{n} different books be arranged on a shelf",
    "{n} runners finish a race with no ties",
)
_GROUPS = (
    "a committee of {k} be chosen from {n} people",
    "a team of {k} be picked from {n} players",
    "{k} toppings be chosen from {n} different toppings",
)
_Drawn = tuple[str, str, int, dict[str, object]]  # question, worked steps, count, parameters


def _descending(n: int, k: int) -> str:
    return "*".join(str(n - i) for i in range(k))


def _choose_text(n: int, k: int) -> str:
    """``C(7,3) = 7*6*5/(3*2*1) = 35``."""
    if k <= 1 or n - k <= 1:
        return f"C({n},{k}) = {comb(n, k)}"
    return f"C({n},{k}) = {_descending(n, k)}/({_descending(k, k)}) = {comb(n, k)}"


def _line(rng: np.random.Generator, large: bool) -> _Drawn:
    n = randint(rng, 8, 15) if large else randint(rng, 3, 6)
    question = f"In how many ways can {pick(rng, _LINES).format(n=n)}?"
    return question, f"{n}! = {_descending(n, n)} = {factorial(n)}.", factorial(n), {"n": n}


def _committee(rng: np.random.Generator, large: bool) -> _Drawn:
    n = randint(rng, 20, 40) if large else randint(rng, 4, 12)
    k = randint(rng, 2, n // 2 if large else n - 1)
    question = f"In how many ways can {pick(rng, _GROUPS).format(n=n, k=k)}?"
    return question, f"{_choose_text(n, k)}.", comb(n, k), {"n": n, "k": k}


def _roles(rng: np.random.Generator, large: bool) -> _Drawn:
    n, k = randint(rng, 4, 12), randint(rng, 2, 3)
    roles = ", ".join(_ROLES[: k - 1]) + f" and {_ROLES[k - 1]}"
    question = f"In how many ways can {roles} be chosen from {n} club members (no one holds two roles)?"
    return question, f"P({n},{k}) = {_descending(n, k)} = {perm(n, k)}.", perm(n, k), {"n": n, "k": k}


def _handshakes(rng: np.random.Generator, large: bool) -> _Drawn:
    n = randint(rng, 3, 45)
    question = f"At a party, each of {n} guests shakes hands once with every other guest. How many handshakes are there?"
    return question, f"Each pair shakes once: {_choose_text(n, 2)}.", comb(n, 2), {"n": n}


def _codes(rng: np.random.Generator, large: bool) -> _Drawn:
    n, k = randint(rng, 2, 10), randint(rng, 2, 4)
    question = f"How many {k}-character codes can be made from {n} different symbols if symbols may repeat?"
    return question, f"{n} choices for each of {k} places: {n}^{k} = {n**k}.", n**k, {"n": n, "k": k}


def _word(rng: np.random.Generator, large: bool) -> _Drawn:
    letters = "ABCDEFGH"[: randint(rng, 3, 5) if large else randint(rng, 2, 4)]
    counts = {letter: randint(rng, 1, 4 if large else 3) for letter in letters}
    word = "".join(shuffled(rng, [letter for letter, c in counts.items() for _ in range(c)]))
    n, repeats = len(word), Counter(word)
    value = factorial(n) // prod(factorial(c) for c in repeats.values())
    denominator = "*".join(f"{c}!" for c in repeats.values())
    question = f"How many distinct arrangements of the letters of {word} are there?"
    counted = ", ".join(f"{letter} {c}" for letter, c in sorted(repeats.items()))
    work = f"{n} letters ({counted}). {n}!/({denominator}) = {value}."
    return question, work, value, {"word": word}


def _table(rng: np.random.Generator, large: bool) -> _Drawn:
    n = randint(rng, 4, 7)
    who = pick(
        rng, ("people sit around a round table", "children stand in a circle", "knights sit at a round table")
    )
    question = f"In how many ways can {n} {who}, if rotations count as the same?"
    return question, f"({n}-1)! = {n - 1}! = {factorial(n - 1)}.", factorial(n - 1), {"n": n}


def _boxes(rng: np.random.Generator, nonempty: bool) -> _Drawn:
    n, k = randint(rng, 3, 12), randint(rng, 2, 5)
    if nonempty:
        n = max(n, k)
        question = f"In how many ways can {n} identical balls be put into {k} distinct boxes, no box empty?"
        return (
            question,
            f"{_choose_text(n - 1, k - 1)}.",
            comb(n - 1, k - 1),
            {"n": n, "k": k, "nonempty": True},
        )
    question = f"In how many ways can {n} identical balls be put into {k} distinct boxes?"
    work = f"{_choose_text(n + k - 1, k - 1)}."
    return question, work, comb(n + k - 1, k - 1), {"n": n, "k": k, "nonempty": False}


def _adjacent(rng: np.random.Generator, together: bool) -> _Drawn:
    n = randint(rng, 4, 6)
    first, second = (_NAMES[i] for i in two_distinct(rng, len(_NAMES)))
    glued = 2 * factorial(n - 1)
    rule = "must stand next to each other" if together else "must not stand next to each other"
    question = f"In how many ways can {n} people, including {first} and {second}, stand in a line if {first} and {second} {rule}?"
    work = f"Glue {first} and {second}: 2*{n - 1}! = {glued}."
    if together:
        return question, work, glued, {"n": n, "together": True}
    work += f" Total {n}! = {factorial(n)}. {factorial(n)} - {glued} = {factorial(n) - glued}."
    return question, work, factorial(n) - glued, {"n": n, "together": False}


def _at_least_one(rng: np.random.Generator, large: bool) -> _Drawn:
    men, women = (
        (randint(rng, 10, 20), randint(rng, 10, 20)) if large else (randint(rng, 3, 8), randint(rng, 2, 6))
    )
    k = randint(rng, 2, min(men, 8 if large else 5))
    question = (
        f"A committee of {k} is chosen from {men} men and {women} women. "
        "In how many ways can this be done if it must include at least one woman?"
    )
    total, none = comb(men + women, k), comb(men, k)
    work = f"All: {_choose_text(men + women, k)}. No women: {_choose_text(men, k)}. {total} - {none} = {total - none}."
    return question, work, total - none, {"men": men, "women": women, "k": k}


def _grid(rng: np.random.Generator, large: bool) -> _Drawn:
    a, b = (randint(rng, 8, 15), randint(rng, 8, 15)) if large else (randint(rng, 1, 6), randint(rng, 1, 6))
    question = f"How many shortest paths go from (0, 0) to ({a}, {b}) on a grid, moving one unit right or up at a time?"
    return question, f"{_choose_text(a + b, a)}.", comb(a + b, a), {"a": a, "b": b}


def _grid_through(rng: np.random.Generator, large: bool) -> _Drawn:
    a, b = randint(rng, 2, 7), randint(rng, 2, 7)
    c, d = randint(rng, 0, a), randint(rng, 0, b)
    question = (
        f"How many shortest paths go from (0, 0) to ({a}, {b}) on a grid, moving one unit right or up at a time, "
        f"and pass through ({c}, {d})?"
    )
    first, second = comb(c + d, c), comb(a - c + b - d, a - c)
    work = f"To ({c}, {d}): {_choose_text(c + d, c)}. Then: {_choose_text(a - c + b - d, a - c)}. {first}*{second} = {first * second}."
    return question, work, first * second, {"a": a, "b": b, "c": c, "d": d}


def _chair(rng: np.random.Generator, large: bool) -> _Drawn:
    n, k = randint(rng, 4, 10), randint(rng, 2, 4)
    question = f"In how many ways can a committee of {k} with one chairperson be chosen from {n} people?"
    work = f"{_choose_text(n, k)}. Chair: {k} ways. {comb(n, k)}*{k} = {comb(n, k) * k}."
    return question, work, comb(n, k) * k, {"n": n, "k": k}


_KINDS: dict[int, dict[str, Callable[[np.random.Generator, bool], _Drawn]]] = {
    1: {"line": _line, "committee": _committee, "roles": _roles, "handshakes": _handshakes, "codes": _codes},
    2: {"word": _word, "table": _table, "boxes": lambda rng, large: _boxes(rng, nonempty=False)},
    3: {
        "together": lambda rng, large: _adjacent(rng, together=True),
        "apart": lambda rng, large: _adjacent(rng, together=False),
        "at_least_one": _at_least_one,
        "boxes_nonempty": lambda rng, large: _boxes(rng, nonempty=True),
    },
    4: {"grid": _grid, "grid_through": _grid_through, "chair": _chair},
    5: {"committee": _committee, "line": _line, "word": _word, "grid": _grid, "at_least_one": _at_least_one},
}


def generate(rng: np.random.Generator, difficulty: int) -> Problem:
    """One counting problem at ``difficulty`` (1-5, see the module docstring)."""
    kinds = _KINDS[difficulty]
    kind = pick(rng, sorted(kinds))
    large = difficulty == 5
    while True:
        question, work, count, parameters = kinds[kind](rng, large)
        if large and count > LARGEST_ANSWER or not large and count <= LARGEST_ANSWER:
            break
    answer = count % 1000
    if large:
        question += " Find the remainder when this number is divided by 1000."
        work += f" {count} mod 1000 = {answer}."
    return Problem(
        question=question,
        answer=str(answer),
        answer_type="integer",
        solution=f"{work} {boxed(str(answer))}",
        metadata={"kind": kind, "count": str(count), **parameters},
    )


def source(seed: int = 0) -> GeneratorSource:
    """Infinite seeded counting problems, difficulty 1-5."""
    return GeneratorSource("combinatorics", generate, "integer", DIFFICULTIES, seed=seed)
