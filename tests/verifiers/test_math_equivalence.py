"""verify_math_answer: (gold, prediction, expected) rows grouped by form, true and false for each.

Every bug found in real rollouts adds a row here.
"""

from __future__ import annotations

import pytest

from reasongym.errors import ConfigError, VerifierTimeout
from reasongym.verifiers import timeout as timeout_module
from reasongym.verifiers.base import Outcome
from reasongym.verifiers.math.grade import verify_math_answer

ROWS = [
    # integers, signs, U+2212 minus
    ("3", "3", True),
    ("3", "03", True),
    ("3", "+3", True),
    ("3", "4", False),
    ("-3", "-3", True),
    ("-3", "\u22123", True),
    ("-3", "3", False),
    ("12", "120", False),
    ("120", "12", False),
    ("0", "-0", True),
    ("0", "0.0", True),
    ("0", "0.0000000001", False),
    # decimals and the rounding a decimal gold implies
    ("0.5", "0.5", True),
    ("0.5", ".5", True),
    ("0.5", "0.50", True),
    ("0.5", "\\frac12", True),
    ("0.33", "0.33", True),
    ("0.33", "0.334", False),  # a decimal gold is exact; 0.334 is no fraction's decimal that rounds to it
    ("0.33", "0.333", True),  # 0.333 is 1/3, which the gold rounds
    ("0.33", "0.3333333", True),
    ("0.33", "\\frac13", True),
    ("0.33", "0.34", False),
    ("0.33", "0.3", False),
    ("2.50", "2.5", True),
    ("-1.25", "-\\frac54", True),
    ("-1.25", "1.25", False),
    ("16386.17", "16386.17", True),
    ("16386.17", "16386.71", False),
    ("16386.17", "16386", False),
    ("3.5", "3.549", False),  # one decimal: the gold is its value, never a rounding
    ("0.3", "0.25", False),
    ("0.3", "0.34", False),
    ("0.3", "0.349", False),
    ("0.3", "\\frac13", False),
    ("0.5", "0.54", False),
    ("2.5", "2.54", False),
    ("1.5", "1.45", False),
    ("0.05", "\\frac{1}{19}", False),  # one significant digit: exact
    ("12.50", "12.504", False),
    ("0.67", "\\frac23", True),
    ("0.67", "0.667", True),
    ("0.67", "0.666", True),  # 2/3 cut off
    ("0.67", "0.668", False),
    ("0.14", "\\frac17", True),
    ("0.14", "0.143", True),
    ("0.14", "\\frac18", False),  # 0.125: its decimals end, so it is no rounding of 0.14
    ("0.17", "\\frac16", True),
    ("1.41", "\\sqrt2", True),
    ("1.41", "\\sqrt3", False),
    ("3.14", "\\pi", True),
    ("1.41", "1.414", False),  # no fraction with a denominator up to 12 is 1.414
    ("3.5", "3.56", False),
    # an exact gold needs exactness or about ten significant digits
    ("\\frac12", "0.5", True),
    ("\\frac12", "0.51", False),
    ("\\frac12", "0.49999", False),
    ("\\frac13", "0.333", True),  # three significant digits, rounded or cut off
    ("\\frac13", "0.3", False),
    ("\\frac13", "0.33", False),  # two digits are as likely another value's rounding
    ("\\frac13", "0.334", False),
    ("\\frac23", "0.667", True),
    ("\\frac23", "0.666", True),
    ("\\frac27", "0.286", True),
    ("\\frac27", "0.285", True),
    ("\\frac27", "0.287", False),
    ("-\\frac13", "-0.333", True),
    ("-\\frac13", "0.333", False),
    ("\\frac13", "0.3333333333", True),
    ("\\frac23", "0.67", False),
    ("\\frac23", "0.6666666667", True),
    ("\\pi", "3.14", False),
    ("\\pi", "3.14159", False),
    ("\\pi", "3.141592654", True),
    ("\\sqrt2", "1.414213562", True),
    ("\\sqrt2", "1.4142", False),
    ("7", "7.0000000001", False),
    ("7", "7.00", True),
    ("123456789012", "1.23456789e11", False),
    # near zero and tiny values: no absolute rounding
    ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}", False),
    ("\\frac{1}{2^{99}}", "2^{-99}", True),
    ("10^{-30}", "0", False),
    ("0", "\\sin(\\pi)", True),
    # thousands separators (a pair inside brackets is a pair)
    ("1000", "1,000", True),
    ("1000", "1\\,000", True),
    ("1000", "1{,}000", True),
    ("1000000", "1,000,000", True),
    ("1234.5", "1,234.5", True),
    ("1000", "1,00", False),
    ("(1, 0)", "(1,000)", True),  # inside brackets a plain comma group is a pair
    ("1, 2", "1,2", True),
    # fractions in every spelling
    ("\\frac{3}{4}", "3/4", True),
    ("\\frac{3}{4}", "\\dfrac{3}{4}", True),
    ("\\frac{3}{4}", "\\tfrac34", True),
    ("\\frac{3}{4}", "6/8", True),
    ("\\frac{3}{4}", "0.75", True),
    ("\\frac{3}{4}", "4/3", False),
    ("\\frac{3}{4}", "\\frac{3}{5}", False),
    ("-\\frac{3}{4}", "\\frac{-3}{4}", True),
    ("-\\frac{3}{4}", "\\frac{3}{-4}", True),
    ("\\frac{1}{2}", "1 \\div 2", True),
    ("\\frac{1}{2}", "\u00bd", True),
    # mixed numbers
    ("\\frac72", "3\\frac12", True),
    ("\\frac72", "3 1/2", True),
    ("\\frac72", "3\\frac{1}{2}", True),
    ("\\frac72", "3\u00bd", True),
    ("-\\frac72", "-3\\frac12", True),
    ("\\frac72", "3\\frac13", False),
    ("\\frac32", "3\\frac12", False),
    # percent
    ("25\\%", "25\\%", True),
    ("25\\%", "25%", True),
    ("25\\%", "25", True),
    ("25\\%", "0.25", True),
    ("25\\%", "\\frac14", True),
    ("25\\%", "25 percent", True),
    ("25\\%", "2.5", False),
    ("25\\%", "26\\%", False),
    ("25", "0.25", False),
    ("25", "2500", False),
    ("25", "25\\%", True),
    ("0.25", "25\\%", True),
    ("12.5\\%", "0.125", True),
    ("12.5\\%", "0.1254", False),  # a decimal gold is exact, also as a percent
    ("12.5\\%", "0.13", False),
    ("33.3\\%", "\\frac13", True),  # 33.3% shows three digits: it rounds 1/3
    ("33.3\\%", "0.333", True),
    # scientific notation
    ("2000", "2e3", True),
    ("2000", "2E3", True),
    ("2000", "2\\times10^3", True),
    ("2000", "2 \\cdot 10^{3}", True),
    ("2000", "2 \u00d7 10\u00b3", True),
    ("0.002", "2e-3", True),
    ("2000", "2e4", False),
    ("2000", "2\\times10^4", False),
    # repeating decimals
    ("\\frac13", "0.\\overline{3}", True),
    ("\\frac16", "0.1\\overline{6}", True),
    ("\\frac43", "1.\\overline{3}", True),
    ("\\frac{1}{7}", "0.\\overline{142857}", True),
    ("\\frac13", "0.\\overline{6}", False),
    # roots
    ("\\sqrt{8}", "2\\sqrt{2}", True),
    ("2\\sqrt2", "\\sqrt8", True),
    ("\\sqrt{2}", "\\sqrt2", True),
    ("\\sqrt{2}", "2^{1/2}", True),
    ("\\sqrt{2}", "\u221a2", True),
    ("\\sqrt{16}", "\u221a16", True),
    ("\\sqrt[3]{27}", "\u221b27", True),
    ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", True),
    ("\\sqrt[3]{2}", "2^{1/3}", True),
    ("\\sqrt[3]{-8}", "-2", True),
    ("\\sqrt{12}", "3\\sqrt{2}", False),
    ("\\sqrt{2}", "\\sqrt{3}", False),
    ("4", "\\sqrt{16}", True),
    ("\\sqrt[3]{2}", "\\sqrt{2}", False),
    # powers
    ("8", "2^3", True),
    ("8", "2**3", True),
    ("1024", "2^{10}", True),
    ("1024", "2^10", True),
    ("2^{2023}", "2^{2023}", True),
    ("2^{2023}", "2^{2022}", False),
    ("2^{2023}+\\sqrt2", "2^{2023}+\\sqrt3", False),
    ("\\frac{1}{8}", "2^{-3}", True),
    # constants: pi, e, i
    ("2\\pi", "2\\pi", True),
    ("2\\pi", "\\pi \\cdot 2", True),
    ("2\\pi", "2\u03c0", True),
    ("2\\pi", "\\pi", False),
    ("\\frac{\\pi}{2}", "\\pi/2", True),
    ("e^2", "e \\cdot e", True),
    ("e", "\\exp(1)", True),
    ("-1", "e^{i\\pi}", True),
    ("3+4i", "4i+3", True),
    ("3+4i", "3-4i", False),
    ("i", "\\sqrt{-1}", True),
    # trig, log, ln, exp
    ("\\frac{\\sqrt3}{2}", "\\sin 60^\\circ", True),
    ("\\frac12", "\\cos(\\pi/3)", True),
    ("\\frac12", "\\sin(\\pi/3)", False),
    ("3", "\\log_2 8", True),
    ("3", "\\log_{2}(8)", True),
    ("2", "\\log_{10} 100", True),
    ("\\ln 2", "\\log(2)", True),
    ("\\ln 6", "\\ln 2 + \\ln 3", True),
    ("\\ln 6", "\\ln 5", False),
    ("\\frac{\\pi}{4}", "\\arctan 1", True),
    ("\\frac{\\pi}{6}", "\\sin^{-1}(1/2)", True),
    # factorials and binomials
    ("120", "5!", True),
    ("720", "6!", True),
    ("15", "5!!", True),
    ("120", "4!", False),
    ("10", "\\binom{5}{2}", True),
    ("10", "\\binom{5}{3}", True),
    ("10", "\\binom{5}{1}", False),
    # implicit multiplication and brackets
    ("2\\sqrt3", "2 \\sqrt{3}", True),
    ("2\\sqrt3", "\\sqrt{3} \\cdot 2", True),
    ("6", "2(3)", True),
    ("6", "(2)(3)", True),
    ("6", "\\left(2\\right)\\left(3\\right)", True),
    ("6", "2 \\times 3", True),
    ("6", "12 \\div 2", True),
    ("6", "[2+4]", True),
    # variables and symbolic equivalence
    ("3x", "3x", True),
    ("3x", "x \\cdot 3", True),
    ("3x", "x+x+x", True),
    ("3x", "3y", False),
    ("2x", "2y", False),
    ("x^2-1", "(x-1)(x+1)", True),
    ("(x+1)^2", "x^2+2x+1", True),
    ("(x+1)^2", "x^2+x+1", False),
    ("\\frac{x^2-1}{x-1}", "x+1", True),
    ("1", "\\sin^2 x + \\cos^2 x", True),
    ("\\sin 2x", "2\\sin x \\cos x", True),
    ("2\\pi r", "2 r \\pi", True),
    ("\\pi r^2", "\\pi r^3", False),
    ("a_1 + a_2", "a_2 + a_1", True),
    ("a_1 + a_2", "a_1 + a_3", False),
    ("\\frac{\\sqrt{x}}{x}", "\\frac{1}{\\sqrt{x}}", True),
    ("|x|", "x", False),
    ("0.5x", "\\frac{x}{2}", True),
    ("\\frac{x}{3}", "0.333x", False),
    # labels: "x =" on either side
    ("3", "x = 3", True),
    ("3", "x=3", True),
    ("x = 3", "3", True),
    ("x = 3", "x = 3", True),
    ("3", "3 = x", True),
    ("3", "x = 4", False),
    ("2x+1", "y = 2x + 1", True),
    ("y = 2x + 1", "2x+1", True),
    ("y = 2x + 1", "y - 2x = 1", True),
    ("y = 2x + 1", "y = 2x - 1", False),
    ("x^2 + y^2 = 1", "y^2 + x^2 = 1", True),
    ("x^2 + y^2 = 1", "1 = x^2 + y^2", True),
    ("x^2 + y^2 = 1", "x^2 + y^2 = 2", False),
    ("[2, 5)", "x \\in [2, 5)", True),
    # tuples and points are ordered
    ("(1,2)", "(1,2)", True),
    ("(1,2)", "(1, 2)", True),
    ("(1,2)", "\\left(1,2\\right)", True),
    ("(1,2)", "(2,1)", False),
    ("(1,2)", "(1,2,3)", False),
    ("(1,2)", "1", False),
    ("(1,2)", "(x, y) = (1, 2)", True),
    ("(\\frac12, 3)", "(0.5, 3)", True),
    ("(1,2)", "\\{1, 2\\}", False),
    # unordered solution lists and sets; a hedge is wrong
    ("1, 2", "1, 2", True),
    ("1, 2", "2, 1", True),
    ("1, 2", "x=1, x=2", True),
    ("1, 2", "x = 2, x = 1", True),
    ("1, 2", "1 and 2", True),
    ("1, 2", "x = 1 or x = 2", True),
    ("1, 2", "1", False),
    ("1, 2", "1, 2, 3", False),
    ("1, 2", "1, 3", False),
    ("\\{1,2\\}", "\\{2,1\\}", True),
    ("\\{1,2\\}", "\\{1,3\\}", False),
    ("1", "1 or 2", False),
    ("1", "1, 2", False),
    ("1", "1 and 2", False),
    ("1", "x = 1 or x = -1", False),
    ("1 \\pm \\sqrt2", "1+\\sqrt2, 1-\\sqrt2", True),
    ("1 \\pm \\sqrt2", "1-\\sqrt2, 1+\\sqrt2", True),
    ("1 \\pm \\sqrt2", "1+\\sqrt2", False),
    ("\\{1\\pm\\sqrt{5},-2\\}", "-2, 1+\\sqrt5, 1-\\sqrt5", True),
    ("\\pm 3", "3, -3", True),
    # intervals and unions
    ("[2,5)", "[2,5)", True),
    ("[2,5)", "[2,5]", False),
    ("[2,5)", "(2,5)", False),
    ("[2,5)", "[2,6)", False),
    ("[2,5)", "2 \\le x < 5", True),
    ("[2,5)", "2 \\leq x < 5", True),
    ("[2,5)", "5 > x \\ge 2", True),
    ("[2,5)", "2 < x < 5", False),
    ("(3,\\infty)", "x > 3", True),
    ("(3,\\infty)", "3 < x", True),
    ("(3,\\infty)", "(3, \\infty)", True),
    ("(3,\\infty)", "x \\ge 3", False),
    ("(3,\\infty)", "2x + 1 > 7", False),
    ("(-\\infty, 3]", "x \\le 3", True),
    ("(-\\infty, 3]", "x < 3", False),
    ("(-\\infty,\\infty)", "\\mathbb{R}", True),
    ("(1,2] \\cup [3,\\infty)", "(1,2] \\cup [3,\\infty)", True),
    ("(1,2] \\cup [3,\\infty)", "[3,\\infty) \\cup (1,2]", True),
    ("(1,2] \\cup [3,\\infty)", "(1,2) \\cup [3,\\infty)", False),
    ("(1,2] \\cup [3,\\infty)", "(1,2]", False),
    ("(-\\infty, 1) \\cup (3, \\infty)", "x < 1 or x > 3", True),
    ("(-\\infty, 1) \\cup (3, \\infty)", "(-\\infty, 1) U (3, \\infty)", True),
    ("(-\\infty, 3) \\cup (3, \\infty)", "x \\ne 3", True),
    # matrices and vectors
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", True),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{bmatrix} 1 \\\\ 2 \\end{bmatrix}", True),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(1, 2)", True),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(2, 1)", False),
    (
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        True,
    ),
    (
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        "\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}",
        False,
    ),
    (
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        "\\begin{pmatrix} 1 & 2 & 3 & 4 \\end{pmatrix}",
        False,
    ),
    ("\\begin{pmatrix} \\frac12 \\\\ -1 \\end{pmatrix}", "\\begin{pmatrix} 0.5 \\\\ -1 \\end{pmatrix}", True),
    # degrees
    ("30^\\circ", "30^\\circ", True),
    ("30^\\circ", "30", True),
    ("30^\\circ", "30\u00b0", True),
    ("30^\\circ", "30^{\\circ}", True),
    ("30^\\circ", "30 degrees", True),
    ("30^\\circ", "\\frac{\\pi}{6} \\text{ radians}", True),
    ("30^\\circ", "60^\\circ", False),
    ("30", "30^\\circ", True),
    # base subscripts compare digits
    ("204_5", "204_5", True),
    ("204_5", "204_{5}", True),
    ("204_5", "204", True),
    ("204_5", "204_6", False),
    ("204_5", "54", False),
    ("204_5", "205", False),
    ("1011_2", "1011_2", True),
    ("54", "204_5", False),
    ("-221_3", "-221_3", True),
    ("-221_3", "-221", True),
    ("-221_3", "221_3", False),
    ("221_3", "-221_3", False),
    # base subscripts against what is not digits, or a gold in base ten (mutation testing found these open)
    ("204_5", "2.04", False),
    ("204_5", "\\frac{1}{2}", False),
    ("204_5", "x", False),
    ("204", "204_5", False),
    ("-204_5", "-204", True),
    # intervals: a tuple answer reads as an open interval; ends and infinities compared
    ("(1, 3]", "(1, 3)", False),
    ("[1, 3)", "(1, 3)", False),
    ("[1, 3)", "(1, 3, 5)", False),
    ("[1, 3)", "5", False),
    ("[3, \\infty)", "[3, 1000)", False),
    ("[3, \\infty)", "[3, \\infty)", True),
    # containers whose entries need the symbolic step: every comparison passes it on
    ("[\\frac{\\sqrt{2}}{2}, 1)", "[\\frac{1}{\\sqrt{2}}, 1)", True),
    ("[\\frac{\\sqrt{2}}{2}, 1] \\cup [2, 3]", "[2, 3] \\cup [\\frac{1}{\\sqrt{2}}, 1]", True),
    ("(\\frac{\\sqrt{2}}{2}, 1)", "(\\frac{1}{\\sqrt{2}}, 1)", True),
    ("x = \\frac{\\sqrt{2}}{2}, y = 1", "y = 1, x = \\frac{1}{\\sqrt{2}}", True),
    ("x = 1, y = 2", "x = 1, z = 2", False),
    (
        "\\begin{pmatrix} \\frac{\\sqrt{2}}{2} \\\\ 1 \\end{pmatrix}",
        "\\begin{pmatrix} \\frac{1}{\\sqrt{2}} \\\\ 1 \\end{pmatrix}",
        True,
    ),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "5", False),
    # text wrappers, spaces and delimiters
    ("5", "\\text{5}", True),
    ("5", "\\mathrm{5}", True),
    ("5", "\\textbf{5}", True),
    ("5", "\\boxed{5}", True),
    ("5", "$5$", True),
    ("5", "\\(5\\)", True),
    ("5", "\\!5\\,", True),
    ("1000", "1\\;000", True),  # a LaTeX space between digit groups of three
    ("5", " 5 ", True),
    ("5", "5.", True),
    ("\\frac12", "$\\frac{1}{2}$", True),
    # unicode math
    ("\\frac12", "\u00bd", True),
    ("\\sqrt2", "\u221a2", True),
    ("4", "\u221a16", True),
    ("\\pi", "\u03c0", True),
    ("6", "2\u00d73", True),
    ("2", "6\u00f73", True),
    ("123", "\uff11\uff12\uff13", True),
    ("5", "5\u200b", True),
    ("1000", "1\u00a0000", True),  # a no-break space groups thousands
    ("x^2", "x\u00b2", True),
    ("x^3", "x\u00b3", True),
    ("[2, 5]", "2 \u2264 x \u2264 5", True),
    ("[5, \\infty)", "x \u2265 5", True),
    # word numbers
    ("5", "five", True),
    ("12", "twelve", True),
    ("100", "one hundred", True),
    ("25", "twenty-five", True),
    ("105", "one hundred and five", True),
    ("5", "six", False),
    ("3000", "three thousand", True),
    # units: convert within a dimension, never across
    ("5 m", "5 m", True),
    ("5 m", "5", True),
    ("5 m", "5\\text{ m}", True),
    ("5 m", "5m", True),
    ("5 m", "5cm", False),
    ("5 \\text{ m}", "5 s", False),
    ("5 m", "5 \\text{m}", True),
    ("5 m", "5 meters", True),
    ("5 m", "500 cm", True),
    ("5 m", "0.005 km", True),
    ("5 m", "5 cm", False),
    ("5 m", "50 cm", False),
    ("5 m", "5 kg", False),
    ("5 m", "6", False),
    ("5 \\text{ cm}", "5", True),
    ("5 \\text{ cm}", "50 mm", True),
    ("1 \\text{ hour}", "60 minutes", True),
    ("60 \\text{ minutes}", "1 hour", True),
    ("60 \\text{ minutes}", "1 h", True),
    ("60 \\text{ minutes}", "60 seconds", False),
    ("2 \\text{ kg}", "2000 g", True),
    ("2 \\text{ kg}", "2000 mg", False),
    ("3 \\text{ L}", "3000 mL", True),
    ("1 \\text{ L}", "1000 cm^3", True),
    ("12 \\text{ square units}", "12", True),
    ("4 \\text{ cm}^2", "400 mm^2", True),
    ("4 \\text{ cm}^2", "4 cm", False),
    ("60 \\text{ km/h}", "60 km per hour", True),
    ("5", "5 apples", True),
    ("5", "5 cm", True),
    ("5", "6 apples", False),
    # money
    ("\\$5", "\\$5", True),
    ("\\$5", "$5", True),
    ("\\$5", "5", True),
    ("\\$5", "5 dollars", True),
    ("\\$5", "\\$5.00", True),
    ("\\$5", "500 cents", True),
    ("\\$5", "5 cents", False),
    ("\\$5", "\\$6", False),
    ("-\\$0.50", "-0.50", True),
    ("\\$0.50", "50 cents", True),
    # text answers
    ("\\text{(C)}", "C", True),
    ("\\text{(C)}", "(C)", True),
    ("\\text{(C)}", "\\text{C}", True),
    ("\\text{(C)}", "D", False),
    ("\\text{(E)}", "E", True),
    ("\\text{Devon}", "Devon", True),
    ("\\text{Devon}", "\\text{devon}", True),
    ("\\text{Devon}", "Dev", False),
    ("\\text{Monday}", "\\text{Tuesday}", False),
    ("\\text{even}", "even", True),
    ("\\text{even}", "odd", False),
    ("5", "\\text{five apples}", True),
    ("5", "\\text{many}", False),
    # ratios
    ("3:1", "3:1", True),
    ("3:1", "6:2", True),
    ("3:1", "1:3", False),
    ("3:1", "3", True),
    ("1:2", "0.5", True),
    ("9:24", "3:8", True),
    ("9:24", "\\frac38", True),
    ("9:24", "9:25", False),
    ("1 : 2", "1:2", True),
    ("1:2:3", "2:4:6", True),
    ("1:2:3", "1:2", False),
    ("3:1", "(3, 1)", False),
    # clock times (two clock-shaped h:mm, or am/pm) compare field by field: 4/30 = 2/15 does not count
    ("4:30", "4:30", True),
    ("4:30", "04:30", True),
    ("4:30", "t = 4:30", True),
    ("4:30", "2:15", False),
    ("4:30", "4:03", False),
    ("4:30", "(4, 30)", False),
    ("4:30", "\\frac{2}{15}", True),  # a number cannot be a time: "9:24" may be a ratio
    ("12:05", "12:05:00", True),
    ("12:05:30", "12:05:31", False),
    ("\\text{4:30 p.m.}", "4:30 PM", True),
    ("\\text{4:30 p.m.}", "4:30pm", True),
    ("\\text{4:30 p.m.}", "4:30", True),
    ("\\text{4:30 p.m.}", "16:30", True),
    ("\\text{4:30 p.m.}", "4:30 a.m.", False),
    ("\\text{4:30 p.m.}", "\\frac{2}{15}", False),
    ("\\text{12:15 a.m.}", "0:15", True),
    ("4:30", "4:30 pm", True),
    ("16:30", "4:30 pm", True),
    ("4:30", "5:30 pm", False),
    # named assignments match by name; a solution list stays unordered
    ("a=2, b=3", "a=2, b=3", True),
    ("a=2, b=3", "b=3, a=2", True),
    ("a=2, b=3", "a = 2 and b = 3", True),
    ("a=2, b=3", "\\boxed{a=3,b=2}", False),
    ("a=2, b=3", "a=3, b=2", False),
    ("a=2, b=3", "2, 3", True),
    ("a=2, b=3", "3, 2", False),
    ("a=2, b=3", "(a, b) = (2, 3)", True),
    ("a=2, b=3", "(b, a) = (3, 2)", True),
    ("a=2, b=3", "(a, b) = (3, 2)", False),
    ("a=2, b=3", "a=2, 3", True),
    ("a=2, b=3", "b=2, 3", False),
    ("a=2, b=3", "a=2, c=3", False),
    ("a=2, b=3", "a=2", False),
    ("a=2, b=3", "a=2, b=3, c=4", False),
    ("x=1, x=2", "x=2, x=1", True),
    ("x=1, x=2", "x=2, x=3", False),
    # exact value = its decimal approximation: graded by the exact member, the rest must agree
    ("\\sqrt{51}", "\\sqrt{51}\\approx 7.14", True),
    ("\\sqrt{51}", "\\sqrt{51} = 7.14", True),
    ("\\sqrt{51}", "x = \\sqrt{51} \\approx 7.1414", True),
    ("\\sqrt{51}", "\\sqrt{51}\\approx 7", True),
    ("\\sqrt{51}", "7.14 \\approx \\sqrt{51}", True),
    ("\\sqrt{51}", "\\sqrt{50}\\approx 7.07", False),
    ("\\sqrt{51}", "\\sqrt{51}\\approx 7.2", False),
    ("\\sqrt{51}", "\\sqrt{51}\\approx 8", False),
    ("\\sqrt{51}", "7.14", False),
    ("7.14", "\\sqrt{51}\\approx 7.14", True),
    ("\\frac32", "\\frac64 = 1.5", True),
    ("\\frac32", "\\frac64 = 1.6", False),
    ("4", "2+2 = 4", True),
    ("4", "2+2 = 5", False),
    ("5", "2+2 = 5", False),
    ("2x+1", "2x+1 = 3", False),
    # thousands grouped by spaces: only groups of exactly three digits
    ("1000", "1 000", True),
    ("1234567", "1 234 567", True),
    ("1000", "1\u2009000", True),
    ("1000", "1\u202f000", True),
    ("1000.5", "1 000.5", True),
    ("1000", "1~000", True),
    ("23", "2 3", False),
    ("1000", "10 00", False),
    ("1000", "1 0000", False),
    ("1000000", "1 000,000", False),
    ("111111111", "111, \\! 111, \\! 111", True),
    ("111, \\! 111, \\! 111", "111111111", True),
    ("111, \\! 111, \\! 111", "111,111,111", True),
    ("111, \\! 111, \\! 111", "111, 111, 111", False),  # with a space it is a list (issue 23)
    ("32349", "32, 349", False),
    ("32349", "32,349", True),
    ("32349", "32{,}349", True),
    ("111, \\! 111, \\! 111", "111, 111, 112", False),
    ("1002", "1, 2", False),
    ("1, 234", "1234", False),
    ("\\frac{25}{8}", "3 1/8", True),
    # \pm inside sets and lists stands for both values, on either side
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{1\\pm\\sqrt{5},-2\\}", True),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{-2, 1+\\sqrt5, 1-\\sqrt5\\}", True),
    ("\\{-2, 1+\\sqrt5, 1-\\sqrt5\\}", "\\{1\\pm\\sqrt{5},-2\\}", True),
    ("\\{1\\pm\\sqrt{5},-2\\}", "-2, 1\\pm\\sqrt5", True),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{1+\\sqrt5,-2\\}", False),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{1\\pm\\sqrt{3},-2\\}", False),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{1\\pm\\sqrt{5},2\\}", False),
    # identities sympy's simplify misses, and near-identities the numeric test must not accept
    ("2\\sin^2 x", "\\tan(x)\\sin(2x)", True),
    ("2\\sin^2 x", "\\tan(x)\\cos(2x)", False),
    ("\\sec^2 x", "1 + \\tan^2 x", True),
    ("\\cos 2x", "1 - 2\\sin^2 x", True),
    ("x", "\\sqrt{x^2}", False),
    ("x", "x + 10^{-50}", False),
    ("x", "x + y - y", True),
    # issue 23: numbers in words, ordinals, fractions in words (the grammar reads them in any answer)
    ("45", "forty-five", True),
    ("45", "forty-four", False),
    ("205", "two hundred and five", True),
    ("-7", "minus 7", True),
    ("-7", "negative seven", True),
    ("7", "negative seven", False),
    ("21", "twenty-first", True),
    ("21", "twenty-second", False),
    ("2", "second", True),  # alone, the ordinal
    ("2", "2 seconds", True),  # after a number, the unit
    ("\\frac{3}{4}", "three quarters", True),
    ("\\frac{3}{4}", "three fifths", False),
    ("\\frac{1}{2}", "a half", True),
    ("\\frac{1}{3}", "a third", True),
    ("\\frac{5}{2}", "two and a half", True),
    ("\\frac{5}{3}", "5 over 3", True),
    ("\\frac{5}{3}", "five over three", True),
    ("3000", "3 thousand", True),
    ("3000", "3 hundred", False),
    ("2", "2nd", True),
    ("23", "23^{rd}", True),
    # issue 23: French intervals, set-builder notation, primes and inverses as labels, currency signs
    ("(2, 5)", "]2, 5[", True),
    ("(2, 5]", "]2, 5]", True),
    ("[2, 5)", "[2, 5[", True),
    ("[2, 5)", "]2, 5[", False),
    ("(3, \\infty)", "\\{x : x > 3\\}", True),
    ("(3, \\infty)", "\\{x : x \\ge 3\\}", False),
    ("(-\\infty, 1) \\cup (2, \\infty)", "\\{x \\mid x < 1 \\text{ or } x > 2\\}", True),
    ("2x", "y' = 2x", True),
    ("2", "f''(x) = 2", True),
    ("\\frac{x}{2}", "f^{-1}(x) = \\frac{x}{2}", True),
    ("\\frac{x}{2}", "f^{-1}(x) = 2x", False),
    ("45", "\u00a345", True),
    ("45", "\u20ac45", True),
    ("45", "\u20ac54", False),
    # issue 23: matrix arithmetic, unit vectors, base 10, repeating decimals in brackets
    (
        "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
        "\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix} - \\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
        True,
    ),
    (
        "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
        "\\frac{1}{2}\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix}",
        True,
    ),
    ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "-\\begin{pmatrix}-1&-2\\\\-3&-4\\end{pmatrix}", True),
    ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "-\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", False),
    ("\\begin{pmatrix}3\\\\-1\\end{pmatrix}", "3\\hat{i} - \\hat{j}", True),
    ("\\begin{pmatrix}3\\\\-1\\end{pmatrix}", "3\\vec{i} + \\vec{j}", False),
    ("1011", "1011_{10}", True),
    ("\\frac{1}{6}", "0.1(6)", True),
    ("\\frac{1}{6}", "0.1(7)", False),
]


