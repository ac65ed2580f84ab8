"""The math answer grammar: parse trees, refusals by cost, and robustness to hostile input."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasongym.verifiers.base import Outcome
from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.evaluate import exact_value
from reasongym.verifiers.math.grade import verify_math_answer
from reasongym.verifiers.math.lexer import tokenize
from reasongym.verifiers.math.nodes import AnswerRejected, Refused, Unparseable
from reasongym.verifiers.math.parser import parse_answer, parse_tokens
from reasongym.verifiers.math.shape import finish_answer

N = ast.Num
ONE_HALF = ast.Mul((N(1),), (N(2),))
X, Y = ast.Sym("x"), ast.Sym("y")
OO = ast.Const("oo")

TREES = [
    # numbers
    ("42", N(42)),
    ("-42", ast.Neg(N(42))),
    ("\u221242", ast.Neg(N(42))),
    ("0.25", N(25, -2, 2)),
    ("1,234,567", N(1234567)),
    ("1{,}000", N(1000)),
    ("1\\,000", N(1000)),
    ("2e3", N(2, 3)),
    ("1.5e-3", N(15, -4, 4)),
    ("5.", N(5)),
    ("twelve", N(12)),
    # fractions, mixed numbers, repeating decimals
    ("\\frac{1}{2}", ONE_HALF),
    ("\\frac12", ONE_HALF),
    ("\\dfrac{1}{2}", ONE_HALF),
    ("1/2", ONE_HALF),
    ("3\\frac12", ast.Add((N(3), ONE_HALF))),
    ("3 1/2", ast.Add((N(3), ONE_HALF))),
    ("0.\\overline{3}", ast.Mul((N(1),), (N(3),))),
    # powers, roots, implicit products, functions
    ("x^2", ast.Pow(X, N(2))),
    ("2**3", ast.Pow(N(2), N(3))),
    ("2^3^2", ast.Pow(N(2), ast.Pow(N(3), N(2)))),
    ("x^{-1}", ast.Pow(X, ast.Neg(N(1)))),
    ("\\sqrt2", ast.Root(N(2), N(2))),
    ("\\sqrt[3]{x}", ast.Root(X, N(3))),
    ("2x", ast.Mul((N(2), X))),
    ("xy", ast.Mul((X, Y))),
    ("(x+1)(x-1)", ast.Mul((ast.Add((X, N(1))), ast.Add((X, ast.Neg(N(1))))))),
    ("\\sin x", ast.Func("sin", (X,))),
    ("\\sin^2 x", ast.Pow(ast.Func("sin", (X,)), N(2))),
    ("\\sin^{-1} x", ast.Func("arcsin", (X,))),
    ("\\sin 2x", ast.Func("sin", (ast.Mul((N(2), X)),))),
    ("\\log_2 8", ast.Func("log", (N(8), N(2)))),
    ("|x|", ast.Func("abs", (X,))),
    ("5!", ast.Factorial(N(5))),
    ("5!!", ast.Factorial(N(5), 2)),
    ("\\binom{5}{2}", ast.Binom(N(5), N(2))),
    ("e^{i\\pi}", ast.Pow(ast.Const("e"), ast.Mul((ast.Const("i"), ast.Const("pi"))))),
    ("a_1", ast.Sym("a_1")),
    ("x_{12}", ast.Sym("x_12")),
    ("\\theta", ast.Sym("theta")),
    # marks and units
    ("25\\%", ast.Percent(N(25))),
    ("30^\\circ", ast.Quantity(N(30), ast.Unit("deg", (("angle", 1),)))),
    ("204_5", ast.BaseNum("204", 5)),
    ("5 apples", N(5)),
    # labels and relations
    ("x = 3", ast.Labeled(X, N(3))),
    ("3 = x", ast.Labeled(X, N(3))),
    ("2 \\le x < 5", ast.Interval(N(2), N(5), True, False)),
    ("x > 3", ast.Interval(N(3), OO, False, False)),
    ("2x + 1 > 7", ast.Rel((">",), (ast.Add((ast.Mul((N(2), X)), N(1))), N(7)))),
    # structures
    ("(1, 2)", ast.Seq("tuple", (N(1), N(2)))),
    ("[1, 2)", ast.Interval(N(1), N(2), True, False)),
    ("\\{1, 2\\}", ast.Seq("set", (N(1), N(2)))),
    ("1, 2", ast.Seq("list", (N(1), N(2)))),
    ("1 or 2", ast.Seq("list", (N(1), N(2)), hedged=True)),
    ("\\pm 2", ast.Seq("list", (N(2), ast.Neg(N(2))))),
    ("\\begin{pmatrix} 1 & 2 \\end{pmatrix}", ast.Matrix(((N(1), N(2)),))),
    ("\\text{Monday}", ast.Text("monday")),
    # wrappers and delimiters
    ("$\\boxed{42}$", N(42)),
    ("\\(42\\)", N(42)),
    ("\\left( 42 \\right)", N(42)),
    ("\\text{42}", N(42)),
]


@pytest.mark.parametrize(("text", "tree"), TREES)
def test_parse_tree(text: str, tree: ast.Node) -> None:
    assert parse_answer(text) == tree


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3\\frac12", Fraction(7, 2)),
        ("0.1\\overline{6}", Fraction(1, 6)),
        ("1.\\overline{3}", Fraction(4, 3)),
        ("2\\times10^3", Fraction(2000)),
        ("25\\%", Fraction(1, 4)),
        ("\\sqrt{16}", Fraction(4)),
        ("\\sqrt[3]{-8}", Fraction(-2)),
        ("8^{2/3}", Fraction(4)),
        ("\\binom{10}{3}", Fraction(120)),
        ("-3 1/2", Fraction(-7, 2)),
        ("\\sqrt{2}", None),
        ("\\pi", None),
        ("x", None),
    ],
)
def test_exact_values(text: str, value: Fraction | None) -> None:
    assert exact_value(parse_answer(text)) == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("3 +", "end of the answer"),
        ("\\foo{3}", "unknown LaTeX command \\foo"),
        ("\\frac{1}{2", "expected '}'"),
        ("\\text{1", "unbalanced braces"),
        ("(1, 2]x", "unexpected"),
        ("[3)", "half-open"),
        ("3 \u20ac", "unexpected character"),
        ("f'(x)", "primes"),
        ("\\begin{cases} 1 \\end{cases}", "environment 'cases'"),
        ("1 \\pm 2 \\pm 3 \\pm 4 \\pm 5", "at most 3"),
        ("2 3", "unexpected"),
    ],
)
def test_unparseable_reasons(text: str, reason: str) -> None:
    with pytest.raises(Unparseable) as info:
        parse_answer(text)
    assert reason in info.value.reason


BOMBS = [
    "10^{10^{10^{10}}}",
    "2^{2^{2^{2^{2^{2}}}}}",
    "(10^8)!",
    "9!!!!!!!!",
    "((9!)!)!",
    "\\binom{10^9}{5\\cdot10^8}",
    "1e999999999",
    "10^{-10^{9}}",
    "x^{10^{12}}",
    "e^{e^{e^{e^{10}}}}",
    "\\sin(10^{10^{5}})",
    "(1.0001)^{10^{9}}",
    "2^" * 600 + "2",
    "(" * 60 + "1" + ")" * 60,
    "\\sqrt" * 300 + "{2}",
    "\\sin" * 300 + " x",
    "9" * 2001,
    "1" * 1_000_000,
    "(" * 1_000_000,
    "\\frac{1}{2}" * 100_000,
]


@pytest.mark.parametrize("bomb", BOMBS, ids=lambda b: b[:30])
def test_bombs_are_refused_fast(bomb: str) -> None:
    start = time.perf_counter()
    verdict = verify_math_answer(bomb, "3")
    elapsed = time.perf_counter() - start
    assert verdict.outcome is Outcome.REFUSED, verdict.reason
    assert verdict.correct is False
    assert elapsed < 0.5  # loose bound for a noisy machine; each takes well under 10 ms
    with pytest.raises(Refused):
        parse_answer(bomb)


@pytest.mark.parametrize(
    "answer", ["2^{2023}", "1000!", "\\binom{2000}{1000}", "\\frac{1}{2004!}", "(" * 40 + "7" + ")" * 40]
)
def test_large_but_reasonable_answers_are_graded(answer: str) -> None:
    assert verify_math_answer(answer, answer).correct is True


def test_deep_nesting_does_not_recurse_unbounded() -> None:
    for depth in (10, 45):
        assert verify_math_answer("(" * depth + "7" + ")" * depth, "7").correct is True
    assert verify_math_answer("-" * 1900 + "7", "7").correct is True  # signs are read in a loop
    assert verify_math_answer("-" * 1901 + "7", "7").correct is False


@pytest.mark.parametrize("answer", ["\x00", "1\x002", "\x00" * 1000, "\\frac{1\x00}{2}"])
def test_null_bytes_are_never_glued_away(answer: str) -> None:
    verdict = verify_math_answer(answer, "12")
    assert verdict.correct is False


def test_null_byte_around_an_answer_is_white_space() -> None:
    assert verify_math_answer("\x0012\x00", "12").correct is True


def test_parsed_trees_pickle_for_the_worker() -> None:
    tree = parse_answer("\\{(x+1)^2, 5 \\text{ cm}, [2, \\infty)\\}")
    assert pickle.loads(pickle.dumps(tree)) == tree


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=10**19) | st.integers(min_value=0, max_value=9999))
def test_a_whole_number_reads_as_the_grammar_reads_it(number: int) -> None:
    """parse_answer reads a plain whole number without the grammar; the tree must be the grammar's."""
    text = str(number)
    assert parse_answer(text) == finish_answer(parse_tokens(tokenize(text)))


