r"""Cases for the answer forms that other graders' public test suites exercise, written here.

We read the public tests of eight math graders (huggingface/Math-Verify ``tests/``, hendrycks/math
``modeling/math_equivalence_test.py``, MARIO_EVAL ``math_evaluation/tests/test_is_equiv.py``,
NeMo-Skills ``tests/test_math_equal.py``, AReaL's math-verify reward tests, rllm
``tests/rewards/test_math_reward.py``, open-instruct ``open_instruct/test_ground_truth_utils.py`` and
the few-shot examples of simple-evals' equality prompt) and wrote our own cases for the forms they
test: other numbers and expressions, the same shape. Nothing here is copied from those files.

Each case is ``(suite, gold, prediction, expected, debatable, held_out)``. ``prediction`` is a bare answer that
the benchmark wraps in ``\boxed{...}``, unless it is a :class:`Raw` completion, graded as written
(extraction cases: phrases, several boxes, ``<think>``). ``expected`` is the verdict that suite's
authors wrote for that form. ``debatable`` is empty when we agree with their expectation, else one
phrase saying why a careful grader may decide otherwise (a decimal comma, a loose numeric tolerance,
a false chain such as ``3+3 = 2``, a list order that only a string comparison sees). Agreement is
reported over all cases and over the cases that are not debatable. The ``held_out`` cases were
written after the grader changes that this corpus prompted, from the same suites' forms, and were
graded once without any further change: they measure what was fixed for the class of a form rather
than for the case.

Why this file is long: it is the table of cases, one case per line, so that a diff shows the case that
changed.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Raw", "SuiteCase", "suite_cases"]


class Raw(str):
    """A full completion, graded as written (not wrapped in a box)."""


class SuiteCase(NamedTuple):
    """One case: the suite whose form it exercises, gold, prediction, the suite's expectation."""

    suite: str
    gold: str
    prediction: str
    expected: bool
    debatable: str
    held_out: bool = False
    """Written after the grader was changed for this corpus, and never used to tune it."""

    @property
    def completion(self) -> str:
        """The completion graded: the prediction boxed, or a raw completion as written."""
        return str(self.prediction) if isinstance(self.prediction, Raw) else f"\\boxed{{{self.prediction}}}"


T, F = True, False
LOOSE = "loose numeric tolerance (a few digits for an exact value)"
FALSE_CHAIN = "a false chain of equalities (only its last member is right)"
ORDER = "list order: a string comparison, though the list is a set of solutions"
COMMA = "decimal comma (ambiguous with a thousands comma)"

