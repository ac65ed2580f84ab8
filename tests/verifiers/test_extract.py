"""Answer extraction from full completions: boxes, phrases, last number, truncation, spraying."""

from __future__ import annotations

import time

import pytest

from reasongym.verifiers.extract import (
    MAX_BOX_CHARS,
    MAX_BOXES,
    Extraction,
    clean_answer,
    extract_answer_span,
    extract_boxed,
    extract_math_answer,
    find_boxes,
    last_number,
    strip_text_commands,
    strip_text_wrapper,
)

BOXED_ROWS = [
    # plain and nested braces
    (r"so \boxed{5}.", "5"),
    (r"\boxed{\frac{1}{2}}", r"\frac{1}{2}"),
    (r"\boxed{ \sqrt{2} }", r"\sqrt{2}"),
    (r"$\boxed{x^{2}+1}$", r"x^{2}+1"),
    (r"\boxed{\{1,2\}}", r"\{1,2\}"),  # escaped braces do not count
    (r"\boxed{\left\{ 3 \right\}}", r"\left\{ 3 \right\}"),
    # the last box wins; a box inside a box belongs to the outer one
    (r"\boxed{1} then \boxed{2}", "2"),
    (r"\boxed{\boxed{7}}", "7"),
    (r"\fbox{9}", "9"),
    (r"\boxed 5", "5"),
    (r"\boxed5", "5"),
    (r"\boxed  {4}", "4"),
    # no answer
    ("no box here", None),
    (r"\boxed{12", None),  # truncated
    (r"\boxed{1} and \boxed{2", None),  # the text ends inside a box
    (r"\boxed", None),
    (r"\boxedx{3}", None),  # another command
    (r"\boxed{}", ""),
]


@pytest.mark.parametrize(("text", "expected"), BOXED_ROWS)
def test_extract_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected


