"""A GRPO run with the sampler ahead (max_staleness 1) that the SIGKILL test starts in a subprocess.

python tests/agents/async_worker.py RUN_DIR [--kill-at-step STEP]

With ``--kill-at-step`` the trainer writes its sampler's pid to RUN_DIR/sampler.pid and SIGKILLs itself inside
that step (at its evaluation, before the step is logged or saved); otherwise it trains to the end.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
from pathlib import Path

import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.grpo import train_grpo
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

# Run as a script, with only its own folder on the path: the repository root joins it for the tests' one
# tiny-model shape.
sys.path.append(str(Path(__file__).resolve().parents[2]))
from tests.conftest import TINY_SHAPE  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("--kill-at-step", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, seed=0, **TINY_SHAPE)
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=5,
        num_prompts=4,
        group_size=4,
        max_new_tokens=16,
        lr=3e-3,
        save_every=2,
        eval_every=1,
        eval_problems=2,
        progress_bar=False,
        max_staleness=1,
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
        "reasongym/Arithmetic-v0",
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=args.run_dir,
        eval_fn=kill_in_step,
    )


if __name__ == "__main__":
    main()
