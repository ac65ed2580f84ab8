"""Runs that the data-parallel tests start under torchrun (and, for comparison, in one process).

python -m torch.distributed.run --standalone --nproc_per_node=2 tests/agents/runtime/dp_worker.py ALGO OUT_DIR
    [--kill-at-eval N] [--sft-batch-size B]

ALGO is grpo, dapo, star, distill or eval (`evaluate` into OUT_DIR/eval.jsonl, rank 0 SIGKILLed at its N-th batch
with --kill-at-eval N). Each process trains the float64 tiny model (float64, so that summing the same
gradients in another order moves nothing past 1e-12) on a counting dataset with a scripted text-only
policy, whose completions depend on the problem and the sample number only: one process and N processes
see exactly the same data. Each rank saves its final weights as OUT_DIR/rank<R>.pt; the run folder is
OUT_DIR/run. ``--kill-at-eval N`` SIGKILLs rank 0 in its N-th ``eval_fn`` call (RL: step 0 is the first).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from reasongym import distributed
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.dapo import train_dapo
from reasongym.agents.distill import train_distill
from reasongym.agents.grpo import train_grpo
from reasongym.agents.runtime.hooks import StepHook, StepView
from reasongym.agents.star import train_star
from reasongym.envs.core import ReasoningEnv
from reasongym.envs.problem import Problem
from reasongym.envs.sources import DatasetSource
from reasongym.generation import Completion, SamplingParams
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

# torchrun runs this file as a script, with only its own folder on the path: the repository root joins it for the
# tests' one tiny-model shape.
sys.path.append(str(Path(__file__).resolve().parents[3]))
from tests.conftest import TINY_SHAPE  # noqa: E402

COMMON = {
    "max_steps": 2,
    "lr": 1e-4,
    "save_every": 1,
    "eval_every": 1,
    "eval_problems": 3,
    "progress_bar": False,
}
SETTINGS: dict[str, dict[str, Any]] = {
    # batch_std needs every rank's rewards; the KL reference is written by rank 0 and read by all.
    "grpo": {
        **COMMON,
        "num_prompts": 4,
        "group_size": 4,
        "max_new_tokens": 72,
        "micro_batch_size": 3,
        "mu": 2,
        "kl": "k3_loss",
        "advantage_normalization": "batch_std",
    },
    # The HOPELESS groups are dropped by dynamic sampling; in step 1 rank 0 of 2 keeps none of its own.
    # REINFORCE++-baseline whitens over every rank's kept groups, an uneven split that is gathered whole.
    "dapo": {
        **COMMON,
        "num_prompts": 4,
        "group_size": 4,
        "max_new_tokens": 72,
        "micro_batch_size": 3,
        "mu": 2,
        "max_extra_rounds": 3,
        "advantage_normalization": "reinforce_plus_plus_baseline",
    },
    # Two outer iterations; each fine-tunes 2 steps on the 12 rationales (8 direct, 4 hinted) with a
    # per-process batch of 12 / processes (--sft-batch-size), so that one step sees them all either way.
    "star": {
        "max_steps": 2,
        "lr": 1e-4,
        "eval_problems": 3,
        "progress_bar": False,
        "num_train_problems": 12,
        "sft_steps": 2,
        "step_growth": 1.0,
        "group_size": 1,
        "max_new_tokens": 72,
    },
    # The teacher (another tiny model) scores every sampled position on each rank; the verifier's term needs
    # every rank's groups for its advantages.
    "distill": {
        **COMMON,
        "num_prompts": 4,
        "group_size": 2,
        "max_new_tokens": 72,
        "micro_batch_size": 3,
        "reward_weight": 0.5,
    },
}


def counting_env(size: int = 64) -> ReasoningEnv:
    """Problems ``What is i + 1?`` (gold ``i + 1``) in train, validation and test splits (the tiny preset
    evaluates on the validation split)."""
    rows = [Problem(f"What is {i} + 1?", str(i + 1), id=f"p{i}") for i in range(size)]
    splits = {"train": rows, "validation": rows, "test": rows}
    return ReasoningEnv(DatasetSource.from_problems("counting", "math", splits))


HOPELESS = (16, 27, 44, 53)
"""Problems the policy never solves unhinted: with seed 0, those that rank 0 of 2 samples in DAPO's step 1."""
STAR_HOPELESS = (2, 3, 7, 10)
"""STaR's training problems (0 .. 11) that only the hinted prompt solves: 8 direct, 4 rationalized."""


class ScriptedPolicy:
    """A text-only `Generator`: sample ``k`` of problem ``i`` is right iff ``k < 1 + i % 3`` and ``i`` is not
    hopeless, or the prompt shows the hint; its length grows with ``i`` and ``k``, so sequences and tokens
    weigh differently."""

    def __init__(self, hopeless: Sequence[int] = HOPELESS) -> None:
        self.hopeless = set(hopeless)

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        return [[self._completion(prompt, k) for k in range(params.n)] for prompt in prompts]

    def _completion(self, prompt: str, k: int) -> Completion:
        i = int(re.search(r"What is (\d+) \+ 1", prompt).group(1))
        right = "Hint:" in prompt or (i not in self.hopeless and k < 1 + i % 3)
        text = "ok " * (k + i % 5) + f"The final answer is \\boxed{{{i + 1 if right else 0}}}."
        return Completion(text, None, None, "stop")


