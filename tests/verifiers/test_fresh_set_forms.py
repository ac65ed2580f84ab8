"""Issue 35, round 4: the classes that set D (``benchmarks/independent_set_35d.jsonl``) found at its first
grading, each as a general rule with a right form beside a wrong one of the same shape; and the rows of the
issue's partial items (4, 10, 12, 16) that were missing.

Rows are ``(kind, gold, completion, expected)``.
"""

from __future__ import annotations

import pytest

from reasongym.verifiers import verify

T, F = True, False
GAS = ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"]
PLANETS = [
    {"label": "A", "text": "Mars"},
    {"label": "B", "text": "Venus"},
    {"label": "C", "text": "Earth"},
    {"label": "D", "text": "Jupiter"},
]

ROWS = [
    # markup a reader does not see: HTML tags, struck-out text (retracted by its writer)
    ("math", "12", "There are 3 rows of 4 chairs.<br><b>Answer:</b> 12", T),
    ("math", "12", "There are 3 rows of 4 chairs.<br><b>Answer:</b> 13", F),
    ("math", "12", "So the hall holds <strong>12</strong> chairs.", T),
    ("math", "12", "So the hall holds <strong>15</strong> chairs.", F),
    ("math", "x^2", "The answer is x<sup>2</sup>.", T),
    ("math", "15", "The answer is ~~12~~ 15.", T),
    ("math", "12", "The answer is ~~12~~ 15.", F),
    ("math", "15", "The answer is <del>12</del> 15.", T),
    ("exact", "Paris", "The answer is <b>Paris</b>.", T),
    ("integer", "42", "The answer is <b>42</b>.", T),
    # LaTeX presentation commands: colour, underline; a congruence states its residue
    ("math", "15", "The final answer is $\\textcolor{blue}{15}$.", T),
    ("math", "15", "The final answer is $\\textcolor{blue}{16}$.", F),
    ("math", "15", "$\\boxed{\\color{red} 15}$", T),
    ("math", "20", "Hence the number is $\\underline{20}$.", T),
    ("math", "20", "Hence the number is $\\underline{21}$.", F),
    ("math", "5", "Thus $n \\equiv 5 \\pmod{7}$.", T),
    ("math", "5", "Thus $n \\equiv 2 \\pmod{7}$.", F),
    # a label of words: \text{ans} =, "In short:", "Expanding:", "Ответ:"
    ("math", "12", "$\\text{ans} = 12$", T),
    ("math", "12", "$\\text{ans} = 13$", F),
    ("math", "30", "Speed times time: 60 km/h for half an hour.\n\n**In short: 30 km.**", T),
    ("math", "30", "Speed times time: 60 km/h for two hours.\n\n**In short: 120 km.**", F),
    ("math", "(x+1)^2", "Expanding: x**2 + 2*x + 1", T),
    ("math", "(x+1)^2", "Expanding: x**2 + 2*x", F),
    ("math", "3", "Total: 1 + 1 + 1", F),  # no full stop and only arithmetic: maybe cut off before "= 3"
    # a conclusion's clause; a condition after the value
    ("math", "12", "There are 3 rows of 4 chairs, so the hall holds 12 chairs.", T),
    ("math", "3", "There are 3 rows of 4 chairs, so the hall holds 12 chairs.", F),
    ("math", "3", "Completing the square, $f(x) = (x-5)^2 + 3$. The minimum is 3, attained at x = 5.", T),
    ("math", "3", "Completing the square, $f(x) = (x-3)^2 + 4$. The minimum is 4, attained at x = 3.", F),
    ("math", "9", "The area is 9, when the side is 3.", T),
    ("math", "3", "The area is 9, when the side is 3.", F),
    # what the answer is not, then what it is; a correction in brackets
    ("math", "\\frac{7}{2}", "The answer is not an integer; it is 7/2.", T),
    ("math", "3", "The answer is not an integer; it is 7/2.", F),
    ("math", "9", "Answer: 12 (wait, that's the perimeter; the area is 9)", T),
    ("math", "12", "Answer: 12 (wait, that's the perimeter; the area is 9)", F),
    ("math", "12", "Answer: 12 (we count both ends)", T),
    # a percent of a share of one; money in words; speeds in words
    ("math", "0.5", "The probability is 0.5%.", F),
    ("math", "0.5", "The probability is 50%.", T),
    ("math", "25", "The answer is 25%.", T),
    ("math", "12.5", "She paid 12 dollars and 50 cents.", T),
    ("math", "12.5", "She paid 12 dollars and 5 cents.", F),
    ("math", "60 \\text{ km/h}", "The average speed is 60 kilometres per hour.", T),
    ("math", "60 \\text{ km/h}", "The average speed is 60 miles per hour.", F),
    # numbers and points in other notations
    ("math", "1000000", "Der Preis beträgt CHF 1'000'000.", T),
    ("math", "1000", "Der Preis beträgt CHF 1'000'000.", F),
    ("math", "1000000", "The total cost is Rs. 10,00,000.", T),
    ("math", "100000", "The total cost is Rs. 10,00,000.", F),
    ("math", "120000", "Result: 1.2E+05", T),
    ("math", "120000", "Result: 1.2E+04", F),
    ("math", "(1,2)", "Ответ: (1; 2)", T),
    ("math", "(1,2)", "Ответ: (2; 1)", F),
    ("math", "(1.5,2)", "Ответ: (1,5; 2)", T),
    ("math", "(15,2)", "Ответ: (1,5; 2)", F),
    ("math", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "The product is [[1, 2], [3, 4]].", T),
    ("math", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "The product is [[3, 4], [1, 2]].", F),
    ("math", "\\infty", "As x grows, the limit is infinity.", T),
    ("math", "\\infty", "As x grows, the limit is negative infinity.", F),
    ("math", "[2,5]", "x can be anything from 2 to 5 inclusive.", T),
    ("math", "[2,5]", "x can be anything from 2 to 5, not including 5.", F),
    ("math", "(2,5)", "So x > 2 and x < 5.", T),
    ("math", "(2,5)", "So x > 2 and x <= 5.", F),
    ("math", "(-\\infty,1)\\cup(3,\\infty)", "So x < 1 or x > 3.", T),
    # a tool call's arguments
    (
        "math",
        "\\frac{3}{4}",
        '<tool_call>\n{"name": "final_answer", "arguments": {"value": "3/4"}}\n</tool_call>',
        T,
    ),
    (
        "math",
        "\\frac{3}{4}",
        '<tool_call>\n{"name": "final_answer", "arguments": {"value": "3/5"}}\n</tool_call>',
        F,
    ),
    # 35.16 small forms: a factorial chain after a phrase, a base in brackets, function values, exact ≈ approx
    ("math", "5040", "The answer is 7! = 5040.", T),
    ("math", "7", "The answer is 7! = 5040.", F),
    ("math", "143_5", "$\\boxed{143_{(5)}}$", T),
    ("math", "143_6", "$\\boxed{143_{(5)}}$", F),
    ("math", "0", "So $f^{-1}(0)+f^{-1}(6) = 0$.", T),
    ("math", "6", "So $f^{-1}(0)+f^{-1}(6) = 0$.", F),
    ("math", "\\frac{\\pi}{2}", "π/2 ≈ 1.5708", T),
    ("math", "\\frac{\\pi}{3}", "π/2 ≈ 1.5708", F),
    # 35.12 dot groups where the reading is unambiguous: two groups, a decimal comma, a currency
    ("math", "2500", "Der Preis beträgt 2.500 Euro.", T),
    ("math", "2.5", "Der Preis beträgt 2.500 Euro.", F),
    ("math", "2.5", "The answer is 2.500.", T),
    ("math", "1000000", "Insgesamt 1.000.000 Einwohner.", T),
    # 35.10 and 35.4: times and units in other spellings
    ("math", "3:45 \\text{ PM}", "The train leaves at 15:45.", T),
    ("math", "3:45 \\text{ AM}", "The train leaves at 15:45.", F),
    ("math", "\\text{March 3}", "The answer is March 3rd.", T),
    ("math", "\\text{March 3}", "The answer is March 4th.", F),
    ("math", "60 \\text{ km/h}", "The answer is 60 km per hour.", T),
    # multiple choice: a noun before the label; a list of steps picks nothing; a tempting option, then the pick
    ("choice", "C", "Plants take in carbon dioxide for photosynthesis. Option C.", T),
    ("choice", "B", "Plants take in carbon dioxide for photosynthesis. Option C.", F),
    ("choice", "C", "Plants take in carbon dioxide, so choice (c).", T),
    ("choice", "C", "Answer - C", T),
    ("choice", "A", "Answer - C", F),
    ("choice", "C", "Photosynthesis needs it. Letter C.", T),
    ("choice", "C", "Pick: C", T),
    ("choice", "C", "Option C is wrong.", F),
    ("choice", "C", "1. Oxygen\n2. Nitrogen\n3. Carbon dioxide", F),
    ("choice", "C", "1. A is wrong.\n2. B is wrong.\n3. C is correct.", T),
    ("choice", "D", "1. A is wrong.\n2. B is wrong.\n3. C is correct.", F),
    ("choice", "C", "Carbon dioxide", T),
    ("choice", "D", "C would be tempting, but Jupiter is the largest, so the answer is D.", T),
    ("choice", "C", "C would be tempting, but Jupiter is the largest, so the answer is D.", F),
    # yes/no in more words and languages, with a wrong twin where the word could mislead
    ("yesno", "yes", "Ναι, οι φάλαινες είναι θηλαστικά.", T),
    ("yesno", "no", "Ναι, οι πιγκουίνοι πετούν.", F),
    ("yesno", "no", "Όχι, οι πιγκουίνοι δεν πετούν.", T),
    ("yesno", "yes", "네, 고래는 포유류입니다.", T),
    ("yesno", "no", "아니요, 펭귄은 날 수 없습니다.", T),
    ("yesno", "yes", "हाँ, व्हेल स्तनधारी हैं।", T),
    ("yesno", "no", "नहीं, पेंगुइन उड़ नहीं सकते।", T),
    ("yesno", "yes", "نعم، الحيتان من الثدييات.", T),
    ("yesno", "no", "لا، البطاريق لا تطير.", T),
    ("yesno", "yes", "Có, cá voi là động vật có vú.", T),
    ("yesno", "no", "Không, chim cánh cụt không bay được.", T),
    ("yesno", "yes", "Ya, paus adalah mamalia.", T),
    ("yesno", "no", "Tidak, penguin tidak bisa terbang.", T),
    ("yesno", "yes", "Ano, velryby jsou savci.", T),
    ("yesno", "no", "Ne, tučňáci nelétají.", T),
    ("yesno", "yes", "כן, לווייתנים הם יונקים.", T),
    ("yesno", "no", "Nej, pingviner kan inte flyga.", T),
    ("yesno", "yes", "Kyllä, valaat ovat nisäkkäitä.", T),
    ("yesno", "no", "Negative. Penguins cannot fly.", T),
    ("yesno", "yes", "Negative. Penguins cannot fly.", F),
    ("yesno", "yes", "That's right: whales are mammals.", T),
    ("yesno", "no", "That's right: whales are mammals.", F),
    ("yesno", "no", "After checking the records, the answer is negative.", T),
    ("yesno", "yes", "Without a doubt. Whales are mammals.", T),
    ("yesno", "no", "No doubt about it: yes, whales are mammals.", F),
    ("yesno", "no", "Probably not, given the distances involved.", T),
    ("yesno", "yes", "Y", T),
    ("yesno", "yes", "N", F),
    ("yesno", "no", "Many people think yes, but no: it is not visible from orbit.", T),
]


@pytest.mark.parametrize(("kind", "gold", "completion", "expected"), ROWS)
def test_fresh_set_forms(kind: str, gold: str, completion: str, expected: bool) -> None:
    choices = {"choice": GAS}.get(kind)
    if kind == "choice" and ("Jupiter" in completion):
        choices = PLANETS  # type: ignore[assignment]
    verdict = verify(completion, gold, kind, choices=choices) if choices else verify(completion, gold, kind)
    assert verdict.correct is not None, (
        verdict
    )  # every gold here is gradable: a wrong row fails for its answer
    assert verdict.correct is expected, verdict