MATH_ROWS = [
    # (completion, answer, method, sprayed)
    # boxes come first, even before a later phrase
    (r"The answer is $\boxed{\dfrac{3}{4}}$.", r"\dfrac{3}{4}", "boxed", False),
    (r"\boxed{4}. The answer is 5.", "4", "boxed", False),
    (r"\boxed{3} \boxed{ 3 } \boxed{3.}", "3", "boxed", False),  # repeats are fine
    (r"\boxed{3} or maybe \boxed{4}", "4", "boxed", True),
    (r"\boxed{x = 3} so \boxed{3}", "3", "boxed", False),  # "so": a later statement
    # the last box is the answer; earlier statements are earlier attempts
    (r"First $\boxed{20}$, no wait: it is $\boxed{21}$.", "21", "boxed", False),
    ("\\boxed{20}\n\nLet me recheck.\n\n\\boxed{21}", "21", "boxed", False),
    ("<think>so \\boxed{5}</think>\nThe answer is 6.", "6", "phrase", False),
    ("<think>so \\boxed{5}</think>\nSo $\\boxed{6}$", "6", "boxed", False),
    ("<think>so \\boxed{5}</think>\nno answer", "5", "boxed", False),
    # boxes of one statement: one multi-valued answer (or a hedge)
    (r"$\boxed{3}$ and $\boxed{-5}$", "-5", "boxed", True),
    (r"$x_1 = \boxed{3}$, $x_2 = \boxed{-5}$.", "-5", "boxed", True),
    (r"either \boxed{723} or \boxed{729}", "729", "boxed", True),
    (r"\boxed{(1,2)}\quad\boxed{(3,4)}", "(3,4)", "boxed", True),
    # phrases
    ("The answer is 42.", "42", "phrase", False),
    ("the answer is 3.5 cm. Done.", "3.5 cm", "phrase", False),
    (
        "Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.",
        r"\frac{1}{2}",
        "phrase",
        False,
    ),
    ("**Answer:** 17", "17", "phrase", False),
    ("The answer is **17**.", "17", "phrase", False),
    ("## Final Answer\n\n$$\\sqrt{3}$$", r"\sqrt{3}", "phrase", False),
    ("Answer:\n\n12", "12", "phrase", False),
    ("The answer is $x = 5$. Check: 2*5 = 10.", "x = 5", "phrase", False),
    ("Answer: (2, 3]", "(2, 3]", "phrase", False),
    ("answer = 7", "7", "phrase", False),
    ("First the answer is 3.\nAfter checking, the answer is 4.", "4", "phrase", False),
    ("Natalia sold 72 clips.\n#### 72", "72", "gsm8k", False),
    ("#### 1,080", "1,080", "gsm8k", False),
    ("The final answer is $\\$36$.", "\\$36", "phrase", False),  # an escaped dollar is money
    ("The final answer is $\\$32,\\!348$. Done.", "\\$32,\\!348", "phrase", False),
    ("The answer is 1 000.", "1 000", "phrase", False),
    # display math and several math spans after the phrase; sentences stating the value
    ("the answer is\n$$\n12\n$$", "12", "phrase", False),
    ("The answer is:\n\\[\n x = 5\n\\]\nDone.", "x = 5", "phrase", False),
    ("The solutions are $x = 4$ or $x = -1$.", "x = 4 or x = -1", "phrase", False),
    ("The roots are 3 and -5.", "3 and -5", "phrase", False),
    ("The roots are where f is zero. Setting f(x) = 0 gives x = 3", "3", "last_number", False),
    ("Final Answer: The smallest $k$ is 17.", "17", "phrase", False),
    ("Answer: Therefore, there are 12 cats.", "12", "phrase", False),
    ("Answer: There are 60 marbles in the jar.", "60", "phrase", False),
    ("Answer: The car travels 60 km in all.", "60 km", "phrase", False),
    ("Final Answer: Jane started 30 minutes ago.", "30 minutes", "phrase", False),
    ("Answer: It is between 3 and 4.", "between 3 and 4", "phrase", False),
    ("Final Answer: It cannot be 17.", "It cannot be 17", "phrase", False),  # a negation states no value
    ("Final Answer: The total isn't 17 apples.", "The total isn't 17 apples", "phrase", False),
    # an answer too long to grade is refused whole, never cut
    ("The answer is " + "+".join(["2"] * 20000), None, "none", False),  # phrase beyond the tail
    ("The answer is " + "+".join(["1"] * 1000) + ". So", None, "answer_too_long", False),
    # last number fallback
    ("So she has 12 apples and 7 pears, 19 in all", "19", "last_number", False),
    ("x = -3", "-3", "last_number", False),
    ("\u22123 degrees", "-3 degrees", "last_number", False),  # U+2212 minus; the unit belongs to it
    ("\uff14\uff12 things", "42", "last_number", False),  # full-width digits
    ("the ratio is 3/4", "3/4", "last_number", False),
    ("it is $\\frac{5}{6}$", r"\frac{5}{6}", "sentence", False),  # a finished sentence states its value
    ("costs 1,250.50 dollars", "1,250.50 dollars", "last_number", False),
    ("The area is 24 m^2.", "24 m^2", "sentence", False),
    ("The area is 24 m\u00b2.", "24 m^{2}", "sentence", False),
    ("The area is 24 \\text{cm}^2.", "24 \\text{cm}^2", "sentence", False),
    ("so x^{2} is it", None, "none", False),  # an exponent is not a number of the text
    ("so the total is 1 + 1 + 1", None, "none", False),  # a fragment of an expression
    ("so we get 3 or 4", None, "none", False),  # the last number of a hedge
    # the sentence states 16π; as the last number alone, 16 would be a coefficient, not the answer
    ("So the radius is 16\u03c0.", "16\\pi", "sentence", False),
    ("So the radius is 16\u03c0", None, "none", False),
    ("So the radius is 16x.", "16x", "sentence", False),
    ("So the radius is 16x", None, "none", False),
    ("So the length is 16cm.", "16cm", "sentence", False),  # a glued unit belongs to it
    ("So the length is 16cm", "16cm", "last_number", False),
    ("The base of the power $1^{(2^{5})}$ is $1^{", None, "none", False),  # the base of a cut-off power
    ("Step 15: it is 14.75 feet.\n\nStep 16: Determine the final depth of", None, "none", False),  # cut off
    ("The runner takes 2 seconds.\nThe total time is the sum", None, "none", False),  # cut off
    ("She runs 2 seconds faster than him", "2 seconds", "last_number", False),  # a short tail
    ("The answer is " + " or ".join(["$1$"] * 3000), None, "none", False),  # the phrase is beyond the tail
    ("the sum is " + "+".join(["1"] * 30000), None, "none", False),
    ("x2 and y3", None, "none", False),  # digits glued to letters are not numbers
    # no answer at all
    ("I do not know.", None, "none", False),
    ("", None, "none", False),
    (r"So the answer is 12. Writing it: \boxed{1", None, "truncated", False),
    (r"The answer is 5 \boxed", None, "truncated", False),
    (r"\boxed{}", None, "none", False),  # empty boxes are skipped
    ("To put it in \\boxed{}, add them.\nThe answer is 140.", "140", "phrase", False),
    (r"\boxed{5} then \boxed{ }", "5", "boxed", False),
    ("The answer is", None, "phrase", False),
]


