"""Issues 35 and 36: the answer a completion commits to; every right form beside a wrong twin.

Rows are ``(kind, gold, completion, expected)``, grouped by the issues' numbered items (35.n, 36.n).
Each accepted form has a rejected form of the same shape next to it, so a rule that simply accepts
more (or less) fails one of them.
"""

from __future__ import annotations

import pytest

from reasongym.errors import ConfigError
from reasongym.verifiers import verify
from reasongym.verifiers.segment import asked_part

T, F = True, False
PERIOD_47 = "0212765957446808510638297872340425531914893617"  # 1/47 repeats these 46 digits
NEXT_QUESTION = "Question: Tom has 2 apples and gets 3 more. How many does he have? The answer is 5."

ROWS = [
    # 36.1 a parenthesized period of any length is one repeating decimal, as \overline{} is
    ("math", "\\frac{1}{47}", f"\\boxed{{0.({PERIOD_47})}}", T),
    ("math", "0", f"\\boxed{{0.({PERIOD_47})}}", F),
    ("math", "\\frac{1}{3}", "\\boxed{0.(" + "3" * 22 + ")}", T),
    ("math", "\\frac{1}{3}", "\\boxed{0.(" + "3" * 21 + "4)}", F),
    ("math", "\\frac{7}{3}", "\\boxed{2.(" + "3" * 30 + ")}", T),
    ("math", "\\frac{666666666666666666666666666666}{1}", "\\boxed{2.(" + "3" * 30 + ")}", F),
    # 36.2 number words side by side that form no number are no number (never summed)
    ("math", "10", "\\boxed{five five}", F),
    ("math", "55", "\\boxed{fifty-five}", T),
    ("math", "40", "The answer is twenty twenty.", F),
    ("math", "2020", "The answer is two thousand twenty.", T),
    ("math", "2000000", "The answer is one million million.", F),
    ("math", "1000000", "The answer is one million.", T),
    ("math", "1100000", "The answer is one hundred thousand million.", F),
    ("math", "100000", "The answer is one hundred thousand.", T),
    ("math", "118", "The answer is nineteen ninety-nine.", F),
    ("math", "125", "The answer is one hundred twenty-five.", T),
    # 36.3 an operation word next to the value: read it (squared, cubed) or refuse; never the operand
    ("math", "25", "The answer is 5 squared.", T),
    ("math", "5", "The answer is 5 squared.", F),
    ("math", "125", "The answer is 5 cubed.", T),
    ("math", "5", "The answer is 5 cubed.", F),
    ("math", "5", "The answer is 5 doubled.", F),
    ("math", "5", "The answer is 5 factorial.", F),
    ("math", "25", "The answer is the square root of 25.", F),
    ("math", "10", "The answer is half of 10.", F),
    ("math", "10", "The answer is 10 apples.", T),
    # 36.4 a correction without a verb replaces the answer, in digits or words
    ("math", "6", "\\boxed{5}. Oops, 6.", T),
    ("math", "5", "\\boxed{5}. Oops, 6.", F),
    ("math", "6", "\\boxed{5}. No wait, it's 6.", T),
    ("math", "5", "\\boxed{5}. No wait, it's 6.", F),
    ("math", "6", "The answer is 5. Wait, actually, six.", T),
    ("math", "5", "The answer is 5. Wait, actually, six.", F),
    ("math", "5", "\\boxed{5}. Wait, let me double-check. Yes.", T),
    # 36.5 "a second" is a moment, not the ordinal 2
    ("math", "2", "It takes a second.", F),
    ("math", "2", "She finished second.", T),
    # 35.1 a new question after the answer ends the completion for grading
    ("math", "6", f"3 + 3 = 6. The answer is 6.\n\n{NEXT_QUESTION}", T),
    ("math", "5", f"3 + 3 = 6. The answer is 6.\n\n{NEXT_QUESTION}", F),
    ("math", "6", f"So \\boxed{{6}}.\n\nProblem 3: {NEXT_QUESTION}", T),
    ("math", "5", f"So \\boxed{{6}}.\n\n### Instruction:\n{NEXT_QUESTION}", F),
    ("math", "5", "Question: Tom has 2 apples and gets 3 more.\nSo he has 5.\nThe answer is 5.", T),
    # 35.2 commitment over mention
    ("math", "8", "I'll go with 8, though 7 is also defensible.", T),
    ("math", "7", "I'll go with 8, though 7 is also defensible.", F),
    ("math", "7", "Answer: 7 (or 8 if we count the endpoint)", F),
    ("math", "7", "Answer: 7 (we count both endpoints)", T),
    ("math", "4:15", "So she finished at 4:15 (she started at 3:15 and spent 60 minutes).", T),
    ("math", "60", "So she finished at 4:15 (she started at 3:15 and spent 60 minutes).", F),
    ("math", "12", "One might think the answer is 12, but that double-counts. The correct count is 15.", F),
    ("math", "15", "One might think the answer is 12, but that double-counts. The answer is 15.", T),
    # 35.3 a yes/no in a concession is not the verdict
    ("yesno", "no", "No. Although, yes, he was Greek, he never went there.", T),
    ("yesno", "yes", "No. Although, yes, he was Greek, he never went there.", F),
    ("yesno", "yes", "Yes. Even though, no, it was not planned, it happened.", T),
    # 35.4 a unit that contradicts the gold's unit is wrong; a bare number stays accepted
    ("math", "60 \\text{ km/h}", "The speed is 60 mph.", F),
    ("math", "60 \\text{ km/h}", "The speed is 60 km/h.", T),
    ("math", "60 \\text{ km/h}", "The speed is 60.", T),
    ("math", "60 \\text{ mph}", "The speed is 60 mph.", T),
    # 35.5 a correction between choice letters picks the corrected letter
    ("choice", "C", "The answer is B... no wait, the reaction is exothermic, so C.", T),
    ("choice", "B", "The answer is B... no wait, the reaction is exothermic, so C.", F),
    ("choice", "B", "The answer is B. Wait, let me double-check. Yes.", T),
    ("choice", "C", "\\boxed{B}. Oops, it is C.", T),
    # 35.7 unicode math: the fraction slash and angle brackets join the normalizer
    ("math", "\\frac{\\sqrt3}{2}", "The answer is √3⁄2.", T),
    ("math", "\\frac{\\sqrt2}{2}", "The answer is √3⁄2.", F),
    ("math", "(3, 0, -1)", "The answer is ⟨3, 0, −1⟩.", T),
    ("math", "(3, 0, 1)", "The answer is ⟨3, 0, −1⟩.", F),
    # 35.8 a reason after the value is not part of the answer
    ("math", "8", "The answer is 8 (since $2^3 = 8$).", T),
    ("math", "2", "The answer is 8 (since $2^3 = 8$).", F),
    ("math", "4", "The answer is x = 4, because 2x = 8.", T),
    ("math", "8", "The answer is x = 4, because 2x = 8.", F),
    ("math", "15", "Work: $5 \\times 3$.\n\n$\\text{Answer: } 15$", T),
    ("math", "16", "Work: $5 \\times 3$.\n\n$\\text{Answer: } 15$", F),
    ("math", "\\frac{11}{4}", "So the recipe needs 2 and 3/4 cups.", T),
    ("math", "\\frac{3}{4}", "So the recipe needs 2 and 3/4 cups.", F),
    ("math", "7000000", "The budget was **7 million** dollars.", T),
    ("math", "7000000", "The budget was **7 thousand** dollars.", F),
    # 35.9 choice phrases in other languages; a label that ends a derivation
    ("choice", "C", "德国的首都是柏林。答案是C。", T),
    ("choice", "A", "德国的首都是柏林。答案是C。", F),
    ("choice", "C", "La capital de Alemania es Berlín. La respuesta correcta es la C.", T),
    ("choice", "D", "La capital de Alemania es Berlín. La respuesta correcta es la C.", F),
    ("choice", "A", "Paris est la capitale. Réponse : A", T),
    ("choice", "B", "Paris est la capitale. Réponse : A", F),
    ("choice", "C", "Both B and C seem plausible, but on reflection C is the better fit.", T),
    ("choice", "B", "Both B and C seem plausible, but on reflection C is the better fit.", F),
    # 35.10 short names of weekdays and months
    ("math", "\\text{Friday}", "The answer is Fri.", T),
    ("math", "\\text{Friday}", "The answer is Thu.", F),
    ("math", "\\text{September}", "\\boxed{\\text{Sept}}", T),
    ("math", "\\text{October}", "\\boxed{\\text{Sept}}", F),
    # 35.11 sets and conditions in words or notation: one set however it is written
    ("math", "\\mathbb{R}\\setminus\\{0\\}", "The domain is all real numbers except 0.", T),
    ("math", "\\mathbb{R}\\setminus\\{0\\}", "The domain is all real numbers except 1.", F),
    ("math", "(-\\infty,0)\\cup(0,\\infty)", "The domain is all real numbers except 0.", T),
    ("math", "(-\\infty,0)\\cup(0,\\infty)", "The domain is all real numbers.", F),
    ("math", "(-\\infty,0)\\cup(0,\\infty)", "The answer is $\\mathbb{R}\\setminus\\{0\\}$.", T),
    ("math", "(-\\infty,0)\\cup(0,\\infty)", "The answer is $\\mathbb{R}\\setminus\\{2\\}$.", F),
    ("math", "(-\\infty,1)\\cup(1,2)\\cup(2,\\infty)", "x can be any real number other than 1 and 2.", T),
    ("math", "(-\\infty,1)\\cup(1,2)\\cup(2,\\infty)", "x can be any real number other than 1.", F),
    ("math", "[0,5)", "$\\boxed{[0,5] \\setminus \\{5\\}}$", T),
    ("math", "[0,5)", "$\\boxed{[0,5] \\setminus \\{0\\}}$", F),
    ("math", "\\mathbb{R}", "All real numbers.", T),
    ("math", "(0,\\infty)", "All real numbers.", F),
    ("math", "(-\\infty,\\infty)", "$\\boxed{\\text{all real numbers}}$", T),
    ("math", "5", "$\\boxed{\\text{all real numbers}}$", F),
    ("math", "(-3, 3)", "The solution is $|x| < 3$.", T),
    ("math", "(-3, 3)", "The solution is $|x| \\le 3$.", F),
    ("math", "(-\\infty,-3]\\cup[3,\\infty)", "So $|x| \\ge 3$.", T),
    ("math", "(-\\infty,-3)\\cup(3,\\infty)", "So $|x| \\ge 3$.", F),
    ("math", "[-1, 3]", "The answer is $|x - 1| \\le 2$.", T),
    ("math", "[-3, 1]", "The answer is $|x - 1| \\le 2$.", F),
    ("math", "\\emptyset", "There is no solution.", T),
    ("math", "\\emptyset", "$\\boxed{\\text{no solution}}$", T),
    ("math", "0", "$\\boxed{\\text{no solution}}$", F),
    ("math", "\\{0\\}", "There is no solution.", F),
    ("math", "7", "x is a real number, so x = 7.", T),
    # 35.12 a decimal comma in prose ("1,5" is 1.5, never the 5 after a comma); "(2,3)" stays a pair
    ("math", "1.5", "Dividimos 3 por 2. A resposta é 1,5.", T),
    ("math", "5", "Dividimos 3 por 2. A resposta é 1,5.", F),
    ("math", "3", "The point is (2,3).", F),
    # 35.13 a JSON object that ends the completion answers with its "answer" (or "final_answer")
    ("math", "1, 2, 3", '{"answer": [1, 2, 3]}', T),
    ("math", "1, 2, 3", '{"answer": [1, 2, 4]}', F),
    ("math", "3, 5", '```json\n{"reasoning": "x^2 - 8x + 15", "final_answer": [3, 5]}\n```', T),
    ("math", "3, 5", '```json\n{"reasoning": "x^2 - 8x + 15", "final_answer": [3, 6]}\n```', F),
    ("math", "2", "The set {1, 2} has 2 elements.", T),
    # 35.14 a whole answer in Chinese numerals; Chinese characters in prose stay words
    ("math", "\\frac12", "答案是二分之一。", T),
    ("math", "\\frac12", "答案是三分之一。", F),
    ("math", "300", "答案是三百。", T),
    ("math", "3", "答案是三百。", F),
    ("math", "10005", "所以答案是一万零五。", T),
    ("math", "5", "我们有一些苹果。答案是 5 个苹果。", T),
    ("math", "1", "我们有一些苹果。答案是 5 个苹果。", F),
    # 35.15 equal restatements joined by "or" / "i.e." are one answer; unequal ones a hedge
    ("math", "\\frac15", "The answer is 1/5 or 20%.", T),
    ("math", "\\frac15", "The answer is 1/5 or 25%.", F),
    ("math", "\\frac12", "The answer is 0.5, i.e. 1/2.", T),
    ("math", "\\frac12", "The answer is 0.5, i.e. 1/3.", F),
    ("math", "3", "The answer is 3 or 4.", F),
    # 35.6 yes/no in other words and languages (read only before punctuation or at the end)
    ("yesno", "yes", "Correct.", T),
    ("yesno", "no", "Correct.", F),
    ("yesno", "yes", "Absolutely.", T),
    ("yesno", "no", "Not at all.", T),
    ("yesno", "yes", "Not at all.", F),
    ("yesno", "no", "Certainly not: the Moon has no air.", T),
    ("yesno", "no", "Nope. Penguins cannot fly.", T),
    ("yesno", "yes", "Yep, water boils at 100 degrees.", T),
    ("yesno", "no", "Non.", T),
    ("yesno", "no", "Nein.", T),
    ("yesno", "yes", "Nein.", F),
    ("yesno", "yes", "是的。", T),
    ("yesno", "no", "不是", T),
    ("yesno", "yes", "不是", F),
    ("yesno", "no", "Нет, пингвины не летают.", T),
    ("yesno", "yes", "はい、そうです。", T),
    ("yesno", "no", "The correct reading of the law is strict, so no.", T),
    ("yesno", "no", "It is not true that he was there.", T),
    ("yesno", "yes", "It is not true that he was there.", F),
    ("yesno", "yes", "It is true that he was there.", T),
    ("yesno", "yes", "The correct reading of the law is strict, so no.", F),
]


