"""The shuffled-reward control of the learning benchmarks: the same training, on verdicts that say nothing.

A verifier-only arm (GRPO, DAPO, STaR) is compared with the same arm trained on shuffled verdicts: every
verdict the trainer is handed is replaced by one drawn, with a seeded generator, from the verdicts of
earlier episodes of the same run.

What the control keeps:

- the reward rate and the reward values: a draw from the last ``window`` real verdicts has their mean and
  their values (a format bonus or partial credit included), so the control earns as much reward as its own
  policy would earn now; the window follows the policy as its success rate moves;
- everything else about training: the same trainer, batches, steps and sampled tokens.

What it destroys: any relation between a verdict and the completion it is handed to. The draw comes from
strictly earlier verdicts, never the current one (a pool that held the current verdict would hand the k-th
episode its own verdict with probability 1/k, most of the signal early in a run; permuting a batch's rewards
hands a row its own with probability 1/B). The very first verdict of a run, with nothing earlier to draw
from, gets nothing: reward 0, not correct. The pool is one per run (`RunVerdicts`), shared by every copy of
the environment the trainer makes: a pool per copy would start empty in each copy.

Trainers read verdicts two ways, and `RecordedVerdicts` handles both:

- GRPO and DAPO read the reward of ``env.step``: the final reward of each episode is replaced. The step's
  ``info["correct"]`` stays real, since the rollout metrics (``rollout/correct_rate``) and the held-out
  evaluation read it: the control's real accuracy stays measured. DAPO's ``accuracy_band`` (off by default)
  filters groups on ``info["correct"]`` and would leak it, so the control needs it off.
- STaR looks through wrappers (``env.unwrapped``) and keeps the samples ``env.score`` calls correct: so the
  wrapper is its own ``unwrapped`` (any other attribute comes from the wrapped env), and ``score`` and
  ``score_many`` return verdicts whose correctness is drawn.

Both arms of a comparison run through the same wrapper (``shuffle=False`` only records), so they differ in
the draws alone, and both keep the run's real correctness in `RunVerdicts.correct`.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

import gymnasium

from reasongym.verifiers import Outcome, Verdict

WINDOW = 512
"""Earlier verdicts a draw comes from: eight batches of 64 episodes, so the rate follows the policy."""


class RunVerdicts:
    """One run's real verdicts in order (`correct`), and the seeded draws of its shuffled control.

    Shared by reference: trainers step copies of the environment (`reasongym.rollouts.env_pool`), and each
    copy must draw from the one pool. So a deep copy of this object is the object itself, and pickling it
    fails, which makes `reasongym.rollouts.env_pool.episode_envs` deep-copy the environment instead of
    pickling it (its documented fallback for an env that pickle cannot handle). If that fallback went away,
    the control would fail loudly rather than draw from a pool per copy. Another process needs its own.
    """

    def __init__(self, seed: int, window: int = WINDOW) -> None:
        self.correct: list[bool] = []
        """Real correctness of every graded episode or completion, in order; ungradable ones are left out."""
        self._rewards: deque[float] = deque(maxlen=window)
        self._verdicts: deque[bool] = deque(maxlen=window)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # episodes are stepped from several threads once grading is slow

    def record(self, correct: bool) -> None:
        """Log one real verdict."""
        self.correct.append(correct)

    def shuffled_reward(self, reward: float) -> float:
        """A reward drawn from the earlier ones (0 for the first); ``reward`` joins the pool afterwards."""
        return self._draw(self._rewards, reward, 0.0)

    def shuffled_correct(self, correct: bool) -> bool:
        """A correctness drawn from the earlier ones (False for the first); ``correct`` joins afterwards."""
        return self._draw(self._verdicts, correct, False)

    def _draw(self, pool: deque, value: Any, nothing_earlier: Any) -> Any:
        with self._lock:
            drawn = self._rng.choice(pool) if pool else nothing_earlier
            pool.append(value)
        return drawn

    def state(self) -> dict[str, Any]:
        """Everything a resumed run needs to draw as this one would (JSON-ready): the log, the pools, the RNG."""
        version, internal, gauss = self._rng.getstate()
        return {
            "correct": list(self.correct),
            "rewards": list(self._rewards),
            "verdicts": list(self._verdicts),
            "rng": [version, list(internal), gauss],
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Take `state`'s log, pools and RNG (a run resumed in another process: `gpu_window/window.py`)."""
        self.correct[:] = state["correct"]
        self._rewards.clear()
        self._rewards.extend(state["rewards"])
        self._verdicts.clear()
        self._verdicts.extend(state["verdicts"])
        version, internal, gauss = state["rng"]
        self._rng.setstate((version, tuple(internal), gauss))

    def __deepcopy__(self, memo: dict[int, Any]) -> RunVerdicts:
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("RunVerdicts is shared by reference within one process; it cannot be pickled")


class RecordedVerdicts(gymnasium.Wrapper):
    """Records every real verdict in ``verdicts``; with ``shuffle``, hands the trainer a drawn one instead.

    Through ``step`` (the final reward of an episode) and through ``score`` and ``score_many`` (the
    verdict's correctness); ``info["correct"]`` stays real. Episodes of another split than ``split`` (a
    trainer's held-out evaluation: STaR's after every iteration) pass through unrecorded, so that neither
    the log nor the pool mixes greedy held-out verdicts into training's. Its own ``unwrapped``, so that
    STaR, which looks through wrappers, still grades here.
    """

    def __init__(
        self, env: gymnasium.Env, verdicts: RunVerdicts, *, shuffle: bool, split: str = "train"
    ) -> None:
        super().__init__(env)
        self.verdicts = verdicts
        self.shuffle = shuffle
        self.split = split

    @property
    def unwrapped(self) -> RecordedVerdicts:
        return self

    def __getattr__(self, name: str) -> Any:
        # The base env's own attributes (problem_at, source, config, messages): STaR reads them on
        # ``unwrapped``. Never private ones: copying asks for __setstate__ before ``env`` is set.
        if name.startswith("_") or "env" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.env.unwrapped, name)

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        correct = info.get("correct")
        split = info.get("replay", {}).get("split", self.split)  # where the episode's problem comes from
        if (terminated or truncated) and correct is not None and split == self.split:
            self.verdicts.record(bool(correct))
            if self.shuffle:
                reward = self.verdicts.shuffled_reward(float(reward))
        return observation, reward, terminated, truncated, info

    def score(self, problem: Any, completion: str) -> Verdict:
        return self._handed(self.env.unwrapped.score(problem, completion))

    def score_many(self, problem: Any, completions: Sequence[str]) -> list[Verdict]:
        return [self._handed(verdict) for verdict in self.env.unwrapped.score_many(problem, completions)]

    def _handed(self, verdict: Verdict) -> Verdict:
        """The verdict the trainer sees: the real one, or (``shuffle``) one with drawn correctness."""
        if verdict.correct is None:  # ungradable gold: trainers leave it out, so it carries nothing
            return verdict
        self.verdicts.record(verdict.correct)
        if not self.shuffle:
            return verdict
        drawn = self.verdicts.shuffled_correct(verdict.correct)
        if drawn:
            outcome = Outcome.CORRECT
        else:  # a wrong or unreadable answer stays what it was
            outcome = Outcome.WRONG if verdict.outcome is Outcome.CORRECT else verdict.outcome
        reason = f"shuffled-reward control (graded {verdict.outcome.value}): {verdict.reason}"
        return dataclasses.replace(verdict, correct=drawn, outcome=outcome, reason=reason)
