r"""The front door of the verifiers: ``verify`` one completion, ``verify_many`` a batch.

Every kind first extracts the final answer from the full completion, then compares it with the
gold answer. The result is always a :class:`~reasongym.verifiers.base.Verdict`, never an exception
for any string: correct (CORRECT), nothing extracted (UNPARSEABLE, ``correct=False``), extracted but
wrong (WRONG), over a size limit (REFUSED), too slow (TIMEOUT, math only: one time budget for the whole
call). An ungradable gold, and a TIMEOUT, give ``correct=None`` so that trainers can skip the item: a
comparison that ran out of time says nothing about the answer. Size and nesting limits refuse every hostile
input we know of before any work; as a last resort, whatever a grader still raises (a RecursionError,
a bug) becomes REFUSED, with a RuntimeWarning for anything but deep nesting, so that one completion
never ends a training run or an evaluation. Only option errors (ConfigError) and non-str inputs
(TypeError) raise.

Math (``kind="math"``): extraction follows :func:`~reasongym.verifiers.extract.extract_math_answer`;
the answer is graded by :func:`reasongym.verifiers.math.grade.verify_math_answer` (imported on first
use, since it loads sympy). The grading rules, what counts as the final answer included (the last
box; several boxes of one statement as one multi-valued answer; answer spraying; tolerance;
refusals), are written down in one place: the docstring of :mod:`reasongym.verifiers.math.grade`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reasongym.errors import ConfigError
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, Outcome, Verdict, check_timeout
from reasongym.verifiers.choice import Choices, make_choice_set, verify_choice
from reasongym.verifiers.countdown import verify_countdown
from reasongym.verifiers.exact import verify_exact
from reasongym.verifiers.extract import Extraction, extract_math_answer
from reasongym.verifiers.integer import verify_integer
from reasongym.verifiers.segment import segment
from reasongym.verifiers.text import dotted_thousands, semicolon_points, without_markup
from reasongym.verifiers.yesno import verify_yesno

__all__ = ["KINDS", "MAX_COMPLETION_CHARS", "verify", "verify_many"]

KINDS = ("math", "integer", "choice", "exact", "yesno", "countdown")
"""The answer kinds ``verify`` grades."""
MAX_COMPLETION_CHARS = 1_000_000
"""Longer completions are REFUSED without being read."""
_MAX_SPRAY_CANDIDATES = 8
_MIN_LIST_SPRAY_ITEMS = 4
_OPTIONS = ("choices", "last_number_fallback", "timeout")
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

Grader = Callable[[str, str], Verdict]


def _nearest(value: object, allowed: Sequence[str]) -> str:
    """' Did you mean ...?' for the closest allowed name, or ''."""
    close = difflib.get_close_matches(str(value), allowed, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise ConfigError(
            f"kind={kind!r} is not a verifier kind; valid kinds: {', '.join(KINDS)}{_nearest(kind, KINDS)}"
        )
    return str(kind)


def _check_timeout(timeout: object) -> float:
    return check_timeout("timeout", timeout)


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def _list_spray_size(answer: str) -> int:
    """How many top-level comma-separated items ``answer`` has (brackets nest; 1,000 is one item)."""
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
            return dataclasses.replace(verdict, extracted=shown)
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


def _grade_math_candidates(found: Extraction, gold: str, timeout: float) -> Verdict:
    """Grade an extraction that has an answer: spraying checks first, then the math grader."""
    from reasongym.verifiers.math.grade import verify_math_answer  # loads sympy: only when needed

    answer = found.answer or ""
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
    return dataclasses.replace(verify_math_answer(answer, gold, timeout=timeout), extracted=answer)


def _grade_restatement(first: str, second: str, gold: str, timeout: float) -> Verdict:
    """One answer said twice ("1/5 or 20%", "0.5, i.e. 1/2") when the second equals the first; else a hedge."""
    from reasongym.verifiers.math.grade import verify_math_answer

    shown = f"{first} or {second}"
    deadline = time.monotonic() + timeout
    verdict = verify_math_answer(first, gold, timeout=timeout)
    if verdict.correct is not True:
        return dataclasses.replace(verdict, extracted=shown)
    percent = _PERCENT_END.fullmatch(second.strip())
    second = f"\\frac{{{percent.group(1)}}}{{100}}" if percent else second  # 20% restates 1/5
    same = verify_math_answer(second, first, timeout=max(1e-3, deadline - time.monotonic()))
    if same.outcome is Outcome.TIMEOUT:
        return dataclasses.replace(same, extracted=shown)
    if same.correct:
        return Verdict(True, Outcome.CORRECT, shown, "The gold, said twice in equal forms.")
    return Verdict(False, Outcome.WRONG, shown, f"Hedged between {first[:40]!r} and {second[:40]!r}.")


def _grade_math(found: Extraction, gold: str, timeout: float) -> Verdict:
    """Grade one math extraction; an ungradable gold gives correct=None even without an answer."""
    if found.answer is not None:
        return _grade_math_candidates(found, gold, timeout)
    from reasongym.verifiers.math.grade import verify_math_answer

    gold_check = verify_math_answer(gold, gold, timeout=timeout)
    if gold_check.correct is None:
        return dataclasses.replace(gold_check, extracted=None)
    return Verdict(False, _NO_ANSWER_OUTCOME.get(found.method, Outcome.UNPARSEABLE), None, found.reason)


def _make_grader(kind: object, options: Mapping[str, Any]) -> tuple[str, Grader]:
    """Validate the options once and return ``(kind, grade(completion, gold))`` for that kind."""
    unknown = [name for name in options if name not in _OPTIONS]
    if unknown:
        name = unknown[0]
        raise ConfigError(
            f"unknown option {name!r}; valid options: {', '.join(_OPTIONS)}{_nearest(name, _OPTIONS)}"
        )
    kind = _check_kind(kind)
    timeout = _check_timeout(options.get("timeout", VERIFY_TIMEOUT_S))
    fallback = bool(options.get("last_number_fallback", True))
    choices = options.get("choices")
    if choices is not None and kind != "choice":
        raise ConfigError(f"choices is only used with kind='choice', got kind={kind!r}")
    if kind == "math":
        return kind, lambda completion, gold: _grade_math(
            extract_math_answer(completion, last_number_fallback=fallback), gold, timeout
        )
    if kind == "integer":
        return kind, lambda completion, gold: verify_integer(completion, gold, last_number_fallback=fallback)
    if kind == "choice":
        choice_set = make_choice_set(choices)
        return kind, lambda completion, gold: verify_choice(completion, gold, choice_set, fallback=fallback)
    if kind == "exact":
        return kind, verify_exact
    if kind == "countdown":
        return kind, verify_countdown
    return kind, lambda completion, gold: verify_yesno(completion, gold, fallback=fallback)


def _refuse_oversized(completion: str) -> Verdict | None:
    if len(completion) > MAX_COMPLETION_CHARS:
        reason = (
            f"The completion has {len(completion):,} characters, over the limit of {MAX_COMPLETION_CHARS:,}."
        )
        return Verdict(False, Outcome.REFUSED, None, reason)
    return None


def _notations(completion: str) -> str:
    """The completion with markup dropped and locale notations of numbers and points made plain (text.py)."""
    return dotted_thousands(semicolon_points(without_markup(completion)))


def _grade_guarded(grade: Grader, completion: str, gold: str) -> Verdict:
    """``grade(completion, gold)``, with the last-resort promise: a verdict, never an exception.

    Every known hostile input is refused earlier, by the size and nesting limits; this catches what
    they miss, so that one completion can never end a training run or an evaluation.
    """
    try:
        return grade(segment(_notations(completion)).text, gold)
    except RecursionError:
        return Verdict(False, Outcome.REFUSED, None, "The answer nests too deeply to grade.")
    except ConfigError:
        raise  # a bad option, raised on purpose
    except Exception as error:  # noqa: BLE001 - a verifier bug must not crash a run; it is reported below
        warnings.warn(
            f"a verifier raised {type(error).__name__}: {error}; the completion is refused (please report it)",
            RuntimeWarning,
            stacklevel=3,
        )
        return Verdict(
            False, Outcome.REFUSED, None, f"The verifier failed on this completion ({type(error).__name__})."
        )


def verify(
    completion: str,
    gold: str,
    kind: str = "math",
    *,
    choices: Choices = None,
    last_number_fallback: bool = True,
    timeout: float = VERIFY_TIMEOUT_S,
) -> Verdict:
    """Grade one full model completion against the dataset's gold answer.

    Args:
        completion: The full model output (reasoning and final answer).
        gold: The dataset's answer string (for "choice", the correct label).
        kind: One of :data:`KINDS`: "math", "integer" (AIME 0-999), "choice", "exact", "yesno", "countdown"
            (gold ``"target=24; numbers=3,5,7,1"``, see :mod:`reasongym.verifiers.countdown`).
        choices: For kind="choice" only: (label, text) pairs, a list of texts (labelled A, B, ...),
            or a mapping label->text. None means labels A-E without texts.
        last_number_fallback: When no box and no answer phrase is found, use the last number
            (math, integer), the last line (choice) or the last standalone yes/no word (yesno).
        timeout: Seconds allowed for the symbolic work of the whole call (every box of the answer
            together; starting the worker process is not counted). A call that runs out of it is
            TIMEOUT with ``correct=None``: ungradable, never a wrong answer.

    Returns:
        The :class:`~reasongym.verifiers.base.Verdict`; ``extracted`` is the answer found.

    Raises:
        ConfigError: For an unknown kind (with the nearest valid one), a bad timeout, invalid
            choices, or choices given with a kind other than "choice".
        TypeError: When ``completion`` or ``gold`` is not a str.

    Example:
        >>> verify("... so 2 + 2 = 4. The answer is 4.", "4", kind="integer").correct
        True
        >>> verify("I pick (C).", "B", kind="choice").outcome.value
        'wrong'
    """
    options = {"choices": choices, "last_number_fallback": last_number_fallback, "timeout": timeout}
    _, grade = _make_grader(kind, options)
    _check_text("completion", completion)
    _check_text("gold", gold)
    return _refuse_oversized(completion) or _grade_guarded(grade, completion, gold)


def _golds_for(golds: Sequence[str] | str, count: int) -> Sequence[str]:
    if isinstance(golds, str):
        return [golds] * count
    if not isinstance(golds, Sequence):
        raise TypeError(f"golds must be a str or a sequence of str, got {type(golds).__name__}")
    if len(golds) != count:
        raise ConfigError(
            f"golds has {len(golds)} items but completions has {count}; give one gold per completion"
        )
    for index, gold in enumerate(golds):
        _check_text(f"golds[{index}]", gold)
    return golds


def verify_many(
    completions: Sequence[str], golds: Sequence[str] | str, kind: str = "math", **options: Any
) -> list[Verdict]:
    r"""Grade a batch of completions, in order, with the same options for all.

    Options are validated once. Math answers are extracted per completion, and each distinct
    (gold, extracted answer) pair is graded once: the many samples of one problem in a GRPO group
    usually repeat a handful of answers. Other kinds grade each distinct (gold, completion) once.

    Args:
        completions: Full model outputs.
        golds: One gold per completion, or one gold string for all of them.
        kind: One of :data:`KINDS`.
        **options: ``choices``, ``last_number_fallback`` and ``timeout``, as for :func:`verify`.

    Returns:
        One verdict per completion, in order; each equals what :func:`verify` returns for it.

    Raises:
        ConfigError: For an unknown kind or option, a bad option value, or mismatched lengths.
        TypeError: When ``completions`` is a str or holds a non-str, or a gold is not a str.

    Example:
        >>> [v.correct for v in verify_many(["\\boxed{5}", "\\boxed{6}", "\\boxed{5}"], "5")]
        [True, False, True]
    """
    kind, grade = _make_grader(kind, options)
    if isinstance(completions, str) or not isinstance(completions, Sequence):
        raise TypeError(f"completions must be a sequence of str, got {type(completions).__name__}")
    gold_list = _golds_for(golds, len(completions))
    for index, completion in enumerate(completions):
        _check_text(f"completions[{index}]", completion)
    if kind == "math":
        return _verify_many_math(completions, gold_list, options)
    cache: dict[tuple[str, str], Verdict] = {}
    verdicts = []
    for completion, gold in zip(completions, gold_list, strict=True):
        key = (gold, completion)
        if key not in cache:
            cache[key] = _refuse_oversized(completion) or _grade_guarded(grade, completion, gold)
        verdicts.append(cache[key])
    return verdicts


def _verify_many_math(
    completions: Sequence[str], golds: Sequence[str], options: Mapping[str, Any]
) -> list[Verdict]:
    """Math batch: extract each completion, grade each distinct (gold, answer) pair once."""
    timeout = _check_timeout(options.get("timeout", VERIFY_TIMEOUT_S))
    fallback = bool(options.get("last_number_fallback", True))
    cache: dict[tuple[Any, ...], Verdict] = {}
    grade = functools.partial(_grade_math_cached, fallback=fallback, timeout=timeout, cache=cache)
    return [
        _refuse_oversized(completion) or _grade_guarded(grade, completion, gold)
        for completion, gold in zip(completions, golds, strict=True)
    ]


def _grade_math_cached(
    completion: str, gold: str, *, fallback: bool, timeout: float, cache: dict[tuple[Any, ...], Verdict]
) -> Verdict:
    """Extract one completion and grade it, reusing the verdict of an equal (gold, answer) pair."""
    found = extract_math_answer(completion, last_number_fallback=fallback)
    if found.answer is None:
        key: tuple[Any, ...] = (gold, None, found.method, found.reason)
    else:
        key = (gold, found.answer, found.candidates if found.sprayed else None)
    if key not in cache:
        cache[key] = _grade_math(found, gold, timeout)
    return cache[key]
