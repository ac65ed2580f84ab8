"""The reasoning-gym environment: their problems, graded by their scorer or ours (``table`` says which).

Every grader first extracts the final answer with
:func:`~reasongym.verifiers.tagged.extract_tagged_answer` (``<answer>`` tags, else the last box or
answer phrase), except ``countdown``, whose verifier extracts for itself. Then:

- ``task``: ``score_answer(answer, entry)`` of the task, on the item rebuilt from the problem. Correct
  only at a score of 1 (their partial credit, such as 0.01 for a well-formed wrong answer or a share
  for containing the gold, is wrong here, with the score in the reason). An answer longer than
  :data:`MAX_ANSWER_CHARS` is refused unread; a scorer that raises (``prime_factorization`` on "zzz")
  refuses the answer, with the exception named. For the tasks whose scorer calls ``eval`` on an
  answer that failed its exact check, the answer reaches it only when it is plain data
  (:func:`reaches_eval_safely`). Five scorers read only the characters they look for (the gold with
  junk appended scores 1): there the answer must also match the form the question asks for
  (:data:`ANSWER_FORMS`).
A judge (``judge=JudgeConfig(...)``) is refused here, with the reason (``ReasoningGymEnv.__init__``).

- ``math``: reasongym's math verifier against the gold (a tagged answer is graded as written; without
  tags the whole completion goes through :func:`reasongym.verifiers.verify`, boxes and phrases as usual).
- ``exact``: normalised exact match with the gold. ``countdown``: the Countdown verifier.

The scorer calls of ``task`` are not time-boxed (they are plain Python string and list code); the
sympy work of ``math`` is, as everywhere in reasongym.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reasongym.envs.core import ReasoningEnv
from reasongym.envs.problem import Problem
from reasongym.envs.rgym.source import ReasoningGymSource
from reasongym.envs.rgym.table import EVAL_GUARDED
from reasongym.envs.sources import ProblemSource
from reasongym.errors import ConfigError
from reasongym.verifiers import Outcome, Verdict, verify
from reasongym.verifiers.exact import normalize_exact
from reasongym.verifiers.tagged import extract_tagged_answer

INSTRUCTION = (
    "Reason step by step, then give only your final answer between <answer> and </answer>, "
    "in the format the question asks for."
)
MAX_ANSWER_CHARS = 10_000
"""Longer answers are refused without reaching a scorer."""
ADAPTER_VERSION = 1
"""Raised whenever a change here can change a verdict (part of every verdict's verifier version)."""
_REFUSED_METHODS = ("answer_too_long", "too_many_boxes", "box_too_long")
# Scorers that read only the characters they look for, so that the gold with junk appended scores 1
# (found by the conformance checker): their answers must also have the form the question asks for.
ANSWER_FORMS: dict[str, re.Pattern[str]] = {
    "quantum_lock": re.compile(r"[A-C](?:\s*→\s*[A-C])*"),  # it keeps only the letters A-C of any text
    "sokoban": re.compile(r"[UDLR]+"),  # it ignores characters that are not moves
    "kakurasu": re.compile(r"[01](?:[ \t]+[01])*(?:\s*\n\s*[01](?:[ \t]+[01])*)*"),  # it reads "17" as 1
    "knights_knaves": re.compile(r"[^\d]+"),  # it picks names and roles out of any text
    "rush_hour": re.compile(r"[A-Z][+-][1-4](?:\s+[A-Z][+-][1-4])*"),  # a 6-wide board: at most 4 squares
}
_DATA_NODES = (ast.Expression, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Name, ast.Load)


def installed_version() -> str:
    """The installed reasoning-gym release (its generators and scorers decide problems and verdicts)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("reasoning-gym")
    except PackageNotFoundError:
        return "unknown"


def reaches_eval_safely(text: str) -> bool:
    """Whether ``eval(text)`` can do nothing but build data or fail: it does not parse, or it is literals.

    Names are allowed (evaluating a name calls nothing); calls, attributes, operators (``9**9**9``),
    subscripts, lambdas and comprehensions are not.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return True  # eval raises the same SyntaxError before running anything
    return all(isinstance(node, _DATA_NODES) or _is_negative_number(node) for node in ast.walk(tree))


def _is_negative_number(node: ast.AST) -> bool:
    return isinstance(node, (ast.UnaryOp, ast.USub, ast.UAdd)) and (
        not isinstance(node, ast.UnaryOp) or isinstance(node.operand, ast.Constant)
    )


def _score_with_task(dataset: Any, task: str, entry: Mapping[str, Any], answer: str) -> Verdict:
    """Their ``score_answer`` on ``answer``, made strict and safe (module docstring)."""
    if len(answer) > MAX_ANSWER_CHARS:
        reason = f"The answer has {len(answer):,} characters, over {MAX_ANSWER_CHARS:,}."
        return Verdict(False, Outcome.REFUSED, None, reason)
    shown = answer[:1000]
    form = ANSWER_FORMS.get(task)
    if form is not None and form.fullmatch(answer.strip()) is None:
        return Verdict(False, Outcome.WRONG, shown, f"Not in the answer form of {task} (/{form.pattern}/).")
    if task in EVAL_GUARDED and not reaches_eval_safely(answer):
        reason = f"{task}'s score_answer would eval this answer, which is code, not data: refused."
        return Verdict(False, Outcome.REFUSED, shown, reason)
    try:
        score = dataset.score_answer(answer, entry)
    except Exception as exc:  # noqa: BLE001 - their scorer failing on one answer refuses that answer
        return Verdict(False, Outcome.REFUSED, shown, f"{task}'s score_answer raised {type(exc).__name__}.")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return Verdict(
            False, Outcome.REFUSED, shown, f"{task}'s score_answer returned {score!r}, not a number."
        )
    if score >= 1.0:
        return Verdict(True, Outcome.CORRECT, shown, f"{task}'s score_answer gave 1.")
    return Verdict(
        False, Outcome.WRONG, shown, f"{task}'s score_answer gave {score:.3g} (correct only at 1)."
    )


def _score_exact(answer: str, gold: str) -> Verdict:
    if len(answer) > MAX_ANSWER_CHARS:
        return Verdict(False, Outcome.REFUSED, None, f"The answer has {len(answer):,} characters.")
    if normalize_exact(answer) == normalize_exact(gold):
        return Verdict(True, Outcome.CORRECT, answer[:1000], "Matches the gold exactly after normalisation.")
    return Verdict(False, Outcome.WRONG, answer[:1000], "Differs from the gold after normalisation.")


class ReasoningGymEnv(ReasoningEnv):
    """A reasoning-gym task as a reasongym environment (see the module docstring for the grading).

    Made through the registry (``reasongym.make("reasoning_gym/basic_arithmetic-v0")``); takes the
    arguments of :class:`~reasongym.envs.core.ReasoningEnv`, and its source must be a
    :class:`~reasongym.envs.rgym.source.ReasoningGymSource`.
    """

    def __init__(
        self,
        source: ProblemSource | str | Callable[..., ProblemSource],
        source_kwargs: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        """Build the environment; ``options`` are :class:`ReasoningEnvConfig` fields."""
        super().__init__(source, source_kwargs, **options)
        if not isinstance(self.source, ReasoningGymSource):
            raise ConfigError(f"ReasoningGymEnv needs a ReasoningGymSource, got {type(self.source).__name__}")
        if self.config.judge is not None:
            # Refused, not ignored: every task here has a rule that checks its answers exactly (its own
            # scorer or ours), and a judge is for answers no rule can grade. Many of its puzzles (sudoku,
            # n-queens, graph colouring, Rush Hour, Boxnet, word ladders, ...) accept any valid solution,
            # which a judge comparing with one reference answer would call wrong. To study a judge on
            # these tasks, call reasongym.verifiers.judge.JudgeVerifier on their problems directly.
            raise ConfigError(
                f"judge=: reasoning-gym task {self.source.name!r} is graded by rules that check its answers "
                "exactly, and a judge comparing with one reference would reject other valid solutions; "
                "leave judge unset (use reasongym.verifiers.judge.JudgeVerifier directly to study a judge)"
            )
        self.rg_source: ReasoningGymSource = self.source

    def prompt(self, problem: Problem, *, hint: bool = False) -> str:
        """The task's question and the ``<answer>`` instruction (unless the config sets its own)."""
        if self.config.instruction is not None:
            return super().prompt(problem, hint=hint)
        text = f"{problem.question.rstrip()}\n\n{INSTRUCTION}"
        if hint:
            text += (
                f"\n\nHint: one correct final answer is {self._hint_text(problem)}. "
                "Explain step by step how to reach it, and end in the format asked for above."
            )
        return text

    @staticmethod
    def _hint_text(problem: Problem) -> str:
        return str(problem.metadata.get("reference") or problem.answer)

    def score(self, problem: Problem, completion: str) -> Verdict:
        """Grade ``completion`` with the task's grader (module docstring)."""
        if not isinstance(completion, str):
            raise TypeError(f"completion must be a str, got {type(completion).__name__}")
        grader = self.rg_source.grader
        cfg = self.config
        if grader == "countdown":
            return verify(completion, problem.answer, "countdown")
        found = extract_tagged_answer(completion)
        if found.answer is None:
            outcome = Outcome.REFUSED if found.method in _REFUSED_METHODS else Outcome.UNPARSEABLE
            return Verdict(False, outcome, None, found.reason)
        if grader == "math":
            if found.method != "tag":
                return verify(
                    completion, problem.answer, "math", timeout=cfg.verify_timeout, last_number_fallback=False
                )
            from reasongym.verifiers.math.grade import verify_math_answer

            verdict = verify_math_answer(found.answer, problem.answer, timeout=cfg.verify_timeout)
            return Verdict(verdict.correct, verdict.outcome, found.answer[:1000], verdict.reason)
        if grader == "exact":
            return _score_exact(found.answer, problem.answer)
        entry = self.rg_source.entry_of(problem)
        return _score_with_task(
            self.rg_source.dataset(problem.metadata.get("level")), self.rg_source.name, entry, found.answer
        )

    def score_many(self, problem: Problem, completions: Sequence[str]) -> list[Verdict]:
        """Grade several completions of one problem (each distinct text once)."""
        seen: dict[str, Verdict] = {}
        for text in completions:
            if text not in seen:
                seen[text] = self.score(problem, text)
        return [seen[text] for text in completions]

    def verifier_version(self, problem: Problem) -> str:
        """The grader and the versions that decide its verdicts, e.g. ``reasoning_gym/gcd:math/v2+tagged/v2@rg0.1.25+a1``.

        Every grader but ``countdown`` reads the answer with the tagged extraction (its own declared
        version); ``task`` verdicts then depend on reasoning-gym's release, the others on our kind's rules.
        """
        from reasongym.verifiers.version import verifier_version

        grader = self.rg_source.grader
        if grader == "countdown":
            rules = verifier_version("countdown")
        else:
            rules = f"{verifier_version(grader) if grader != 'task' else 'task'}+{verifier_version('tagged')}"
        return f"reasoning_gym/{self.rg_source.name}:{rules}@rg{installed_version()}+a{ADAPTER_VERSION}"
