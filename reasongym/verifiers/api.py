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

What a completion commits to is decided the same way for every kind, by the stages of
:mod:`~reasongym.verifiers.pipeline` (segment, claims, commitment; the kind compares). The kinds are a
registry (:mod:`~reasongym.verifiers.kinds`): ``KINDS`` lists the built-in ones, and a kind of your own is
one registration. Math (``kind="math"``): extraction follows
:func:`~reasongym.verifiers.extract.extract_math_answer`; the answer is graded by
:func:`reasongym.verifiers.math.grade.verify_math_answer` (imported on first use, since it loads sympy).
The math grading rules are written down in the docstring of :mod:`reasongym.verifiers.math.grade`.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from reasongym.errors import ConfigError
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, Outcome, Verdict, check_timeout
from reasongym.verifiers.choice_sets import Choices
from reasongym.verifiers.kinds import Grader, KindOptions, get_kind, kind_names
from reasongym.verifiers.segment import segment
from reasongym.verifiers.text import dotted_thousands, semicolon_points, without_markup
from reasongym.verifiers.tolerance import check_tolerance

__all__ = ["KINDS", "MAX_COMPLETION_CHARS", "verify", "verify_many"]

KINDS = kind_names()
"""The built-in answer kinds ``verify`` grades (the registry, :mod:`~reasongym.verifiers.kinds`, may hold more)."""
MAX_COMPLETION_CHARS = 1_000_000
"""Longer completions are REFUSED without being read."""
_OPTIONS = ("choices", "last_number_fallback", "timeout", "tolerance")


def _nearest(value: object, allowed: Sequence[str]) -> str:
    """' Did you mean ...?' for the closest allowed name, or ''."""
    close = difflib.get_close_matches(str(value), allowed, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_timeout(timeout: object) -> float:
    return check_timeout("timeout", timeout)


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def _make_grader(kind: object, options: Mapping[str, Any]) -> tuple[str, Grader]:
    """Validate the options once and return ``(kind, grade(completion, gold))`` for that kind."""
    unknown = [name for name in options if name not in _OPTIONS]
    if unknown:
        name = unknown[0]
        raise ConfigError(
            f"unknown option {name!r}; valid options: {', '.join(_OPTIONS)}{_nearest(name, _OPTIONS)}"
        )
    registered = get_kind(kind)
    timeout = _check_timeout(options.get("timeout", VERIFY_TIMEOUT_S))
    fallback = bool(options.get("last_number_fallback", True))
    choices = options.get("choices")
    if choices is not None and not registered.takes_choices:
        raise ConfigError(f"choices is only used with kind='choice', got kind={kind!r}")
    tolerance = check_tolerance(options.get("tolerance", "exact"))
    if tolerance != "exact" and registered.name != "math":
        raise ConfigError(f"tolerance={tolerance!r} rounds math answers only, got kind={kind!r}; use 'exact'")
    return registered.name, registered.make_grader(KindOptions(timeout, fallback, choices, tolerance))


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
    tolerance: str = "exact",
) -> Verdict:
    """Grade one full model completion against the dataset's gold answer.

    Args:
        completion: The full model output (reasoning and final answer).
        gold: The dataset's answer string (for "choice", the correct label).
        kind: A registered kind: the built-in "math", "integer" (AIME 0-999), "choice", "exact", "yesno",
            "countdown" (gold ``"target=24; numbers=3,5,7,1"``, see :mod:`reasongym.verifiers.countdown`),
            or one of your own (:func:`reasongym.verifiers.kinds.register_kind`).
        choices: For kind="choice" only: (label, text) pairs, a list of texts (labelled A, B, ...),
            or a mapping label->text. None means labels A-E without texts.
        last_number_fallback: When no box and no answer phrase is found, use the last number
            (math, integer), the last line (choice) or the last standalone yes/no word (yesno).
        timeout: Seconds allowed for the symbolic work of the whole call (every box of the answer
            together; starting the worker process is not counted). A call that runs out of it is
            TIMEOUT with ``correct=None``: ungradable, never a wrong answer.
        tolerance: The rounding policy for math answers (:mod:`~reasongym.verifiers.tolerance`): "exact"
            (the default, for training rewards), "shown" or "relative" (for sets whose annotators accept
            rounded answers).

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
    options = {
        "choices": choices,
        "last_number_fallback": last_number_fallback,
        "timeout": timeout,
        "tolerance": tolerance,
    }
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
        **options: ``choices``, ``last_number_fallback``, ``timeout`` and ``tolerance``, as for :func:`verify`.

    Returns:
        One verdict per completion, in order; each equals what :func:`verify` returns for it.

    Raises:
        ConfigError: For an unknown kind or option, a bad option value, or mismatched lengths.
        TypeError: When ``completions`` is a str or holds a non-str, or a gold is not a str.

    Example:
        >>> [v.correct for v in verify_many(["\\boxed{5}", "\\boxed{6}", "\\boxed{5}"], "5")]
        [True, False, True]
    """
    _, grade = _make_grader(kind, options)
    if isinstance(completions, str) or not isinstance(completions, Sequence):
        raise TypeError(f"completions must be a sequence of str, got {type(completions).__name__}")
    gold_list = _golds_for(golds, len(completions))
    for index, completion in enumerate(completions):
        _check_text(f"completions[{index}]", completion)
    cache: dict[tuple[str, str], Verdict] = {}
    verdicts = []
    for completion, gold in zip(completions, gold_list, strict=True):
        key = (gold, completion)
        if key not in cache:
            cache[key] = _refuse_oversized(completion) or _grade_guarded(grade, completion, gold)
        verdicts.append(cache[key])
    return verdicts