@pytest.mark.parametrize(("completion", "answer", "method", "sprayed"), MATH_ROWS)
def test_extract_math_answer(completion: str, answer: str | None, method: str, sprayed: bool) -> None:
    found = extract_math_answer(completion)
    assert (found.answer, found.method, found.sprayed) == (answer, method, sprayed)
    assert found.reason and found.reason.endswith(".")
    if answer is not None:
        assert found.candidates[-1] == answer


def test_sprayed_candidates_list_every_distinct_box_in_order() -> None:
    found = extract_math_answer(r"\boxed{1} \boxed{2} \boxed{1} \boxed{3}")
    assert found.candidates == ("2", "1", "3")
    assert found.answer == "3"


def test_without_fallback_a_bare_number_is_no_answer() -> None:
    assert extract_math_answer("so 12", last_number_fallback=False).answer is None
    assert extract_math_answer("The answer is 12", last_number_fallback=False).answer == "12"


def test_truncated_box_never_falls_back_to_numbers_or_phrases() -> None:
    found = extract_math_answer("The answer is 7, 8, 9 so \\boxed{7", last_number_fallback=True)
    assert found.answer is None
    assert "cut off" in found.reason


def test_too_many_boxes_and_overlong_box_give_no_answer() -> None:
    assert extract_math_answer(r"\boxed{1}" * (MAX_BOXES + 1)).method == "too_many_boxes"
    assert extract_math_answer(r"\boxed{1}" * MAX_BOXES).answer == "1"
    overlong = r"\boxed{" + "1" * (MAX_BOX_CHARS + 10) + "} rest"
    assert extract_math_answer(overlong).method == "box_too_long"


def test_find_boxes_skips_nested_boxes() -> None:
    assert find_boxes(r"\boxed{a \boxed{b}} \fbox{c}").contents == (r"a \boxed{b}", "c")


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        (" $5$ ", "5"),
        ("$$x$$.", "x"),
        (r"\(y\)", "y"),
        (r"\[z\]", "z"),
        ("**$7$**.", "7"),
        ("3.5", "3.5"),
        ("a   b", "a b"),
        ("5.", "5"),
        ("$5", "$5"),  # a dollar amount, not a wrapper
    ],
)
def test_clean_answer(raw: str, cleaned: str) -> None:
    assert clean_answer(raw) == cleaned


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        (r"\text{yes}", "yes"),
        (r"\textbf{\text{(B)}}", "(B)"),
        (r"\mathrm{ cm }", "cm"),
        (r"\text{a} + \text{b}", r"\text{a} + \text{b}"),
        (r"\text{a", r"\text{a"),
        ("plain", "plain"),
    ],
)
def test_strip_text_wrapper(raw: str, stripped: str) -> None:
    assert strip_text_wrapper(raw) == stripped


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("a 1 b 2", "2"),
        ("none", None),
        ("v2 3rd", "3"),
        ("-7", "-7"),
        ("1.5.", "1.5"),
        ("12,34", "12.34"),
        ("(12,34)", None),
    ],
)
def test_last_number(text: str, number: str | None) -> None:
    assert last_number(text) == number


