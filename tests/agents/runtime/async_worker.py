"""A GRPO run with the sampler ahead that the SIGKILL and the two-node tests start in subprocesses.

python tests/agents/runtime/async_worker.py RUN_DIR [--kill-at-step STEP] [--max-staleness K] [--steps N]
torchrun --nnodes 2 ... tests/agents/runtime/async_worker.py RUN_DIR --max-staleness K --steps N

With ``--kill-at-step`` the trainer writes its sampler's pid to RUN_DIR/sampler.pid and SIGKILLs itself inside
that step (at its evaluation, before the step is logged or saved); otherwise it trains to the end. Each rank
saves its final weights as RUN_DIR/../rank<R>.pt.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
from pathlib import Path

import torch

import reasongym
from reasongym import distributed
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.grpo import train_grpo
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

# Run as a script, with only its own folder on the path: the repository root joins it for the tests' one
# tiny-model shape.
sys.path.append(str(Path(__file__).resolve().parents[3]))
from tests.conftest import TINY_SHAPE  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("--kill-at-step", type=int, default=None)
    parser.add_argument("--max-staleness", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--format-reward", type=float, default=0.0, help="the env's reward for any answer")
    args = parser.parse_args()
    torch.set_num_threads(1)
    info = distributed.init_distributed()  # under torchrun; alone, nothing
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, seed=0, **TINY_SHAPE)
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=args.steps,
        num_prompts=4,
        group_size=4,
        max_new_tokens=16,
        lr=3e-3,
        save_every=2,
        eval_every=1,
        eval_problems=2,
        samples_every=1,
        progress_bar=False,
        max_staleness=args.max_staleness,
    )
    evaluations = []

    def kill_in_step(_: torch.nn.Module) -> dict[str, float]:
        evaluations.append(1)  # the first evaluation is step 0's
        if len(evaluations) - 1 == args.kill_at_step:
            pids = [child.pid for child in multiprocessing.active_children()]
            (Path(args.run_dir) / "sampler.pid").write_text(" ".join(map(str, pids)))
            os.kill(os.getpid(), signal.SIGKILL)
        return {}

    train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        reasongym.make("reasongym/Arithmetic-v0", format_reward=args.format_reward),  # the sampler remakes it
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=args.run_dir,
        eval_fn=kill_in_step,
    )
    torch.save(model.state_dict(), Path(args.run_dir).parent / f"rank{info.rank}.pt")
    distributed.cleanup()


if __name__ == "__main__":
    main()