_MATH_VERIFY = [
    # numbers and thousands separators
    ("-17", "-17", T, ""),
    ("3850000", "3,850,000", T, ""),
    ("4000", "4 000", T, ""),
    ("2000", "2000.0", T, ""),
    ("3000.0", "3,000.0", T, ""),
    ("2000.55", "2,000.55", T, ""),
    ("0.7", ".7", T, ""),
    ("2000.55", "\\$2,000.55", T, ""),
    ("2500.25", "2500,25", T, COMMA),
    ("0,375", "0.375", T, COMMA),
    ("3", Raw("The code is QXW3Z."), F, ""),
    ("2000.55", Raw("not 20: the total is 2,000.55 m\u00b2"), T, ""),
    ("12/7", "\\frac{12}{7}", T, ""),
    ("-12/7", "-\\frac{12}{7}", T, ""),
    # intervals
    ("[0,2)", "[0,2)", T, ""),
    ("[0,5)", "[0,2)", F, ""),
    ("(0,5)", "[0,5)", F, ""),
    ("2", "-[0,2)", F, ""),
    # delimiters and styling
    ("7", Raw("Answer \\[ 7 \\]"), T, ""),
    ("7", Raw("Answer $ 7 $"), T, ""),
    ("7", Raw("Answer \\( 7 \\)"), T, ""),
    ("7", Raw("The answer is\n$$\n7\n$$"), T, ""),
    ("7", Raw("Answer: \\[\n7\n\\]"), T, ""),
    ("12", "(11+1)", T, ""),
    ("1/4", "\\frac14", T, ""),
    ("1", "\\frac5{5}", T, ""),
    ("\\sqrt{5}", "\\sqrt5", T, ""),
    ("1/4", "\\cfrac{1}{4}", T, ""),
    ("1/4", "\\left( \\frac{1}{4} \\right)", T, ""),
    ("1/4", "\\frac{1}{4} \\text{meters}", T, ""),
    ("1/4", "\\frac{1}{4} \\textbf{meters}", T, ""),
    ("1/4", "k = \\frac{1}{4}", T, ""),
    # percent
    ("35\\%", "35 percent", T, ""),
    ("35\\%", "35 pct", T, ""),
    ("35\\%", "35 %", T, ""),
    ("35\\%", "35 percentage", T, ""),
    ("35\\%", "35", T, ""),
    ("0.35", "35", F, ""),
    ("35/100", "35", F, ""),
    ("35", "35/100", F, ""),
    ("\\frac{35}{100}", "35", F, ""),
    # competition answers
    ("2-3q", "2-3q", T, ""),
    ("\\frac{17}{5}", "\\frac{17}{5}", T, ""),
    ("21\\mbox{ cm}^2", "21\\mbox{ cm}^2", T, ""),
    ("21\\mbox{ cm}^2", "21", T, ""),
    ("-3,2", "-3,2", T, ""),
    ("4", Raw("so $7^{20} \\equiv \\boxed{4} \\pmod{9}$."), T, ""),
    ("312_4", "312_4", T, ""),
    ("(2,-5,7)", "(a,b,c) = (2,-5,7)", T, ""),
    ("2 \\pm \\sqrt{7}", "2 \\pm \\sqrt{7}", T, ""),
    ("\\{2\\pm\\sqrt{3},-1\\}", "\\{2\\pm\\sqrt{3},-1\\}", T, ""),
    ("g(3) < g(0) < g(5)", "g(3) < g(0) < g(5)", T, ""),
    ("2 \\cos b \\sin a", "2 \\cos b \\sin a", T, ""),
    ("\\frac{\\pi a}{b+a}", "\\frac{\\pi a}{b+a}", T, ""),
    ("150\\text{ km}", "150\\textnormal{ km}", T, ""),
    ("[-2, -\\frac{1}{3}) \\cup (-\\frac{1}{3}, 1]", "[-2, -\\tfrac13) \\cup (-\\tfrac13, 1]", T, ""),
    ("\\sqrt3+\\sqrt7", "\\sqrt 3+\\sqrt 7", T, ""),
    ("\\frac{7}{3}\\pi", "\\frac73\\pi", T, ""),
    ("x \\in \\{-2\\} \\cup [1,4)", "x \\in \\{-2\\} \\cup [1,4)", T, ""),
    # relations
    ("x >= 7", "x \\geq 7", T, ""),
    ("x < 4", "x \\lt 4", T, ""),
    ("x \\leq 3", "x <= 3", T, ""),
    ("x > 7", "x \\gt 7", T, ""),
    ("x != 4", "x \\neq 4", T, ""),
    ("x > 7", "x < 7", F, ""),
    ("x \\geq 7", "x \\leq 7", F, ""),
    ("x \\leq 6", "6 \\geq x", T, ""),
    ("x \\geq 6", "6 \\leq x", T, ""),
    ("x = 13", "x = 6+6+1 = 9 = 13", T, FALSE_CHAIN),
    ("9 = 13a+c", "13a+c", F, ""),
    ("x = 1/5", "x = 3+3 = 1/5 \\approx 13", T, FALSE_CHAIN),
    ("13", "x=13", T, ""),
    ("13", "x\\approx13", T, ""),
    ("1/5", "x=1/5\\approx0.2", T, ""),
    ("1/5", "x=1/5\\approx1.5", T, FALSE_CHAIN),
    ("x < 2", "-x > -2", T, ""),
    ("x < 2", "x > -2", F, ""),
    ("x <= 2", "-x >= -2", T, ""),
    ("b + 4w = 0", "0", F, ""),
    ("3y + w = 2", "2", F, ""),
    ("c^2 + d = 0", "0", F, ""),
    ("m=2", "2", T, ""),
    ("2", "m=2", T, ""),
    ("w = 2 + 2 = 4", "w = 3+3 = 4", T, FALSE_CHAIN),
    ("3x+6y-5=0", "y=-\\frac{1}{2}x+\\frac{5}{6}", T, ""),
    ("x^2/9 + y^2/5 = 1", "x^2/36 + y^2/20 = 1/4", T, ""),
    # matrices
    (
        "\\begin{pmatrix}2 & 0 \\\\ 0 & 2\\end{pmatrix}",
        "\\begin{pmatrix}2 & 0 \\\\ 0 & 2\\end{pmatrix}",
        T,
        "",
    ),
    ("\\begin{bmatrix}1 & 1 \\\\1 & 1\\end{bmatrix}", "\\begin{pmatrix}1 & 1 \\\\1 & 1\\end{pmatrix}", T, ""),
    (
        "\\begin{pmatrix}5 & 6 \\\\7 & 8\\end{pmatrix}",
        "\\left[\\begin{array}{cc}5 & 6 \\\\7 & 8\\end{array}\\right]",
        T,
        "",
    ),
    (
        "\\begin{pmatrix}\\frac{1}{3} & \\frac{2}{5} \\\\ \\frac{3}{7} & \\frac{4}{9}\\end{pmatrix}",
        "\\begin{pmatrix}\\frac{1}{3} & \\frac{2}{5} \\\\ \\frac{3}{7} & \\frac{4}{9}\\end{pmatrix}",
        T,
        "",
    ),
    (
        "\\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}",
        "\\begin{pmatrix}5 & 6 \\\\ 7 & 9\\end{pmatrix}",
        F,
        "",
    ),
    (
        "\\begin{pmatrix}4 & 6 \\\\ 8 & 10\\end{pmatrix}",
        "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}3 & 4 \\\\ 5 & 6\\end{pmatrix}",
        T,
        "a matrix sum left unevaluated",
    ),
    # expressions (the qwen-parser cases)
    ("\\frac{1}{6}", "0.1666666666666667", T, ""),
    ("(2,\\frac{7}{2})", "(2,3.5)", T, ""),
    ("\\frac{x+3}{5}", "\\frac{x}{5}+\\frac{3}{5}", T, ""),
    ("\\tan^2(t)+1", "\\sec^2(t)", T, ""),
    ("21x+35y-14z+70=0", "-21x-35y+14z-70=0", T, ""),
    (
        "\\frac{\\sqrt{\\sqrt{7}+\\sqrt{150}}}{11+2\\sqrt{21}}",
        "\\frac{\\sqrt{\\sqrt{7}+\\sqrt{150}}}{2\\sqrt{21}+11}",
        T,
        "",
    ),
    ("(c+4)(d+3)", "(+4)(d+3)", F, ""),
    ("3", "\\frac{1+\\sqrt{7}}{2}", F, ""),
    ("1\\sqrt{23}", "1", F, ""),
    ("(\\frac{2}{7},\\frac{5}{3}]", "(0.2857,1.6667]", T, LOOSE),
    ("y+3m+1", "y+1", F, ""),
    ("\\sqrt{23}", "4.795831523312719", T, ""),
    ("3", "3\\sqrt{2}", F, ""),
    ("\\text{17}", "17", F, "\\text{17} is the number 17"),
    # sentence punctuation inside the delimiters
    ("\\frac{2}{9}", "\\frac{2}{9}.", T, ""),
    ("\\frac{2}{9}", Raw("The answer is $\\frac{2}{9}.$"), T, ""),
    ("\\frac{2}{9}", Raw("$$\\boxed{\\frac{2}{9}}.$$"), T, ""),
    ("\\frac{2}{9}", "\\frac{2}{9},", T, ""),
    ("(3,4)", "(3,4).", T, ""),
    ("6", "6 \\text{ cm}.", T, ""),
    ("3", Raw("The answer is $3^{5}.$"), F, ""),
    ("1", Raw("The answer is $1/4.$"), F, ""),
    ("2, 4, 6", "2, 4, 6, \\ldots", F, ""),
    # text, letters, numbers written with separators
    ("\\text{D}", "\\text{(D)}", T, ""),
    ("22222222200", "22,\\! 222,\\! 222,\\! 200", T, ""),
    ("45861", "45,\\! 861", T, ""),
    ("45861", "45, 861", F, "digit groups split by ', ' read as one number"),
    ("(3, 15) \\cup (15, 103)", "x \\in (3,15) \\cup (15,103)", T, ""),
    ("\\text{B}", "B", T, ""),
    (
        "-3, 2",
        Raw("so the two solutions are\n**Final Answer**\nThe integers are \\boxed{-3} and \\boxed{2}."),
        T,
        "",
    ),
    ("\\boxed{2}\\boxed{5}", "2,5", T, "a gold of two boxes"),
    # long completions: the last box after </think>
    (
        "144",
        Raw(
            "<think>... the area is 144.\n**Final Answer**\n\\boxed{144}\n</think>\nSo the area is \\(\\boxed{144}\\) square units."
        ),
        T,
        "",
    ),
    ("[-3,6]", Raw("Final Answer: The interval is \\(\\boxed{[-3, 6]}\\)."), T, ""),
    ("(-5, 11)", Raw("So $(A, B) = \\boxed{(-5, 11)}$."), T, ""),
    ("2122022_3", Raw("Thus the product is \\(\\boxed{2122021_3}\\)."), F, ""),
    (
        "\\left(\\frac{3}{7},\\frac{4}{7}\\right)",
        Raw("Thus, $(t,u) = \\boxed{\\left( \\frac{3}{7}, \\frac{4}{7} \\right)}.$"),
        T,
        "",
    ),
    ("(4,2)", "\\{2,4\\}", F, ""),
    ("(2,4)", "\\{2,4\\}", T, "a set for an ordered pair"),
    ("150\\%", Raw("Therefore, the error grows by 150%."), T, ""),
    ("24", Raw("Final Answer: The largest $n$ is 24."), T, ""),
    (
        "30",
        Raw("So, Jane started 30 minutes ago. Final Answer: Jane started growing it 30 minutes ago."),
        T,
        "",
    ),
    ("15", Raw("Final Answer: The final answer is $15,\\!000$. I hope it is correct."), F, ""),
    (
        "25318",
        Raw("Final Answer: The smallest value of $N$ is $\\boxed{25{,}318}$. I hope it is correct."),
        T,
        "",
    ),
    ("25318", Raw("Final Answer: The final answer is $25 {, }318$. I hope it is correct."), T, ""),
    ("23000034", Raw("Final Answer: The final answer is 23,000,034. I hope it is correct."), T, ""),
    ("16386.20", Raw("worth $\\boxed{\\$16,\\!386.20}$ at the end."), T, ""),
    # yujianll cases
    ("n=2, 4, 6", "n=2, 4, 6", T, ""),
    ("n=3, 4, 5", "n=2, 4, 6", F, ""),
    ("P = (0, 3)", "P = (0, 3)", T, ""),
    ("P = (0, 3)", "P = (0, 3.5)", F, ""),
    ("13, 57, and 91", "13, 57, \\text{ and } 91", T, ""),
    ("13, 57, and 91", "14, 57, and 91", F, ""),
    ("2 - \\frac{1}{\\mathrm{e}}", "2 - \\frac{1}{\\mathrm{e}}", T, ""),
    ("2 - \\frac{1}{\\mathrm{e}}", "2 + \\frac{1}{\\mathrm{e}}", F, ""),
    ("\\pm 2023", "2023", F, ""),
    ("\\pm 2023", "\\{-2023, 2023\\}", T, ""),
    ("11:00", "2:00", F, ""),
    ("11:00", "11:00", T, ""),
    # mixed numbers
    ("47/9", "5 2/9", T, ""),
    ("-47/9", "-5 2/9", T, ""),
    ("83/6", "+13 5/6", T, ""),
    ("5", "5 2/9", F, ""),
    ("2/9", "0 2/9", T, ""),
    ("5", "5 0/9", T, ""),
    ("2000 + 2/9", "2 000 2/9", T, ""),
    ("14", "13 6/6", F, "an improper mixed number 13 6/6"),
    ("47/900", "5 2/9\\%", T, ""),
    ("13 + 2/9", "13.0 2/9", F, ""),
    ("5", "5 + 2/9", F, ""),
]

