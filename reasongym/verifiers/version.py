r"""Declared versions of the grading rules, recorded with every verdict so that old records can be regraded.

A verdict depends on the rules of its kind (extraction and comparison). Each kind has a declared version
here, and every evaluation record and training sample stores ``verifier_version(kind)`` beside its
verdicts. ``tests/verifiers/test_version.py`` grades a pinned table of real completions of every kind
(``tests/verifiers/fixtures/pinned_verdicts.jsonl``: gold, completion, and the verdict under each version
where it changed) and fails when a verdict differs from the pinned one: a change of rules that changes
any verdict of the table fails that test until the kind's version here is raised and the table re-pinned
(``python tests/verifiers/test_version.py --repin`` records today's verdicts under the new version). So two
records with the same version were graded by rules that agree on the table, and ``reasongym regrade`` can
tell which records were graded under older rules.

History:

- v1: the rules when versions were declared (issue 26, commit 63ede07).
- v2: issue 23's third round of extraction and grading changes (words revising an answer, the last
  sentence's value, end tokens, bold and italics around an answer, numbers in words, decimals, matrices,
  choice hedges ...). Measured before raising: of 16,578 completions (the verifier tests' calls, the
  independent sets of issue 23, the grader suites, SmolLM2's stored completions), the verdict changed for
  168 math, 26 integer, 11 choice, 14 exact, 14 countdown and 4 yes/no completions, and the tagged
  extraction for 112. Records written between the merge of issue 23 (80f14e4) and this raise say v1
  but were graded under v2 rules; a regrade of them changes no verdict.
- yesno v3: issue 28's negations ("Not yes." claims no; a qualified negation such as "yes, not no" is a
  hedge): 4 pinned yes/no verdicts changed. Its choice-label hedges ("(B) (C) (C)") changed no pinned
  verdict (v2 already graded them wrong), so choice stays v2.
- math v3, choice v3, yesno v4: issues 35 and 36 (the answer a completion commits to). A new question
  written after the answer ends the completion; mentions ("One might think the answer is 12") and
  concessions ("Although, yes, ...") commit to nothing; corrections said without a verb ("Oops, 6.")
  revise; number words that form no one number, and operation words next to a value ("5 doubled"),
  are no value; parenthesized periods of any length; a decimal comma in prose ("1,5"); a reason after
  the value ("8 (since ...)", "x = 4, because ...") is dropped; equal restatements ("1/5 or 20%") are
  one answer; mph/kph/knots are units; choice corrections, phrases in other languages, "..., so B"; yes/no
  in other words and languages ("Nope.", "Certainly not:", "Нет,", "是的。"). Of the verifier tests' rows
  and the 215 cases of ``benchmarks/independent_set_35.jsonl``, 40 math, 11 choice and 29 yes/no
  verdicts changed (each pinned in the table), and 3 rows already pinned ("a resposta é 2,5." for
  2.5 now correct; two rejections that changed from unparseable to wrong).
- math v4, choice v4, yesno v5, exact v3, integer v3: issue 35's fourth round (items 11, 16 and the classes
  of the fresh set D, ``benchmarks/independent_set_35d.jsonl``). Sets and conditions in words ("all real
  numbers except 0", ``\setminus``, ``|x| < 3``, "from 2 to 5 inclusive", "x > 2 and x < 5"); HTML and
  struck-out Markdown dropped before grading (every kind: hence exact and integer); points with semicolons,
  Indian, Swiss and dotted thousands, ``1.2E+05``; ``\textcolor``, ``\underline``, ``\equiv ... \pmod``;
  labelled lines ("In short: 30 km", ``\text{ans} = 12``); a conclusion's last clause; conditions after the
  value ("3, attained at x = 5"); corrections in brackets; a percent of a gold below 1 read as hundredths;
  money and speeds in words; tool-call arguments; nested lists as matrices; ``7! = 5040`` after a phrase;
  ``143_{(5)}``; function values naming the asked quantity; exact ≈ approximate in plain text; choice labels
  after a noun ("Option C"), a numbered list picks nothing, a tempting option before "but"; yes/no words in
  14 more languages and in other English words. Of the verifier tests' rows, the four independent sets and
  the 1,730 stored SmolLM2 completions, 119 rows changed verdict (71 math, 10 choice, 27 yes/no, 1 exact,
  1 integer from the tests; 5 math, 3 choice, 1 yes/no from set D; each pinned in the table), and 1 row
  already pinned ("The answer is not 12; it is 13." for 12: unparseable, now wrong). No verdict of sets A,
  B and C changed, nor of the stored SmolLM2 completions.
- math v5, integer v4, choice v5, exact v4, yesno v6, countdown v3: issue 50, one model of what a completion
  commits to (:mod:`~reasongym.verifiers.pipeline`: segment, claims, commitment, compare) for every kind. New
  turns, template headers and "Next question:" cut the completion; the answer after a think block comes
  before the think block's claims (also plain ones); answer phrases in 17 languages for every kind; a
  revision replaces the answer for every kind (also "Edit:", "Sorry, I meant", "but it is", "Not X but Y", and
  revisions in other languages); a second committed value is a hedge; asides after the answer are no claims;
  mentioned verdict words (quoted, bracketed, reported, after "e.g." or a language's name, list items) are
  no verdicts, and verdict words in other languages must open a sentence; a letter that contradicts the
  option text is refused; units, currencies, multipliers and powers the unit table cannot convert refuse
  the answer; "no solution" only as what a sentence states; exact values for integer golds; implicit
  products of brackets in Countdown; crossed-out candidates dropped. Of the 2,239 pinned rows, 25 changed
  verdict (12 yes/no, 6 countdown, 5 exact, 1 choice, 1 integer: end tokens after a verdict, revisions of
  yes/no and exact answers, "Therefore, 4*6", ``\boxed{5!}`` for 120, a looping model's cut-off last
  phrase); 168 rows of the issue's tests and of ``benchmarks/independent_set_50.jsonl`` whose verdict the
  change moved were added with both verdicts (66 math, 44 yes/no, 36 choice, 11 exact, 8 countdown, 3
  integer). No verdict of the sets A to D changed.
- math v6: issue 55, the golds and answers others write. A gold is read as an answer
  (:mod:`~reasongym.verifiers.golds`: doubled backslashes, JSON control characters, HTML, ``\quad``,
  prose ``\text{}``, named solutions per semicolon, a worked solution's box); a relation solved for the
  same variable, or a named value list against a tuple, is the same answer
  (:mod:`~reasongym.verifiers.math.solved`); "1 000", "1\u2009000", ".4", ``12^{\mathrm{th}}``, "15th Day"
  and unit words after a value read; "$x \geq 5$ is the solution" states its math; a number line before
  ``\end{aligned}`` has answered before a new "Question:". Rounding stays exact unless a policy is named
  (:mod:`~reasongym.verifiers.tolerance`, recorded as ``math/v6+shown``). No pinned verdict and no verdict
  of the sets A to E changed.
"""

