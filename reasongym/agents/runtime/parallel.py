"""The model side of data parallelism: DDP or FSDP wrapping, full weights for sampling, gradient sync.

Which process is which, and the collectives that move data between them, are `reasongym.distributed`'s;
this module holds only what a trainer does to its model across processes. Under ``ddp`` every rank holds
the whole model and DDP averages the gradients; under ``fsdp`` parameters, gradients and optimizer state
are sharded (torch's ``fully_shard``). With one process every function here leaves the model as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from reasongym.distributed import DistInfo, all_reduce_max, current, is_alone


def wrap_model(
    model: torch.nn.Module, info: DistInfo | None = None, parallelism: str = "ddp"
) -> torch.nn.Module:
    """Wrap ``model`` for data-parallel training when it is part of a process group.

    ``ddp``: a ``DistributedDataParallel`` wrapper (the model stays reachable as ``.module``). Buffers are
    not broadcast on every forward: a causal LM's buffers are constants (rotary frequencies), and the
    broadcast is a collective that would make ranks running different numbers of micro-batches (RL's
    uneven shards) wait on each other forever. ``fsdp``: the model itself, its decoder layers and then
    the whole sharded in place with torch's ``fully_shard`` (see `shard_model`).

    Args:
        model: The model to train, already on ``info.device``.
        info: The process's place; defaults to ``current()``.
        parallelism: ``ddp`` or ``fsdp``.

    Returns:
        The wrapped (or sharded) model, or ``model`` itself in a lone process or when already wrapped.
    """
    info = info or current()
    if is_alone(info) or isinstance(model, torch.nn.parallel.DistributedDataParallel) or is_sharded(model):
        return model
    if parallelism == "fsdp":
        return shard_model(model, info)
    device_ids = [info.local_rank] if next(model.parameters()).is_cuda else None
    ddp = torch.nn.parallel.DistributedDataParallel
    # torch 2.13 renamed the switch (the old name still works, with a warning).
    renamed = "forward_sync_buffers" in inspect.signature(ddp.__init__).parameters
    no_sync = {"forward_sync_buffers": False} if renamed else {"broadcast_buffers": False}
    return ddp(model, device_ids=device_ids, **no_sync)


def unwrap_model(model: torch.nn.Module) -> torch.nn.Module:
    """The model inside a DDP wrapper, or ``model`` itself."""
    return model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model


# ---------------------------------------------------------------------------------------------- FSDP


def shard_model(model: torch.nn.Module, info: DistInfo | None = None) -> torch.nn.Module:
    """Shard ``model`` over every process with torch's ``fully_shard`` (FSDP2), in place; returns it.

    Each decoder layer (a class the model lists in ``_no_split_modules``, as transformers models do) is
    one unit, gathered for its forward and backward and resharded after; the root (embeddings, final
    norm, head) stays gathered between forward and backward. Gradients are reduce-scattered and averaged
    over the processes, as DDP averages them.
    """
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    info = info or current()
    mesh = init_device_mesh(info.device.type, (info.world_size,))
    units = set(getattr(model, "_no_split_modules", None) or ())
    for module in model.modules():
        if type(module).__name__ in units and module is not model:
            fully_shard(module, mesh=mesh, reshard_after_forward=True)
    fully_shard(model, mesh=mesh, reshard_after_forward=False)
    return model


def is_sharded(model: torch.nn.Module) -> bool:
    """Whether ``model`` was sharded by `shard_model` (``fully_shard``)."""
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


@contextmanager
def gathered(model: torch.nn.Module | None) -> Iterator[None]:
    """The full weights of a sharded model on every rank, for forward passes whose number differs between
    ranks (sampling, scoring, evaluation): each forward of a sharded unit would otherwise all-gather it,
    a collective that every rank must join. Needs the whole model to fit each device for inference.
    Does nothing for an unsharded model."""
    if model is None or not is_sharded(model):
        yield
        return
    from torch.distributed.fsdp import FSDPModule

    units = [module for module in model.modules() if isinstance(module, FSDPModule)]
    for unit in units:
        if unit is not model:
            unit.set_reshard_after_forward(False, recurse=False)
        unit.unshard()
    try:
        yield
    finally:
        for unit in units:
            unit.reshard()
            if unit is not model:
                unit.set_reshard_after_forward(True, recurse=False)


@contextmanager
def gradient_sync(model: torch.nn.Module, enabled: bool) -> Iterator[None]:
    """Reduce gradients over the ranks in this backward (``enabled``) or only accumulate them locally
    (DDP's ``no_sync``, FSDP's ``set_requires_gradient_sync(False)``)."""
    if is_sharded(model):
        model.set_requires_gradient_sync(enabled)
        yield
        return
    if enabled or not hasattr(model, "no_sync"):
        yield
        return
    with model.no_sync():
        yield


def passes_everywhere(count: int, model: torch.nn.Module) -> int:
    """Forward/backward passes each rank runs: its own ``count``, or for a sharded model the most any rank
    has (every pass all-gathers each unit, so every rank must run as many)."""
    if not is_sharded(model):
        return count
    return round(all_reduce_max({"passes": count})["passes"])


def full_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> tuple[Any, Any]:
    """``(model state, optimizer state)`` of a sharded model, gathered whole on the CPU of rank 0 (every rank
    must call; the others get empty dicts), for a checkpoint; ``(None, None)`` when nothing is sharded."""
    if not is_sharded(model):
        return None, None
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
    )

    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    return get_model_state_dict(model, options=options), get_optimizer_state_dict(
        model, optimizer, options=options
    )


def load_optimizer_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer, state: Any) -> None:
    """Load a checkpoint's optimizer state: as it is, or sharded over the ranks for a sharded model."""
    if not is_sharded(model):
        optimizer.load_state_dict(state)
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    set_optimizer_state_dict(model, optimizer, state, options=StateDictOptions(full_state_dict=True))
