r"""Wrong answers in the surface form of a right one: the verifier's red team.

A verifier that pays a form nobody listed is found by writing wrong answers in the forms of right ones. From
one completion that a verifier pays for its gold, :func:`wrong_answers` writes completions that commit to
something else, each in a named form, none of which may be paid:

- ``moved``: every whole-number occurrence of the gold value moved by one (numeric golds);
- ``sign``: every occurrence of the gold value given the other sign (numeric golds other than 0);
- ``revision``: the right completion, then a revision to a wrong value ("Wait, actually, the answer is 8.");
- ``hedge``: the right completion, then an answer phrase that hedges between the gold and a wrong value;
- ``mention``: the ``moved`` completion, then a sentence that only mentions the gold ("One might think the
  answer is 7.");
- ``new turn``: the ``moved`` completion, then an invented user turn and an assistant turn that answers
  with the gold; and a new question written after the answer and answered with the gold;
- ``letter beside text``: for a choice with option texts, the gold option's text stated with another
  option's letter;
- ``flipped``: for yes/no, the opposite verdict with the gold only mentioned after it.

``tests/verifiers/test_red_team.py`` draws thousands of these per run, from every correct row of the
labelled sets, and fails on any that is paid. Use it on a kind of your own the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasongym.verifiers.segment import segment

__all__ = ["WrongAnswer", "wrong_answers"]

_INTEGER = re.compile(r"[-+]?\d{1,6}")
_TURN = "<|im_end|>\n<|im_start|>user\nAre you sure?<|im_end|>\n<|im_start|>assistant\nThe answer is {gold}."
_TRAILING_TOKENS = re.compile(r"(?:\s*(?:<\|[A-Za-z0-9_]{1,40}\|>|</s>))+\s*$")
_OPPOSITE = {"yes": "no", "no": "yes", "true": "false", "false": "true"}


@dataclass(frozen=True)
class WrongAnswer:
    """A completion that commits to something other than the gold.

    Attributes:
        form: The surface form it was written in (the module docstring's names).
        completion: The wrong completion.
    """

    form: str
    completion: str


def _replace_value(completion: str, gold: str, wrong: str) -> str | None:
    """Every whole-number occurrence of ``gold`` (also zero-padded: "033") replaced by ``wrong``; None when none."""
    pattern = re.compile(rf"(?<![\w.,])0*{re.escape(gold)}(?![\w.,]\d)(?!\d)")
    replaced, count = pattern.subn(wrong, completion)
    return replaced if count else None


def _numeric(kind: str, gold: str, completion: str, offset: int, style: str) -> list[WrongAnswer]:
    value = int(gold)
    moved_value = str((value + offset) % 1000) if kind == "integer" else str(value + offset)
    shown = style.format(moved_value)
    moved = _replace_value(completion, gold.lstrip("+"), moved_value)
    forms = []
    if moved is not None:
        forms += [
            WrongAnswer("moved", moved),
            WrongAnswer("mention", f"{moved}\n\nOne might think the answer is {gold}."),
            WrongAnswer("new turn", moved + _TURN.format(gold=gold)),
            WrongAnswer("new turn", f"{moved}\n\nQuestion: What is {value - 1} + 1?\nAnswer: {gold}"),
        ]
    if value != 0 and kind == "math" and f"-{gold}" not in completion:
        signed = _replace_value(completion, gold, f"-{gold}")
        if signed is not None:
            forms.append(WrongAnswer("sign", signed))
    forms += [
        WrongAnswer("revision", f"{completion}\n\nWait, actually, the answer is {shown}."),
        WrongAnswer("hedge", f"{completion}\n\nSo the answer is {gold} or {shown}."),
    ]
    return forms


def _choice(gold: str, completion: str, choices: list[tuple[str, str]]) -> list[WrongAnswer]:
    labels = [label for label, _ in choices]
    texts = dict(choices)
    if gold not in labels or len(labels) < 2:
        return []
    other = labels[(labels.index(gold) + 1) % len(labels)]
    forms = [
        WrongAnswer("revision", f"{completion}\n\nWait, actually, the answer is {other}."),
        WrongAnswer("hedge", f"{completion}\n\nSo the answer is {gold} or {other}."),
        WrongAnswer("new turn", f"The answer is {other}." + _TURN.format(gold=gold)),
        WrongAnswer("mention", f"The answer is {other}. One might think the answer is {gold}."),
    ]
    if texts.get(gold):
        forms += [
            WrongAnswer("letter beside text", f"The answer is ({other}) {texts[gold]}."),
            WrongAnswer("letter beside text", f"The answer is {texts[gold]}, which is option {other}."),
        ]
    return forms


def _yesno(gold: str, completion: str) -> list[WrongAnswer]:
    opposite = _OPPOSITE.get(gold.strip().lower())
    if opposite is None:
        return []
    return [
        WrongAnswer("revision", f"{completion}\n\nWait, actually, {opposite}."),
        WrongAnswer("hedge", f"{completion}\n\nSo the answer is {gold} or {opposite}."),
        WrongAnswer("flipped", f"{opposite.capitalize()}. Some would say {gold}, but they are wrong."),
        WrongAnswer("flipped", f'{opposite.capitalize()}. The word "{gold}" does not fit here.'),
        WrongAnswer("new turn", f"{opposite.capitalize()}." + _TURN.format(gold=gold)),
    ]


def _other(gold: str) -> list[WrongAnswer]:
    """For golds that are expressions or words: a revision, a hedge and a new turn to a changed gold."""
    wrong = f"{gold} + 1" if any(char.isdigit() for char in gold) else f"{gold}s"
    return [
        WrongAnswer("revision", f"The answer is {gold}.\n\nWait, actually, the answer is {wrong}."),
        WrongAnswer("hedge", f"So the answer is {gold} or {wrong}."),
        WrongAnswer("new turn", f"The answer is {wrong}." + _TURN.format(gold=gold)),
    ]


def _before_turn_end(completion: str) -> str:
    """The completion without the special tokens that end it: text appended after them is no answer at all."""
    return _TRAILING_TOKENS.sub("", completion)


def wrong_answers(
    kind: str,
    gold: str,
    completion: str,
    choices: list[tuple[str, str]] | None = None,
    *,
    offset: int = 1,
    style: str = "{}",
) -> list[WrongAnswer]:
    r"""Completions in the surface forms of ``completion`` that do not commit to ``gold``.

    Args:
        kind: The verifier kind of the gold.
        gold: The gold answer.
        completion: A completion that the verifier pays for ``gold``.
        choices: For kind "choice", the (label, text) pairs.
        offset: How far a numeric gold is moved (not 0).
        style: How a wrong value is written where it is appended (``"**{}**"``, ``"$\\boxed{{{}}}$"``).

    Returns:
        The wrong completions (the module docstring lists their forms); empty for kinds it cannot vary.

    Example:
        >>> [wrong.form for wrong in wrong_answers("math", "7", "3 + 4 = 7. The answer is 7.")][:3]
        ['moved', 'mention', 'new turn']
    """
    completion = _before_turn_end(completion)
    if segment(completion).text.strip() != completion.strip():
        return []  # text after a new turn or question is no answer at all: appending there tests nothing
    if kind in ("math", "integer") and _INTEGER.fullmatch(gold.strip()):
        return _numeric(kind, gold.strip(), completion, offset or 1, style)
    if kind == "choice":
        return _choice(gold.strip(), completion, choices or [])
    if kind == "yesno":
        return _yesno(gold, completion)
    if kind in ("math", "exact"):
        return _other(gold)
    return []
