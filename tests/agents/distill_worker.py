"""A distillation run the SIGKILL test starts in a subprocess: the tiny student (seed 0) and teacher (seed 1).

python tests/agents/distill_worker.py RUN_DIR [--kill-at-step STEP]

With ``--kill-at-step`` the process SIGKILLs itself inside that step (at its evaluation, before the step is
logged or saved); otherwise it trains to the end and writes ``final.json`` (a checksum of every weight).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.distill import train_distill
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
    student, teacher = (make_tiny_model(tokenizer, seed=seed, **TINY_SHAPE) for seed in (0, 1))
    configs = preset_configs(
        "tiny",
        "distill",
        max_steps=4,
        num_prompts=4,
        max_new_tokens=16,
        lr=3e-3,
        save_every=2,
        eval_every=1,
        eval_problems=2,
        progress_bar=False,
    )
    evaluations = []

    def kill_in_step(model: torch.nn.Module) -> dict[str, float]:
        evaluations.append(1)  # the first evaluation is step 0's
        if len(evaluations) - 1 == args.kill_at_step:
            os.kill(os.getpid(), signal.SIGKILL)
        return {}

    result = train_distill(
        configs["distill"],
        student,
        tokenizer,
        "reasongym/Arithmetic-v0",
        teacher=teacher,
        run=configs["run"],
        rollout=configs["rollout"],
        run_dir=args.run_dir,
        eval_fn=kill_in_step,
    )
    weights = [float(p.detach().double().sum()) for p in student.parameters()]
    final = {"resumed_from": result.resumed_from, "weights": weights}
    (Path(args.run_dir) / "final.json").write_text(json.dumps(final))


if __name__ == "__main__":
    main()
