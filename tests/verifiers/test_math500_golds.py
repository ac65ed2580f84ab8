"""Every MATH-500 gold answer must grade as correct against itself and against common rewrites.

Reads ``math500/test.jsonl`` under ``$REASONGYM_DATA_DIR`` (default ``<repo>/../shared/data``) and
skips when it is absent.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from reasongym.verifiers import verify

DATA_DIR = Path(
    os.environ.get("REASONGYM_DATA_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "data"
)
MATH500 = DATA_DIR / "math500" / "test.jsonl"

REWRITES: dict[str, Callable[[str], str]] = {
    "boxed verbatim": lambda g: g,
    "dfrac as frac": lambda g: g.replace("\\dfrac", "\\frac"),
    "frac as dfrac": lambda g: re.sub(r"\\frac(?=[{\d])", r"\\dfrac", g),
    "frac as tfrac": lambda g: g.replace("\\frac", "\\tfrac"),
    "no left/right": lambda g: re.sub(r"\\(?:left|right)(?![A-Za-z])", "", g),
    "in dollars": lambda g: f"${g}$",
    "tight commas and equals": lambda g: re.sub(r"\s*([,=+])\s*", r"\1", g),
    "no thin spaces": lambda g: re.sub(r"\\[!,]\s*", "", g).replace("{,}", ","),  # 11,\\! 111 is 11,111
    "unicode pi": lambda g: g.replace("\\pi", "\u03c0"),
    "times for cdot": lambda g: g.replace("\\cdot", "\\times"),
    "mathrm for text": lambda g: g.replace("\\text{", "\\mathrm{"),
    "degree sign": lambda g: g.replace("^\\circ", "\u00b0"),
    "unit dropped": lambda g: re.sub(r"\\(?:text|mbox)\{\s*[a-z ]+\}$", "", g).strip() or g,
}


def _golds() -> list[str]:
    if not MATH500.is_file():
        pytest.skip(f"MATH-500 data not found at {MATH500} (set REASONGYM_DATA_DIR)")
    with MATH500.open(encoding="utf-8") as lines:
        return [json.loads(line)["answer"] for line in lines if line.strip()]


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_every_gold_accepts_itself_rewritten(rewrite: str) -> None:
    failures = []
    for gold in _golds():
        verdict = verify("\\boxed{" + REWRITES[rewrite](gold) + "}", gold, "math")
        if verdict.correct is not True:
            failures.append((gold, verdict.outcome.value, verdict.reason))
    assert not failures, failures[:10]


def test_every_gold_accepts_itself_after_an_answer_phrase() -> None:
    failures = []
    for gold in _golds():
        verdict = verify(f"So we are done.\nThe final answer is ${gold}$.", gold, "math")
        if verdict.correct is not True:
            failures.append((gold, verdict.outcome.value, verdict.reason))
    assert not failures, failures[:10]