MEGABYTE_INPUTS = {
    "letters": "a" * 1_000_000,
    "digits": "9" * 1_000_000,
    "many boxes": r"\boxed{1}" * 111_111,
    "open braces in a box": r"\boxed{" + "{" * 1_000_000,
    "nested boxes": r"\boxed{" * 60 + "x" * 1_000_000,
    "phrase then spaces": "answer" + " " * 1_000_000,
    "repeated phrases": "The answer is 5. " * 60_000,
    "newlines": "\n" * 1_000_000 + "final answer",
    "commas": "1," * 500_000,
    "hashes": "#" * 1_000_000,
    "fractions": "\\frac{1}{" * 100_000,
    "unicode": "\u2212\u00bd\u221a\u200b" * 250_000,
}


@pytest.mark.parametrize("name", sorted(MEGABYTE_INPUTS))
def test_one_megabyte_inputs_are_linear(name: str) -> None:
    text = MEGABYTE_INPUTS[name]
    start = time.perf_counter()
    found = extract_math_answer(text)
    elapsed = time.perf_counter() - start
    assert found.answer is None or len(found.answer) <= MAX_BOX_CHARS * 5
    assert elapsed < 1.0, f"{name}: {elapsed:.3f} s (measured ~5 ms here; the bound is loose on purpose)"


