r"""The order of the commitment stages, in one place: what a completion commits to, for every kind.

Every answer kind decides what a completion answers with the same stages, in this order:

(a) **segment** (:mod:`~reasongym.verifiers.segment`): cut the completion where it stops answering the
    asked question (a new turn, a new question), and split off the think block;
(b) **claims** (:mod:`~reasongym.verifiers.claims`): in each part, in order, find the decisive claim
    (box, tag, JSON, answer phrase), else the kind's plain claims (a last sentence, a verdict word, a
    label, a last number); mentions are never claims;
(c) **commitment** (:mod:`~reasongym.verifiers.commitment`): a revision after the claim replaces it, a
    second committed value makes a hedge, an aside after the answer is no claim;
(d) **compare**: the kind compares the committed value with the gold (``verify`` in
    :mod:`~reasongym.verifiers.api`, through the kind registry :mod:`~reasongym.verifiers.kinds`).

A kind takes part through two callbacks: how it reads a decisive claim (the claim and the text after it,
with the commitment rules applied through :func:`~reasongym.verifiers.commitment.resolve`), and how it
reads a part that makes no decisive claim. :func:`commit` runs (a) and (b) and hands each part's claim
to the kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from reasongym.verifiers.claims import Extraction, decisive_claim
from reasongym.verifiers.phrases import ANSWER_PHRASES
from reasongym.verifiers.rules import Rule
from reasongym.verifiers.segment import segment

__all__ = ["commit", "read_parts"]

R = TypeVar("R")

_EMPTY_BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{\s*\}")


def read_parts(completion: str) -> tuple[str, ...]:
    """Stage (a): the parts of a completion to read, in order (the answer after a think block first)."""
    return segment(completion).parts


def _claim_of(part: str, phrases: tuple[Rule, ...], skip_empty_boxes: bool) -> tuple[Extraction, str]:
    claim, after = decisive_claim(part, phrases)
    if skip_empty_boxes and claim.method == "boxed" and claim.answer is None:
        claim, after = decisive_claim(_EMPTY_BOX.sub(" ", part), phrases)  # "put it in \boxed{}" is no answer
    return claim, after


def commit(
    completion: str,
    read_claim: Callable[[Extraction, str], R | None],
    read_plain: Callable[[str], R | None] | None = None,
    *,
    phrases: tuple[Rule, ...] = ANSWER_PHRASES,
    skip_empty_boxes: bool = False,
) -> R | None:
    r"""Run stages (a) and (b) and hand the first part's claim to the kind (rule 3 of the segment stage).

    Args:
        completion: A full model output.
        read_claim: The kind's reading of a decisive claim: ``read_claim(claim, after)``. It is called
            for the first part that makes one, and for a claim that is a problem (a box never closed);
            None means the claim states nothing of this kind, and the part's plain claims are read.
        read_plain: The kind's reading of a part without a decisive claim; None means no plain claims.
        phrases: The kind's answer phrase rows.
        skip_empty_boxes: Read past empty boxes ("put the answer in \\boxed{}" echoes the instruction).

    Returns:
        What ``read_claim`` or ``read_plain`` returned for the first part with a claim, else None.
    """
    for part in read_parts(completion):
        claim, after = _claim_of(part, phrases, skip_empty_boxes)
        if claim.method != "none":
            read = read_claim(claim, after)
            if read is not None:
                return read
        if read_plain is not None:
            plain = read_plain(part)
            if plain is not None:
                return plain
    return None