from __future__ import annotations

from reasongym.errors import ConfigError
from reasongym.verifiers.kinds import get_kind, kind_names

TAGGED_VERSION = 2
"""The version of the ``<answer>``-tag extraction (:func:`reasongym.verifiers.tagged.extract_tagged_answer`)."""
VERIFIER_VERSIONS: dict[str, int] = {kind: get_kind(kind).version for kind in kind_names()} | {
    "tagged": TAGGED_VERSION
}
"""Kind -> declared version of its rules (from the kind registry); raise one whenever a verdict of its kind changes.

``tagged`` is not a ``verify`` kind: it is the ``<answer>``-tag extraction
(:func:`reasongym.verifiers.tagged.extract_tagged_answer`) that reasoning-gym environments apply before
their task's own scorer, pinned by the extracted answer."""


def verifier_version(kind: str, tolerance: str = "exact") -> str:
    """The version tag of ``kind``'s rules, e.g. ``"math/v6"`` (``"math/v6+shown"`` under a rounding policy); kinds graded elsewhere give ``"<kind>"``.

    Example:
        >>> verifier_version("math")
        'math/v6'
    """
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"kind must be a non-empty str, got {kind!r}")
    version = VERIFIER_VERSIONS.get(kind)
    if version is None and kind in kind_names():
        version = get_kind(kind).version  # a kind registered after import
    tag = kind if version is None else f"{kind}/v{version}"
    return tag if tolerance == "exact" else f"{tag}+{tolerance}"  # a looser rounding policy graded it