def _assert_verdict(prediction: str, gold: str, correct: bool, reason: str, **kwargs: float) -> None:
    """The verdict and its whole reason, as pinned by the tables below."""
    verdict = verify_math_answer(prediction, gold, **kwargs)
    assert (verdict.correct, verdict.reason) == (correct, reason)


@pytest.mark.parametrize(("gold", "prediction", "expected"), ROWS)
def test_table(gold: str, prediction: str, expected: bool) -> None:
    verdict = verify_math_answer(prediction, gold, timeout=30.0)
    assert verdict.correct is expected, verdict.reason
    allowed = (Outcome.CORRECT,) if expected else (Outcome.WRONG, Outcome.UNPARSEABLE)
    assert verdict.outcome in allowed, verdict.reason


def test_gold_equals_itself() -> None:
    for gold, _, _ in ROWS:
        assert verify_math_answer(gold, gold, timeout=30.0).correct is True, gold


# ---- three states and the other outcomes ----------------------------------------------------------


@pytest.mark.parametrize(
    "gold", ["", "   ", "\\unknowncommand{3}", "\\frac{1}{2", "x ==", "$$", "\\overline{CD}"]
)
def test_unparseable_gold_is_ungradable(gold: str) -> None:
    verdict = verify_math_answer("3", gold)
    assert verdict.correct is None
    assert verdict.outcome is Outcome.UNPARSEABLE
    assert verdict.reason.startswith("gold")