@pytest.mark.parametrize(("kind", "gold", "completion", "expected"), ROWS)
def test_committed_answers(kind: str, gold: str, completion: str, expected: bool) -> None:
    verdict = verify(completion, gold, kind)
    assert verdict.correct is expected, verdict


CO2 = [{"label": "A", "text": "O2"}, {"label": "B", "text": "CO2"}, {"label": "C", "text": "N2"}]
HUB = {"label": ["A", "B", "C"], "text": ["O2", "CO2", "N2"]}


@pytest.mark.parametrize("choices", [CO2, HUB], ids=["data-rows", "hub-columns"])
@pytest.mark.parametrize(
    ("completion", "gold", "expected"),
    [
        ("Answer: B", "B", T),
        ("Answer: C", "B", F),
        ("Answer: CO2", "B", T),
        ("Answer: N2", "B", F),
        ("Mass times acceleration: 2 kg at 3 m/s^2 gives 6 N, so B", "B", T),
        ("Mass times acceleration: 2 kg at 3 m/s^2 gives 6 N, so C", "B", F),
    ],
)
def test_choices_in_both_data_shapes(completion: str, gold: str, expected: bool, choices: object) -> None:
    """35.9: the README's CommonsenseQA rows and the hub's columns are both accepted as ``choices``."""
    assert verify(completion, gold, "choice", choices=choices).correct is expected


def test_hub_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ConfigError, match="'label' and 'text' must be lists of the same length"):
        verify("B", "B", "choice", choices={"label": ["A", "B"], "text": ["x"]})


def test_a_restated_question_that_opens_the_solution_is_kept() -> None:
    text = "Question: what is 2 + 3?\nWe add them: 5."
    assert asked_part(text) == text
    assert asked_part("So the answer is 5.\nQ2. What is 1 + 1?") == "So the answer is 5.\n"
