"""Training runs that the SFT and distributed tests start in subprocesses (and, for comparison, in-process).

python tests/agents/sft_worker.py resume RUN_DIR [--kill-after STEP]
python -m torch.distributed.run --standalone --nproc_per_node=2 tests/agents/sft_worker.py ddp OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path

import torch

from reasongym import distributed
from reasongym.agents.config import RunConfig
from reasongym.agents.sft import SFTConfig, train_sft
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

RESUME_RUN = RunConfig(
    lr=3e-3,
    lr_schedule="cosine",
    max_steps=6,
    warmup_steps=2,
    save_every=2,
    keep_checkpoints=2,
    seed=3,
    progress_bar=False,
    tensorboard=False,
)
DDP_RUN = RunConfig(lr=1e-2, max_steps=1, max_grad_norm=None, progress_bar=False, tensorboard=False)
DDP_CONFIG = SFTConfig(batch_size=4)


def addition_pairs(limit: int | None = None) -> list[tuple[str, str]]:
    """``("a+b=", "c")`` for single digits a, b (100 pairs), optionally only the first ``limit``."""
    pairs = [(f"{a}+{b}=", str(a + b)) for a in range(10) for b in range(10)]
    return pairs[:limit]


def tiny_setup(dropout: float = 0.0) -> tuple[torch.nn.Module, object]:
    """The tiny model and char tokenizer; ``dropout`` > 0 makes training consume the torch RNG."""
    torch.set_num_threads(1)
    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, seed=0)
    for module in model.modules():
        if hasattr(module, "attention_dropout"):
            module.attention_dropout = dropout
    return model, tokenizer


def run_resumable(run_dir: str, kill_after: int | None = None) -> None:
    """Train with ``RESUME_CONFIG`` in ``run_dir``; SIGKILL this process right after step ``kill_after``."""
    model, tokenizer = tiny_setup(dropout=0.1)

    def stop_when(step: int) -> bool:
        if step == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return False

    train_sft(
        SFTConfig(batch_size=8),
        model,
        tokenizer,
        addition_pairs(40),
        run=RESUME_RUN,
        run_dir=run_dir,
        stop_when=stop_when,
    )


def run_data_parallel(out_dir: str) -> None:
    """One DDP step over 8 pairs split across the ranks; each rank saves its weights and their checksum."""
    info = distributed.init_distributed()
    model, tokenizer = tiny_setup()
    train_sft(DDP_CONFIG, model, tokenizer, addition_pairs(8), run=DDP_RUN)
    state = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
    torch.save(state, Path(out_dir) / f"rank{info.rank}.pt")
    checksum = float(sum(tensor.double().sum() for tensor in state.values()))
    (Path(out_dir) / f"rank{info.rank}.json").write_text(json.dumps({"checksum": checksum}))
    distributed.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("resume", "ddp"))
    parser.add_argument("path")
    parser.add_argument("--kill-after", type=int, default=None)
    args = parser.parse_args()
    if args.mode == "resume":
        run_resumable(args.path, args.kill_after)
    else:
        run_data_parallel(args.path)


if __name__ == "__main__":
    main()