def test_refused_gold_is_ungradable() -> None:
    verdict = verify_math_answer("3", "10^{10^{10^{10}}}")
    assert verdict.correct is None
    assert "gold" in verdict.reason


@pytest.mark.parametrize(
    "prediction", ["", "3 +", "\\frac{1}{", "\\foo 3", "((3)", "3 \u20ac", "The answer is 3"]
)
def test_unparseable_prediction_is_wrong(prediction: str) -> None:
    verdict = verify_math_answer(prediction, "3")
    assert verdict.correct is False
    assert verdict.outcome is Outcome.UNPARSEABLE
    assert verdict.reason


def test_verdict_keeps_the_answer_text() -> None:
    verdict = verify_math_answer("  x = 3 ", "3")
    assert verdict.extracted == "x = 3"
    assert verify_math_answer("1" * 5000, "3").extracted.endswith("...")


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", True])
def test_timeout_must_be_positive_and_finite(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"timeout=.*: must be a finite number of seconds > 0"):
        verify_math_answer("3", "3", timeout=bad)


def test_timeout_gives_timeout_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    def too_slow(fn: object, args: object = (), seconds: float = 1.0) -> object:
        raise VerifierTimeout(f"ran past {seconds} s")

    monkeypatch.setattr(timeout_module, "run_with_timeout", too_slow)
    # sqrt(x^2) agrees with x at the first sample points; only sympy can settle it (here: too slowly)
    verdict = verify_math_answer("\\sqrt{x^2}", "x", timeout=0.5)
    assert verdict.correct is None  # ungradable: the answer may well be right (issue 28, item 10)
    assert verdict.outcome is Outcome.TIMEOUT
    assert "0.5" in verdict.reason


