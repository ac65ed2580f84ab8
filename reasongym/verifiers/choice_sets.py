"""The options of a multiple-choice question, from any shape a dataset or a caller gives them in.

Accepted ``choices``: (label, text) pairs; a list of texts (labelled A, B, ...); a label -> text mapping;
the data rows' list of ``{"label": "A", "text": "bank"}`` dicts (the README's CommonsenseQA layout); the
hub's columns ``{"label": ["A", ...], "text": ["bank", ...]}``; or None (labels A-E without texts).
Anything else is a :class:`~reasongym.errors.ConfigError` naming the bad entry. Option texts are compared
casefolded, without punctuation and with whitespace collapsed (:func:`normalize_option_text`).
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reasongym.errors import ConfigError
from reasongym.verifiers.text import normalize_unicode

__all__ = ["ChoiceSet", "Choices", "make_choice_set", "normalize_option_text"]

Choices = Sequence[tuple[str, str]] | Sequence[str] | Sequence[Mapping[str, str]] | Mapping[str, Any] | None
"""Options as (label, text) pairs, a list of texts (labelled A, B, ...), a label->text mapping, the data
rows' list of ``{"label": ..., "text": ...}`` dicts, the hub's ``{"label": [...], "text": [...]}``, or None."""
_PUNCTUATION = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


def normalize_option_text(text: str) -> str:
    """Casefold, drop punctuation, collapse whitespace: how option texts are compared."""
    return _SPACES.sub(" ", _PUNCTUATION.sub(" ", normalize_unicode(text).casefold())).strip()


@dataclass(frozen=True)
class ChoiceSet:
    """The options of one multiple-choice question.

    Attributes:
        labels: Option labels in order ("A", "B", ...).
        texts: Each option's text, normalised for comparison ("" when unknown).
    """

    labels: tuple[str, ...]
    texts: tuple[str, ...]

    @functools.cached_property
    def label_pattern(self) -> re.Pattern[str]:
        """A label at the start of a span, optionally in brackets (case-insensitive; checked after)."""
        names = "|".join(re.escape(label) for label in sorted(self.labels, key=len, reverse=True))
        return re.compile(r"([(\[]?)\s*(" + names + r")(?:\s*([)\]]))?", re.IGNORECASE)

    def canonical(self, written: str) -> str | None:
        """The label spelled ``written`` (any case), or None."""
        folded = written.casefold()
        return next((label for label in self.labels if label.casefold() == folded), None)

    def texts_at_start(self, normalized: str) -> list[int]:
        """Indices of options whose full text starts ``normalized``, longest texts first."""
        hits = [
            index
            for index, text in enumerate(self.texts)
            if text and (normalized == text or normalized.startswith(text + " "))
        ]
        return sorted(hits, key=lambda index: -len(self.texts[index]))

    def same_text(self, index: int) -> tuple[str, ...]:
        """Other labels whose option text equals option ``index``'s text."""
        text = self.texts[index]
        return tuple(label for i, label in enumerate(self.labels) if i != index and self.texts[i] == text)


def _choice_pairs(choices: Choices) -> tuple[tuple[str, str], ...]:
    """Turn any accepted ``choices`` form into (label, text) pairs."""
    if choices is None:
        return tuple((label, "") for label in "ABCDE")
    if isinstance(choices, str):
        raise ConfigError(f"choices must be a sequence or mapping, not the string {choices!r}")
    if not isinstance(choices, Mapping | Sequence):  # a number from a JSON row, say
        raise ConfigError(
            f"choices must be a sequence or mapping, not {choices!r:.60} (of type {type(choices).__name__})"
        )
    if isinstance(choices, Mapping) and set(choices) == {"label", "text"}:
        return _hub_pairs(choices)  # the hub's columns: {"label": ["A", ...], "text": ["bank", ...]}
    if isinstance(choices, Mapping):
        return tuple((str(label), str(text)) for label, text in choices.items())
    pairs = []
    for index, item in enumerate(choices):
        if isinstance(item, str):
            if index >= len(string.ascii_uppercase):
                raise ConfigError(f"choices: {len(choices)} texts given; at most 26 can be labelled A-Z")
            pairs.append((string.ascii_uppercase[index], item))
        elif isinstance(item, tuple | list) and len(item) == 2:
            pairs.append((str(item[0]), str(item[1])))
        elif isinstance(item, Mapping) and set(item) >= {"label", "text"}:
            pairs.append((str(item["label"]), str(item["text"])))  # a data row's {"label": "A", "text": ...}
        else:
            raise ConfigError(
                f"choices[{index}] = {item!r}: expected an option text, a (label, text) pair or a "
                '{"label": ..., "text": ...} dict'
            )
    return tuple(pairs)


def _hub_pairs(choices: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    labels, texts = choices["label"], choices["text"]
    if isinstance(labels, str) or isinstance(texts, str) or not isinstance(labels, Sequence | type(None)):
        raise ConfigError(
            f"choices: 'label' and 'text' must be lists of the same length, got {choices!r:.80}"
        )
    if not isinstance(texts, Sequence) or len(labels) != len(texts):
        raise ConfigError(
            f"choices: 'label' and 'text' must be lists of the same length, got {choices!r:.80}"
        )
    return tuple((str(label), str(text)) for label, text in zip(labels, texts, strict=True))


@functools.lru_cache(maxsize=4096)
def _cached_choice_set(pairs: tuple[tuple[str, str], ...]) -> ChoiceSet:
    labels = tuple(label.strip() for label, _ in pairs)
    if not labels:
        raise ConfigError("choices is empty; give at least one option")
    seen: set[str] = set()
    for label in labels:
        if not label or any(char.isspace() for char in label):
            raise ConfigError(f"choices: label {label!r} must be non-empty and contain no whitespace")
        if label.casefold() in seen:
            raise ConfigError(
                f"choices: label {label!r} appears more than once (labels are case-insensitive)"
            )
        seen.add(label.casefold())
    return ChoiceSet(labels, tuple(normalize_option_text(text) for _, text in pairs))


def make_choice_set(choices: Choices) -> ChoiceSet:
    """Validate ``choices`` and build the :class:`ChoiceSet` used for grading (cached).

    Args:
        choices: (label, text) pairs, a list of texts (labelled A, B, ...), a mapping label->text,
            or None for labels A-E without texts.

    Returns:
        The option set.

    Raises:
        ConfigError: When an entry has the wrong shape, a label is empty or repeated.

    Example:
        >>> make_choice_set(["bank", "library"]).labels
        ('A', 'B')
    """
    return _cached_choice_set(_choice_pairs(choices))
