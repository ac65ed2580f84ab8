"""Issue 23: how models finish an answer, graded whole by ``verify``; every right form beside a wrong twin.

Rows are ``(gold, completion, expected)``, grouped by the issue's numbered items. Each accepted form has a
rejected form of the same shape next to it (a wrong value in bold, a wrong ordinal, a wrong second
coordinate, an approximation of a different exact value, a hedge between two values).
"""

from __future__ import annotations

import time

import pytest

from reasongym.verifiers import verify

T, F = True, False
SEATS = "There are $4! = 24$ orders, so $\\boxed{24}$ ways. Wait, actually, rotations are the same, so divide by 4"

ROWS = [
    # 1. decimals: a decimal gold is exact; a fraction gold accepts three or more correct digits
    ("0.3", "So she pays \\boxed{0.3}.", T),
    ("0.3", "So she pays \\boxed{\\frac{3}{10}}.", T),
    ("0.3", "So she pays \\boxed{0.25}.", F),
    ("0.3", "So she pays \\boxed{0.34}.", F),
    ("0.3", "So she pays \\boxed{0.349}.", F),
    ("0.3", "So she pays \\boxed{\\frac13}.", F),
    ("0.5", "The share is \\boxed{0.50}.", T),
    ("0.5", "The share is \\boxed{0.54}.", F),
    ("2.5", "It takes \\boxed{\\frac52} hours.", T),
    ("2.5", "It takes \\boxed{2.54} hours.", F),
    ("1.5", "It takes \\boxed{1.45} hours.", F),
    ("0.33", "The ratio is \\boxed{\\frac13}.", T),
    ("0.33", "The ratio is \\boxed{0.333}.", T),
    ("0.33", "The ratio is \\boxed{0.334}.", F),
    ("0.33", "The ratio is \\boxed{\\frac14}.", F),
    ("\\frac{1}{3}", "The probability is \\boxed{0.333}.", T),
    ("\\frac{1}{3}", "The probability is \\boxed{0.3333}.", T),
    ("\\frac{1}{3}", "The probability is \\boxed{0.3}.", F),
    ("\\frac{1}{3}", "The probability is \\boxed{0.343}.", F),
    # 2. a correction in words after the only box wins; a check that states no new value leaves it
    ("6", SEATS + ": that gives 6 seatings.", T),
    ("24", SEATS + ": that gives 6 seatings.", F),
    ("24", "So $\\boxed{24}$ ways. Wait, let me double-check: $4! = 24$. Yes.", T),
    ("24", "So $\\boxed{24}$ ways. Hmm, is that right? Yes, it is.", T),
    ("24", "So $\\boxed{24}$ ways.\n\nNote: were rotations the same there would be 6.", T),
    ("15", "The answer is 12. Oops, I misread: there are 5 rows, so the total is 15.", T),
    ("12", "The answer is 12. Oops, I misread: there are 5 rows, so the total is 15.", F),
    # 4. an equation names its variable
    ("x=3", "\\boxed{x=3}", T),
    ("x=3", "\\boxed{3}", T),
    ("x=3", "\\boxed{y=3}", F),
    ("a = 5", "\\boxed{b = 5}", F),
    ("y = 2x + 1", "\\boxed{f(x) = 2x + 1}", T),
    # 5. the last number is the final claim's, in digits or in words
    ("200", "Each of the 100 students picks 2 clubs, so there are two hundred memberships.", T),
    ("2", "Each of the 100 students picks 2 clubs, so there are two hundred memberships.", F),
    ("12", "Each box holds 3, so four boxes hold twelve.", T),
    ("3", "Each box holds 3, so four boxes hold twelve.", F),
    # 6. a comma followed by a space separates values
    ("32349", "\\boxed{32,349}", T),
    ("32349", "\\boxed{32{,}349}", T),
    ("32349", "\\boxed{32, 349}", F),
    ("32, 349", "\\boxed{32, 349}", T),
    # 7. bold or math that ends the last sentence, an answer line in bold
    ("36", "So the number of handshakes is **36**.", T),
    ("36", "So the number of handshakes is **35**.", F),
    ("20\\%", "**Answer: 20%**", T),
    ("20\\%", "**Answer: 25%**", F),
    ("-3", "The value of $f(-1)$ is $- 3$.", T),
    ("-3", "The value of $f(-1)$ is $3$.", F),
    # 8. <answer> tags that hold a sentence
    ("12", "<answer>The answer is 12 apples.</answer>", T),
    ("12", "<answer>The answer is 13 apples.</answer>", F),
    ("12", "<answer>There are 12 apples left.</answer>", T),
    ("12", "Let me count.\n<answer>12</answer>", T),
    # 9. an exact value and its approximation: the exact value is the answer
    ("\\frac{11}{36}", "The probability is $\\frac{11}{36} \\approx 0.306$.", T),
    ("\\frac{11}{36}", "The probability is $\\frac{13}{36} \\approx 0.361$.", F),
    ("5\\sqrt2", "The length is $5\\sqrt2$ cm $\\approx 7.07$ cm.", T),
    ("5\\sqrt2", "The length is $5\\sqrt3$ cm $\\approx 8.66$ cm.", F),
    ("5\\sqrt2", "The length is $5\\sqrt2$ cm $\\approx 7.2$ cm.", F),  # the approximation is not the value's
    # 10. words after the answer, units and degrees inside a sentence
    ("\\frac38", "The answer is 3/8 of the pizza.", T),
    ("\\frac38", "The answer is 5/8 of the pizza.", F),
    ("120", "The angle is $120^\\circ$.", T),
    ("120", "The angle is $60^\\circ$.", F),
    ("16\\pi", "The area is 16\u03c0 square units.", T),
    ("16\\pi", "The area is 8\u03c0 square units.", F),
    # 11. numbers in words and ordinals
    ("12", "The answer is twelve.", T),
    ("12", "The answer is eleven.", F),
    ("200", "The answer is two hundred.", T),
    ("-3", "The answer is negative three.", T),
    ("3", "The answer is negative three.", F),
    ("3", "She finished third.", T),
    ("3", "She finished second.", F),
    ("15", "\\boxed{15^{\\text{th}}}", T),
    ("15", "\\boxed{16^{\\text{th}}}", F),
    ("1", "\\boxed{\\text{first}}", T),
    ("2", "\\boxed{\\text{first}}", F),
    ("\\frac34", "The answer is 3 over 4.", T),
    ("\\frac34", "The answer is 4 over 3.", F),
    ("\\frac14", "The answer is one-quarter.", T),
    ("\\frac14", "The answer is one-third.", F),
    ("\\frac23", "The answer is two thirds.", T),
    ("\\frac32", "The answer is one and a half.", T),
    ("1500000", "The answer is 1.5 million.", T),
    ("1500000", "The answer is 1.5 thousand.", F),
    # 12. several stated values against a tuple, a list or a set
    ("(2, -1)", "So x = 2 and y = -1.", T),
    ("(2, -1)", "So x = 2 and y = 1.", F),
    ("-2, 2", "So x = 2 or x = -2.", T),
    ("-2, 2", "So x = 2 or x = -3.", F),
    ("[1,2]", "\\boxed{1 \\le x \\le 2}", T),
    ("[1,2]", "\\boxed{1 < x \\le 2}", F),
    ("(1,2]", "\\boxed{\\{x \\mid 1 < x \\le 2\\}}", T),
    ("(1,2]", "\\boxed{\\{x \\mid 1 \\le x \\le 2\\}}", F),
    ("(1,2]", "\\boxed{\\{x \\in \\mathbb{R} : 1 < x \\le 2\\}}", T),
    ("\\emptyset", "Therefore there are no real solutions.", T),
    ("\\{1\\}", "Therefore there are no real solutions.", F),
    ("(-\\infty,3)", "So x \u2208 (\u2212\u221e, 3).", T),
    ("(-\\infty,3)", "So x \u2208 (\u2212\u221e, 3].", F),
    # 13. forms: primes, matrix arithmetic, base 10, mixed numbers, repeating decimals, compound units,
    # unit vectors, chains ending in the value, a matrix sum gold, a matrix in $...$
    ("3x^2+2x", "\\boxed{f'(x) = 3x^2+2x}", T),
    ("3x^2+2x", "\\boxed{f'(x) = 3x^2+2}", F),
    ("\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix}", "\\boxed{2\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}}", T),
    ("\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix}", "\\boxed{2\\begin{pmatrix}1&2\\\\3&5\\end{pmatrix}}", F),
    ("11", "\\boxed{11_{10}}", T),
    ("11", "\\boxed{11_{2}}", F),
    ("2.5", "She needs 2 1/2 cups.", T),
    ("2.5", "She needs 2 1/4 cups.", F),
    ("\\frac23", "\\boxed{0.666...}", T),
    ("\\frac23", "\\boxed{0.555...}", F),
    ("\\frac13", "\\boxed{0.(3)}", T),
    ("\\frac13", "\\boxed{0.(6)}", F),
    ("150", "It takes 2 hours 30 minutes.", T),
    ("150", "It takes 2 hours 20 minutes.", F),
    ("\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", "\\boxed{\\mathbf{i} + 2\\mathbf{j} + 3\\mathbf{k}}", T),
    ("\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", "\\boxed{\\mathbf{i} + 3\\mathbf{j} + 2\\mathbf{k}}", F),
    ("101", "\\boxed{a+2z = 2z+a = 101}", T),
    ("101", "\\boxed{a+2z = 2z+a = 102}", F),
    ("101", "\\boxed{a+2z = 2z+b = 101}", F),  # two different expressions: an equation, no value
    (
        "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}+\\begin{pmatrix}1&1\\\\1&1\\end{pmatrix}",
        "\\boxed{\\begin{pmatrix}2&1\\\\1&2\\end{pmatrix}}",
        T,
    ),
    (
        "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}+\\begin{pmatrix}1&1\\\\1&1\\end{pmatrix}",
        "\\boxed{\\begin{pmatrix}2&1\\\\1&1\\end{pmatrix}}",
        F,
    ),
    (
        "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}",
        "So the matrix is $\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}$.",
        T,
    ),
    (
        "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}",
        "So the matrix is $\\begin{pmatrix}0&1\\\\1&0\\end{pmatrix}$.",
        F,
    ),
    (
        "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}",
        "So the matrix is\n$$\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}$$",
        T,
    ),
    (
        "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}",
        "So the matrix is\n\\[\n\\begin{pmatrix}0&1\\\\1&0\\end{pmatrix}\n\\]",
        F,
    ),
    (
        "1",
        "So the matrix is\n$$\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}$$",
        F,
    ),  # no entry of it is the answer
    # 14. a rejected alternative after the answer, the change after a money total
    ("42", "The answer is 42, not 24 as one might first guess.", T),
    ("24", "The answer is 42, not 24 as one might first guess.", F),
    ("12.50", "So she pays $5 + 7.50 = $12.50. If she pays with a $20 bill she gets $7.50 back.", T),
    ("12.50", "So she pays $5 + 7.40 = $12.40. If she pays with a $20 bill she gets $7.60 back.", F),
    # 15. a text gold in a box
    ("Yes", "\\boxed{\\text{Yes}}", T),
    ("Yes", "\\boxed{\\text{No}}", F),
    # classes the second independent set (set B) found at its first grading, fixed afterwards
    ("5", "So x = 5 (we reject x = -2 since a length is positive).", T),
    ("-2", "So x = 5 (we reject x = -2 since a length is positive).", F),
    ("5", "The solutions are x = 5 and x = -2, but only x = 5 is valid.", T),
    ("-2", "The solutions are x = 5 and x = -2, but only x = 5 is valid.", F),
    ("20", "The total is 20.\n\nHow many apples were left after 3 days?", T),
    ("3", "The total is 20.\n\nHow many apples were left after 3 days?", F),
    ("\\frac{1}{6}", "The probability is 1 in 6.", T),
    ("\\frac{1}{6}", "The probability is 1 in 5.", F),
    ("(-\\infty,-1] \\cup [3,\\infty)", "So x \u2264 -1 or x \u2265 3.", T),
    ("(-\\infty,-1] \\cup [3,\\infty)", "So x < -1 or x \u2265 3.", F),
    ("(-\\infty,3]", "So x \u2264 3.", T),
    ("(-\\infty,3]", "So x < 3.", F),
    ("[0,4)", "Thus 0 \u2264 x < 4.", T),
    ("[0,4)", "Thus 0 < x < 4.", F),
    ("42", "| Step | Value |\n|---|---|\n| total | **42** |", T),
    ("43", "| Step | Value |\n|---|---|\n| total | **42** |", F),
    ("42", "The answer is *42*.", T),
    ("42", "The answer is _42_.", T),
    ("42", "The answer is *24*.", F),
    ("9", "\\boxed{12}\n\nOn reflection, I double counted three of them; the answer should be 9.", T),
    ("12", "\\boxed{12}\n\nOn reflection, I double counted three of them; the answer should be 9.", F),
]