CHEAP = [
    ("7", "7"),
    ("\\frac{3}{4}", "0.75"),
    ("25\\%", "0.25"),
    ("1,000", "1000"),
    ("\\sqrt{8}", "2\\sqrt{2}"),
    ("\\frac{\\sqrt3}{2}", "\\frac{1}{2}\\sqrt{3}"),
    ("3\\frac12", "3.5"),
    ("2\\pi", "6.283185307"),
    ("(1, 2)", "(1, 2)"),
    ("5 m", "500 cm"),
]


@pytest.mark.parametrize(("gold", "prediction"), CHEAP)
def test_cheap_forms_never_reach_sympy(monkeypatch: pytest.MonkeyPatch, gold: str, prediction: str) -> None:
    def forbidden(fn: object, args: object = (), seconds: float = 1.0) -> object:
        raise AssertionError("the sympy worker was called for a cheap form")

    monkeypatch.setattr(timeout_module, "run_with_timeout", forbidden)
    assert verify_math_answer(prediction, gold).correct is True


# Whole reasons of the numeric comparison (numeric.py), pinned against mutation-testing survivors: the
# rounding edge of a decimal gold (inclusive, with 1e-12 relative slack), how values are shown (fractions;
# scientific notation past 120 bits; constants to the first digits that differ) and the sample points.
NUMERIC_REASONS = [
    ("0.5", "\\frac12", True, "equal values"),
    ("0.1", "\\frac{1}{10}", True, "equal values"),
    ("1.5e3", "1500", True, "equal values"),
    # a decimal gold is its value; with two decimals and two digits it also rounds a value with endless
    # decimals (1/3, or 0.333, a longer decimal of it), never another terminating decimal
    ("0.334", "0.33", False, "167/500 is not 33/100"),
    ("0.335", "0.33", False, "67/200 is not 33/100"),
    ("0.325", "0.33", False, "13/40 is not 33/100"),
    ("0.3249", "0.33", False, "3249/10000 is not 33/100"),
    ("0.34", "0.33", False, "17/50 is not 33/100"),
    ("1/3", "0.33", True, "the decimal gold is this value rounded"),
    ("0.333", "0.33", True, "the decimal gold is this value rounded"),
    ("1/3", "0.3", False, "1/3 is not 3/10"),  # one decimal: exact
    ("5.005", "5.00", False, "1001/200 is not 5"),
    ("0.6675", "6.67 \\times 10^{-1}", False, "267/400 is not 667/1000"),
    ("2/3", "6.67 \\times 10^{-1}", True, "the decimal gold is this value rounded"),
    ("2", "3", False, "2 is not 3"),
    ("0", "1", False, "0 is not 1"),
    ("0.17", "\\frac16", False, "17/100 is not 1/6"),
    # past 120 bits a fraction is shown in scientific notation with 7 significant digits
    ("\\frac{1}{2^{130}}", "\\frac{1}{2^{129}}", False, "7.346840e-40 is not 1.469368e-39"),
    ("2^{130}", "2^{129}", False, "1.361129e+39 is not 6.805647e+38"),
    ("-2^{130}", "2^{130}", False, "-1.361129e+39 is not 1.361129e+39"),
    ("10^{-50}", "0", False, "1.000000e-50 is not 0"),
    # constants: a decimal needs about ten digits; shown to 12, 20 or 30 digits, the first that differ
    ("3.141592654", "\\pi", True, "equal within the rounding of the decimals"),
    ("3.14", "\\pi", False, "3.14 is not 3.14159265359"),
    ("3.1415926", "\\pi", False, "3.1415926 is not 3.14159265359"),
    ("1.41421356", "\\sqrt2", False, "1.41421356 is not 1.41421356237"),
    ("e", "\\pi", False, "2.71828182846 is not 3.14159265359"),
    ("\\pi + 10^{-15}", "\\pi", False, "3.1415926535897942385 is not 3.1415926535897932385"),
    (
        "\\pi",
        "\\pi + 10^{-25}",
        False,
        "3.14159265358979323846264338328 is not 3.14159265358979323846264348328",
    ),
    ("\\sqrt2", "1.4142135623730951", True, "equal within the rounding of the decimals"),
    ("2\\pi", "6.283185307", True, "the decimal gold is this value rounded"),
    # expressions: the first fixed sample point where they differ
    ("2x", "2y", False, "the expressions differ at x=1.56567001669, y=1.89181741681"),
    ("x^2", "x", False, "the expressions differ at x=1.56567001669"),
    ("|x|", "x", False, "the expressions differ at x=(1.78648673232 + 1.09501134684j)"),
    ("x+1", "1+x", True, "equal at 10 random real and complex points to 107 digits"),
]