_HENDRYCKS = [
    ("\\tfrac{1}{3} + \\frac1{54}", "\\frac{1}{3} + 2/5", F, ""),
    ("11, 3, -4", "3, 11, -4", F, ORDER),
    ("11, 3, 5", "3, 13, 5", F, ""),
    ("\\tfrac{1}{3} +\\! \\frac1{54}", "\\dfrac{1}{3} +\\frac{1}{54}", T, ""),
    ("14\\text{ units}", "14", T, ""),
    ("14\\text{ units}", "140", F, ""),
    ("14", "\\$14", T, ""),
    ("\\left(y-5\\right)\\left(y+5\\right)", "(y-5)(y+5)", T, ""),
    ("0.3, 6, 2", "6, .3, 2", F, ORDER),
    ("0.3", ".3", T, ""),
    ("15\\%", "15", T, ""),
    ("12\\sqrt{5} + \\sqrt9", "12\\sqrt5 + \\sqrt{9}", T, ""),
    ("\\frac56i", "\\frac{5}{6}i", T, ""),
    ("\\tfrac97", "\\frac{9}{7}", T, ""),
    ("3x - 5y + 13z + 2 = 0", "x + y - z + 4 = 0", F, ""),
    ("3/4", "\\frac{3}{4}", T, ""),
]

