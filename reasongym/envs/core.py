r"""The single-turn reasoning environment every built-in and user-registered task runs in.

One episode is one problem: :meth:`ReasoningEnv.reset` shows the prompt, :meth:`ReasoningEnv.step` takes
the model's whole completion, grades it with :func:`reasongym.verifiers.verify` and ends the episode.
Problem choice is a pure function of the reset seed (through ``self.np_random``), so the same seed shows
the same problem in any process.

Why this file is long: it is one idea, the episode (its options, the prompt, reset, step, and the grading
and reward of a completion, with what a regrade needs recorded); splitting it would separate reset from
the step that reads what reset kept.

Example:
    >>> import reasongym
    >>> env = reasongym.make("reasongym/Arithmetic-v0")  # doctest: +SKIP
    >>> prompt, info = env.reset(seed=0)  # doctest: +SKIP
    >>> _, reward, terminated, _, info = env.step(r"The final answer is \boxed{85}.")  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import difflib
import math
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import gymnasium
import numpy as np

from reasongym.envs.problem import Problem
from reasongym.envs.reward import terms_of, weighted_sum
from reasongym.envs.sources import ProblemSource, resolve_source
from reasongym.envs.spaces import TextSpace
from reasongym.errors import ConfigError
from reasongym.verifiers import Verdict, extract_boxed, verify, verify_many
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, check_timeout
from reasongym.verifiers.judge import JudgeConfig, fallback_verdicts, judge_verdicts
from reasongym.verifiers.tolerance import TOLERANCES

# What the model is told to do, per answer type; the checker writes gold answers in the same shape.
INSTRUCTIONS: dict[str, str] = {
    "math": "Reason step by step, and put your final answer within \\boxed{}.",
    "integer": "Reason step by step, and put your final answer, an integer, within \\boxed{}.",
    "choice": 'Reason step by step, then end with "The answer is (X)", where X is the letter of the correct option.',
    "exact": "Reason step by step, and put your final answer within \\boxed{}.",
    "yesno": 'Reason step by step, then end with "The answer is yes" or "The answer is no".',
    "countdown": (
        "Reason step by step, then write one expression that uses the given numbers and equals the "
        "target within \\boxed{}, e.g. \\boxed{(3 + 5) * 2}."
    ),
    "task": "Reason step by step, then give only your final answer between <answer> and </answer>.",
}
# A final answer written exactly as INSTRUCTIONS asks; ``{answer}`` is the gold text.
ANSWER_FORMATS: dict[str, str] = {
    "math": "The final answer is \\boxed{{{answer}}}.",
    "integer": "The final answer is \\boxed{{{answer}}}.",
    "choice": "The answer is ({answer}).",
    "exact": "The final answer is \\boxed{{{answer}}}.",
    "yesno": "The answer is {answer}.",
    "countdown": "The final answer is \\boxed{{{answer}}}.",
    "task": "<answer>{answer}</answer>",
}
DEFAULT_TEMPLATE = "{question}{choices}\n\n{instruction}"
_TEMPLATE_FIELDS = frozenset({"question", "choices", "instruction"})
RESET_OPTIONS = ("index", "split", "difficulty", "hint", "include_answer")


# The space's sample() draws from these (printable ASCII): contains() itself accepts any Unicode text.
@dataclass(frozen=True)
class ReasoningEnvConfig:
    """How a :class:`ReasoningEnv` shows problems and rewards completions."""

    split: str | None = None
    """Split that reset uses unless ``options["split"]`` says otherwise; None means the source's default."""
    difficulty: int | None = None
    """Difficulty that reset uses unless ``options["difficulty"]`` says otherwise; None means any/default."""
    prompt_template: str | None = None
    """Template with the fields ``{question}``, ``{choices}``, ``{instruction}``; None means the default."""
    instruction: str | None = None
    """Answer-format instruction shown to the model; None means the one for the problem's answer type."""
    system_prompt: str | None = None
    """Optional system message placed first in ``info["messages"]``."""
    correct_reward: float = 1.0
    """Reward for a correct final answer (a wrong one earns 0.0)."""
    format_reward: float = 0.0
    """Extra reward whenever a final answer could be extracted, right or wrong; 0.0 disables it."""
    length_budget: int | None = None
    """Completion length in characters beyond which ``length_penalty`` applies; None disables shaping."""
    length_penalty: float = 0.0
    """Largest amount subtracted for a completion longer than ``length_budget`` (non-negative)."""
    length_buffer: int = 0
    """Characters over the budget across which the penalty grows linearly to ``length_penalty``; 0 = a step."""
    last_number_fallback: bool = True
    """Whether the math verifier may take the last number when no marked final answer is found."""
    verify_timeout: float = VERIFY_TIMEOUT_S
    """Seconds one verdict's symbolic work may take; past it the verdict is ``timeout``, ungradable
    (``correct`` None, reward 0: no correctness reward, and never counted as a wrong answer)."""
    tolerance: str = "exact"
    """How far a math answer may be rounded from its gold (:mod:`reasongym.verifiers.tolerance`): "exact" for
    training rewards; "shown" or "relative" to evaluate against a set whose annotators rounded. Recorded
    with each verdict ("math/v6+shown"); other kinds always compare exactly."""
    judge: JudgeConfig | None = None
    """Grade with a served model judge (``reasongym.verifiers.judge``) instead of the rules: for answers no
    rule can grade. Never the default; its failures give ungradable verdicts (reward 0, ``correct`` None).
    With ``JudgeConfig(fallback=True)`` the rules grade first and the judge is asked only about their
    rejections, never overturning an accept (its failures then leave the rule's verdict)."""

    def __post_init__(self) -> None:
        """Validate every field; raise ConfigError naming the field, the value and what is allowed."""
        for name in ("correct_reward", "format_reward", "length_penalty"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigError(f"ReasoningEnvConfig.{name} must be a finite number, got {value!r}")
        if self.length_penalty < 0:
            raise ConfigError(f"ReasoningEnvConfig.length_penalty must be >= 0, got {self.length_penalty!r}")
        check_timeout("ReasoningEnvConfig.verify_timeout", self.verify_timeout)
        if self.tolerance not in TOLERANCES:
            raise ConfigError(
                f"ReasoningEnvConfig.tolerance must be one of {', '.join(TOLERANCES)}, got {self.tolerance!r}"
            )
        for name in ("length_budget", "length_buffer"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ConfigError(f"ReasoningEnvConfig.{name} must be a non-negative int, got {value!r}")
        if self.difficulty is not None and (
            isinstance(self.difficulty, bool) or not isinstance(self.difficulty, int)
        ):
            raise ConfigError(
                f"ReasoningEnvConfig.difficulty must be an int or None, got {self.difficulty!r}"
            )
        if self.prompt_template is not None:
            _check_template(self.prompt_template)
        if self.judge is not None and not isinstance(self.judge, JudgeConfig):
            raise ConfigError(
                f"ReasoningEnvConfig.judge must be a JudgeConfig or None, got {self.judge!r:.80}"
            )

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ReasoningEnvConfig:
        """Build a config from keyword options, naming the nearest field for an unknown key."""
        known = [f.name for f in fields(cls)]
        for key in options:
            if key not in known:
                raise ConfigError(
                    f"unknown ReasoningEnv option {key!r}{_did_you_mean(key, known)}; allowed: {known}"
                )
        return cls(**options)


def _did_you_mean(word: str, candidates: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_template(template: str) -> None:
    try:
        parts = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template)]
    except ValueError as exc:
        raise ConfigError(f"ReasoningEnvConfig.prompt_template is not a valid format string: {exc}") from exc
    names = {name for name, _, _ in parts if name is not None}
    for name, spec, conversion in parts:
        if spec or conversion:  # "{question:>999999999}" would build a gigabyte prompt
            field = f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            raise ConfigError(
                f"ReasoningEnvConfig.prompt_template field {field[:60]!r} has a format spec or conversion; "
                f"fields are inserted as they are, write {{{name}}}"
            )
    unknown = names - _TEMPLATE_FIELDS
    if unknown or "question" not in names:
        raise ConfigError(
            f"ReasoningEnvConfig.prompt_template must contain {{question}} and may use only "
            f"{sorted(_TEMPLATE_FIELDS)}; it uses {sorted(names)}"
        )


def format_final_answer(answer_type: str, answer: str) -> str:
    r"""``answer`` written as the default instruction for ``answer_type`` asks (e.g. ``\boxed{42}``)."""
    return ANSWER_FORMATS.get(answer_type, ANSWER_FORMATS["math"]).format(answer=answer)


def gold_answer_text(problem: Problem) -> str:
    """The text a correct completion puts in its final answer.

    For most types that is ``problem.answer``; a Countdown gold encodes the puzzle, so the reference
    expression comes from ``metadata["reference"]`` (or ``"expression"``), else the solution's last box.
    """
    if problem.answer_type != "countdown":
        return problem.answer
    for key in ("reference", "expression"):
        expression = problem.metadata.get(key)
        if isinstance(expression, str) and expression:
            return expression
    boxed = extract_boxed(problem.solution) if problem.solution else None
    return boxed if boxed else problem.answer


class ReasoningEnv(gymnasium.Env[str, str]):
    r"""A single-turn text environment: the observation is a prompt, the action is the whole completion.

    Args:
        source: Where problems come from: a ProblemSource, a ``"module:function"`` string or a callable
            returning one (called with ``source_kwargs``).
        source_kwargs: Keyword arguments for the source function.
        config: A ready :class:`ReasoningEnvConfig`; ``options`` override its fields.
        render_mode: None or ``"ansi"`` (``render`` returns the prompt and the last grade as text).
        **options: Fields of :class:`ReasoningEnvConfig` (``split``, ``format_reward``, ...).

    Raises:
        ConfigError: An option is unknown or invalid, or the source cannot be built.

    Example:
        >>> from reasongym.envs.problem import Problem
        >>> from reasongym.envs.sources import DatasetSource
        >>> rows = [Problem("What is 6 times 7?", "42", id="p0")]
        >>> env = ReasoningEnv(DatasetSource.from_problems("demo", "math", {"test": rows}))
        >>> prompt, info = env.reset(seed=0)
        >>> env.step(r"6 * 7 = 42, so the final answer is \boxed{42}.")[1]
        1.0
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        source: ProblemSource | str | Callable[..., ProblemSource],
        source_kwargs: Mapping[str, Any] | None = None,
        *,
        config: ReasoningEnvConfig | None = None,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        """Build the environment; see the class docstring for the arguments."""
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode {render_mode!r} is not supported; allowed: None, 'ansi'")
        if isinstance(source_kwargs, ReasoningEnvConfig):  # ReasoningEnv(source, ReasoningEnvConfig(...))
            raise ConfigError("a ReasoningEnvConfig is passed by keyword: ReasoningEnv(source, config=...)")
        base = config if config is not None else ReasoningEnvConfig()
        merged = {f.name: getattr(base, f.name) for f in fields(ReasoningEnvConfig)}
        merged.update(options)
        self.config = ReasoningEnvConfig.from_options(merged)
        self.source = resolve_source(source, **dict(source_kwargs or {}))
        known_splits = (*self.source.splits(), *getattr(self.source, "split_aliases", ()))
        if self.config.split is not None and self.config.split not in known_splits:
            raise ConfigError(
                f"split {self.config.split!r} is not a split of {self.source.name!r}; "
                f"splits: {list(self.source.splits())}{_did_you_mean(self.config.split, self.source.splits())}"
            )
        self.render_mode = render_mode
        self.observation_space = TextSpace(1_000_000)
        self.action_space = TextSpace(100_000)
        self._problem: Problem | None = None
        self._prompt = ""
        self._last_info: dict[str, Any] | None = None
        self._episode_open = False
        self._replay: dict[str, Any] = {}

    @property
    def problem(self) -> Problem:
        """The problem of the current episode.

        Raises:
            gymnasium.error.ResetNeeded: No episode has started yet.
        """
        if self._problem is None:
            raise gymnasium.error.ResetNeeded("no problem yet: call env.reset() first")
        return self._problem

    def problem_at(self, index: int, split: str | None = None, difficulty: int | None = None) -> Problem:
        """Problem ``index`` of ``split`` (default: the configured split) at ``difficulty``."""
        split = split or self.config.split or self.source.default_split
        level = self.config.difficulty if difficulty is None else difficulty
        return self.source.problem(split, index, level)

    def prompt(self, problem: Problem, *, hint: bool = False) -> str:
        """The user-facing prompt for ``problem``; with ``hint`` the gold answer is shown (STaR rationalization)."""
        choices = "".join(f"\n({label}) {text}" for label, text in problem.choices)
        instruction = self.config.instruction or INSTRUCTIONS.get(problem.answer_type, INSTRUCTIONS["math"])
        text = (self.config.prompt_template or DEFAULT_TEMPLATE).format(
            question=problem.question,
            choices=f"\n\nOptions:{choices}" if choices else "",
            instruction=instruction,
        )
        if hint:
            text += (
                f"\n\nHint: the correct final answer is {gold_answer_text(problem)}. "
                "Explain step by step how to reach it, and end in the format asked for above."
            )
        return text

    def messages(self, problem: Problem, *, hint: bool = False) -> list[dict[str, str]]:
        """The prompt as chat messages: an optional system message, then the user message."""
        chat = [{"role": "system", "content": self.config.system_prompt}] if self.config.system_prompt else []
        return [*chat, {"role": "user", "content": self.prompt(problem, hint=hint)}]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on one problem.

        Args:
            seed: Seeds ``self.np_random``, which picks the problem index unless ``options["index"]`` does.
            options: ``index``, ``split``, ``difficulty``, ``hint`` (show the gold answer in the prompt),
                ``include_answer`` (put the gold answer in ``info["answer"]``).

        Returns:
            The prompt and an info dict (problem_id, index, split, difficulty, answer_type, metadata, hinted,
            messages, and answer when asked for).

        Raises:
            ConfigError: An option key is unknown or a value is invalid for the source.
        """
        super().reset(seed=seed)
        options = dict(options or {})
        for key in options:
            if key not in RESET_OPTIONS:
                raise ConfigError(
                    f"unknown reset option {key!r}{_did_you_mean(key, RESET_OPTIONS)}; allowed: {list(RESET_OPTIONS)}"
                )
        split = options.get("split") or self.config.split or self.source.default_split
        difficulty = options.get("difficulty", self.config.difficulty)
        index = options.get("index")
        if index is None:
            size = self.source.size(split, difficulty)
            # An infinite (procedural) stream is indexed by any non-negative int; 2**31 keeps ids short.
            index = int(self.np_random.integers(0, size if size is not None else 2**31))
        elif isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise ConfigError(f"reset option 'index' must be a non-negative int, got {index!r}")
        problem = self.source.problem(split, int(index), difficulty)
        hinted = bool(options.get("hint", False))
        self._problem, self._episode_open, self._last_info = problem, True, None
        self._replay = {
            "env_id": self.spec.id if self.spec is not None else None,
            "split": split,
            "index": int(index),
            "difficulty": difficulty,
            "seed": getattr(self.source, "seed", None),
            "problem_id": problem.id,
        }
        self._prompt = self.prompt(problem, hint=hinted)
        info: dict[str, Any] = {
            "problem_id": problem.id,
            "index": int(index),
            "split": split,
            "difficulty": problem.difficulty,
            "answer_type": problem.answer_type,
            "metadata": copy.deepcopy(problem.metadata),
            "hinted": hinted,
            "messages": self.messages(problem, hint=hinted),
        }
        if options.get("include_answer", False):
            info["answer"] = problem.answer
        return self._prompt, info

    def score(self, problem: Problem, completion: str) -> Verdict:
        """Grade ``completion`` against ``problem``'s gold answer with the configured verifier options."""
        judge = self.config.judge
        if judge is not None and not judge.fallback:
            return judge_verdicts(judge, problem.question, problem.answer, [completion])[0]
        verdict = verify(
            completion,
            problem.answer,
            problem.answer_type,
            choices=problem.choices or None,
            last_number_fallback=self.config.last_number_fallback,
            timeout=self.config.verify_timeout,
            tolerance=self._tolerance(problem),
        )
        if judge is None:
            return verdict
        return fallback_verdicts(judge, problem.question, problem.answer, [completion], [verdict])[0]

    def score_many(self, problem: Problem, completions: Sequence[str]) -> list[Verdict]:
        """Grade several completions of ``problem`` as :meth:`score` would, each distinct answer once."""
        judge = self.config.judge
        if judge is not None and not judge.fallback:
            return judge_verdicts(judge, problem.question, problem.answer, completions)
        verdicts = verify_many(
            list(completions),
            problem.answer,
            problem.answer_type,
            choices=problem.choices or None,
            last_number_fallback=self.config.last_number_fallback,
            timeout=self.config.verify_timeout,
            tolerance=self._tolerance(problem),
        )
        if judge is None:
            return verdicts
        return fallback_verdicts(judge, problem.question, problem.answer, completions, verdicts)

    def _tolerance(self, problem: Problem) -> str:
        """The configured rounding policy where ``problem``'s answers are math, else "exact"."""
        return self.config.tolerance if problem.answer_type == "math" else "exact"

    def verifier_version(self, problem: Problem) -> str:
        """The version of the rules that grade ``problem`` (recorded with every verdict, for regrading)."""
        from reasongym.verifiers.version import verifier_version

        judge, rules = self.config.judge, verifier_version(problem.answer_type, self._tolerance(problem))
        if judge is None:
            return rules
        return f"{rules}+{judge.version}" if judge.fallback else judge.version

    def reward_terms(self, verdict: Verdict, completion: str) -> dict[str, float]:
        """The unweighted value of each term of the reward for a graded completion.

        The terms are `reasongym.envs.reward`'s: ``correctness``, and ``format`` and ``length`` where the
        config asks for them; ``step`` reports them in ``info["reward_terms"]``.
        """
        return {term.name: term.value(verdict, completion) for term in terms_of(self.config)}

    def compute_reward(self, verdict: Verdict, completion: str) -> float:
        """The reward for a graded completion: its terms (`reward_terms`), each times its weight, summed."""
        return weighted_sum(terms_of(self.config), self.reward_terms(verdict, completion))

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Grade the completion ``action`` and end the episode.

        Any string is a valid action: one without a readable final answer is simply wrong.

        Returns:
            ``("", reward, True, False, info)`` with info keys problem_id, outcome, extracted, correct, reason,
            reward_terms (each term's unweighted value: `reward_terms`), verifier (the version of the grading
            rules) and replay (env_id, split, index, difficulty, seed and problem_id: what ``reasongym
            regrade`` needs to grade the completion again).

        Raises:
            TypeError: ``action`` is not a string.
            gymnasium.error.ResetNeeded: No episode is open (call ``reset`` first).
        """
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the model's completion), got {type(action).__name__}")
        if not self._episode_open or self._problem is None:
            raise gymnasium.error.ResetNeeded(
                "the episode is over or has not started: call env.reset() first"
            )
        verdict = self.score(self._problem, action)
        self._episode_open = False
        info = {
            "problem_id": self._problem.id,
            "outcome": verdict.outcome.value,
            "extracted": verdict.extracted,
            "correct": verdict.correct,
            "reason": verdict.reason,
            "reward_terms": self.reward_terms(verdict, action),
            "verifier": self.verifier_version(self._problem),
            "replay": dict(self._replay),
        }
        self._last_info = dict(info)
        return "", self.compute_reward(verdict, action), True, False, info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the current prompt and the last grade as text; else None."""
        if self.render_mode != "ansi":
            return None
        graded = f"\n[graded: {self._last_info['outcome']}]" if self._last_info else ""
        return self._prompt + graded
