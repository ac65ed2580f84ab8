"""normalize_unicode: every Unicode spelling of math maps to one ASCII/LaTeX spelling."""

from __future__ import annotations

import time

import pytest

from reasongym.verifiers.text import normalize_unicode

CASES = [
    # minus signs and dashes that mean minus
    ("\u22125", "-5"),
    ("x \u2010 1", "x - 1"),
    # full-width digits and letters (NFKC)
    ("\uff11\uff12\uff13", "123"),
    ("\uff58", "x"),
    # invisible characters are dropped
    ("1\u200b2", "12"),
    ("\ufeff42", "42"),
    ("x\u00ady", "xy"),
    ("a\u2060b", "ab"),
    # control characters become spaces, so they never glue digits together
    ("1\x002", "1 2"),
    ("7\x07", "7 "),
    # Unicode spaces become plain spaces; line breaks stay
    ("1\u00a0000", "1000"),  # issue 50: a no-break or thin space between digit groups is a thousands mark
    ("a\u00a0b 1\u00a012", "a b 1 12"),  # elsewhere it is a space
    ("a\u2009b", "a b"),
    ("a\u3000b", "a b"),
    ("a\nb\tc", "a\nb\tc"),
    ("a\u2028b", "a\nb"),
    # superscripts and subscripts keep their meaning
    ("x\u00b2", "x^{2}"),
    ("x\u00b3", "x^{3}"),
    ("10\u207b\u00b3", "10^{-3}"),
    ("x\u2081\u2082", "x_{12}"),
    # vulgar fractions (a mixed number stays a mixed number)
    ("\u00bd", "\\frac{1}{2}"),
    ("3\u00bd", "3\\frac{1}{2}"),
    ("\u00be", "\\frac{3}{4}"),
    # symbols become LaTeX commands
    ("\u221a2", "\\sqrt{2}"),
    ("\u221a16", "\\sqrt{16}"),  # the root of 16, not the root of 1 times 6
    ("\u221b8", "\\sqrt[3]{8}"),
    ("\u221ax", "\\sqrt x"),
    ("2\u03c0", "2\\pi "),
    ("\u03c0r", "\\pi r"),
    ("x \u2264 3", "x \\le  3"),
    ("x \u2265 3", "x \\ge  3"),
    ("x \u2260 3", "x \\ne  3"),
    ("2 \u00d7 3", "2 \\times  3"),
    ("6 \u00f7 3", "6 \\div  3"),
    ("2\u00b73", "2\\cdot 3"),
    ("30\u00b0", "30^\\circ "),
    ("\u00b13", "\\pm 3"),
    ("\u221e", "\\infty "),
    ("A \u222a B", "A \\cup  B"),
    ("\u03b8", "\\theta "),
    # ASCII passes through untouched
    ("\\frac{1}{2}", "\\frac{1}{2}"),
    ("", ""),
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_normalize_unicode(raw: str, expected: str) -> None:
    assert normalize_unicode(raw) == expected


def test_ascii_is_a_fixed_point() -> None:
    text = "x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}, 1,000 (3, 4]"
    assert normalize_unicode(text) == text
    assert normalize_unicode(normalize_unicode("3\u00bd \u2212 \u221a2")) == normalize_unicode(
        "3\u00bd \u2212 \u221a2"
    )


def test_a_megabyte_is_linear_time() -> None:
    text = "\u00bdx\u00b2 \u2212 \u03c0\u200b" * 150_000
    start = time.perf_counter()
    out = normalize_unicode(text)
    assert time.perf_counter() - start < 5.0  # loose bound; it takes ~0.3 s
    assert out.isascii()
    assert out.count("\\frac{1}{2}") == 150_000
