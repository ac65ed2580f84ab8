"""Parsed answers and golds, remembered: the same texts come back on every sample of a problem.

A gold is graded against every sample of its problem, and the samples of one problem repeat a handful of
answers, so :func:`~reasongym.verifiers.math.parser.parse_answer` would read the same texts again and again.
The trees are frozen dataclasses, so no caller can change what the next one gets. Both caches are bounded:

- :func:`gold_tree`: a dataset's golds are a fixed set of short texts, so every length is remembered (the
  last 8192 golds);
- :func:`answer_tree`: answers are whatever a model writes, so only those of at most 100 characters are
  remembered (every answer of the benchmark corpus is shorter; such a tree holds at most about 16 KB, so
  the last 4096 of them hold at most about 70 MB, usually under 2 MB); longer ones are parsed every time.

A rejection is remembered as a fresh exception with the same reason (the raised one keeps its frames
alive), except the refusal at Python's recursion limit: where the stack runs out depends on the caller's
depth, not on the text. A RecursionError propagates, as from ``parse_answer``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from reasongym.verifiers.math.nodes import AnswerRejected, Node
from reasongym.verifiers.math.parser import parse_answer

__all__ = ["answer_tree", "gold_tree"]

_CACHED_GOLDS = 8192
_CACHED_ANSWERS = 4096
_CACHED_ANSWER_CHARS = 100


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