_MARIO = [
    ("\\{y, y - 2\\}", "\\{y - 2, y\\}", T, ""),
    ("y + \\sqrt3 i", "y + 1.732i", T, LOOSE),
    ("33,\\! 333,\\! 333,\\! 300", "33333333300", T, ""),
    ("2 1/4", "2.25", T, ""),
    ("5310_{6}", "5310_6", T, ""),
    ("2\\frac14", "2.25", T, ""),
    ("3\\frac38", "3.375", T, ""),
    (".3, 5.0", "0.3, 5", T, ""),
    ("30\\%", "30", T, ""),
    ("30\\%", "0.3", T, ""),
    ("\\frac17, \\sqrt5, \\pi", "1/7, 2.236, 3.1416", T, LOOSE),
    ("30\\pi", "94.248", T, LOOSE),
    ("4, 5, 6", "4, 6, 5", T, ""),
    ("9, -3, \\text{ and } -8", "-8,-3,9", T, ""),
    ("[4, 5, 6]", "(4, 6, 5)", F, ""),
    ("[y, y + 2]", "[y + 2, y]", F, ""),
    ("3+4i", "i(4-3i)", T, ""),
    ("\\tfrac34 +\\frac1{54}", "\\dfrac{3}{4} +\\frac{1}{54}", T, ""),
    ("\\frac{\\sqrt{19}}{19}", "\\frac{\\sqrt{19}}{19}", T, ""),
    ("\\frac{\\sqrt{2}}{2}", "0.7071067811865476", T, ""),
    ("14\\text{ units}", "14", T, ""),
    ("14 square units", "14", T, ""),
    ("14 \\text{m}", "14", T, ""),
    ("14\\text{ m}^2", "14", T, ""),
    ("14\\text{ m}^{2}", "14", T, ""),
    ("14 weeks", "14", T, ""),
    ("14 m^2", "14", T, ""),
    ("21:45", "21:45:00", T, ""),
    ("21:45", "09:45 \\text{P.M.}", T, ""),
    ("19:15", "7:15 \\text{ P.M.}", T, ""),
    ("19:15", "7:15\\text{ p.m.}", T, ""),
    ("19:15", "7:15 \\text{ A.M.}", F, ""),
    ("14", "\\$14", T, ""),
    ("\\left(y-7\\right)\\left(y+7\\right)", "(y-7)(y+7)", T, ""),
    ("14\\sqrt{2} + \\sqrt9", "14\\sqrt2 + \\sqrt{9}", T, ""),
    ("6x - 2y + 9z + 1 = 0", "x + y - z + 3 = 0", F, ""),
    ("\\sin(y)=\\frac{13}{17}", "\\cos(y)=\\frac{13}{17}", F, ""),
    ("13w^{5}(2+13w^{5})", "13w^5(13w^5+2)", T, ""),
    ("\\frac{9-5y}{4}", "9/4-5y/4", T, ""),
    ("(3y+2)(3y -1)(3y+1)", "(3y - 1)(3y + 1)(3y + 2)", T, ""),
    ("3^4 * 5^3 * 7^2", "3^4 5^3 7^2", T, ""),
    (
        "\\begin{pmatrix} 2 & 1/4 \\\\ 1/5 & 3 \\end{pmatrix}",
        "\\begin{pmatrix} 2 & 0.25 \\\\ 1/5 & 3 \\end{pmatrix}",
        T,
        "",
    ),
    ("\\begin{matrix} \\frac14 \\\\ 3 \\end{matrix}", "[0.25, 3]", T, ""),
    ("\\csc y", "\\frac1{\\sin y}", T, ""),
    ("\\cos(90^{\\circ}-y)", "\\sin(y)", T, ""),
    ("3.846153846153846 \\times 10^{-3}", "\\frac{1}{260}", T, ""),
    ("y \\in [0.25, \\infty)", "[1/4, \\infty)", T, ""),
    ("[-5,4]", "(-5,4)", F, ""),
    ("[2, 5)", "[y, w)", F, ""),
    ("a = 4, b = 5, c = 6", "4, 5, 6", T, ""),
    ("g(y) = 3y - 4", "3y - 4", T, ""),
    ("g(y) = 3y - 4", "y = 3y - 4", T, ""),
    (
        "\\frac{u_{0}}{s_{0}} \\frac{1}{\\left(1+s / s_{0}\\right)^{3 / 2}}",
        "\\frac{u_0 \\cdot \\left(\\frac{s_0}{s + s_0}\\right)^{0.5}}{(s + s_0)}",
        T,
        "equal only for positive s_0 and s + s_0",
    ),
    ("[2,+\\infty)", "[2^{\\frac{1}{2^{800}}}, \\infty)", T, LOOSE),
]

