"""Procedural generators: determinism, every level, answers recomputed independently, real verifiers, splits.

Answers are recomputed here from the question text (or the generator's metadata) by other means than
the generator uses: an AST evaluator over Fractions, sympy, brute-force enumeration, a unit table.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import json
import re
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from math import comb, factorial, gcd, lcm

import pytest

from reasongym.envs.catalog import CatalogEntry
from reasongym.envs.problem import ANSWER_TYPES, Problem
from reasongym.envs.procedural import PROCEDURAL_ENVS
from reasongym.verifiers import KINDS, verify
from reasongym.verifiers.countdown import parse_countdown_gold, verify_countdown

BY_NAME = {entry.source.split(":")[0].rsplit(".", 1)[1]: entry for entry in PROCEDURAL_ENVS}
PER_LEVEL = 40
# 10,000 train problems against 2,000 of each held-out split, spread over every level: a held-out
# problem costs ~10 generator draws (its split owns 10% of the question space), so 10,000 of each
# would take ~6 s per generator (measured) and push the file past a minute.
SPLIT_SIZES = {"train": 10_000, "validation": 2_000, "test": 2_000}


def make_source(entry: CatalogEntry, **kwargs):
    module_name, function = entry.source.split(":")
    return getattr(importlib.import_module(module_name), function)(**{**entry.source_kwargs, **kwargs})


def sample(name: str) -> list[Problem]:
    source = make_source(BY_NAME[name])
    return [source.problem("train", i, level) for level in source.difficulties() for i in range(PER_LEVEL)]


def grade(problem: Problem, completion: str):
    if problem.answer_type == "countdown" and "countdown" not in KINDS:  # until the lead wires the kind
        return verify_countdown(completion, problem.answer)
    return verify(completion, problem.answer, problem.answer_type, choices=problem.choices or None)


def evaluate(text: str) -> Fraction:
    """Exact value of a trusted arithmetic expression (ints, + - * /, parentheses, unary minus)."""
    operations = {ast.Add: Fraction.__add__, ast.Sub: Fraction.__sub__, ast.Mult: Fraction.__mul__}
    operations[ast.Div] = Fraction.__truediv__

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in operations:
            return operations[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"unexpected syntax: {ast.dump(node)}")

    return walk(ast.parse(text, mode="eval").body)


def sympy_side(text: str):
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    return parse_expr(
        text, transformations=(*standard_transformations, implicit_multiplication_application, convert_xor)
    )


# ----------------------------------------------------------------------------------------- catalog


def test_catalog_rows() -> None:
    ids = [entry.id for entry in PROCEDURAL_ENVS]
    assert len(ids) == len(set(ids)) == 9
    for entry in PROCEDURAL_ENVS:
        assert re.fullmatch(r"reasongym/[A-Za-z]+-v\d+", entry.id)
        assert entry.size == "procedural" and entry.answer_type in ANSWER_TYPES and entry.description
        source = make_source(entry)
        assert source.answer_type == entry.answer_type
        assert source.difficulties() == (1, 2, 3, 4, 5)


def test_package_import_is_cheap() -> None:
    code = (
        "import sys, reasongym.envs.procedural as p; assert p.PROCEDURAL_ENVS; "
        "print(sorted(m for m in sys.modules if m == 'sympy' or m.startswith('reasongym.envs.procedural.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- generic properties


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_deterministic_and_varied(name: str) -> None:
    first, second = make_source(BY_NAME[name]), make_source(BY_NAME[name])
    for level in first.difficulties():
        for split in ("train", "test"):
            problems = [first.problem(split, i, level) for i in range(20)]
            assert problems == [second.problem(split, i, level) for i in range(20)]
            assert len({p.question for p in problems}) >= 10, (level, split)
    other_seed = make_source(BY_NAME[name], seed=1)
    differing = sum(
        first.problem("train", i, 3).question != other_seed.problem("train", i, 3).question for i in range(20)
    )
    assert differing >= 10


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_level_gives_well_formed_problems(name: str) -> None:
    entry = BY_NAME[name]
    for problem in sample(name):
        assert problem.answer_type == entry.answer_type
        assert problem.question and problem.answer and problem.solution
        assert problem.id.startswith(f"{name}-train-d{problem.difficulty}-")
        json.dumps(problem.metadata)
        if problem.answer_type == "choice":
            labels = [label for label, _ in problem.choices]
            assert 3 <= len(labels) <= 5 and labels == list("ABCDE"[: len(labels)])
            assert problem.answer in labels and len({text for _, text in problem.choices}) == len(labels)
            assert problem.solution.endswith(f"The answer is ({problem.answer}).")
        else:
            assert problem.solution.count("\\boxed{") == 1 and problem.solution.endswith("}")
        if problem.difficulty <= 2:
            assert len(problem.solution) <= 220, problem.solution


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_reference_solutions_verify(name: str) -> None:
    if BY_NAME[name].answer_type == "math":
        pytest.importorskip("reasongym.verifiers.math.grade", reason="the math grader has not landed yet")
    for problem in sample(name)[::2]:
        verdict = grade(problem, problem.solution)
        assert verdict.correct is True, (problem.question, problem.solution, verdict.reason)
        if re.fullmatch(r"-?\d+", problem.answer):
            off_by_one = grade(problem, f"\\boxed{{{int(problem.answer) + 1}}}")
            assert off_by_one.correct is False


@pytest.mark.slow  # long: thousands of problems per split
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_splits_never_share_a_question(name: str) -> None:
    source = make_source(BY_NAME[name])
    levels = source.difficulties()
    seen = {
        split: {source.problem(split, i, levels[i % len(levels)]).question for i in range(size)}
        for split, size in SPLIT_SIZES.items()
    }
    for first, second in itertools.combinations(seen, 2):
        assert not seen[first] & seen[second], (first, second)


# ------------------------------------------------------------------------ answers, task by task


def test_arithmetic_answers() -> None:
    for problem in sample("arithmetic"):
        expression = problem.metadata["expression"]
        assert problem.question == f"What is {expression}?"
        assert Fraction(problem.answer) == evaluate(expression)
    first = [p for p in sample("arithmetic") if p.difficulty == 1][0]
    assert re.fullmatch(r"(\d\+\d(\+1)?=\d+, write \d+( carry 1)?\. ){2}\\boxed\{\d+\}", first.solution)


def test_fraction_answers_are_exact_and_reduced() -> None:
    for problem in sample("fractions"):
        expression = re.fullmatch(
            r"What is (.+)\? Give the answer in lowest terms\.", problem.question
        ).group(1)
        python = re.sub(r"(\d+)/(\d+)", r"(\1/\2)", expression).replace("×", "*").replace("÷", "/")
        assert Fraction(problem.answer) == evaluate(python), problem.question
        assert str(Fraction(problem.answer)) == problem.answer


@pytest.mark.parametrize(("name", "key"), [("linear_equation", "equation"), ("linear_system", "equations")])
def test_linear_solutions_satisfy_the_equations(name: str, key: str) -> None:
    from sympy import Rational, symbols

    x, y = symbols("x y")
    for problem in sample(name)[::3]:
        equations = problem.metadata[key]
        equations = [equations] if isinstance(equations, str) else equations
        values = [Fraction(v) for v in problem.answer.strip("()").split(", ")]
        point = dict(zip((x, y), (Rational(v.numerator, v.denominator) for v in values), strict=False))
        for equation in equations:
            assert equation in problem.question
            left, right = equation.split(" = ")
            assert (sympy_side(left) - sympy_side(right)).subs(point) == 0, (equation, problem.answer)


def test_polynomial_roots_match_sympy() -> None:
    from sympy import Poly, roots, symbols

    x = symbols("x")
    for problem in sample("polynomial_roots")[::3]:
        polynomial = re.fullmatch(
            r"Find all roots of (.+) = 0\. List them separated by commas\.", problem.question
        )
        found = roots(Poly(sympy_side(polynomial.group(1)), x))
        expected = sorted(Fraction(int(r.p), int(r.q)) for r in found)
        assert all(multiplicity == 1 for multiplicity in found.values())
        assert [Fraction(r) for r in problem.answer.split(", ")] == expected


def test_root_lists_any_order_but_complete_and_pairs_ordered() -> None:
    for problem in sample("polynomial_roots")[::8]:
        roots = problem.answer.split(", ")
        assert grade(problem, f"\\boxed{{{', '.join(reversed(roots))}}}").correct is True
        assert grade(problem, f"\\boxed{{{', '.join(roots[1:])}}}").correct is False
    for problem in sample("linear_system")[::8]:
        x, y = problem.answer.strip("()").split(", ")
        assert grade(problem, f"\\boxed{{({y}, {x})}}").correct is (x == y)


def test_number_theory_answers() -> None:
    from sympy import divisor_count

    for problem in sample("number_theory"):
        question, answer = problem.question, int(problem.answer)
        numbers = [int(n) for n in re.findall(r"\d+", question)]
        if "greatest common divisor" in question:
            assert answer == gcd(*numbers)
        elif "least common multiple" in question:
            assert answer == lcm(*numbers)
        elif "positive divisors" in question:
            assert answer == divisor_count(numbers[0])
        elif "^" in question:
            assert answer == pow(numbers[0], numbers[1], numbers[2])
        else:
            assert answer == numbers[0] % numbers[1]


def _brute_force_count(kind: str, p: dict) -> int:
    """Count by enumeration (levels 1-4, where every count is at most 999)."""
    from sympy.utilities.iterables import multiset_permutations

    def count(items) -> int:
        return sum(1 for _ in items)

    paths = lambda a, b: list(multiset_permutations("R" * a + "U" * b))  # noqa: E731
    adjacent = lambda order: abs(order.index(0) - order.index(1)) == 1  # noqa: E731
    if kind == "line":
        return count(itertools.permutations(range(p["n"])))
    if kind == "handshakes":
        return count(itertools.combinations(range(p["n"]), 2))
    if kind == "codes":
        return count(itertools.product(range(p["n"]), repeat=p["k"]))
    if kind in ("committee", "chair"):
        return count(itertools.combinations(range(p["n"]), p["k"])) * (p["k"] if kind == "chair" else 1)
    if kind == "roles":
        return count(itertools.permutations(range(p["n"]), p["k"]))
    if kind == "word":
        return count(multiset_permutations(p["word"]))
    if kind == "table":
        return len({min(o[i:] + o[:i] for i in range(p["n"])) for o in itertools.permutations(range(p["n"]))})
    if kind in ("boxes", "boxes_nonempty"):
        fillings = [Counter(c) for c in itertools.combinations_with_replacement(range(p["k"]), p["n"])]
        return sum(1 for f in fillings if not p["nonempty"] or len(f) == p["k"])
    if kind in ("together", "apart"):
        return sum(adjacent(o) == p["together"] for o in itertools.permutations(range(p["n"])))
    if kind == "at_least_one":
        people = ["m"] * p["men"] + ["w"] * p["women"]
        return sum("w" in group for group in itertools.combinations(people, p["k"]))
    if kind == "grid":
        return len(paths(p["a"], p["b"]))
    assert kind == "grid_through"
    point = "R" * p["c"] + "U" * p["d"]
    return sum(sorted(path[: len(point)]) == sorted(point) for path in paths(p["a"], p["b"]))


def _formula_count(kind: str, p: dict) -> int:
    """Level 5 counts, too large to enumerate."""
    if kind == "line":
        return factorial(p["n"])
    if kind == "committee":
        return comb(p["n"], p["k"])
    if kind == "grid":
        return comb(p["a"] + p["b"], p["a"])
    if kind == "at_least_one":
        return comb(p["men"] + p["women"], p["k"]) - comb(p["men"], p["k"])
    assert kind == "word"
    value = factorial(len(p["word"]))
    for times in Counter(p["word"]).values():
        value //= factorial(times)
    return value


def test_combinatorics_counts_by_enumeration() -> None:
    for problem in sample("combinatorics"):
        kind, answer = problem.metadata["kind"], int(problem.answer)
        for name, value in problem.metadata.items():
            shown = name not in ("kind", "count") and (kind, name) != (
                "roles",
                "k",
            )  # roles are named, not counted
            if shown and isinstance(value, int | str) and not isinstance(value, bool):
                assert str(value) in problem.question, (name, problem.question)
        if problem.difficulty == 5:
            assert answer == _formula_count(kind, problem.metadata) % 1000
            assert "divided by 1000" in problem.question
        else:
            assert answer == _brute_force_count(kind, problem.metadata) <= 999


def test_countdown_reference_reaches_the_target() -> None:
    for problem in sample("countdown"):
        puzzle = parse_countdown_gold(problem.answer)
        reference = problem.metadata["reference"]
        assert evaluate(reference) == puzzle.target
        assert Counter(int(n) for n in re.findall(r"\d+", reference)) == Counter(puzzle.numbers)
        assert f"numbers {', '.join(map(str, puzzle.numbers))}, each exactly once" in problem.question
        assert problem.question.endswith(f"equal to {puzzle.target}.")


def test_countdown_at_most_once_source() -> None:
    source = make_source(BY_NAME["countdown"], exactly_once=False)
    problem = source.problem("train", 0, 3)
    assert "each at most once" in problem.question
    assert parse_countdown_gold(problem.answer).use == "at_most_once"
    assert grade(problem, problem.solution).correct is True


UNITS = {"g": 1, "kg": 1000, "t": 10**6, "m": 1, "km": 1000, "cm": Fraction(1, 100), "mL": 1, "L": 1000}
UNITS |= {"second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600}
UNITS |= {"m/s": 1, "km/h": Fraction(1000, 3600)}
UNIT_WORDS = {"grams": "g", "kilograms": "kg", "metres": "m", "centimetres": "cm", "millilitres": "mL"}


def quantity(text: str) -> Fraction:
    number, unit = re.match(r"([\d,.]+) (\S+)", text).groups()
    return Fraction(number.replace(",", "")) * UNITS[unit]


def _expected_option(question: str, texts: list[str]) -> str:
    """The text of the right option, worked out from the question alone."""
    if pair := re.fullmatch(r"Which is (?:heavier|longer|more|faster): (.+) or (.+)\?", question):
        first, second = (quantity(side) for side in pair.groups())
        if first == second:
            return next(t for t in texts if t not in pair.groups())
        return pair.group(1) if first > second else pair.group(2)
    if convert := re.fullmatch(r"How many (\w+) are in (.+)\?", question):
        unit = UNIT_WORDS.get(convert.group(1), convert.group(1))
        value = quantity(convert.group(2)) / UNITS[unit]
        return next(t for t in texts if Fraction(t.replace(",", "")) == value)
    if extreme := re.fullmatch(r"Which is the (\w+): .+\?", question):
        pick = max if extreme.group(1) in ("heaviest", "longest", "most") else min
        return pick(texts, key=quantity)
    trip = re.fullmatch(
        r"A \w+ travels at (\d+) km/h for (\d+) minutes\. What distance is covered\?", question
    )
    distance = Fraction(int(trip.group(1)) * int(trip.group(2)), 60)
    return next(t for t in texts if Fraction(t.removesuffix(" km")) == distance)


def test_quantity_answers_from_the_question_alone() -> None:
    for problem in sample("quantity_comparison"):
        texts = [text for _, text in problem.choices]
        expected = _expected_option(problem.question, texts)
        assert dict(problem.choices)[problem.answer] == expected, problem.question


def test_choice_labels_are_uniform() -> None:
    source = make_source(BY_NAME["quantity_comparison"])
    for level, size in ((1, 3), (3, 4)):
        labels = Counter(source.problem("train", i, level).answer for i in range(1500))
        assert sorted(labels) == list("ABCD"[:size])
        assert all(abs(count / 1500 - 1 / size) < 0.05 for count in labels.values()), labels