@pytest.mark.parametrize(("prediction", "gold", "correct", "reason"), NUMERIC_REASONS)
def test_numeric_reasons_are_pinned_whole(prediction: str, gold: str, correct: bool, reason: str) -> None:
    _assert_verdict(prediction, gold, correct, reason, timeout=5.0)


# Which step settles an expression pair, by its reason: the wide numeric identity (analytic, same variables;
# the digit count is 2 * (needed precision + 20) - 15), or sympy (abs/floor, different variables, branch cuts).
IDENTITY_REASONS = [
    ("(x+1)^2", "x^2+2x+1", True, "equal at 10 random real and complex points to 117 digits"),
    ("\\frac{x^2-1}{x-1}", "x+1", True, "equal at 10 random real and complex points to 117 digits"),
    ("\\tan x \\sin 2x", "2\\sin^2 x", True, "equal at 10 random real and complex points to 117 digits"),
    ("2^{x}", "e^{x\\ln 2}", True, "equal at 10 random real and complex points to 241 digits"),
    ("x + y - y", "x", True, "equal (sympy simplifies the difference to 0)"),  # the variables differ
    (
        "\\lfloor x \\rfloor + 1",
        "\\lfloor x+1 \\rfloor",
        True,
        "equal (sympy simplifies the difference to 0)",
    ),
    ("\\sqrt{x^2}", "x", False, "sympy does not simplify the difference to 0"),  # negative x tells them apart
    ("\\ln(x^2)", "2\\ln x", False, "sympy does not simplify the difference to 0"),
    ("\\sqrt{1/m}", "\\frac{1}{\\sqrt m}", False, "sympy does not simplify the difference to 0"),
    ("|x|", "\\sqrt{x^2}", False, "the expressions differ at x=(1.78648673232 + 1.09501134684j)"),
    ("x^{100}", "x^{100}+10^{-60}x", False, "the expressions differ at x=1.56567001669"),
]