_NEMO = [
    ("7", "7.0", T, ""),
    ("3/4", "0.75", T, ""),
    ("\\frac{3}{4}", "0.75", T, ""),
    ("517\\frac{1}{4}", "517.25", T, ""),
    ("y^2+4y+4", "y^2 + 4*y + 4", T, ""),
    ("y^2+4y+4", "y^2 + 4*y - (-4)", T, ""),
    ("z = y^2+4y+4", "4y+ 4+y^2", T, ""),
    ("\\text{even}", "even", T, ""),
    ("\\mathrm{D}", "D", T, ""),
    ("\\textbf{B}", "B", T, ""),
    (".375", "0.375", T, ""),
    ("0.75", "\\frac {3}{4}", T, ""),
    ("23\\text{ whatever words}", "23", T, ""),
    ("\\$12", "12", T, ""),
    ("12%", "12", T, ""),
    ("12\\%", "12", T, ""),
    ("\\frac{7}{2}", "3.5", T, ""),
    ("\\frac{1}{7}", "\\dfrac{1}{7}", T, ""),
    ("(s+3)(s+3)", "(s+3)^2", T, ""),
    ("\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt{2}}{2} \\approx 0.707", T, ""),
    ("\\frac{\\sqrt{2}}{2} \\approx 0.707", "\\frac{\\sqrt{2}}{2}", T, ""),
    ("D", "D. y = 17", T, "an option followed by its value"),
    (
        "\\begin{pmatrix}1&0&0\\\\0&2&0\\\\0&0&1\\end{pmatrix}",
        "\\begin{bmatrix} 1 & 0 & 0 \\\\ 0 & 2 & 0 \\\\ 0 & 0 & 1 \\end{bmatrix}",
        T,
        "",
    ),
    ("7", "7.001", F, ""),
    ("y^2+4y+4", "y^3+4y+4", F, ""),
    ("\\text{even}", "\\text{evenn}", F, ""),
    ("\\mathrm{D}", "D*2", F, ""),
    ("\\sqrt{53},-\\sqrt{71}", "\\sqrt{53}", F, ""),
    ("\\sqrt{53}", "\\sqrt{53},-\\sqrt{71}", F, ""),
]

