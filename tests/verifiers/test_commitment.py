"""Issue 50: what a completion commits to, for every kind; each probe string beside a right answer of its shape.

Rows are ``(kind, gold, completion, expected)``, grouped by the issue's themes. ``expected`` is whether the
verifier pays the completion for that gold. Every row that pins a false accept (a word or value the
completion only mentions, taken for the one it commits to) has a twin of the same shape that is paid, so a
rule that simply refuses more fails the twin.
"""

from __future__ import annotations

import pytest

from reasongym.verifiers import verify

T, F = True, False
SPEEDS = ["36 km/h", "54 km/h", "72 km/h", "90 km/h"]
INVENTED_TURN = "<|im_end|>\n<|im_start|>user\nNow double it.<|im_end|>\n<|im_start|>assistant\n\\boxed{48}"

ROWS = [
    # "no solution" is the empty set only as what the sentence states
    ("math", r"\emptyset", "There is no solution except x = 2.", F),
    ("math", "2", "There is no solution except x = 2.", T),
    ("math", r"\emptyset", "There is no solution.", T),
    ("math", r"\emptyset", "There are no solutions besides 3.", F),
    ("math", "3", "There are no solutions besides 3.", T),
    ("math", r"\emptyset", "There are no solutions apart from x = 5.", F),
    ("math", r"\emptyset", "The equation has no real roots.", T),
    ("math", r"\emptyset", "The answer is 7: the quadratic has no real roots.", F),
    ("math", "7", "The answer is 7: the quadratic has no real roots.", T),
    ("math", "3", "The only case with no solution is k = 3.", T),
    ("math", r"\emptyset", "The only case with no solution is k = 3.", F),
    # yes/no words count only where they are the verdict
    ("yesno", "yes", "Да. У змей ног нет.", T),
    ("yesno", "no", "Да. У змей ног нет.", F),
    ("yesno", "no", "Нет. У змей нет ног.", T),
    ("yesno", "no", 'No. The Spanish word for yes is "sí".', T),
    ("yesno", "yes", 'No. The Spanish word for yes is "sí".', F),
    ("yesno", "yes", "Sí. Los delfines son mamíferos.", T),
    ("yesno", "no", "아니요. 예: 고래.", T),
    ("yesno", "yes", "아니요. 예: 고래.", F),
    ("yesno", "yes", "예. 고래는 포유류입니다.", T),
    ("yesno", "yes", "Yes. Antarctica is always below zero (negative).", T),
    ("yesno", "no", "Yes. Antarctica is always below zero (negative).", F),
    ("yesno", "no", "Negative. Antarctica is never warm.", T),
    ("yesno", "yes", "Answer: Indeed, he could not.", F),
    ("yesno", "yes", "Answer: Indeed, he could.", T),
    ("yesno", "no", "No (absolutely).", T),
    ("yesno", "yes", "No (absolutely).", F),
    ("yesno", "yes", "Absolutely.", T),
    ("yesno", "yes", "Check: right.", F),
    ("yesno", "yes", "Conclusion: right.", T),
    ("yesno", "yes", "Yes. 1. Incorrect.", T),
    ("yesno", "no", "Yes. 1. Incorrect.", F),
    ("yesno", "no", "Incorrect. The statement is false.", T),
    ("yesno", "no", "No. Greeks say ναι.", T),
    ("yesno", "yes", "No. Greeks say ναι.", F),
    ("yesno", "yes", "Weighing the evidence, I'd say yes.", T),
    ("yesno", "yes", "Yes. Arabic: لا.", T),
    ("yesno", "no", "Yes. Arabic: لا.", F),
    ("yesno", "no", "لا. الحوت ليس سمكة.", T),
    # revisions and hedges, for words and yes/no as for numbers
    ("yesno", "no", "The answer is yes. Wait, actually, no.", T),
    ("yesno", "yes", "The answer is yes. Wait, actually, no.", F),
    ("yesno", "yes", "The answer is yes. Wait, let me double-check. Yes.", T),
    ("exact", "Monday", r"\boxed{\text{Monday}}. Oops, Tuesday.", F),
    ("exact", "Tuesday", r"\boxed{\text{Monday}}. Oops, Tuesday.", T),
    ("exact", "Monday", r"\boxed{\text{Monday}}. Oops, I mean Monday.", T),
    ("exact", "Monday", "The answer is Monday (or Tuesday if it is a leap year).", F),
    ("exact", "Monday", "The answer is Monday (a weekday).", T),
    ("exact", "Tuesday", "The answer is Monday (a weekday).", F),
    ("exact", "Monday", "The answer is Monday.", T),
    ("math", "12", "The answer is 12. One might think the answer is 12, but it is 13.", F),
    ("math", "13", "The answer is 12. One might think the answer is 12, but it is 13.", T),
    ("math", "12", "The answer is 12. One might think the answer is 13, but it is 12.", T),
    ("math", "24", "The answer is 24. Edit: 42.", F),
    ("math", "42", "The answer is 24. Edit: 42.", T),
    ("math", "24", "The answer is 24. Update: 42.", F),
    ("math", "42", "The answer is 24. Update: 42.", T),
    ("math", "24", "The answer is 24. Not 24 but 42.", F),
    ("math", "42", "The answer is 24. Not 24 but 42.", T),
    ("math", "24", "Not 24 but 42.", F),
    ("math", "42", "Not 24 but 42.", T),
    ("math", "42", "It's not 24, it's 42.", T),
    ("math", "24", "It's not 24, it's 42.", F),
    ("math", "24", "The answer is 24. Edit: formatting.", T),
    # two committed values are a hedge unless they are equal; an aside after the answer is no claim
    ("math", "12", "\\boxed{12}. So the answer is 13.", F),
    ("math", "13", "\\boxed{12}. So the answer is 13.", F),
    ("math", "12", "\\boxed{12} ways. Hence the answer is 12.", T),
    ("math", r"\frac{1}{2}", "\\boxed{\\frac{1}{2}}. The answer is 0.5.", T),
    ("math", r"\sqrt{2}", "\\boxed{\\sqrt{2}}. The answer is approximately 1.414.", T),
    ("integer", "12", "\\boxed{12}. So the answer is 13.", F),
    ("integer", "12", "\\boxed{12}. So the answer is 012.", T),
    ("yesno", "yes", "\\boxed{yes}. The answer is no.", F),
    ("yesno", "yes", "\\boxed{yes}. The answer is yes.", T),
    ("exact", "Paris", "\\boxed{Paris}. The answer is Rome.", F),
    ("exact", "Paris", "\\boxed{Paris}. The answer is Paris (the capital).", T),
    ("choice", "C", "\\boxed{C}. The answer is D.", F),
    ("choice", "C", "\\boxed{C}. The answer is C.", T),
    # a new turn or question after the answer ends the completion
    ("math", "24", f"So the total is 24.\n{INVENTED_TURN}", T),
    ("math", "48", f"So the total is 24.\n{INVENTED_TURN}", F),
    ("math", "24", "The answer is 24.\n\n### Response:\n\\boxed{48}", T),
    ("math", "48", "The answer is 24.\n\n### Response:\n\\boxed{48}", F),
    ("math", "48", "### Response:\nThe sum is 20 + 28.\n\\boxed{48}", T),
    ("math", "24", "The answer is 24.\n\nNext question: what is twice that?\nThe answer is 48.", T),
    ("math", "48", "The answer is 24.\n\nNext question: what is twice that?\nThe answer is 48.", F),
    ("math", "48", "The answer is 24.\n\nFollow-up: what is twice that? The answer is 48.", F),
    ("choice", "C", f"The answer is (C).\n{INVENTED_TURN.replace('48', 'D')}", T),
    ("choice", "D", f"The answer is (C).\n{INVENTED_TURN.replace('48', 'D')}", F),
    # units the table does not know make the answer unreadable; known units that differ are wrong
    ("math", "5 days", "It takes 5 years.", F),
    ("math", "5 days", "It takes 5 days.", T),
    ("math", "5 s", "It takes 5 ms.", F),
    ("math", "5 s", "It takes 5 ns.", F),
    ("math", "5 s", "It takes 5000 ms.", T),
    ("math", "5 s", "It takes 5 seconds.", T),
    ("math", "5 m", "It is 5 nm long.", F),
    ("math", "5 m", "It is 500 cm long.", T),
    ("math", "5 kg", "It weighs 5 tonnes.", F),
    ("math", "5000 kg", "It weighs 5 tonnes.", T),
    ("math", "5 L", "It holds 5 cups.", F),
    ("math", "5 L", "It holds 5 liters.", T),
    ("math", "5 dollars", "It costs 5 euros.", F),
    ("math", "5 dollars", "It costs £5.", F),
    ("math", "5 dollars", "It costs $5.", T),
    ("math", "5", "The answer is 5 dozen.", F),
    ("math", "60", "The answer is 5 dozen.", T),
    ("math", "5", "The answer is 5 grand.", F),
    ("math", "5000", "The answer is 5 grand.", T),
    ("math", "5", "The answer is 5 lakh.", F),
    ("math", "500000", "The answer is 5 lakh.", T),
    ("math", "5 mph", "The answer is 5 mph squared.", F),
    ("math", "5", "The answer is 5 apples.", T),
    # a letter and an option text that disagree are a contradiction, never paid
    ("choice", "C", "The speed is 72 km/h, which is option D.", F),
    ("choice", "D", "The speed is 72 km/h, which is option D.", F),
    ("choice", "C", "The speed is 72 km/h, which is option C.", T),
    ("choice", "C", "The answer is 72 km/h, which is option D.", F),
    ("choice", "C", "The answer is 72 km/h, which is option C.", T),
]