@pytest.mark.parametrize(("prediction", "gold", "correct", "reason"), IDENTITY_REASONS)
def test_identity_and_sympy_reasons_are_pinned_whole(
    prediction: str, gold: str, correct: bool, reason: str
) -> None:
    _assert_verdict(prediction, gold, correct, reason, timeout=10.0)


@pytest.mark.parametrize(
    ("prediction", "gold", "correct", "reason"),
    [
        # a gold whose decimal expansion ends (1/5, 3/4, 7, 1/5^30) can be written exactly: no tolerance
        ("0.2000000000001", "\\frac15", False, "2000000000001/10000000000000 is not 1/5"),
        ("0.75000000001", "\\frac34", False, "75000000001/100000000000 is not 3/4"),
        ("7.0000000001", "7", False, "70000000001/10000000000 is not 7"),
        (
            "1.0737418240001 \\times 10^{-21}",  # 1/5^30 = 2^30/10^30, missed in the 14th digit
            "\\frac{1}{5^{30}}",
            False,
            "10737418240001/10000000000000000000000000000000000 is not 1/931322574615478515625",
        ),
        # 1/3 and 1/6 never end: three significant digits, rounded or cut off at the last one, are enough
        ("0.3333333333", "\\frac13", True, "the decimal is the gold rounded or cut off at its last digit"),
        ("0.1666666667", "\\frac16", True, "the decimal is the gold rounded or cut off at its last digit"),
        ("0.33333333", "\\frac13", True, "the decimal is the gold rounded or cut off at its last digit"),
        ("0.167", "\\frac16", True, "the decimal is the gold rounded or cut off at its last digit"),
        ("0.166", "\\frac16", True, "the decimal is the gold rounded or cut off at its last digit"),
        ("0.165", "\\frac16", False, "33/200 is not 1/6"),
        ("0.17", "\\frac16", False, "17/100 is not 1/6"),
    ],
)
def test_terminating_golds_allow_a_decimal_no_tolerance(
    prediction: str, gold: str, correct: bool, reason: str
) -> None:
    _assert_verdict(prediction, gold, correct, reason)


