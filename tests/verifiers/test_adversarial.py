r"""Hostile completions through the public API: code injection, bombs, huge and odd text.

Every case must give a non-correct Verdict (never an exception) within a loose wall bound, for every
kind, and no file may be written. Golds are chosen so that no honest reading of an attack equals
them: only executing it would (``eval('6*7')`` is 42 only to Python).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from reasongym.verifiers import KINDS, Outcome, Verdict, verify, verify_many

BOUND_S = 1.5  # per case; a refusal takes milliseconds, a timed-out sympy step about 1 s
REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDS = {
    "math": "42",
    "integer": "42",
    "choice": "B",
    "exact": "Paris",
    "yesno": "yes",
    "countdown": "target=42; numbers=6,7",
}
DEEP = 20_000

INJECTIONS = {
    "os_system": r"\boxed{__import__('os').system('touch PWNED') or 42}",
    "open_file": r"\boxed{open('/etc/passwd').read()}",
    "lambda": r"\boxed{(lambda: 42)()}",
    "eval": r"The answer is \boxed{eval('6*7')}",
    "exec": "\\boxed{exec(\"open('PWNED','w')\")}",
    "template_dollar": "The answer is ${7*7}",
    "template_braces": "The answer is {{7*7}}",
    "sympy_class": r"\boxed{Symbol('x').__class__}",
    "dunder_subclasses": r"\boxed{().__class__.__bases__[0].__subclasses__()}",
    "sympify_string": r"\boxed{S('6*7')}",
    "getattr": r"\boxed{getattr(__builtins__, 'eval')('6*7')}",
}

BOMBS = {
    "power_tower": r"\boxed{10^{10^{10^{10}}}}",
    "factorial_chain": r"\boxed{9!!!!!!!!}",
    "huge_factorial": r"\boxed{(10^8)!}",
    "huge_binomial": r"\boxed{\binom{10^9}{5\cdot10^8}}",
    "two_tower": r"\boxed{2^{2^{2^{2^{2^{2}}}}}}",
    "deep_braces": r"\boxed{" + "{" * DEEP + "1" + "}" * DEEP + "}",
    "deep_parens": r"\boxed{" + "(" * DEEP + "1" + ")" * DEEP + "}",
    "deep_frac": r"\boxed{" + r"\frac{1}{" * DEEP + "2" + "}" * DEEP + "}",
    "unclosed_deep": r"\boxed{" * DEEP,
    "million_digits": r"\boxed{" + "7" * 1_000_000 + "}",
    "million_digits_bare": "The answer is " + "7" * 1_000_000,
    "near_million_digits": "The answer is " + "7" * 999_000,  # under the size limit: must be read
    "four_thousand_digits": r"\boxed{" + "7" * 4_000 + "}",
    "megabyte_text": "lorem ipsum " * 87_382,  # just over 1 MB
    "near_megabyte_box": "lorem ipsum " * 83_000 + r"\boxed{24}",  # just under: read, not refused
    "null_bytes": "\x00" * 10_000 + "\\boxed{\x00}",
    "null_in_box": "The answer is \x00\x00\x00",
    "lone_surrogates": "\ud800\udfff\udc00 \\boxed{\ud83d}",
    "rtl_override": "The answer is \u202e24",  # renders as "42"; its value is 24
    "rtl_marks_box": "\u200f\\boxed{\u202b24\u202c}\u200f",
}

CASES = {**INJECTIONS, **BOMBS}


@pytest.fixture(autouse=True)
def _empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run in an empty directory and check that it stays empty and no PWNED file appears."""
    watched = [tmp_path, Path.cwd(), REPO_ROOT, Path("/tmp"), Path.home()]
    before = {place: (place / "PWNED").exists() for place in watched}
    monkeypatch.chdir(tmp_path)
    yield
    assert list(tmp_path.iterdir()) == [], "the verifier wrote a file"
    for place in watched:
        assert (place / "PWNED").exists() == before[place], f"PWNED appeared in {place}"


def _check(verdict: Verdict, elapsed: float) -> None:
    assert isinstance(verdict, Verdict)
    assert verdict.correct is not True
    assert verdict.outcome is not Outcome.CORRECT
    assert elapsed < BOUND_S, f"took {elapsed:.2f} s"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(CASES))
def test_attack_is_never_correct_and_bounded(name: str, kind: str) -> None:
    started = time.perf_counter()
    verdict = verify(CASES[name], GOLDS[kind], kind)
    _check(verdict, time.perf_counter() - started)


@pytest.mark.parametrize("kind", KINDS)
def test_verify_many_survives_all_attacks_together(kind: str) -> None:
    completions = [*CASES.values(), r"\boxed{42}"]
    started = time.perf_counter()
    verdicts = verify_many(completions, GOLDS[kind], kind)
    elapsed = time.perf_counter() - started
    assert len(verdicts) == len(completions)
    for verdict in verdicts[:-1]:
        _check(verdict, 0.0)
    assert elapsed < BOUND_S * 4, f"the batch took {elapsed:.2f} s"


def test_math_bombs_are_refused_not_computed() -> None:
    for name in ("power_tower", "factorial_chain", "huge_factorial", "huge_binomial", "two_tower"):
        started = time.perf_counter()
        verdict = verify(BOMBS[name], "42", "math")
        elapsed = time.perf_counter() - started
        assert verdict.outcome is Outcome.REFUSED, (name, verdict)
        assert elapsed < 0.5, (name, elapsed)


def test_environment_is_untouched_by_injections() -> None:
    before = dict(os.environ)
    for completion in INJECTIONS.values():
        verify(completion, "42", "math")
    assert dict(os.environ) == before


def test_slow_symbolic_comparison_times_out_and_the_next_call_works() -> None:
    # Equal, legal, and costly: sympy must expand two products of degree 60 in three variables.
    gold = r"(x+y+z)^{30}(x-y-z)^{30}"
    completion = r"\boxed{(x^2-(y+z)^2)^{30}}"
    # Start the sympy worker first (untimed): sin^2 + cos^2 = 1 needs sympy, and its start-up is
    # not part of the time limit.
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True
    started = time.perf_counter()
    verdict = verify(completion, gold, "math", timeout=0.3)
    elapsed = time.perf_counter() - started
    assert verdict.outcome is Outcome.TIMEOUT, verdict
    assert verdict.correct is False
    assert elapsed < 0.3 + BOUND_S
    assert verify(r"\boxed{\frac{84}{2}}", "42", "math").correct is True
    assert verify(r"\boxed{\sin^2 x + \cos^2 x}", "1", "math").correct is True
