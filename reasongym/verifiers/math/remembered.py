"""Parsed answers and settled comparisons, remembered: the same texts come back on every sample of a problem.

A gold is graded against every sample of its problem, and the samples of one problem repeat a handful of
answers, so :func:`~reasongym.verifiers.math.parser.parse_answer` would read the same texts, and
:func:`~reasongym.verifiers.math.equivalence.answers_equal` compare the same pairs, again and again. The
trees are frozen dataclasses, so no caller can change what the next one gets. Every cache is bounded:

- :func:`gold_tree`: a dataset's golds are a fixed set of short texts, so every length is remembered (the
  last 8192 golds);
- :func:`answer_tree`: answers are whatever a model writes, so only those of at most 100 characters are
  remembered (every answer of the benchmark corpus is shorter; such a tree holds at most about 16 KB, so
  the last 4096 of them hold at most about 70 MB, usually under 2 MB); longer ones are parsed every time;
- :func:`settled_match`: the comparison of a gold and an answer of at most 100 characters each (the last
  4096 pairs), only when it did not ask sympy. Without sympy a comparison is a function of the two texts
  alone (the numeric tests use fixed points); sympy's answer depended on the time left, so neither it nor
  a timeout is ever kept, and a later call with more time asks again.

A rejection is remembered as a fresh exception with the same reason (the raised one keeps its frames
alive), except the refusal at Python's recursion limit: where the stack runs out depends on the caller's
depth, not on the text. A RecursionError propagates, as from ``parse_answer``.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable

from reasongym.verifiers.math.equivalence import answers_equal
from reasongym.verifiers.math.nodes import AnswerRejected, Node
from reasongym.verifiers.math.numeric import Match, SymbolicCheck
from reasongym.verifiers.math.parser import parse_answer

__all__ = ["answer_tree", "gold_tree", "settled_match"]

_CACHED_GOLDS = 8192
_CACHED_ANSWERS = 4096
_CACHED_ANSWER_CHARS = 100
_CACHED_MATCHES = 4096


def _tree_or_rejection(text: str) -> Node | AnswerRejected:
    """:func:`parse_answer`'s tree, or the rejection it raised; the refusal at Python's recursion limit is raised."""
    try:
        return parse_answer(text)
    except AnswerRejected as error:
        if isinstance(error.__context__, RecursionError):
            raise  # the stack ran out at this caller's depth: a fact about the call, not the text; never cached
        return type(error)(error.reason)  # the raised one keeps its frames alive


_gold_trees = functools.lru_cache(maxsize=_CACHED_GOLDS)(_tree_or_rejection)
_answer_trees = functools.lru_cache(maxsize=_CACHED_ANSWERS)(_tree_or_rejection)


def _remembered(parse: Callable[[str], Node | AnswerRejected], text: str) -> Node | AnswerRejected:
    try:
        return parse(text)
    except AnswerRejected as error:  # only the refusal at the recursion limit, which no cache keeps
        return error


def gold_tree(gold: str) -> Node | AnswerRejected:
    """The tree of a gold, or the rejection its parse raised; every gold is remembered."""
    return _remembered(_gold_trees, gold)


def answer_tree(answer: str) -> Node | AnswerRejected:
    """The tree of a model's answer, or the rejection its parse raised; short answers are remembered."""
    if len(answer) > _CACHED_ANSWER_CHARS:
        return _remembered(_tree_or_rejection, answer)
    return _remembered(_answer_trees, answer)


_matches: OrderedDict[tuple[str, str], Match] = OrderedDict()
_matches_lock = threading.Lock()  # graders may run in threads; an OrderedDict's moves are not atomic


def settled_match(gold: str, answer: str, trees: tuple[Node, Node], timeout: float) -> Match:
    """``answers_equal`` of the two trees (the gold's first), remembered for short texts when sympy was not asked.

    Raises:
        VerifierTimeout: The sympy steps ran past ``timeout`` (nothing is remembered).
        Refused: The comparison is too costly (nothing is remembered).
    """
    key = (gold, answer)
    with _matches_lock:
        match = _matches.get(key)
        if match is not None:
            _matches.move_to_end(key)
            return match
    symbolic = SymbolicCheck(timeout)
    match = answers_equal(*trees, symbolic=symbolic)
    if not symbolic.asked and len(gold) <= _CACHED_ANSWER_CHARS and len(answer) <= _CACHED_ANSWER_CHARS:
        with _matches_lock:
            _matches[key] = match
            if len(_matches) > _CACHED_MATCHES:
                _matches.popitem(last=False)
    return match