_RLLM = [
    ("6", Raw("<think>3 + 3 = 6</think>\nThe answer is \\boxed{6}."), T, ""),
    ("0.25", Raw("<think>a quarter</think>\nThe answer is \\boxed{0.25}."), T, ""),
    ("6", Raw("<think>3 + 3 = 7</think>\nThe answer is \\boxed{7}."), F, ""),
    ("x = 3, x = -4", Raw("<think>factor it</think>\nThe answer is \\boxed{x = 3, x = -4}."), T, ""),
    ("\\boxed{120}", Raw("<think>5! is 120</think>\nThe answer is \\boxed{120}."), T, ""),
    ("2.71828", Raw("<think>e to 5 places</think>\nThe answer is \\boxed{2.71828}."), T, ""),
    ("1/3", Raw("<think>reduce it</think>\nThe answer is \\boxed{\\frac{1}{3}}."), T, ""),
    ("7", Raw("<think>...</think>\nThe answer is \\boxed{}."), F, ""),
    ("0", Raw("<think>...</think>\nThe answer is \\boxed{0}."), T, ""),
    ("9", Raw("<think>...</think>\nThe answer is \\boxed{ }."), F, ""),
]

_AREAL = [
    ("6", Raw("The answer is 6"), T, ""),
    ("1/4", Raw("The answer is 0.25"), T, ""),
    ("6", Raw("Step 1: 3+3=6. \\boxed{6}"), T, ""),
    ("6", Raw("The answer is 7"), F, ""),
    ("6", Raw(""), F, ""),
]

_OPEN_INSTRUCT = [
    ("-5", Raw("Therefore the answer is -5"), T, ""),
    ("+9", Raw("Therefore the answer is +9"), T, ""),
    ("-2.5", Raw("Final answer: -2.5"), T, ""),
    ("-5", Raw("The result is \\boxed{-5}"), T, ""),
    ("-5", Raw("Therefore the answer is 5"), F, ""),
    ("9", Raw("The answer is +9"), T, ""),
    ("37", Raw("The answer is 37.0"), T, ""),
    ("-5", Raw("The answer is -5.0"), T, ""),
]

_SIMPLE_EVALS = [
    ("3y+5", "5+3y", T, ""),
    ("5/2", "2.5", T, ""),
    ("y^2+4y+4", "z^2+4z+4", F, ""),
    ("y^2+4y+4", "(y+2)^2", T, ""),
    ("2916/4", "729", F, "an equal value the prompt calls a non-trivial simplification"),
    ("3/(-5)", "-3/5", T, ""),
    ("54 degrees", "54", T, ""),
    ("81", "81 square feet", T, ""),
    ("12", Raw("Answer: Therefore, there are 12 cats."), T, ""),
    ("5n^2", "a_n = 5n^2", T, ""),
    ("a=2, b=5, c=9", "\\{a=2, b=5, c=9\\}", T, ""),
    ("312.4471", "313.0524", F, ""),
    ("1/4", Raw("Answer: So we have that $B$"), F, ""),
    ("700/3\u03c0", "\\frac{700}{3}\\pi", T, ""),
    ("3^{n-1} - n", "5 - \\frac{n+3}{3^{n-1}}", F, ""),
]