@pytest.mark.parametrize(
    ("prediction", "gold", "correct", "reason"),
    [
        # equal at real points of both signs, not in every complex quadrant: the wide points must hold both
        ("\\sqrt{x^4}", "x^2", False, "sympy does not simplify the difference to 0"),
        # equal for positive x only: the wide points must hold negative reals
        ("(x^3)^{1/3}", "x", False, "sympy does not simplify the difference to 0"),
        ("\\sqrt{x}^2", "x", True, "equal at 10 random real and complex points to 117 digits"),
        ("e^{\\ln x}", "x", True, "equal at 10 random real and complex points to 175 digits"),
        ("|x|^2", "x^2", False, "the expressions differ at x=(1.78648673232 + 1.09501134684j)"),
    ],
)
def test_the_wide_points_cover_both_signs_and_every_quadrant(
    prediction: str, gold: str, correct: bool, reason: str
) -> None:
    _assert_verdict(prediction, gold, correct, reason, timeout=10.0)


@pytest.mark.parametrize(
    ("prediction", "gold", "correct", "reason"),
    [
        ("2\\sqrt2", "\\sqrt8", True, "equal values (to 31 digits)"),
        ("0.5\\pi", "\\frac{\\pi}{2}", True, "equal values (to 32 digits)"),
        ("\\sqrt{-1}", "i", True, "equal values (to 31 digits)"),
        ("\\sqrt3", "\\sqrt2", False, "1.73205080757 is not 1.41421356237"),
        ("1.414", "\\sqrt2", False, "1.414 is not 1.41421356237"),
        ("1.41421356237", "\\sqrt2", True, "equal within the rounding of the decimals"),
        ("\\pi^{2}", "9.8696044", True, "the decimal gold is this value rounded"),
        ("\\ln 0", "1", False, "an infinite value differs"),
        ("\\frac{\\sqrt2}{0}", "1", False, "a value is undefined"),
        ("\\sin(\\pi)", "0", True, "equal (sympy simplifies the difference to 0)"),  # both too close to 0
        ("10^{-40}\\sqrt2", "0", False, "1.41421356237e-40 is not 0.0"),
        # too large for the capped precision to prove agreement: sympy decides
        ("2^{2023}+\\sqrt2", "2^{2023}+\\sqrt3", False, "sympy does not simplify the difference to 0"),
    ],
)
def test_constant_reasons_are_pinned_whole(prediction: str, gold: str, correct: bool, reason: str) -> None:
    _assert_verdict(prediction, gold, correct, reason, timeout=10.0)


