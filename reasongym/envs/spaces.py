"""The observation and action space of reasoning environments: any Unicode text up to a length limit.

Gymnasium's own ``spaces.Text`` builds a charset and checks every character against it; model text can
hold any character, so this subclass accepts every string within the length limit and keeps a small
printable charset only for ``sample``.
"""

from __future__ import annotations

import string
from typing import Any

from gymnasium import spaces

_SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " "


class TextSpace(spaces.Text):
    """A Gymnasium ``Text`` space holding any Unicode string up to ``max_length`` characters.

    Gymnasium's default charset has no spaces or punctuation (it rejects ``"7 × 6"``), and a full-Unicode
    charset costs seconds and hundreds of MB per space; so membership checks only the type and the length,
    and :meth:`sample` draws short strings from printable ASCII.

    Args:
        max_length: The longest string the space holds.
        min_length: The shortest string the space holds.
        sample_max_length: The longest string :meth:`sample` draws (random completions need not be huge).
        seed: Seed of the space's own sampling rng.
    """

    def __init__(
        self,
        max_length: int = 100_000,
        *,
        min_length: int = 0,
        sample_max_length: int = 256,
        seed: int | None = None,
    ) -> None:
        """Build the space; see the class docstring for the arguments."""
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARSET, seed=seed)
        self.sample_max_length = max(min_length, min(int(sample_max_length), self.max_length))

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random printable-ASCII string, by default no longer than ``sample_max_length``."""
        if mask is None and probability is None:
            length = int(self.np_random.integers(self.min_length, self.sample_max_length + 1))
            return "".join(self.np_random.choice(self.character_list, size=length))
        return super().sample(mask=mask, probability=probability)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a string whose length lies within the bounds (any characters)."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        """``TextSpace(min_length, max_length)``."""
        return f"TextSpace({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        """Equal when the length bounds are equal (the sampling charset is not part of the space)."""
        return (
            isinstance(other, TextSpace)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    __hash__ = None  # type: ignore[assignment]  # mutable rng inside, like every Gymnasium space

    @property
    def is_np_flattenable(self) -> bool:
        """Not flattenable: characters outside the sampling charset have no index."""
        return False