NO_WHOLE_NUMBER = (
    "No box, no answer phrase, and no last number that is a whole answer (not a piece of an expression, a hedge "
    "or a cut-off sentence)."
)
LAST_BOX = "Taken from the last \\boxed{}."
AFTER_ANSWER_IS = "Taken after 'answer is'."


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        # problems with the boxes: no answer, and never a fall back to phrases or numbers
        (
            "Thus \\boxed{12",
            Extraction(None, "truncated", "A \\boxed{ is never closed, so the output was cut off."),
        ),
        ("\\boxed{1}" * 65, Extraction(None, "too_many_boxes", "More than 64 boxes: degenerate output.")),
        (
            "\\boxed{" + "1" * 5001 + "}",
            Extraction(None, "box_too_long", "A box argument is longer than 5000 characters."),
        ),
        # which box, and why
        ("\\boxed{2}", Extraction("2", "boxed", LAST_BOX, candidates=("2",))),
        (
            "First \\boxed{1}. So \\boxed{2}.",
            Extraction(
                "2",
                "boxed",
                "Taken from the last \\boxed{} (earlier boxes are earlier attempts).",
                candidates=("2",),
            ),
        ),
        # one statement: equal values (after cleaning and without spaces) are one answer
        (
            "$\\boxed{3}$ and $\\boxed{3}$ and $\\boxed{ 3 }$",
            Extraction("3", "boxed", LAST_BOX, candidates=("3",)),
        ),
        (
            "$\\boxed{3}$ and $\\boxed{-5}$",
            Extraction(
                "-5",
                "boxed",
                "The final statement boxes 2 different values; the last is '-5'.",
                True,
                ("3", "-5"),
            ),
        ),
        (
            "$\\boxed{1}$, $\\boxed{2}$, $\\boxed{1}$",  # the last occurrence decides the order
            Extraction(
                "1",
                "boxed",
                "The final statement boxes 2 different values; the last is '1'.",
                True,
                ("2", "1"),
            ),
        ),
        # an empty box is the instruction echoed: the phrase after it is the answer
        (
            "put the answer in \\boxed{}. The answer is 9.",
            Extraction("9", "phrase", AFTER_ANSWER_IS, candidates=("9",)),
        ),
        ("\\boxed{ }", Extraction(None, "none", NO_WHOLE_NUMBER)),
        # phrases
        ("The answer is 7.", Extraction("7", "phrase", AFTER_ANSWER_IS, candidates=("7",))),
        ("The answer is: ", Extraction(None, "phrase", "Nothing follows the phrase 'answer is'.")),
        ("#### 1,080", Extraction("1,080", "gsm8k", "Taken after '####'.", candidates=("1,080",))),
        ("#### ", Extraction(None, "gsm8k", "Nothing follows the phrase '####'.")),
        (
            "The answer is " + "1" * 1001,
            Extraction(
                None, "answer_too_long", "The answer after 'answer is' is longer than 1,000 characters."
            ),
        ),
        (
            "Final Answer: The smallest $k$ is 17.",  # the sentence's value, cleaned
            Extraction("17", "phrase", "Taken after 'Final Answer:'.", candidates=("17",)),
        ),
        (
            "The answer is either 3 or 4.",
            Extraction("3 or 4", "phrase", AFTER_ANSWER_IS, candidates=("3 or 4",)),
        ),
        # the later of "answer is" and "roots are" wins
        (
            "The answer is 5. The roots are 3 and 4.",
            Extraction("3 and 4", "phrase", "Taken after 'roots are'.", candidates=("3 and 4",)),
        ),
        (
            "The roots are 3 and 4. The answer is 5.",
            Extraction("5", "phrase", AFTER_ANSWER_IS, candidates=("5",)),
        ),
        # after </think> first; the whole completion only when that part has nothing
        (
            "<think>The answer is 3.</think>The answer is 4.",
            Extraction("4", "phrase", AFTER_ANSWER_IS, candidates=("4",)),
        ),
        ("<think>\\boxed{3}</think> no answer", Extraction("3", "boxed", LAST_BOX, candidates=("3",))),
        # the last number
        (
            "x = 3 so 5",
            Extraction(
                "5", "last_number", "No box or answer phrase: took the last number.", candidates=("5",)
            ),
        ),
        ("so the total is 1 + 1 + 1", Extraction(None, "none", NO_WHOLE_NUMBER)),
        ("no answer here", Extraction(None, "none", NO_WHOLE_NUMBER)),
    ],
)
def test_extractions_are_pinned_whole(completion: str, expected: Extraction) -> None:
    assert extract_math_answer(completion) == expected