# Written after the changes, graded once, never used to tune the grader.
_HELD_OUT = [
    ("math-verify", "5300000", "5,300,000", T, ""),
    ("math-verify", "7000", "7 000", T, ""),
    ("math-verify", "0.9", ".9", T, ""),
    ("math-verify", "12.50", "\\$12.50", T, ""),
    ("math-verify", "3", "(2+1)", T, ""),
    ("math-verify", "\\frac{5}{8}", "\\dfrac58", T, ""),
    ("math-verify", "-\\frac{5}{8}", "\\frac{-5}{8}", T, ""),
    ("math-verify", "(-3, 4]", "(-3,4]", T, ""),
    ("math-verify", "(-3,4]", "[-3,4]", F, ""),
    ("math-verify", "[2, \\infty)", "x \\ge 2", T, ""),
    ("math-verify", "(-\\infty, 0)", "x<0", T, ""),
    ("math-verify", "x \\geq 3", "3 \\leq x", T, ""),
    ("math-verify", "x > 1", "x < 1", F, ""),
    ("math-verify", "y = 3x - 2", "3x - y - 2 = 0", T, ""),
    ("math-verify", "y = 3x - 2", "3x - y + 2 = 0", F, ""),
    ("math-verify", "x^2 + y^2 = 25", "2x^2 + 2y^2 = 50", T, ""),
    ("math-verify", "x^2 + y^2 = 25", "x^2 + y^2 = 5", F, ""),
    (
        "math-verify",
        "\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}",
        "\\begin{bmatrix}1\\\\-2\\end{bmatrix}",
        T,
        "",
    ),
    ("math-verify", "40\\%", "40 percent", T, ""),
    ("math-verify", "0.4", "40", F, ""),
    ("math-verify", "2, -7", Raw("The solutions are $\\boxed{2}$ and $\\boxed{-7}$."), T, ""),
    ("math-verify", "2, -7", Raw("So $\\boxed{2}$, $\\boxed{-7}$, $\\boxed{1}$."), F, ""),
    (
        "math-verify",
        "15",
        Raw("So the answer is $\\boxed{12}$.\n\nWait, that is wrong. Recomputing gives $\\boxed{15}$."),
        T,
        "",
    ),
    (
        "math-verify",
        "12",
        Raw("So the answer is $\\boxed{12}$.\n\nWait, that is wrong. Recomputing gives $\\boxed{15}$."),
        F,
        "",
    ),
    ("math-verify", "2016", Raw("Final Answer: The final answer is $2{,}016$. I hope it is correct."), T, ""),
    (
        "math-verify",
        "0.75",
        Raw("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct."),
        T,
        "",
    ),
    ("math-verify", "2.5", "2.5\\text{ hours}", T, ""),
    ("math-verify", "2.5 \\text{ hours}", "150 \\text{ minutes}", T, ""),
    ("math-verify", "2.5 \\text{ hours}", "2.5 \\text{ km}", F, ""),
    ("math-verify", "\\frac{\\sqrt{6}}{3}", "\\sqrt{\\frac{2}{3}}", T, ""),
    ("math-verify", "3^{10}", "59049", T, ""),
    ("math-verify", "2^{10}", "1023", F, ""),
    ("math-verify", "\\binom{6}{2}", "15", T, ""),
    ("math-verify", "e^{2}", "\\exp(2)", T, ""),
    ("math-verify", "\\sin\\frac{\\pi}{6}", "\\frac12", T, ""),
    ("math-verify", "2\\pi r^2 + 2\\pi r h", "2\\pi r(r+h)", T, ""),
    ("math-verify", "\\frac{x-1}{x+1}", "1 - \\frac{2}{x+1}", T, ""),
    ("math-verify", "\\frac{x-1}{x+1}", "1 + \\frac{2}{x+1}", F, ""),
    ("math-verify", "13/4", "3 1/4", T, ""),
    ("math-verify", "13/4", "3 1/5", F, ""),
    ("math-verify", "\\{1, 2, 3\\}", "\\{3, 2, 1\\}", T, ""),
    ("math-verify", "\\{1,2,3\\}", "\\{1,2\\}", F, ""),
    ("math-verify", "(-\\infty, -1) \\cup (1, \\infty)", "x < -1 \\text{ or } x > 1", T, ""),
    ("math-verify", "\\pm 3", "3, -3", T, ""),
    ("math-verify", "\\pm 3", "3", F, ""),
    ("math-verify", "2+3i", "3i+2", T, ""),
    ("math-verify", "2+3i", "2-3i", F, ""),
    ("math-verify", "3.0 \\times 10^{8}", "300000000", T, ""),
    ("math-verify", "0.67", "\\frac23", T, ""),
    ("math-verify", "0.67", "0.66", F, ""),
    ("math-verify", "\\frac{1}{3}", "0.3333", F, LOOSE),
    ("math-verify", "2x + 4y = 8", "x + 2y = 4", T, ""),
    ("math-verify", "2x+4y=8", "x+2y=8", F, ""),
    ("math-verify", "12", "3 \\cdot 4 = 12", T, ""),
    ("math-verify", "12", "3 \\cdot 4 = 13", F, ""),
    ("math-verify", "x=2, y=3", "(2,3)", T, ""),
    ("mario-eval", "8:45", "8:45 a.m.", T, ""),
    ("mario-eval", "20:45", "8:45 pm", T, ""),
    ("mario-eval", "20:45", "8:45 am", F, ""),
    ("mario-eval", "1011_2", "1011_2", T, ""),
    ("mario-eval", "1011_2", "11", F, ""),
    ("mario-eval", "5 \\text{ cm}^2", "5", T, ""),
    ("mario-eval", "10:30", "10:30:00", T, ""),
    ("mario-eval", "[0, 1]", "0 \\le x \\le 1", T, ""),
    ("mario-eval", "a = 1, b = -2", "1, -2", T, ""),
    ("mario-eval", "a = 1, b = -2", "-2, 1", F, ""),
    ("mario-eval", "2:3", "4:6", T, ""),
    ("mario-eval", "2:3", "3:2", F, ""),
    ("nemo-skills", "\\text{Tuesday}", "Tuesday", T, ""),
    ("nemo-skills", "\\text{Tuesday}", "Wednesday", F, ""),
    ("nemo-skills", "\\text{Yes}", "yes", T, ""),
    ("nemo-skills", "\\text{odd}", "\\textbf{odd}", T, ""),
    ("nemo-skills", "4 \\text{ feet}", "48 \\text{ inches}", T, ""),
    ("nemo-skills", "4 \\text{ feet}", "4 \\text{ inches}", F, ""),
    ("simple-evals", "5", "5 students", T, ""),
    ("simple-evals", "60", Raw("Answer: There are 60 marbles in the jar."), T, ""),
    ("simple-evals", "60", Raw("Answer: The car travels 60 km in total."), T, ""),
    ("simple-evals", "60", Raw("Answer: The car travels 70 km in total."), F, ""),
    (
        "rllm",
        "42",
        Raw("<think>\nLet me see: 6*7 = 42\n</think>\n\n**Final Answer**\n\\[\n\\boxed{42}\n\\]"),
        T,
        "",
    ),
    ("rllm", "41", Raw("<think>\nI get \\boxed{41}.\n</think>\nThe answer is \\boxed{42}."), F, ""),
    ("open-instruct", "1234", Raw("The answer is $1,234."), T, ""),
    ("open-instruct", "18", Raw("So she pays 18 dollars.\n#### 18"), T, ""),
    ("open-instruct", "45", Raw("Adding them up, she has 45 apples"), T, ""),
    ("open-instruct", "36", Raw("The area is 36 cm^2"), T, ""),
    ("open-instruct", "3", Raw("So it is 10^{3}"), F, ""),
    ("hendrycks", "\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}", T, ""),
    ("hendrycks", "\\$5.50", "5.5", T, ""),
    ("hendrycks", "x^2+2x", "x(x+2)", T, ""),
    ("hendrycks", "x^2+2x", "x(x-2)", F, ""),
]

_SUITES = {
    "math-verify": _MATH_VERIFY,
    "hendrycks": _HENDRYCKS,
    "mario-eval": _MARIO,
    "nemo-skills": _NEMO,
    "rllm": _RLLM,
    "areal": _AREAL,
    "open-instruct": _OPEN_INSTRUCT,
    "simple-evals": _SIMPLE_EVALS,
}


def suite_cases() -> list[SuiteCase]:
    """Every case, suite by suite, in a fixed order."""
    written = [SuiteCase(suite, *row) for suite, rows in _SUITES.items() for row in rows]
    return written + [SuiteCase(*row, held_out=True) for row in _HELD_OUT]
