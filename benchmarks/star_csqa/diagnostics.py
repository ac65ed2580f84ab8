"""What the kept rationales and the answers say: options named, lucky guesses, letters picked."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np

from reasongym.agents.rationales import rationale_without_answer


def named_options(text: str, choices: Any) -> list[tuple[int, str]]:
    """Where ``text`` names an option: ``(position, letter)`` of each "(X)", "option X", "choice X" and each
    option text (whole words, any case), in order."""
    found = []
    for label, option in choices:
        letter = rf"\({label}\)|\b(?:option|choice|answer) \(?{label}\b"
        for match in re.finditer(letter, text):
            found.append((match.start(), label))
        for match in re.finditer(rf"\b{re.escape(option.strip(' .'))}\b", text, flags=re.IGNORECASE):
            found.append((match.start(), label))
    return sorted(found)


def lucky_guess(text: str, problem: Any, final: str | None) -> dict[str, bool]:
    """Whether a rationale's reasoning disagrees with its final letter ``final``.

    The rationale is the text before its final answer (`rationale_without_answer`). ``names_other``: it names
    an option other than ``final`` anywhere (dismissing one counts too); ``last_named_other``: the last option
    it names is not ``final`` (the reasoning points elsewhere, then the answer changes: a lucky guess when the
    answer is right); ``names_none``: it names no option at all (nothing ties the reasoning to the letter).
    """
    rationale = rationale_without_answer(text) or ""
    named = named_options(rationale, problem.choices)
    return {
        "names_other": any(letter != final for _, letter in named),
        "last_named_other": bool(named) and named[-1][1] != final,
        "names_none": not named,
    }


def picked_letter(verdict: Any) -> str | None:
    """The option letter a verdict says was picked; None when the answer names no single option: unreadable, or
    contradictory (a label with another option's text: "(C) listen to each other" where D is that text)."""
    match = re.match(r"Picked option ([A-E])\b", verdict.reason)
    return match.group(1) if match else None


def letter_distribution(letters: list[str | None]) -> dict[str, float]:
    """Share of each answer letter (A-E; ``none``: no single letter, `picked_letter`) among ``letters``."""
    counts = Counter(letter or "none" for letter in letters)
    return {key: round(counts[key] / max(1, len(letters)), 4) for key in ("A", "B", "C", "D", "E", "none")}


def kept_diagnostics(env: Any, kept: list[dict[str, Any]]) -> dict[str, Any]:
    """One STaR iteration's kept rationales: how many, and the lucky-guess shares (`lucky_guess`)."""
    flags = []
    for example in kept:
        problem = env.problem_at(example["index"], split="train")
        final = picked_letter(env.score(problem, example["completion"]))
        flags.append(lucky_guess(example["completion"], problem, final))
    record: dict[str, Any] = {"kept": len(kept)}
    for key in ("names_other", "last_named_other", "names_none"):
        record[f"kept_{key}"] = round(float(np.mean([f[key] for f in flags])), 4) if flags else None
    return record
