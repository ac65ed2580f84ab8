"""The optimizer step and its precision, the same for every trainer: AdamW over the trainable parameters with a
warmup-then-constant-or-cosine schedule (which a resume may change), global-norm clipping, a step skipped when the
gradient is not finite, CUDA autocast (bf16, or fp16 with a gradient scaler) and TensorFloat-32 matrix products.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch

from reasongym.agents.config import RunConfig
from reasongym.errors import ConfigError

# ---------------------------------------------------------------------------------------------- precision


_AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def check_autocast(run: RunConfig, model: torch.nn.Module) -> None:
    """Raise ConfigError when ``run.autocast`` asks for mixed precision on a model that is not on CUDA."""
    if run.autocast == "off":
        return
    device = next(model.parameters()).device
    if device.type != "cuda":
        raise ConfigError(
            f"autocast={run.autocast!r} is not allowed for a model on {device}: mixed precision and TF32 are for CUDA "
            "(a CPU trains in float32, and its bf16 autocast is slower); use autocast='off' or move the "
            "model to a GPU"
        )


def allow_tf32(run: RunConfig, model: torch.nn.Module) -> None:
    """With ``autocast='tf32'`` and a model on CUDA, let float32 matrix products and convolutions use TF32."""
    if run.autocast == "tf32" and next(model.parameters()).device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def autocast_context(run: RunConfig) -> Any:
    """CUDA autocast in ``run.autocast``'s dtype, or a context that does nothing when it is ``off`` or ``tf32``."""
    if run.autocast in ("off", "tf32"):
        return nullcontext()
    return torch.autocast("cuda", dtype=_AUTOCAST_DTYPES[run.autocast])


def grad_scaler(run: RunConfig) -> Any:
    """A ``torch.amp.GradScaler``, enabled for fp16 autocast (float16 gradients underflow without one); a
    disabled scaler passes losses and steps through unchanged, so a trainer needs no second code path."""
    return torch.amp.GradScaler("cuda", enabled=run.autocast == "fp16")


# ---------------------------------------------------------------------------------------------- optimizer


def build_optimizer(model: torch.nn.Module, run: RunConfig) -> tuple[torch.optim.AdamW, Any]:
    """AdamW over the trainable parameters (weight decay on matrices only) and ``run``'s lr schedule."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in trainable if p.ndim >= 2], "weight_decay": run.weight_decay},
        {"params": [p for p in trainable if p.ndim < 2], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=run.lr)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(run))


def _schedule(run: RunConfig) -> Callable[[int], float]:
    """The multiplier of ``run.lr`` after ``step`` optimizer steps: linear warmup, then constant or cosine."""
    warmup, total, cosine = run.warmup_steps, run.max_steps, run.lr_schedule == "cosine"

    def multiplier(step: int) -> float:
        if step < warmup:
            return step / warmup
        if not cosine:
            return 1.0
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return multiplier


def _grad_norm(params: list[torch.nn.Parameter], max_norm: float | None) -> float:
    """Clip the global gradient norm to ``max_norm`` (None: no clipping); returns it before clipping."""
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm or math.inf)
    return float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)  # FSDP: a sharded DTensor


def restore_optimizer(optimizer: torch.optim.Optimizer, scheduler: Any, run: RunConfig) -> None:
    """After loading a checkpoint: apply ``run``'s learning rate and schedule, which a resume may change.

    A scheduler's state carries the learning rate it was built with; without this a resumed run would
    announce a new ``lr`` and keep training with the old one.
    """
    scheduler.base_lrs = [run.lr for _ in optimizer.param_groups]
    scheduler.lr_lambdas = [_schedule(run) for _ in optimizer.param_groups]
    for group in optimizer.param_groups:
        group["initial_lr"] = run.lr
        group["lr"] = run.lr * scheduler.lr_lambdas[0](scheduler.last_epoch)


def optimizer_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    run: RunConfig,
    *,
    scaler: Any = None,
) -> dict[str, float]:
    """Clip, then step unless the gradient is non-finite (weights untouched); advance the schedule; clear.

    With fp16's ``scaler`` the gradients are unscaled before clipping, and the scale adapts (it shrinks
    after a non-finite step, as `torch.amp.GradScaler` does).

    Returns:
        ``train/grad_norm``, ``train/skipped_nonfinite`` and ``train/lr`` (the rate this step used).
    """
    params = [p for p in model.parameters() if p.grad is not None]
    if scaler is not None and params:
        scaler.unscale_(optimizer)
    norm = _grad_norm(params, run.max_grad_norm) if params else 0.0
    lr = optimizer.param_groups[0]["lr"]
    skipped = not math.isfinite(norm)
    if not skipped and scaler is not None:
        scaler.step(optimizer)
    elif not skipped:
        optimizer.step()
    if scaler is not None and params:
        scaler.update()
    scheduler.step()  # the schedule follows the step count, skipped steps included
    optimizer.zero_grad(set_to_none=True)
    return {"train/grad_norm": norm, "train/skipped_nonfinite": float(skipped), "train/lr": lr}