def test_without_the_fallback_no_number_is_taken_and_the_reason_says_so() -> None:
    expected = Extraction(None, "none", "No \\boxed{} answer and no answer phrase.")
    assert extract_math_answer("so 5", last_number_fallback=False) == expected
    # the plain answer phrase knows no "roots are"; the sentence's value is math's rule only
    assert extract_answer_span("The roots are 3 and 4.") == expected
    assert extract_answer_span("Final Answer: The smallest $k$ is 17.").answer == "The smallest $k$ is 17"


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        (r"\text{(C) } 7", "(C)  7"),
        (r"\text{a} + \textbf{b}", "a + b"),  # every command, not only the first
        (r"x \text{ and } \mathrm{y}", "x  and  y"),
        (r"\mbox{x}\mbox{y}", "xy"),
        (r"\textit{\textrm{z}}", "z"),  # nested: the search resumes where the command stood
        (" \\text{a} ", "a"),
        (r"\text{a", r"\text{a"),  # unbalanced: left as written
        ("plain  ", "plain"),
    ],
)
def test_strip_text_commands_rows(raw: str, stripped: str) -> None:
    assert strip_text_commands(raw) == stripped


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        (" \\text{yes} ", "yes"),
        (r"\text{a}b", r"\text{a}b"),
        (r"\text {x}", "x"),
        (r"\mbox{ \mathit{q} }", "q"),
    ],
)
def test_strip_text_wrapper_edges(raw: str, stripped: str) -> None:
    assert strip_text_wrapper(raw) == stripped


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("either 3", "3"),
        ("Either  5.", "5"),
        ("neither 3", "neither 3"),  # "either" only as the first word
        ("**", ""),  # an unpaired bold mark is dropped ("**Answer: 20%**" leaves "20%**")
        ("`42`", "42"),  # a Markdown code span
        ("$", "$"),
        ("$$", ""),
        ("$$ $$", ""),
        ("\\(\\)", ""),
        ("**x**", "x"),
        ("**$x$**", "x"),  # wrappers inside wrappers
        ("$$x", "$$x"),
        ("**5", "5"),
        ("20%**", "20%"),
        ("**a** b", "**a** b"),  # paired marks inside are left
        ("a\n\nb", "a b"),
        (" 5. . ", "5"),
        ("$x$.", "x"),
        ("\\[\\frac12\\]", "\\frac12"),
    ],
)
def test_clean_answer_edges(raw: str, cleaned: str) -> None:
    assert clean_answer(raw) == cleaned


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("x^{2}", None),  # in an exponent
        ("x_{3} and 4", "4"),
        ("2^{10}", None),  # 2 starts an expression
        ("a 3 * 4", None),
        ("3 or 4", None),  # a hedge
        ("5 + 3", None),
        ("5 - ", None),
        ("9 *", None),
        ("3 \\times", None),
        ("16\\pi", None),  # a coefficient
        ("16x", None),
        ("3rd", "3"),  # an ordinal is no coefficient
        ("20 x 3", "3"),
        ("area 24 m^2.", "24 m^2"),
        ("\\frac{3}{4}", "\\frac{3}{4}"),
        ("a 3/4", "3/4"),
        # cut off mid-sentence: up to three words after the number on its line are fine
        ("19 in all", "19"),
        ("19 in all of it", None),
        ("12 is what i do", None),
        ("19 apples\nwhat", None),
        ("Step 16: Determine the final depth of", None),
        ("got 5 (ok", "5"),
        ("so 5)", "5"),
        ("5 **", "5"),
        ("9\n", "9"),
        ("9 ", "9"),
    ],
)
def test_last_number_edges(text: str, number: str | None) -> None:
    assert last_number(text) == number


@pytest.mark.parametrize(
    ("text", "number"),
    [
        # a finished sentence, then trailing Markdown or whitespace: not cut off, however many words follow
        ("16 is the count of them all. **", "16"),
        ("16 is the count of them all. \n", "16"),
        ("a 16 is the count of x^{2", "16"),  # ends in a digit (of an exponent): not cut off
        ("16 is the count of them all`", None),  # ends mid-sentence: the Markdown is stripped first
    ],
)
def test_last_number_reads_the_ending_after_markdown(text: str, number: str | None) -> None:
    assert last_number(text) == number


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        # boxes that differ only in spacing are one value; the last spelling is kept
        (
            "$\\boxed{x+1}$ and $\\boxed{x + 1}$",
            Extraction("x + 1", "boxed", LAST_BOX, candidates=("x + 1",)),
        ),
        # the empty boxes count towards the limit before they are dropped
        (
            "\\boxed{}" * 2 + "\\boxed{1}" * 64,
            Extraction(None, "too_many_boxes", "More than 64 boxes: degenerate output."),
        ),
        # without the empty box, the math phrases still apply ("roots are")
        (
            "put the answer in \\boxed{}. The roots are 3 and 4.",
            Extraction("3 and 4", "phrase", "Taken after 'roots are'.", candidates=("3 and 4",)),
        ),
        # the empty box is replaced by a space: "5" stays a number of its own
        (
            "x \\boxed{}5",
            Extraction(
                "5", "last_number", "No box or answer phrase: took the last number.", candidates=("5",)
            ),
        ),
        # a GSM8K answer sentence is read for its value, like a phrase's
        (
            "#### The smallest $k$ is 17.",
            Extraction("17", "gsm8k", "Taken after '####'.", candidates=("17",)),
        ),
    ],
)
def test_math_extraction_after_empty_boxes_and_sentences(completion: str, expected: Extraction) -> None:
    assert extract_math_answer(completion) == expected


