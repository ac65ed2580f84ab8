r"""Stage (a) of commitment: which part of a completion answers the question asked.

A completion may run past its answer: a chat model's turn ends and the text goes on with an invented
user turn, a base model writes the next exercise and answers it, a reasoning model thinks before it
answers. :func:`segment` cuts the completion to the part that answers, in this order:

1. **Turn ends** (:data:`TURN_ENDS`) cut the completion where a special token ends the assistant's turn or
   starts another one, once some text stands before it:

   - ``chat turn``: ChatML, Llama 3, Gemma, Phi, Mistral and DeepSeek turn and end tokens
     (``<|im_start|>``, ``<|im_end|>``, ``<|eot_id|>``, ``<|start_header_id|>``, ``<start_of_turn>``,
     ``<end_of_turn>``, ``<|user|>``, ``<|assistant|>``, ``<|end|>``, ``[INST]``, ``<｜User｜>``, ...).
     Why: ``...24.<|im_end|>\n<|im_start|>user ...<|im_start|>assistant\n\boxed{42}`` answers a question
     nobody asked; paying its 42 pays an invented turn.
   - ``end of text``: ``</s>``, ``<|endoftext|>``, ``<｜end▁of▁sentence｜>``. Why: nothing after the end of
     the sequence was meant as this answer.

   Other special tokens that leak into decoded text (``<|python_tag|>``, ``<|reserved_special_token_3|>``)
   are read as line breaks (:data:`SPECIAL_TOKEN`).
2. **New questions** (:data:`NEW_QUESTIONS`) cut the completion at a line that opens another question,
   once the text before it has concluded (a box, "answer", "so", "therefore", "thus", ``####``,
   ``</think>``) or its last line before the question states a number ("The theatre has 57 seats.\n\nQuestion:
   ..."): a restated question that opens a solution is kept.

   - ``numbered question``: "Question:", "Question 2.", "Problem 3", "Exercise 4:", "Example 1:", "Q2.".
   - ``template header``: "### Instruction", "### Input", "### Response:", "### Question".
   - ``speaker turn``: a line opening "User:", "Human:", "Student:", "Assistant:".
   - ``next question``: "Next question:", "Follow-up:", "Follow-up question:", "New question:",
     "Another question:", "Bonus:". Why: a model that keeps writing answers a question it made up, and
     that answer comes last.
3. **Marked candidates**: when the completion marks candidates with check marks and crosses (``x = 4 ✓`` /
   ``x = 1 ✗ (extraneous)``; a list of options each marked ✓ or ✗), the lines it crosses out are
   retracted and dropped, and the check marks are removed (row ``marked candidates``). Why: "x = 1 ✗"
   ended the text and was read as the answer. A therefore sign (``∴``, ``\therefore``) is dropped: it only joins.
4. **The think block**: when the completion closes a ``<think>`` block, the text after the last
   ``</think>`` is the answer; the think block counts only when nothing after it commits to anything
   (not even a plain last sentence). :attr:`Segment.parts` lists the texts to read in that order.

Every scan is linear: each row is searched once, and no pattern nests unbounded quantifiers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from reasongym.verifiers.rules import Rule, earliest

__all__ = [
    "MARKED_CANDIDATES",
    "NEW_QUESTIONS",
    "SPECIAL_TOKEN",
    "THINK_END",
    "TURN_ENDS",
    "Segment",
    "asked_part",
    "segment",
]

THINK_END = "</think>"
"""Closes a reasoning model's think block."""
SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>|</s>")
"""Special tokens that leak into decoded text; those that end no turn are read as line breaks."""

TURN_ENDS = (
    Rule(
        "chat turn",
        re.compile(
            r"<\|(?:im_start|im_end|eot_id|start_header_id|user|assistant|system|end)\|>"
            r"|<(?:start|end)_of_turn>|\[/?INST\]|<[|｜](?:User|Assistant)[|｜]>"
        ),
        "An assistant turn that ends, then an invented user turn answered again, pays the invented answer.",
    ),
    Rule(
        "end of text",
        re.compile(r"</s>|<\|endoftext\|>|<[|｜]end[▁_ ]of[▁_ ]sentence[|｜]>"),
        "Nothing after the end of the sequence was meant as this answer.",
    ),
)
"""Tokens that end the assistant's turn: the completion is cut there (rule 1)."""

NEW_QUESTIONS = (
    Rule(
        "numbered question",
        re.compile(
            r"^[ \t>]*(?:#{1,6}[ \t]*|\*\*)?(?:(?:question|problem|exercise|example)[ \t]*\d*[ \t]*[:.)]"
            r"|(?:problem|exercise|question)[ \t]+\d+\b|q\d+[ \t]*[.:)])",
            re.IGNORECASE | re.MULTILINE,
        ),
        "A base model invents the next exercise and answers it after answering the asked one.",
    ),
    Rule(
        "template header",
        re.compile(
            r"^[ \t>]*#*[ \t]*(?:instruction|input|response|question)[ \t]*:?[ \t]*$"
            r"|^[ \t>]*#{2,6}[ \t]*(?:instruction|input|response|question)\b",
            re.IGNORECASE | re.MULTILINE,
        ),
        "An instruction-tuned base model restarts its prompt template (### Response:) and answers again.",
    ),
    Rule(
        "speaker turn",
        re.compile(
            r"^[ \t>]*(?:\*\*)?(?:user|human|student|assistant)[ \t]*(?:\*\*)?[ \t]*:",
            re.IGNORECASE | re.MULTILINE,
        ),
        "A base model writes the next turn of a dialogue itself.",
    ),
    Rule(
        "next question",
        re.compile(
            r"^[ \t>]*(?:#{1,6}[ \t]*|\*\*)?(?:next|new|another|bonus|follow[- ]?up)(?:[ \t]+question)?[ \t]*(?:\*\*)?[ \t]*:",
            re.IGNORECASE | re.MULTILINE,
        ),
        "'Next question:' / 'Follow-up:' after the answer opens a question the model made up and answers last.",
    ),
)
"""Lines that open another question: the completion is cut there once it has concluded (rule 2)."""

