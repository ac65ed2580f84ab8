r"""Grading a math extraction: one answer, a statement of several boxes, a hedge, an answer said twice.

:func:`~reasongym.verifiers.extract.extract_math_answer` finds what a completion commits to; this module
decides what that commitment means against the gold (kind ``math``; the rules are listed in
:mod:`reasongym.verifiers.math.grade`):

- several different values boxed together are each the gold, or together a multi-valued gold, or answer
  spraying (more than 8 values, or a box holding 4 or more comma-separated values for a one-value gold);
- values committed to in separate claims (a hedge, commitment rule 2) are right only when each is the gold;
- one answer said twice ("1/5 or 20%", "0.5, i.e. 1/2") is one answer when the second equals the first;
- an ungradable gold gives ``correct=None`` even when the completion has no answer.

Every symbolic comparison of one completion shares one time budget; running out of it is TIMEOUT
(``correct=None``). sympy loads on first use, not at import.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.extract import Extraction, extract_math_answer
from reasongym.verifiers.golds import readable_gold
from reasongym.verifiers.tolerance import within_tolerance

__all__ = ["grade_math", "math_grader"]

_MAX_SPRAY_CANDIDATES = 8
_MIN_LIST_SPRAY_ITEMS = 4
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_LATEX_GROUP_MARK = re.compile(r"(?<=\d)(?:,\s*\\!\s*|\{,\s*\}|\\,)(?=\d{3})")
_RESTATED = re.compile(
    r"([^,;]+?)(?:[ \t]+or[ \t]+|[ \t]*,?[ \t]*\(?[ \t]*(?:i\.e\.|that[ \t]+is|equivalently)[ \t]*,?[ \t]*)([^,;]+)"
)
"""An answer stated twice: "1/5 or 20%", "0.5, i.e. 1/2", "0.5 (i.e. 1/2)"; equal sides are one answer."""
_PERCENT_END = re.compile(r"([-+]?\d+(?:\.\d+)?)[ \t]*\\?%")
_NO_ANSWER_OUTCOME = {
    "too_many_boxes": Outcome.REFUSED,
    "box_too_long": Outcome.REFUSED,
    "answer_too_long": Outcome.REFUSED,
}


def _showing(verdict: Verdict, extracted: str | None) -> Verdict:
    """``verdict`` with ``extracted`` as the answer it shows (dataclasses.replace, without its generic walk)."""
    return Verdict(verdict.correct, verdict.outcome, extracted, verdict.reason)


def _list_spray_size(answer: str) -> int:
    """How many top-level comma-separated items ``answer`` has (brackets nest; 1,000 is one item)."""
    if "," not in answer:
        return 1  # the commonest answer: nothing below can find a second item
    answer = _LATEX_GROUP_MARK.sub("", answer)
    if _THOUSANDS.fullmatch(answer.replace(" ", "")):
        return 1
    depth, items = 0, 1
    for char in answer:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items += 1
    return items


def _grade_statement(found: Extraction, gold: str, timeout: float) -> Verdict:
    """Several different values boxed together: each one the gold, or together a multi-valued gold.

    The boxes share one time budget, and grading stops at the first box that is not the gold: past it the
    boxes are one multi-valued answer or answer spraying, which `verify_math_statement` decides.
    """
    from reasongym.verifiers.math.grade import verify_math_answer, verify_math_statement

    shown = ", ".join(found.candidates)
    if len(found.candidates) > _MAX_SPRAY_CANDIDATES:
        reason = f"{len(found.candidates)} different values boxed together (answer spraying)."
        return Verdict(False, Outcome.WRONG, shown[:200], reason)
    deadline = time.monotonic() + timeout
    out_of_time = Verdict(
        None, Outcome.TIMEOUT, shown[:200], f"the symbolic comparison ran past {timeout:g} s"
    )
    for candidate in found.candidates:
        if time.monotonic() >= deadline:
            return out_of_time
        verdict = verify_math_answer(candidate, gold, timeout=deadline - time.monotonic())
        if verdict.outcome is Outcome.TIMEOUT:
            return out_of_time
        if verdict.correct is None:
            return _showing(verdict, shown)
        if not verdict.correct:
            break
    else:
        return Verdict(
            True, Outcome.CORRECT, shown, f"All {len(found.candidates)} boxed values equal the gold."
        )
    if time.monotonic() >= deadline:
        return out_of_time
    verdict = verify_math_statement(found.candidates, gold, timeout=deadline - time.monotonic())
    return out_of_time if verdict.outcome is Outcome.TIMEOUT else verdict


def _grade_hedge(found: Extraction, gold: str, timeout: float) -> Verdict:
    """Values committed to in separate claims (commitment rule 2): right only when every one is the gold."""
    from reasongym.verifiers.math.grade import verify_math_answer

    shown = " / ".join(found.candidates)[:200]
    deadline = time.monotonic() + timeout
    for candidate in found.candidates:
        left = deadline - time.monotonic()
        verdict = verify_math_answer(candidate, gold, timeout=max(left, 1e-3))
        if verdict.outcome is Outcome.TIMEOUT or left <= 0:
            return Verdict(None, Outcome.TIMEOUT, shown, f"the symbolic comparison ran past {timeout:g} s")
        if verdict.correct is None:
            return _showing(verdict, shown)
        if not verdict.correct:
            return Verdict(False, Outcome.WRONG, shown, f"{found.reason} (a hedge: {verdict.reason})")
    return Verdict(True, Outcome.CORRECT, found.answer, f"Every committed value is the gold: {shown[:80]}.")


def _grade_math_candidates(found: Extraction, gold: str, timeout: float) -> Verdict:
    """Grade an extraction that has an answer: spraying checks first, then the math grader."""
    from reasongym.verifiers.math.grade import verify_math_answer  # loads sympy: only when needed

    answer = found.answer or ""
    if found.hedged:
        return _grade_hedge(found, gold, timeout)
    if found.sprayed:
        return _grade_statement(found, gold, timeout)
    if "," not in gold and _list_spray_size(answer) >= _MIN_LIST_SPRAY_ITEMS:
        reason = (
            f"{_list_spray_size(answer)} comma-separated candidates for a one-value gold (answer spraying)."
        )
        return Verdict(False, Outcome.WRONG, answer[:200], reason)
    restated = _RESTATED.fullmatch(answer.strip().rstrip(")").strip())
    if restated is not None and "," not in gold and " or " not in gold:
        return _grade_restatement(restated.group(1), restated.group(2), gold, timeout)
    return _showing(verify_math_answer(answer, gold, timeout=timeout), answer)


def _grade_restatement(first: str, second: str, gold: str, timeout: float) -> Verdict:
    """One answer said twice ("1/5 or 20%", "0.5, i.e. 1/2") when the second equals the first; else a hedge."""
    from reasongym.verifiers.math.grade import verify_math_answer

    shown = f"{first} or {second}"
    deadline = time.monotonic() + timeout
    verdict = verify_math_answer(first, gold, timeout=timeout)
    if verdict.correct is not True:
        return _showing(verdict, shown)
    percent = _PERCENT_END.fullmatch(second.strip())
    second = f"\\frac{{{percent.group(1)}}}{{100}}" if percent else second  # 20% restates 1/5
    same = verify_math_answer(second, first, timeout=max(1e-3, deadline - time.monotonic()))
    if same.outcome is Outcome.TIMEOUT:
        return _showing(same, shown)
    if same.correct:
        return Verdict(True, Outcome.CORRECT, shown, "The gold, said twice in equal forms.")
    return Verdict(False, Outcome.WRONG, shown, f"Hedged between {first[:40]!r} and {second[:40]!r}.")


def _rounded(verdict: Verdict, found: Extraction, gold: str, tolerance: str) -> Verdict:
    """A wrong single answer accepted under a looser rounding policy (:mod:`~reasongym.verifiers.tolerance`)."""
    if tolerance == "exact" or verdict.outcome is not Outcome.WRONG or found.sprayed or found.hedged:
        return verdict
    reason = within_tolerance(tolerance, found.answer or "", readable_gold(gold) or gold)
    return verdict if reason is None else Verdict(True, Outcome.CORRECT, verdict.extracted, reason)


def grade_math(found: Extraction, gold: str, timeout: float) -> Verdict:
    """Grade one math extraction; an ungradable gold gives correct=None even without an answer.

    The gold is read first as an answer someone else wrote (:func:`~reasongym.verifiers.golds.readable_gold`).
    """
    gold = readable_gold(gold) or gold
    if found.answer is not None:
        return _grade_math_candidates(found, gold, timeout)
    from reasongym.verifiers.math.grade import verify_math_answer

    gold_check = verify_math_answer(gold, gold, timeout=timeout)
    if gold_check.correct is None:
        return _showing(gold_check, None)
    return Verdict(False, _NO_ANSWER_OUTCOME.get(found.method, Outcome.UNPARSEABLE), None, found.reason)


def math_grader(timeout: float, fallback: bool, tolerance: str = "exact") -> Callable[[str, str], Verdict]:
    """A grader for kind ``math`` whose calls share a cache: each distinct (gold, answer) is graded once.

    The samples of one problem in a GRPO group usually repeat a handful of answers, so a batch graded
    through one grader extracts every completion but compares each distinct answer once.
    """
    cache: dict[tuple[Any, ...], Verdict] = {}

    def grade(completion: str, gold: str) -> Verdict:
        found = extract_math_answer(completion, last_number_fallback=fallback)
        if found.answer is None:
            key: tuple[Any, ...] = (gold, None, found.method, found.reason)
        else:
            several = found.sprayed or found.hedged
            key = (gold, found.answer, found.candidates if several else None, found.hedged)
        if key not in cache:
            cache[key] = _rounded(grade_math(found, gold, timeout), found, gold, tolerance)
        return cache[key]

    return grade
