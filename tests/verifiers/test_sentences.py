"""sentences.py: the value a sentence states, and claims.py: the final claim of a completion in prose."""

from __future__ import annotations

import pytest

from reasongym.verifiers.extract import revised_value
from reasongym.verifiers.plain import final_claim, last_number
from reasongym.verifiers.sentences import answer_in_sentence, sentence_value
from reasongym.verifiers.values import leading_value

# (sentence, the value it states or None)
SENTENCE_VALUES = [
    ("So the number of handshakes is **36**.", "**36**"),
    ("The value of $f(-1)$ is $- 3$.", "$- 3$"),
    ("so there are two hundred memberships.", "two hundred"),
    ("So x = 2 and y = -1.", "x = 2 and y = -1"),
    ("So x \\in (-\\infty, 3).", "(-\\infty, 3)"),
    ("Therefore there are no real solutions.", "\\emptyset"),
    ("that gives 6 seatings.", "6"),
    ("She makes 9 * $2 = $18 every day at the market.", "$18"),
    ("The total is 3 + 4 + 5 = 12.", "12"),
    ("Solving x = 2 gives y = 5.", "5"),  # "gives" is not a joiner of two assignments
    ("So the answer: $7$.", "$7$"),  # a value that ends the sentence in math
    ("The result is $1$ or $2$.", "$1$ or $2$"),  # a hedge, graded as one
    ("Thus we get 42, not 24.", "42"),  # a rejected alternative after the value
    # states no value
    ("So x cannot be 3.", None),
    ("The answer is at least 12.", None),
    ("It costs $5, which is less than the budget.", None),
    ("John has 12 apples left.", None),  # no verb of the list: the last number decides
    ("12 is the answer.", None),
    ("The sum is $1$ or $2$ or $3$ or $4$", "$1$ or $2$ or $3$ or $4$"),
    ("It is $1$, or $2$", "$1$, or $2$"),
    ("So we take $1$, or $2$.", None),  # math after "or" ends it: a piece of a hedge
]


@pytest.mark.parametrize(("sentence", "value"), SENTENCE_VALUES)
def test_sentence_value(sentence: str, value: str | None) -> None:
    assert sentence_value(sentence) == value


# (text after an answer phrase, what it states)
PHRASE_ANSWERS = [
    ("42, not 24 as one might first guess", "42"),
    ("12 apples, rather than 13", "12"),
    ("3/8 of the pizza", "3/8"),
    ("The smallest $k$ is 17", "17"),
    ("no real solutions", "\\emptyset"),
    ("x = 2 and y = 3", "x = 2 and y = 3"),
    # left as written, for the grader to reject
    ("at least 12", "at least 12"),
    ("It cannot be 17", "It cannot be 17"),
    ("It is between 3 and 4", "between 3 and 4"),
    ("not 24 but 42", "42"),  # issue 50: "not X but Y" states Y
]


@pytest.mark.parametrize(("answer", "stated"), PHRASE_ANSWERS)
def test_answer_in_sentence(answer: str, stated: str) -> None:
    assert answer_in_sentence(answer) == stated


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3/8 of the pizza", "3/8"),
        ("12 apples.", "12"),
        ("$18 every day", "$18"),  # an unclosed dollar is money
        ("$12$ cm long", "12 cm"),  # a unit after math is kept
        ("**36**", "**36**"),
        ("two hundred memberships", "two hundred"),
        ("1.5 million people", "1.5 million"),
        ("24 m^2 in all", "24 m^2"),
        ("2k", None),  # a letter glued to the number is a factor, not a word
        ("12 + 3 apples", None),
        ("$5\\sqrt2$ cm $\\approx 7.07$ cm", None),  # more math follows: not a lone value
        ("apples", None),
    ],
)
def test_leading_value(text: str, value: str | None) -> None:
    assert leading_value(text) == value


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("Each of the 100 students picks 2 clubs, so there are two hundred memberships.", "two hundred"),
        ("So she pays $12.50. If she pays with a $20 bill she gets $7.50 back.", "12.50"),  # an aside
        ("Each pen costs 4. If she buys 4 pens, the total is 16.", "16"),  # the case uses known numbers
        ("First, 3 x 4 = 12. If we add 5, we get 17.", "17"),  # "If we" continues the solution
        ("so the total is 1 + 1 + 1", None),  # no full stop: maybe cut off; the last number decides
        ("The answer is 12<|eot_id|>", None),
        ("She finished third.", None),
        ("Step 3: the sum is 12.\n\nStep 4: Determine the", None),
        ("So the sum is\n$$\n2 + 3 = 5\n$$", "2 + 3 = 5"),  # a display block that ends the text
        ("So the sum is\n\\[ 5 \\]", "5"),
        ("loop\n$$\n$$\n$$\n$$", None),  # empty blocks state nothing
    ],
)
def test_final_claim(text: str, claim: str | None) -> None:
    assert final_claim(text) == claim


@pytest.mark.parametrize(
    ("after", "value"),
    [
        (" ways. Wait, actually, rotations are the same, so divide by 4: that gives 6 seatings.", "6"),
        (" Oops: the count is 7.", "7"),
        (" Hmm, no: 4 rows of 3 is 12, so the total is 12.", "12"),  # the markers are no negation
        (" Let me recount: the total is 13. I hope this helps!", "13"),  # the last value stated
        (" Wait, let me double-check. Yes.", None),  # a revision that states no value
        (" Note: 6 would be the count up to rotation.", None),  # no revision marker
        (" Actually, it cannot be 6.", None),
        (" Hold on, each of the 4 rows has 3 seats.", None),  # "has" states no value
    ],
)
def test_revised_value(after: str, value: str | None) -> None:
    assert revised_value(after) == value


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("so four boxes hold twelve.", "twelve"),  # words after the last digits, ending the text
        ("so there are two hundred", None),  # no full stop: maybe cut off
        ("Add 3 and split them into two groups.", "3"),  # words inside prose are no number
        ("She finished third.", "third"),  # an ordinal that ends the text
        ("Third, we add 4 and the third", "4"),  # an ordinal not ending the text with a full stop is none
        ("First, add 3. Then the one on the left", None),  # a lone "one" is a pronoun
        ("the third step gives 5", "5"),
        ("So x \\ne 3.", None),  # a value ruled out
        ("So x cannot be 3.", None),
        ("The answer is at least 12.", None),  # a bound
        ("so the pair is \\left(2,3\\right)", None),  # the second member of a pair
        ("It takes 2 hours 30 minutes.", "2 hours 30 minutes"),
        ("It takes 2 hours and 30 minutes.", "2 hours and 30 minutes"),
        ("She ran 3 km in 30 minutes.", "30 minutes"),  # two kinds of unit: the last quantity alone
        ("She needs 2 1/2 cups.", "2 1/2 cups"),  # issue 50: cups are a unit of volume
        ("She saved 25%.", "25%"),
        ("It takes 1\u00bd hours.", "1\\frac{1}{2} hours"),
    ],
)
def test_last_number_in_prose(text: str, number: str | None) -> None:
    assert last_number(text) == number