CAPITALS = [("A", "Paris"), ("B", "London"), ("C", "Rome"), ("D", "Berlin")]
CHOICE_ROWS = [
    # 3. a hedge between options
    ("C", "The answer is (C) or maybe (D); I'm not sure.", F, None),
    ("C", "The answer is (C) or perhaps (D).", F, None),
    ("C", "The answer is (C); I'm fairly sure.", T, None),
    # 15. other ways to name the option
    ("B", "Checking each option in turn.\nOption B is correct.", T, None),
    ("B", "Checking each option in turn.\nOption C is correct.", F, None),
    ("B", "The answer is (b).", T, None),
    ("B", "The answer is (c).", F, None),
    ("D", "A is wrong. B is wrong. C is wrong. Therefore D.", T, None),
    ("D", "A is wrong. B is wrong. D is wrong. Therefore C.", F, None),
    ("A", "London is a big city, but the capital of France is Paris.", T, CAPITALS),
    ("A", "Paris is lovely, but the capital of England is London.", F, CAPITALS),
    ("A", "Paris, not London.", F, CAPITALS),  # two options named: no pick
]


@pytest.mark.parametrize(("gold", "completion", "expected"), ROWS)
def test_finishing_forms(gold: str, completion: str, expected: bool) -> None:
    start = time.perf_counter()
    verdict = verify(completion, gold, "math")
    assert time.perf_counter() - start < 1.0
    assert verdict.correct is expected, verdict


@pytest.mark.parametrize(("gold", "completion", "expected", "choices"), CHOICE_ROWS)
def test_choice_finishing_forms(gold: str, completion: str, expected: bool, choices: list | None) -> None:
    assert verify(completion, gold, "choice", choices=choices).correct is expected