class SeededPolicy(ScriptedPolicy):
    """`ScriptedPolicy` whose texts also show the sampling seed: records then tell which seed each batch had.

    ``kill_at``: SIGKILL this process in its ``kill_at``-th call (a crash after the earlier batches were written).
    """

    def __init__(self, kill_at: int | None = None) -> None:
        super().__init__()
        self.kill_at, self.calls = kill_at, 0

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        self.calls += 1
        if self.calls == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        groups = super().generate(prompts, params)
        return [[Completion(f"seed {params.seed}: {c.text}", None, None, "stop") for c in g] for g in groups]


def evaluate_counting(out_path: Path, *, distributed: bool, generator: Any = None) -> Any:
    """`evaluate` 2 samples of each of 10 counting problems in batches of 2, recorded in ``out_path``."""
    from reasongym.evaluation import evaluate

    return evaluate(
        generator or SeededPolicy(),
        counting_env(),
        n=2,
        num_problems=10,
        batch_size=2,
        temperature=1.0,
        seed=5,
        out_path=out_path,
        progress=False,
        verbose=False,
        distributed=distributed,
    )


def tiny_model() -> tuple[torch.nn.Module, Any]:
    """The float64 tiny model and its character tokenizer."""
    torch.set_num_threads(1)
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, **TINY_SHAPE).double()
    return model, tokenizer


def train(
    algo: str, run_dir: Path | None, *, kill_at_eval: int | None = None, hooks: Any = (), **overrides: Any
) -> Any:
    """Train ``algo`` with `SETTINGS` (and ``overrides``) on the counting env, RL ``hooks`` seeing its steps;
    returns ``(model, result)``."""
    model, tokenizer = tiny_model()
    calls = []

    def eval_fn(_: torch.nn.Module) -> dict[str, float]:
        calls.append(1)
        if len(calls) == kill_at_eval:
            os.kill(os.getpid(), signal.SIGKILL)
        return {}

    configs = preset_configs("tiny", algo, **{**SETTINGS[algo], **overrides})
    env, policy = counting_env(), ScriptedPolicy(STAR_HOPELESS if algo == "star" else HOPELESS)
    if algo == "star":
        result = train_star(
            configs["star"],
            model,
            tokenizer,
            env,
            run=configs["run"],
            rollout=configs["rollout"],
            run_dir=run_dir,
            generator=policy,
        )
        return model, result
    extra: dict[str, Any] = {}
    if algo == "distill":
        extra["teacher"] = make_tiny_model(tokenizer, seed=1, **TINY_SHAPE).double()
    trainer = {"grpo": train_grpo, "dapo": train_dapo, "distill": train_distill}[algo]
    result = trainer(
        configs[algo],
        model,
        tokenizer,
        env,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=run_dir,
        generator=policy,
        eval_fn=eval_fn,
        hooks=hooks,
        **extra,
    )
    return model, result


class UpdateRows(StepHook):
    """Counts this rank's rows in each step's update (a step that skipped its update has none)."""

    def __init__(self) -> None:
        self.rows: list[int] = []

    def after_update(self, view: StepView) -> bool:
        if view.update is not None:
            self.rows.append(len(view.update.batch))
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("algo", choices=[*sorted(SETTINGS), "eval"])
    parser.add_argument("out")
    parser.add_argument("--kill-at-eval", type=int, default=None)
    parser.add_argument("--sft-batch-size", type=int, default=None)
    parser.add_argument("--parallelism", default="ddp")
    args = parser.parse_args()
    info = distributed.init_distributed()
    out = Path(args.out)
    if args.algo == "eval":
        kill_at = args.kill_at_eval if info.is_main else None
        evaluate_counting(out / "eval.jsonl", distributed=True, generator=SeededPolicy(kill_at))
        distributed.cleanup()
        return
    overrides = {"sft": {"batch_size": args.sft_batch_size}} if args.sft_batch_size else {}
    overrides["parallelism"] = args.parallelism
    rows = UpdateRows()  # this rank's share of each update, for the test to see an empty one
    model, _ = train(args.algo, out / "run", kill_at_eval=args.kill_at_eval, hooks=[rows], **overrides)
    state = {k: v.full_tensor() if hasattr(v, "full_tensor") else v for k, v in model.state_dict().items()}
    torch.save({k: v.detach().clone() for k, v in state.items()}, out / f"rank{info.rank}.pt")  # FSDP: whole
    (out / f"rank{info.rank}.json").write_text(json.dumps({"rows": rows.rows}))
    distributed.cleanup()


if __name__ == "__main__":
    main()