def test_a_sprayed_reason_shows_the_first_80_characters_of_the_last_value() -> None:
    last = "y = " + "1 + " * 30 + "1"  # 125 characters
    found = extract_math_answer("$\\boxed{2}$ and $\\boxed{" + last + "}$")
    assert found.reason == f"The final statement boxes 2 different values; the last is {last[:80]!r}."
    assert (found.answer, found.sprayed, found.candidates) == (last, True, ("2", last))


@pytest.mark.parametrize("completion", ["\\boxed{}", "so \\boxed{} and \\fbox{ }"])
def test_an_empty_last_box_is_named_by_the_plain_span(completion: str) -> None:
    # extract_answer_span serves every kind; only math drops empty boxes and looks again
    assert extract_answer_span(completion) == Extraction(None, "boxed", "The last box is empty.")


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("^{2}", None),  # an exponent at the very start
        ("_{2}", None),  # a subscript
        ("a_{3}", None),
        ("+ 5", None),  # an operator at the very start
        ("1 +" + " " * 11 + "5", None),  # the look-back for an operator is 12 characters
        ("1 +" + " " * 12 + "5", "5"),
        ("16 is the count of them all.X", None),  # a letter after the full stop: mid-sentence
    ],
)
def test_last_number_window_edges(text: str, number: str | None) -> None:
    assert last_number(text) == number


def test_stripping_a_command_never_forms_a_new_one() -> None:
    # after "\text{ext{b}}" becomes "ext{b}", the "\t" before it and "ext{" spell "\text{" again: the
    # search resumes where the old command stood, so the new one is left as written
    assert strip_text_commands("\\t\\text{ext{b}}") == "\\text{b}"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        # "solution", "root" and "zero" all in the text: the "roots are" phrase is still found
        (
            "No zero solution is a root here. The roots are 3 and 4.",
            Extraction("3 and 4", "phrase", "Taken after 'roots are'.", candidates=("3 and 4",)),
        ),
        # the text after the LAST </think> is read first, not the text after the first one
        (
            "</think> \\boxed{1} </think> The answer is 2.",
            Extraction("2", "phrase", AFTER_ANSWER_IS, candidates=("2",)),
        ),
        # ... and it starts right after the tag (a box just before the tag is not in it)
        (
            "<think>\\fbox{3}</think>The answer is 4.",
            Extraction("4", "phrase", AFTER_ANSWER_IS, candidates=("4",)),
        ),
        # nothing after the tag: the whole completion, where the tag ends the answer's sentence
        ("<think>The answer is 3.</think>", Extraction("3", "phrase", AFTER_ANSWER_IS, candidates=("3",))),
        (
            "<think>So the answer is 12</think>\n",
            Extraction("12", "phrase", AFTER_ANSWER_IS, candidates=("12",)),
        ),
    ],
)
def test_think_tags_and_solution_words_rows(completion: str, expected: Extraction) -> None:
    assert extract_math_answer(completion) == expected


def test_clean_answer_strips_only_periods_at_the_end() -> None:
    assert clean_answer("AX.") == "AX"
    assert clean_answer("X.") == "X"


@pytest.mark.parametrize("completion", ["The answer is \\boxed{} 7.", "The answer is \\boxed{}7."])
def test_an_empty_box_inside_the_answer_sentence_leaves_no_trace(completion: str) -> None:
    assert extract_math_answer(completion) == Extraction("7", "phrase", AFTER_ANSWER_IS, candidates=("7",))