def test_division_by_zero_is_wrong_with_its_reason() -> None:
    verdict = verify_math_answer("\\frac{1}{0}", "1")
    assert (verdict.correct, verdict.outcome, verdict.reason) == (False, Outcome.WRONG, "division by zero")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (TypeError("no"), ("wrong", "sympy could not compare the expressions (TypeError)")),
        (ZeroDivisionError("no"), ("wrong", "sympy could not compare the expressions (ZeroDivisionError)")),
        (RuntimeError("worker died"), ("timeout", "the symbolic comparison ran past 10 s")),
    ],
)
def test_a_failing_sympy_step_is_a_verdict(
    monkeypatch: pytest.MonkeyPatch, error: Exception, expected: tuple
) -> None:
    from reasongym.verifiers import timeout as worker

    def run_with_timeout(fn, args, seconds):  # noqa: ANN001, ANN202
        assert 9.0 < seconds <= 10.0  # what is left of the caller's budget reaches the worker
        raise error

    monkeypatch.setattr(worker, "run_with_timeout", run_with_timeout)
    verdict = verify_math_answer("x + y - y", "x", timeout=10.0)  # different variables: only sympy decides
    assert (verdict.outcome.value, verdict.reason) == expected


def test_a_sympy_step_out_of_memory_is_refused_naming_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from reasongym.errors import VerifierOutOfMemory
    from reasongym.verifiers import timeout as worker

    def run_with_timeout(fn, args, seconds):  # noqa: ANN001, ANN202
        raise VerifierOutOfMemory("too big")

    monkeypatch.setattr(worker, "run_with_timeout", run_with_timeout)
    verdict = verify_math_answer("x + y - y", "x")
    mib = worker.WORKER_MEMORY_BYTES // 2**20
    assert (verdict.outcome, verdict.reason) == (
        Outcome.REFUSED,
        f"answer refused: the symbolic comparison needed more than {mib} MiB",
    )
    assert mib == 1024


@pytest.mark.parametrize(
    ("prediction", "gold", "correct", "reason"),
    [
        # a decimal coefficient on either side: equal at the sample points within a decimal's tolerance
        ("0.5x", "\\frac{x}{2}", True, "equal at every sampled point (decimal coefficients)"),
        ("\\frac{x}{2}", "0.5x", True, "equal at every sampled point (decimal coefficients)"),
        ("0.33x", "\\frac{x}{3}", False, "the expressions differ at x=1.56567001669"),
    ],
)
def test_decimal_coefficients_are_compared_at_the_sample_points(
    prediction: str, gold: str, correct: bool, reason: str
) -> None:
    _assert_verdict(prediction, gold, correct, reason)


@pytest.mark.parametrize(
    ("prediction", "gold", "correct", "reason"),
    [
        ("-\\ln 0", "\\infty", True, "infinite values"),  # both +infinity
        ("\\ln 0", "\\infty", False, "an infinite value differs"),  # -infinity
        ("\\ln 0 - \\ln 0", "1", False, "a value is undefined"),  # NaN
        ("0 \\cdot \\ln 0", "1", False, "a value is undefined"),
    ],
)
def test_infinite_and_undefined_constants(prediction: str, gold: str, correct: bool, reason: str) -> None:
    _assert_verdict(prediction, gold, correct, reason)


def test_sympy_that_cannot_compare_gives_a_wrong_verdict_not_an_ungradable_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reasongym.verifiers import timeout as worker

    def run_with_timeout(fn, args, seconds):  # noqa: ANN001, ANN202
        raise TypeError("no")

    monkeypatch.setattr(worker, "run_with_timeout", run_with_timeout)
    verdict = verify_math_answer("x + y - y", "x")
    assert (verdict.correct, verdict.outcome) == (False, Outcome.WRONG)  # None would mean "skip this item"
