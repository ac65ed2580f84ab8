"""A deterministic mixed corpus of model-style completions for benchmarking answer verifiers.

Each item is ``(gold, completion, expected_correct, category)``. ``expected_correct`` is the label a
careful human grader gives: True when the completion's one final answer is mathematically equal to
the gold answer (cosmetic LaTeX, equivalent rewrites, units and ``$`` signs allowed), False for wrong
values, hard negatives, several different final answers (sprayed boxes, hedges), unclosed boxes,
missing answers and bombs.

Three parts:

- synthetic items built here from a seeded RNG, and hand-written hard cases (always present);
- items around real gold answers from ``math500/test.jsonl`` and ``gsm8k/test.jsonl`` under
  ``$REASONGYM_DATA_DIR`` (default ``<repo>/../shared/data``); skipped when the files are absent.

Usage: ``for gold, completion, expected, category in build_corpus(): ...``

Why this file is long: the corpus is one idea, built in three parts that share its item type and its
rewrites; the synthetic cases are one small function per answer form, and the traps a table.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

REPO_ROOT = Path(__file__).resolve().parent.parent
GSM8K_ITEMS = 150
SEED = 20240611


class CorpusItem(NamedTuple):
    """One graded example; a plain tuple ``(gold, completion, expected_correct, category)``."""

    gold: str
    completion: str
    expected_correct: bool
    category: str


def data_dir() -> Path:
    """Where the benchmark data lives: ``$REASONGYM_DATA_DIR`` or ``<repo>/../shared/data``."""
    return Path(os.environ.get("REASONGYM_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))


def build_corpus(limit: int | None = None) -> list[CorpusItem]:
    """The full corpus in a fixed order, or a category-balanced prefix of ``limit`` items.

    Args:
        limit: Keep at most this many items, taken round-robin across categories so that a small
            run still covers every category. None keeps everything.

    Returns:
        The items; the same list on every call.
    """
    items = [*synthetic_items(), *hand_written_items(), *math500_items(), *gsm8k_items()]
    if limit is None or limit >= len(items):
        return items
    by_category: dict[str, list[CorpusItem]] = {}
    for item in items:
        by_category.setdefault(item.category, []).append(item)
    queues = [iter(group) for group in by_category.values()]
    picked: list[CorpusItem] = []
    while len(picked) < limit:
        for queue in queues:
            item = next(queue, None)
            if item is not None and len(picked) < limit:
                picked.append(item)
    return picked


# --- completion wrappers ------------------------------------------------------------------

_REASONING = (
    "Let me work through this step by step.\n",
    "First we simplify the expression, then we substitute the values.\n",
    "We set up the equation and solve it carefully.\n",
)
_BOXED_ENDINGS = (
    "Therefore, the final answer is $\\boxed{{{a}}}$.",
    "So the answer is \\boxed{{{a}}}.",
    "Thus we get $$\\boxed{{{a}}}$$",
    "**Final Answer**\n\\[\n\\boxed{{{a}}}\n\\]",
)


def boxed(rng: random.Random, answer: str) -> str:
    """A short model-style completion ending in one ``\\boxed{answer}``."""
    return rng.choice(_REASONING) + rng.choice(_BOXED_ENDINGS).format(a=answer)


def answer_is(rng: random.Random, answer: str) -> str:
    """A completion that states the answer in words, without a box."""
    ending = rng.choice(("The answer is ${a}$.", "The final answer is {a}.", "Answer: ${a}$"))
    return rng.choice(_REASONING) + ending.format(a=answer)


# --- synthetic items ------------------------------------------------------------------------

_SyntheticCase = tuple[str, list[str], list[str]]  # gold, equivalent forms, wrong forms


def _fraction_case(rng: random.Random) -> _SyntheticCase:
    value = Fraction(rng.randint(1, 40), rng.randint(2, 13))
    while value.denominator == 1:
        value = Fraction(rng.randint(1, 40), rng.randint(2, 13))
    a, b = value.numerator, value.denominator
    k = rng.randint(2, 5)
    right = [f"\\dfrac{{{a}}}{{{b}}}", f"{a}/{b}", f"\\frac{{{k * a}}}{{{k * b}}}", f"\\tfrac{{{a}}}{{{b}}}"]
    if 10**6 % b == 0:
        right.append(str(float(value)))
    wrong = [
        f"\\frac{{{b}}}{{{a}}}" if a != b else "0",
        f"\\frac{{{a + 1}}}{{{b}}}",
        f"-\\frac{{{a}}}{{{b}}}",
    ]
    return f"\\frac{{{a}}}{{{b}}}", right, wrong


def _radical_case(rng: random.Random) -> _SyntheticCase:
    c, d = rng.randint(2, 9), rng.choice((2, 3, 5, 6, 7, 10, 11, 13))
    right = [
        f"{c} \\sqrt{{{d}}}",
        f"\\sqrt{{{c * c * d}}}",
        f"{c}\\sqrt{d}" if d < 10 else f"{c}\\sqrt{{{d}}}",
    ]
    wrong = [
        f"{c + 1}\\sqrt{{{d}}}",
        f"{c}\\sqrt{{{d + 1 if d + 1 not in (4, 9) else d + 2}}}",
        f"\\sqrt{{{c * d}}}",
    ]
    return f"{c}\\sqrt{{{d}}}", right, wrong


def _pi_case(rng: random.Random) -> _SyntheticCase:
    value = Fraction(rng.randint(1, 11), rng.choice((2, 3, 4, 6, 12)))
    k, m = value.numerator, value.denominator
    top = "\\pi" if k == 1 else f"{k}\\pi"
    gold = top if m == 1 else f"\\frac{{{top}}}{{{m}}}"
    right = [
        f"{top}/{m}" if m != 1 else f"\\pi \\cdot {k}",
        f"\\frac{{{k}}}{{{m}}}\\pi",
        f"\\frac{{{2 * k}\\pi}}{{{2 * m}}}",
    ]
    wrong = [f"\\frac{{{top}}}{{{m + 1}}}", f"\\frac{{{k}}}{{{m}}}", f"{k + 1}\\pi"]
    return gold, right, wrong


def _interval_case(rng: random.Random) -> _SyntheticCase:
    a = rng.randint(-9, 5)
    b = a + rng.randint(1, 9)
    right = [f"\\left({a}, {b}\\right]", f"({a},{b}]", f"( {a} , {b} ]"]
    wrong = [f"[{a}, {b}]", f"({a}, {b})", f"({a}, {b + 1}]"]
    if rng.random() < 0.5:
        return (
            f"(-\\infty, {b}]",
            [f"\\left(-\\infty,{b}\\right]", f"(-\\infty , {b}]"],
            [f"(-\\infty, {b})", f"({b}, \\infty)"],
        )
    return f"({a}, {b}]", right, wrong


def _tuple_case(rng: random.Random) -> _SyntheticCase:
    a, b = rng.randint(-9, 9), rng.randint(-9, 9)
    while a == b:
        b = rng.randint(-9, 9)
    right = [f"\\left( {a}, {b} \\right)", f"({a},{b})", f"\\left({a},\\ {b}\\right)"]
    wrong = [f"({b}, {a})", f"({a}, {b + 1})", f"({a})"]
    return f"({a}, {b})", right, wrong


def _matrix_case(rng: random.Random) -> _SyntheticCase:
    a, b = rng.randint(-9, 9), rng.randint(-9, 9)
    while a == b:
        b = rng.randint(-9, 9)
    gold = f"\\begin{{pmatrix}} {a} \\\\ {b} \\end{{pmatrix}}"
    right = [
        f"\\begin{{pmatrix}}{a}\\\\{b}\\end{{pmatrix}}",
        f"\\begin{{bmatrix}} {a} \\\\ {b} \\end{{bmatrix}}",
    ]
    wrong = [
        f"\\begin{{pmatrix}} {b} \\\\ {a} \\end{{pmatrix}}",
        f"\\begin{{pmatrix}} {a} \\\\ {b + 1} \\end{{pmatrix}}",
    ]
    return gold, right, wrong


def _percent_case(rng: random.Random) -> _SyntheticCase:
    p = rng.randint(1, 99)
    return f"{p}\\%", [f"{p}\\%", f"{p} \\%", f"{p}%"], [f"{p + 5}\\%", f"{p + 1}%"]


def _unit_case(rng: random.Random) -> _SyntheticCase:
    n = rng.randint(2, 500)
    if rng.random() < 0.5:
        return f"{n}^\\circ", [f"{n}^{{\\circ}}", f"{n}", f"{n}^\\circ"], [f"{n + 1}^\\circ", f"{n + 10}"]
    unit = rng.choice(("cm", "meters", "inches", "kg"))
    other = {"cm": "m", "meters": "cm", "inches": "feet", "kg": "g"}[unit]
    gold = f"{n}\\text{{ {unit}}}"
    right = [f"{n} {unit}", f"{n}", f"{n}\\ \\mathrm{{{unit}}}"]
    return gold, right, [f"{n + 1}\\text{{ {unit}}}", f"{n}\\text{{ {other}}}"]


_SYNTHETIC: dict[str, Callable[[random.Random], _SyntheticCase]] = {
    "fraction": _fraction_case,
    "radical": _radical_case,
    "pi": _pi_case,
    "interval": _interval_case,
    "tuple": _tuple_case,
    "matrix": _matrix_case,
    "percent": _percent_case,
    "units": _unit_case,
}

BOMBS = (
    "10^{10^{10^{10}}}",
    "9!!!!!!!!",
    "(10^8)!",
    "\\binom{10^9}{5\\cdot10^8}",
    "2^{2^{2^{2^{2^{2}}}}}",
    "\\frac{1}{" * 2000 + "2" + "}" * 2000,
    "(" * 5000 + "1" + ")" * 5000,
    "9" * 100_000,
)


def synthetic_items() -> Iterator[CorpusItem]:
    """Equivalent and wrong forms of generated answers, plus traps; no data files needed."""
    rng = random.Random(SEED)
    for name, make_case in _SYNTHETIC.items():
        for _ in range(15):
            gold, right, wrong = make_case(rng)
            for form in right:
                yield CorpusItem(gold, boxed(rng, form), True, f"{name}_equivalent")
            yield CorpusItem(gold, answer_is(rng, gold), True, "answer_is")
            for form in wrong:
                yield CorpusItem(gold, boxed(rng, form), False, f"{name}_wrong")
    yield from _trap_items(rng)


def _trap_items(rng: random.Random) -> Iterator[CorpusItem]:
    """Completions that mention the gold answer but do not commit to it, and bombs."""
    for _ in range(60):
        n = rng.randint(2, 999)
        others = [n + rng.randint(1, 50), max(0, n - rng.randint(1, 50))]
        spray = [str(n), *map(str, others)]
        rng.shuffle(spray)
        yield CorpusItem(
            str(n), "Possible answers: " + ", ".join(f"\\boxed{{{s}}}" for s in spray), False, "sprayed_boxes"
        )
        yield CorpusItem(str(n), f"The answer is either {n} or {others[0]}.", False, "hedge")
        yield CorpusItem(
            str(n), f"{rng.choice(_REASONING)}So the answer is \\boxed{{{n}", False, "truncated_box"
        )
        yield CorpusItem(str(n), boxed(rng, f"{n}{rng.randint(0, 9)}"), False, "appended_digit")
        yield CorpusItem(
            str(n), rng.choice(_REASONING) + "I could not finish the computation.", False, "no_answer"
        )
    for bomb in BOMBS:
        yield CorpusItem("42", boxed(rng, bomb), False, "bomb")


# --- hand-written hard cases ------------------------------------------------------------------

# (gold, final answer as the model wrote it, label); each is wrapped in a box unless it already has one.
HAND_WRITTEN: tuple[tuple[str, str, bool], ...] = (
    ("2\\sin^2 x", "\\tan(x)\\sin(2x)", True),
    ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}", True),
    ("\\frac{\\sqrt{3}}{2}", "\\sin 60^\\circ", True),
    ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}", True),
    ("3", "x = 3", True),
    ("x=3", "3", True),
    ("1,2", "x=1 \\text{ or } x=2", True),
    ("1,2", "2, 1", True),
    ("\\{1,2\\}", "\\{2,1\\}", True),
    ("(1,2)", "(2,1)", False),
    ("[2,5)", "2 \\le x < 5", True),
    ("(3,\\infty)", "x > 3", True),
    ("(3,\\infty)", "2x+1>7", False),
    ("\\frac{1}{2}", "0.51", False),
    ("\\frac{2}{3}", "0.67", False),
    ("\\frac{2}{3}", "0.6666666667", True),
    ("\\pi", "3.14", False),
    ("5\\text{ m}", "500\\text{ cm}", True),
    ("5\\text{ m}", "5\\text{ cm}", False),
    ("25\\%", "0.25", True),
    ("25", "2500", False),
    ("204_5", "204", True),
    ("16386.17", "16386.71", False),
    ("x^2-1", "(x-1)(x+1)", True),
    ("2x", "2y", False),
    ("\\sqrt{8}", "2\\sqrt{2}", True),
    ("3\\frac{1}{2}", "\\frac{7}{2}", True),
    ("0.\\overline{3}", "\\frac13", True),
    ("2 \\times 10^3", "2000", True),
    ("\\text{(C)}", "C", True),
    ("\\text{Evelyn}", "\\text{Evelyn}", True),
    ("6 - 5i", "-5i+6", True),
    ("6 - 5i", "6+5i", False),
    ("1.25", "\\frac{5}{4}", True),
    ("\\$32,\\!348", "32348", True),
    ("10,\\!080", "10,080", True),
    ("\\frac{14}{3}", "4\\frac{2}{3}", True),
    ("x^5 - x^4 + x^3 - x^2 + x - 1", "(x-1)(x^4+x^2+1)", True),
    ("\\sqrt{51}", "\\sqrt{51}\\approx 7.14", True),
    ("11\\sqrt2", "\\sqrt{242}", True),
    ("4", "\\text{four}", True),
    ("a=2, b=3", "b=3, a=2", True),
    ("a=2, b=3", "a=3,b=2", False),
    ("\\log_2 8", "3", True),
    ("e^{i\\pi}", "-1", True),
    ("1000", "The answer is 1 000.", True),
    ("42", "The answer is 42.\n\nWait, actually the answer is 43.", False),
    ("42", "\\boxed{42}\n\nHmm, let me double-check: \\boxed{43}", False),
    ("42", "**Answer:** 42", True),
    ("42", "Final Answer: The final answer is $42$. I hope it is correct.", True),
    ("18", "The answer is $18.00.", True),
    ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}", False),
    ("0.33", "0.334", False),  # a decimal gold is exact (issue 23); 0.333, a decimal of 1/3, rounds to it
    ("0.33", "0.333", True),
    ("0.33", "0.34", False),
    ("\\sin^2 x + \\cos^2 x", "1", True),
    ("\\frac{x+1}{x-1}", "\\frac{x-1}{x+1}", False),
    ("4:30", "4:30", True),
    ("4:30", "2:15", False),
    ("\\sqrt{51}", "\\sqrt{51}\\approx 7.2", False),
    ("\\sqrt{51}", "\\sqrt{50}\\approx 7.07", False),
    ("a=2, b=3", "(a, b) = (3, 2)", False),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{1\\pm\\sqrt{5},-2\\}", True),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{-2, 1-\\sqrt5, 1+\\sqrt5\\}", True),
    ("1234567", "The answer is 1 234 567.", True),
    ("23", "The answer is 2 3.", False),
    ("\\sec^2 x", "1 + \\tan^2 x", True),
    ("x", "\\sqrt{x^2}", False),
    ("\\$36", "The final answer is $\\$36$.", True),
)


def hand_written_items() -> Iterator[CorpusItem]:
    """Hard positives and negatives written by hand (from verifier bug reports and probes)."""
    rng = random.Random(SEED + 3)
    for gold, answer, label in HAND_WRITTEN:
        is_sentence = "answer" in answer.lower() or "\\boxed" in answer
        completion = rng.choice(_REASONING) + answer if is_sentence else boxed(rng, answer)
        yield CorpusItem(gold, completion, label, "hand_correct" if label else "hand_wrong")


# --- items around real gold answers ---------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


_COSMETIC = (
    (re.compile(r"\\frac"), r"\\dfrac"),
    (re.compile(r"\\left|\\right"), ""),
    (re.compile(r"\\!\s*"), ""),  # "11,\\! 111" becomes "11,111": with the space left it would be a list
)
_LAST_DIGIT = re.compile(r"\d(?!.*\d)")


def _cosmetic_rewrite(gold: str) -> str:
    """The gold with meaning-preserving LaTeX changes (padding spaces when no other change applies)."""
    rewritten = gold
    for pattern, replacement in _COSMETIC:
        rewritten = pattern.sub(replacement, rewritten)
    rewritten = f" {rewritten} " if rewritten == gold else rewritten
    return rewritten


def _perturb(gold: str) -> str | None:
    """The gold with its last digit changed (almost always a different value), or None."""
    match = _LAST_DIGIT.search(gold)
    if match is None:
        return None
    replacement = str((int(match.group()) + 1) % 10)
    return gold[: match.start()] + replacement + gold[match.end() :]


def math500_items() -> Iterator[CorpusItem]:
    """Verbatim, cosmetically rewritten and perturbed MATH-500 gold answers."""
    rng = random.Random(SEED + 1)
    for row in _read_jsonl(data_dir() / "math500" / "test.jsonl"):
        gold = row["answer"]
        yield CorpusItem(gold, boxed(rng, gold), True, "math500_verbatim")
        yield CorpusItem(gold, boxed(rng, _cosmetic_rewrite(gold)), True, "math500_cosmetic")
        wrong = _perturb(gold)
        if wrong is not None:
            yield CorpusItem(gold, boxed(rng, wrong), False, "math500_perturbed")


def gsm8k_items() -> Iterator[CorpusItem]:
    """GSM8K-style endings around real integer answers: ``#### n``, ``The answer is n``, boxes, wrong values."""
    rng = random.Random(SEED + 2)
    for row in _read_jsonl(data_dir() / "gsm8k" / "test.jsonl")[:GSM8K_ITEMS]:
        gold = row["answer"]
        value = int(gold)
        reasoning = (row.get("solution") or "").strip() + "\n"
        yield CorpusItem(gold, f"{reasoning}#### {gold}", True, "gsm8k_hash")
        yield CorpusItem(gold, f"{reasoning}The answer is {gold}.", True, "gsm8k_answer_is")
        if abs(value) >= 1000:
            yield CorpusItem(gold, f"{reasoning}#### {value:,}", True, "gsm8k_thousands")
        if rng.random() < 0.3:
            yield CorpusItem(gold, f"{reasoning}So the total is ${gold}. #### {gold}", True, "gsm8k_dollar")
        wrong = value + rng.choice((-10, -2, -1, 1, 2, 10, value or 1))
        yield CorpusItem(gold, f"{reasoning}#### {wrong}", False, "gsm8k_wrong")
