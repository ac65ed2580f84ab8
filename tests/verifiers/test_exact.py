"""String answers: normalised exact match and yes/no questions."""

from __future__ import annotations

import pytest

from reasongym.verifiers.base import Outcome
from reasongym.verifiers.exact import normalize_exact, verify_exact
from reasongym.verifiers.yesno import read_yes_no, verify_yesno

C, W, U = Outcome.CORRECT, Outcome.WRONG, Outcome.UNPARSEABLE

EXACT_ROWS = [
    # (completion, gold, outcome)
    # the whole completion when there is no box or phrase
    ("Paris", "Paris", C),
    ("  paris.  ", "Paris", C),
    ('"Paris"', "paris", C),
    ("**Paris**", "Paris", C),
    ("New   York", "new york", C),
    ("$x$", "x", C),
    ("Ｐａｒｉｓ", "Paris", C),  # full-width letters
    # boxes and phrases
    (r"Thinking... \boxed{Paris}", "Paris", C),
    (r"\boxed{\text{Blue Whale}}", "blue whale", C),
    ("The capital is big. The answer is: Paris.", "Paris", C),
    ("Final Answer: Paris", "Paris", C),
    # no substring credit
    ("The capital is Paris", "Paris", W),
    ("Paris, France", "Paris", W),
    ("The answer is Paris, France.", "Paris", W),
    ("Pariss", "Paris", W),
    ("Par is", "Paris", W),
    (r"\boxed{Paris} \boxed{Lyon}", "Paris", W),  # spraying
    (r"\boxed{Paris} \boxed{paris.}", "Paris", C),  # same answer twice
    # nothing to compare
    ("", "Paris", U),
    ("   \n ", "Paris", U),
    (r"The answer is \boxed{Par", "Paris", U),  # truncated
    (r"\boxed{}", r"\boxed{}", U),  # an empty box is no answer, not a string to compare
    ("The answer is", "The answer is", U),
    # gold ungradable
    ("Paris", "", None),
    ("Paris", " . ", None),
]


@pytest.mark.parametrize(("completion", "gold", "outcome"), EXACT_ROWS)
def test_verify_exact(completion: str, gold: str, outcome: Outcome | None) -> None:
    verdict = verify_exact(completion, gold)
    if outcome is None:
        assert verdict.correct is None
    else:
        assert verdict.outcome == outcome, verdict.reason
        assert verdict.correct == (outcome == C)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [("  A  b. ", "a b"), ("'x'", "x"), ("`code`", "code"), ("**$Y$**", "y"), ('"', '"'), ("...", "")],
)
def test_normalize_exact(text: str, normalized: str) -> None:
    assert normalize_exact(text) == normalized


YESNO_ROWS = [
    # (completion, gold, outcome)
    # plain answers
    ("Yes", "yes", C),
    ("no.", "no", C),
    ("True", "yes", C),
    ("false", "no", C),
    ("**Yes**", "yes", C),
    ("Yes", "no", W),
    # the final claim decides
    ("Yes, because the Eiffel Tower is in Paris.", "yes", C),
    ("Yes, because no one lives there.", "yes", C),  # "no one" is no answer
    ("No it is not; there is no way.", "no", C),
    ("Cats are mammals. So, yes.", "yes", C),
    ("At first I thought yes. But on reflection, no.", "no", C),
    ("No. Wait, let me redo this. Actually yes.", "yes", C),
    ("It is true that lions hunt. So the claim is false.", "no", C),
    ("There is no longer any doubt", "no", U),
    # phrases and boxes beat the last word
    ("The answer is yes. No further checks needed, no.", "yes", C),
    ("Answer: no", "no", C),
    ("Final Answer: False", "no", C),
    (r"so \boxed{\text{No}}", "no", C),
    (r"\boxed{yes}", "no", W),
    ("The answer is: it is not possible, so no", "no", C),
    # a negated claim is its opposite (issue 28, item 10: "Not yes." was graded yes)
    ("Not yes.", "yes", W),
    ("Not yes.", "no", C),
    ("The answer is not yes.", "yes", W),
    (r"\boxed{\text{not yes}}", "yes", W),
    ("Definitely not yes", "yes", W),
    ("So the claim is not true.", "no", C),
    ("Answer: not false", "yes", C),
    ("It isn't true.", "yes", W),
    ("The answer is not no, it is yes", "yes", C),
    ("Not exactly yes.", "yes", W),  # a qualified negation is a hedge
    ("I am not sure, but yes.", "yes", C),  # the negation is of another word
    # hedges are wrong
    ("yes or no", "yes", W),
    ("Yes/No", "no", W),
    ("The answer is yes, or no.", "no", W),
    ("It could be yes and no.", "yes", W),
    ("true/false", "yes", W),
    (r"\boxed{yes} \boxed{no}", "yes", W),
    # nothing found
    ("Maybe.", "yes", U),
    ("It depends on the year", "no", U),
    ("", "yes", U),
    (r"The answer is \boxed{ye", "yes", U),  # truncated
    # gold ungradable
    ("yes", "maybe", None),
    ("yes", "", None),
]


@pytest.mark.parametrize(("completion", "gold", "outcome"), YESNO_ROWS)
def test_verify_yesno(completion: str, gold: str, outcome: Outcome | None) -> None:
    verdict = verify_yesno(completion, gold)
    if outcome is None:
        assert verdict.correct is None
    else:
        assert verdict.outcome == outcome, verdict.reason
        assert verdict.correct == (outcome == C)


@pytest.mark.parametrize("gold", ["yes", "Yes", "TRUE", " yes. "])
def test_yes_gold_spellings(gold: str) -> None:
    assert verify_yesno("Answer: yes", gold).correct is True


def test_fallback_off_needs_box_or_phrase() -> None:
    assert read_yes_no("Cats are mammals. So, yes.", fallback=False)[0] is None
    assert read_yes_no("The answer is yes", fallback=False)[0] == "yes"