MARKED_CANDIDATES = Rule(
    "marked candidates",
    re.compile(r"^[^\n]*[\u2717\u2718\u274c\u2715\u274e][^\n]*(?:\n|$)", re.MULTILINE),
    "'x = 4 ✓ / x = 1 ✗ (extraneous)' ended on the crossed-out candidate, which was read as the answer.",
)
"""A line the completion crosses out (rule 3), dropped when it also marks a line with a check mark."""
_CHECKS = "\u2713\u2714\u2705\u2611"
_CROSSES = "\u2717\u2718\u274c\u2715\u274e"
_CHECK_MARKS = re.compile(f"[ \\t]*[{_CHECKS}]")
_THEREFORE = re.compile(r"\\therefore(?![A-Za-z])|\u2234")

_STATES_VALUE = re.compile(r"\d[^\n]{0,80}(?:\n[ \t]*(?:\\end\{[a-z]+\*?\}|[^\n\d]{0,12}))?\n[ \t\n]*$")
"""The text ends with a line that states a number (maybe followed by a short line, a code fence, the end of a
LaTeX environment): an answer."""
_CONCLUDED = re.compile(r"\\boxed|\banswer\b|####|</think>|\btherefore\b|\bso\b|\bthus\b", re.IGNORECASE)


@dataclass(frozen=True)
class Segment:
    """The part of a completion that answers the asked question.

    Attributes:
        text: The completion up to where it stops answering (rules 1 and 2), special tokens read as line
            breaks, crossed-out candidates dropped (rule 3).
        final: The text after the last ``</think>`` when the completion closes a think block, else None.
    """

    text: str
    final: str | None

    @property
    def parts(self) -> tuple[str, ...]:
        """The texts to read, in order: the answer after the think block, then the whole (rule 4)."""
        whole = self.text.replace(THINK_END, "\n")  # the tag ends the sentence that runs into it
        return (whole,) if self.final is None else (self.final, whole)


def _cut_at_turn_end(text: str) -> str:
    """``text`` up to the first turn end that has text before it (rule 1)."""
    start = 0
    while True:
        found = earliest(TURN_ENDS, text, start)
        if found is None:
            return text
        match = found[1]
        if SPECIAL_TOKEN.sub("", text[: match.start()]).strip():
            return text[: match.start()]
        start = match.end()  # a turn token that opens the completion ("<|im_start|>assistant") is no cut


def _without_crossed_lines(text: str) -> str:
    """Rule 3: crossed-out lines dropped and check marks removed, when the text has both; "∴" dropped."""
    if "\u2234" in text or "\\therefore" in text:
        text = _THEREFORE.sub(" ", text)  # a connective written as a sign: it states nothing itself
    checked = any(mark in text for mark in _CHECKS) and any(mark in text for mark in _CROSSES)
    if not checked or MARKED_CANDIDATES.pattern.search(text) is None:
        return text
    return _CHECK_MARKS.sub("", MARKED_CANDIDATES.pattern.sub("", text))


def asked_part(completion: str) -> str:
    r"""The completion up to a new question it writes after concluding (rule 2).

    Example:
        >>> asked_part("So the answer is 5.\\nQ2. What is 1 + 1?")
        'So the answer is 5.\\n'
    """
    first = earliest(NEW_QUESTIONS, completion)
    if first is None:  # the common case, and the cheaper scan of the two
        return completion
    if _STATES_VALUE.search(
        completion, 0, first[1].start()
    ):  # "57\n\nQuestion: ...": it answered, then asked
        return completion[: first[1].start()]
    concluded = _CONCLUDED.search(completion)
    if concluded is None:
        return completion
    found = earliest(NEW_QUESTIONS, completion, concluded.end())
    return completion if found is None else completion[: found[1].start()]


@functools.lru_cache(maxsize=64)  # the api, the pipeline and a kind's reader segment the same completion
def segment(completion: str) -> Segment:
    r"""Cut a completion to the part that answers (rules 1-4 of the module docstring).

    Args:
        completion: A full model output.

    Returns:
        The :class:`Segment` whose :attr:`~Segment.parts` the claim stage reads, in order.

    Example:
        >>> segment("It is 24.<|im_end|><|im_start|>user\\nDouble it.").text
        'It is 24.'
    """
    text = _without_crossed_lines(SPECIAL_TOKEN.sub("\n", asked_part(_cut_at_turn_end(completion))))
    think_end = text.rfind(THINK_END)
    final = text[think_end + len(THINK_END) :] if think_end != -1 else None
    return Segment(text, final)