def test_sympy_step_builds_from_the_tree_in_process() -> None:
    from reasongym.verifiers.math.to_sympy import _symbolic_equal

    assert _symbolic_equal(parse_answer("\\sin^2 x + \\cos^2 x"), parse_answer("1"))
    assert not _symbolic_equal(parse_answer("x^2"), parse_answer("x^3"))


def test_grading_process_does_not_import_sympy() -> None:
    code = (
        "import sys; from reasongym.verifiers.math.grade import verify_math_answer as v; "
        "assert v('\\\\sqrt8', '2\\\\sqrt2').correct and v('0.5', '1/2').correct; "
        "print('sympy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


# ---- hostile and random input ------------------------------------------------------------------

FRAGMENTS = [
    "1",
    "0",
    "9.5",
    "x",
    "\\pi",
    "+",
    "-",
    "^",
    "_",
    "!",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\\{",
    ",",
    "=",
    "<",
    "\\le",
    "|",
    "\\%",
    "\\frac",
    "\\sqrt",
    "\\binom",
    "\\sin",
    "\\text{",
    " cm",
    " or ",
    "\\cup",
    "\\infty",
    "\\pm",
    "^\\circ",
    "\\begin{pmatrix}",
    "\\end{pmatrix}",
    "&",
    "\\\\",
    "\\overline{3}",
    "$",
    "\\$",
    "five",
    "\u221a",
    "\u00bd",
    "\u00b2",
    "\u2212",
    "\x00",
    "\\left(",
    "2e5",
    "1,000",
    "e",
    "i",
    ":",
    "'",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join),
)
def test_random_math_text_always_gives_a_verdict(answer: str, gold: str) -> None:
    verdict = verify_math_answer(answer, gold, timeout=5.0)
    assert verdict.outcome in Outcome
    assert verdict.correct in (True, False, None)
    assert (verdict.correct is None) == verdict.reason.startswith("gold")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_unicode_text_parses_or_is_rejected(text: str) -> None:
    try:
        parse_answer(text)
    except AnswerRejected as error:
        assert error.reason


# ---- the gold answers of the real benchmarks ----------------------------------------------------


def _golds(data_dir: Path, name: str) -> list[str]:
    path = data_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return [
        json.loads(line)["answer"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


@pytest.mark.parametrize("name", ["math/test.jsonl", "math500/test.jsonl", "gsm8k/test.jsonl"])
def test_benchmark_golds_parse_and_grade_themselves(data_dir: Path, name: str) -> None:
    golds = _golds(data_dir, name)
    failed = [(g, v.reason) for g in golds if (v := verify_math_answer(g, g)).correct is not True]
    assert len(failed) <= 0.002 * len(golds), failed[:20]


@pytest.mark.parametrize("name", ["math/test.jsonl", "gsm8k/test.jsonl"])
def test_benchmark_golds_with_a_digit_appended_are_wrong(data_dir: Path, name: str) -> None:
    # A decimal gold (0.5) stands for its rounding, so 0.51 is correct for it by design.
    golds = [g for g in _golds(data_dir, name) if "." not in g][:1500]
    accepted = [g for g in golds if verify_math_answer(g + "1", g, timeout=5.0).correct]
    assert accepted == []