@pytest.mark.parametrize(("kind", "gold", "completion", "expected"), ROWS)
def test_what_the_completion_commits_to(kind: str, gold: str, completion: str, expected: bool) -> None:
    options = {"choices": SPEEDS} if kind == "choice" else {}
    verdict = verify(completion, gold, kind, **options)
    assert (verdict.correct is True) == expected, (verdict.outcome.value, verdict.extracted, verdict.reason)


# The held-out set's misses, by theme (issue 50, item 4): each through the stages, beside a wrong twin.
CSQA = [("A", "bank"), ("B", "library"), ("C", "department store"), ("D", "mall"), ("E", "new york")]
MISS_ROWS = [
    # numbers in words inside a final sentence
    ("math", "12", "Each box holds 3, so four boxes hold twelve.", T),
    ("math", "13", "Each box holds 3, so four boxes hold twelve.", F),
    ("math", "45", "Altogether the shop sold forty-five cakes that day.", T),
    # a plain final line with no box or phrase
    ("math", "42", "6 rows of 7 seats.\nTotal: 42 seats", T),
    ("math", "41", "6 rows of 7 seats.\nTotal: 42 seats", F),
    ("math", "5", "2x + 3 = 13\n2x = 10\nx = 5", T),
    ("math", "10", "2x + 3 = 13\n2x = 10\nx = 5", F),
    # "±" and labelled solution lists are one multi-valued answer
    ("math", "-3, 3", "x^2 = 9, so x = ±3.", T),
    ("math", "3", "x^2 = 9, so x = ±3.", F),
    ("math", "2, 3", "The solutions are x_1 = 2 and x_2 = 3.", T),
    ("math", "2, 4", "The solutions are x_1 = 2 and x_2 = 3.", F),
    # an aside after the answer is no new answer
    ("math", r"\frac{1}{6}", "So the probability is 1/6. That is about 16,7%.", T),
    ("math", "17%", "So the probability is 1/6. That is about 16,7%.", F),
    ("math", "12", "The answer is 12 dollars. In euros that is about 11.", T),
    ("math", "11", "The answer is 12 dollars. In euros that is about 11.", F),
    ("math", "7", "The answer is 7. Check: 3 + 4 = 7.", T),
    # the last side of a chain of equalities
    ("math", "5", "The answer is 2 + 3 = 5.", T),
    ("math", "6", "x = 2 \\cdot 3 = 6", T),
    ("math", "2", "x = 2 \\cdot 3 = 6", F),
    # exact but unevaluated values for integer golds
    ("integer", "125", "\\boxed{\\frac{500}{4}}", T),
    ("integer", "124", "\\boxed{\\frac{500}{4}}", F),
    ("integer", "31", "The answer is $2^5 - 1$.", T),
    ("integer", "32", "The answer is $2^5 - 1$.", F),
    # a sentence or a label inside the box
    ("math", "5", "\\boxed{\\text{The answer is 5}}", T),
    ("math", "6", "\\boxed{\\text{The answer is 5}}", F),
    ("math", "5", "\\boxed{\\text{5 apples}}", T),
    ("choice", "C", "\\boxed{\\text{(C) 72 km/h}}", T),
    ("choice", "D", "\\boxed{\\text{(C) 72 km/h}}", F),
    # a small model's last "The answer is" cut off after consistent answers
    ("math", "5", "The answer is 5. The answer is 5. The answer is 5. The answer is", T),
    ("math", "6", "The answer is 5. The answer is 5. The answer is 5. The answer is", F),
    # 24-hour times and French interval brackets
    ("math", "14:30", "The train leaves at 14:30.", T),
    ("math", "14:45", "The train leaves at 14:30.", F),
    ("math", "[1, 4]", "La solution est [1 ; 4].", T),
    ("math", "(1, 4)", "La solution est ]1;4[.", T),
    ("math", "[1, 4]", "La solution est ]1;4[.", F),
]
CHOICE_MISS_ROWS = [
    ("\u7b54\u3048\u306f C \u3067\u3059\u3002", "C", T),  # 答えは C です。
    ("\u7b54\u3048\u306f C \u3067\u3059\u3002", "D", F),
    ("\uc815\ub2f5\uc740 C\uc785\ub2c8\ub2e4.", "C", T),  # 정답은 C입니다.
    ("\u0938\u0939\u0940 \u0909\u0924\u094d\u0924\u0930 C \u0939\u0948\u0964", "C", T),  # सही उत्तर C है।
    ('{"reasoning": "stores sell things", "answer": "C"}', "C", T),
    ('{"reasoning": "stores sell things", "answer": "C"}', "B", F),
    ("The answer is the second option.", "B", T),
    ("The answer is the second option.", "C", F),
    ("Books are borrowed at a libraries.", "B", T),
    ("Books are not borrowed at a libraries.", "B", F),
]


@pytest.mark.parametrize(("kind", "gold", "completion", "expected"), MISS_ROWS)
def test_the_misses_read_through_the_stages(kind: str, gold: str, completion: str, expected: bool) -> None:
    verdict = verify(completion, gold, kind)
    assert (verdict.correct is True) == expected, (verdict.outcome.value, verdict.extracted, verdict.reason)


@pytest.mark.parametrize(("completion", "gold", "expected"), CHOICE_MISS_ROWS)
def test_choice_answers_in_other_scripts_and_forms(completion: str, gold: str, expected: bool) -> None:
    verdict = verify(completion, gold, "choice", choices=CSQA)
    assert (verdict.correct is True) == expected, (verdict.outcome.value, verdict.extracted, verdict.reason)
