"""Declared versions of the grading rules, recorded with every verdict so that old records can be regraded.

A verdict depends on the rules of its kind (extraction and comparison). Each kind has a declared version
here, and every evaluation record and training sample stores ``verifier_version(kind)`` beside its
verdicts. ``tests/verifiers/test_version.py`` grades a fixed corpus of completions of every kind and
compares a digest of the verdicts with one pinned for the declared version: a change of rules that
changes any verdict of the corpus fails that test until the version here is raised (and the digest
pinned again). So two records with the same version were graded by rules that agree on the corpus, and
``reasongym regrade`` can tell which records were graded under older rules.
"""

from __future__ import annotations

from reasongym.errors import ConfigError

VERIFIER_VERSIONS: dict[str, int] = {
    "math": 1,
    "integer": 1,
    "choice": 1,
    "exact": 1,
    "yesno": 1,
    "countdown": 1,
}
"""Kind -> declared version of its rules; raise one whenever a verdict of its kind changes."""


def verifier_version(kind: str) -> str:
    """The version tag of ``kind``'s rules, e.g. ``"math/v1"``; kinds graded elsewhere give ``"<kind>"``.

    Example:
        >>> verifier_version("math")
        'math/v1'
    """
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"kind must be a non-empty str, got {kind!r}")
    version = VERIFIER_VERSIONS.get(kind)
    return kind if version is None else f"{kind}/v{version}"
