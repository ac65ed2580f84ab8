"""The registry of answer kinds: every list of kinds derives from it, and a new kind is one registration.

``verify(kind=...)`` (:mod:`~reasongym.verifiers.api`), its ``KINDS``, the environments' answer types
(:mod:`reasongym.envs.problem`) and the declared rule versions (:mod:`~reasongym.verifiers.version`) all
read this registry. A kind is a name, the version of its rules, a one-line description and a factory that
makes the kind's grader from the validated options::

    @register_kind("palindrome", version=1, description="the answer reads the same backwards")
    def _palindrome(options: KindOptions) -> Grader:
        return lambda completion, gold: ...  # a Verdict, never an exception

The built-in kinds are registered below, in the order ``KINDS`` lists them. Their factories import the
kind's module on first use, so that importing this registry stays light.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reasongym.errors import ConfigError
from reasongym.verifiers.base import Verdict

__all__ = ["Grader", "Kind", "KindOptions", "get_kind", "kind_names", "register_kind", "unregister_kind"]

Grader = Callable[[str, str], Verdict]
"""``grade(completion, gold) -> Verdict``: the grader of one kind, options bound."""


@dataclass(frozen=True)
class KindOptions:
    """The options of ``verify``, validated once, for a kind's factory.

    Attributes:
        timeout: Seconds allowed for the symbolic work of one call.
        last_number_fallback: Read plain claims (a last sentence, line, verdict word or number) when there is
            no box, tag or answer phrase.
        choices: The options of a multiple-choice question, in any form ``choices`` accepts, or None.
        tolerance: The rounding policy (:mod:`~reasongym.verifiers.tolerance`); only kind ``math`` rounds.
    """

    timeout: float
    last_number_fallback: bool
    choices: Any = None
    tolerance: str = "exact"


@dataclass(frozen=True)
class Kind:
    """One answer kind.

    Attributes:
        name: What ``verify(kind=...)`` and an environment's ``answer_type`` call it.
        version: The declared version of its rules, recorded with every verdict (raise it whenever a verdict
            of the kind changes; :mod:`~reasongym.verifiers.version` keeps the history).
        description: One line for people choosing a kind.
        make_grader: Makes the kind's grader from the validated options.
        takes_choices: Whether the kind reads ``choices`` (only ``choice`` among the built-ins).
    """

    name: str
    version: int
    description: str
    make_grader: Callable[[KindOptions], Grader]
    takes_choices: bool = False


_REGISTRY: dict[str, Kind] = {}


def register_kind(
    name: str, *, version: int, description: str, takes_choices: bool = False
) -> Callable[[Callable[[KindOptions], Grader]], Callable[[KindOptions], Grader]]:
    """Register the decorated grader factory as the answer kind ``name``.

    Args:
        name: The kind's name, not yet registered.
        version: The version of its rules (a positive int).
        description: One line.
        takes_choices: Whether ``verify`` passes it ``choices``.

    Returns:
        The decorator; it returns the factory unchanged.

    Raises:
        ConfigError: For an empty or taken name, or a version that is not a positive int.
    """
    if not isinstance(name, str) or not name or not name.isidentifier():
        raise ConfigError(f"kind name {name!r} must be a non-empty identifier, such as 'math' or 'my_kind'")
    if name in _REGISTRY:
        raise ConfigError(
            f"kind {name!r} is already registered; unregister_kind({name!r}) first to replace it"
        )
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ConfigError(f"kind {name!r}: version must be a positive int, got {version!r}")

    def decorate(factory: Callable[[KindOptions], Grader]) -> Callable[[KindOptions], Grader]:
        _REGISTRY[name] = Kind(name, version, description, factory, takes_choices)
        return factory

    return decorate


def unregister_kind(name: str) -> None:
    """Remove a registered kind (a user's, to replace it); unknown names raise ConfigError."""
    get_kind(name)
    del _REGISTRY[name]


def kind_names() -> tuple[str, ...]:
    """Every registered kind's name, in registration order."""
    return tuple(_REGISTRY)


def get_kind(name: object) -> Kind:
    """The registered kind ``name``.

    Raises:
        ConfigError: For an unknown kind, listing the valid ones and the nearest.
    """
    kind = _REGISTRY.get(name) if isinstance(name, str) else None
    if kind is None:
        names = kind_names()
        close = difflib.get_close_matches(str(name), names, n=1)
        nearest = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"kind={name!r} is not a verifier kind; valid kinds: {', '.join(names)}{nearest}")
    return kind


@register_kind("math", version=6, description="a math answer, compared exactly, numerically, then with sympy")
def _math(options: KindOptions) -> Grader:
    from reasongym.verifiers.math_answers import math_grader

    return math_grader(options.timeout, options.last_number_fallback, options.tolerance)


@register_kind("integer", version=4, description="an AIME-style integer in 0-999")
def _integer(options: KindOptions) -> Grader:
    from reasongym.verifiers.integer import verify_integer

    fallback = options.last_number_fallback
    return lambda completion, gold: verify_integer(completion, gold, last_number_fallback=fallback)


@register_kind(
    "choice", version=5, description="a multiple-choice label (or its option's text)", takes_choices=True
)
def _choice(options: KindOptions) -> Grader:
    from reasongym.verifiers.choice import make_choice_set, verify_choice

    choice_set, fallback = make_choice_set(options.choices), options.last_number_fallback
    return lambda completion, gold: verify_choice(completion, gold, choice_set, fallback=fallback)


@register_kind("exact", version=4, description="a string, compared after normalisation (no substring credit)")
def _exact(options: KindOptions) -> Grader:
    from reasongym.verifiers.exact import verify_exact

    return verify_exact


@register_kind("yesno", version=6, description="yes or no (true or false), in many languages")
def _yesno(options: KindOptions) -> Grader:
    from reasongym.verifiers.yesno import verify_yesno

    fallback = options.last_number_fallback
    return lambda completion, gold: verify_yesno(completion, gold, fallback=fallback)


@register_kind("countdown", version=3, description="an arithmetic expression that reaches a target")
def _countdown(options: KindOptions) -> Grader:
    from reasongym.verifiers.countdown import verify_countdown

    return verify_countdown
