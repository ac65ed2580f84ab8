"""Rollouts sampled ahead of training, by a sampler in its own process, at most ``max_staleness`` versions old.

With ``RolloutConfig.max_staleness`` K >= 1 and our sampler, the trainer no longer samples: a sampler process
(torch's ``spawn`` start method, one CPU thread, its own copy of the policy) plays the environment and sends
each rollout batch to the trainer over a two-process gloo group of its own (a TCP store on a free loopback
port), while the trainer updates on the batch before. After each update the trainer sends the new weights (a
version: the number of updates so far) without waiting; with LoRA only the adapters travel, the sampler
holding the same frozen base. Under torchrun each trainer rank has a sampler of its own, drawing that rank's
share of each round. The pacing is the staleness window's (`reasongym.agents.runtime.window`), the batches
`DrawPlan`'s (`reasongym.agents.runtime.draw`): the problems, their order and the sampling seeds are the
synchronous loop's, so a resumed run starts the sampler at the checkpoint's cursor and version (what was in
flight is lost and drawn again).

Each batch keeps the sampler's log-probs: with ``stale_old_logp='rescore'`` the trainer's own forward pass
gives the PPO ratio's ``old_logp`` and the off-policy correction of issue 24 (`reasongym.agents.offpolicy`)
weighs the gap between the two, as for a vLLM sampler; with ``'sampler'`` the sampler's are the ratio's.

This module is our sampler's way (`HFGenerator` in a process of its own); an engine with its own weights
(vLLM) is driven ahead by a thread instead (`reasongym.agents.runtime.engine_ahead`).

What differs from the synchronous run: which version drew each batch depends on timing (how far the sampler
got while the trainer worked), so two runs with the same seed agree exactly only when the interleaving is the
same. The problems, their order and the sampling seeds are the same in every run.
"""

from __future__ import annotations

import datetime
import os
import pickle
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import gymnasium
import torch
import torch.distributed as dist

from reasongym.agents.runtime.draw import DrawPlan, draw_batch
from reasongym.agents.runtime.window import STOP, Ahead, draw_ahead
from reasongym.errors import ConfigError
from reasongym.runs.helper_death import ResumableRun, helper_died

_TIMEOUT = datetime.timedelta(minutes=30)
_WEIGHTS_HEADER, _WEIGHTS, _SIZE, _BATCH, _REQUEST = 1, 2, 3, 4, 5
"""The pair's message tags."""


@dataclass(frozen=True)
class SamplerJob:
    """What the sampler process needs (pickled to it when it starts)."""

    port: int
    """The loopback port of the pair's TCP store (the trainer's side listens)."""
    model_class: type
    """The policy's class; the sampler builds its own copy from ``config`` and ``weights``."""
    config: Any
    lora: Any
    """The run's `LoRAConfig` when it trains adapters (the sampler adds the same ones), else None."""
    weights: dict[str, torch.Tensor]
    """The policy's weights at ``plan.version`` (with LoRA: the base's and the adapters')."""
    pushed: tuple[str, ...]
    """The names of the parameters sent after each update: the trained ones."""
    tokenizer: Any
    env_spec: Any
    """The environment's gymnasium spec (its id and the options it was made with)."""
    plan: DrawPlan
    """What to draw, from which cursor and version, for which trainer rank."""
    device: str
    """Where the trainer's policy is (a GPU the two share, or the CPU): the sampler's copy goes there too."""


def sampler_job(model: torch.nn.Module, tokenizer: Any, env: Any, plan: DrawPlan, lora: Any) -> SamplerJob:
    """The job of a sampler for ``model`` (its LoRA adapters, ``lora``, or None) drawing ``plan`` on ``env``."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pushed = tuple(name for name, p in model.named_parameters() if p.requires_grad)
    weights = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    device = str(next(model.parameters()).device)
    return SamplerJob(
        port, type(model), model.config, lora, weights, pushed, tokenizer, env.spec, plan, device
    )


def _pair(port: int, rank: int) -> Any:
    """The trainer's (rank 0) and the sampler's (rank 1) gloo group of two."""
    store = dist.TCPStore("127.0.0.1", port, 2, is_master=rank == 0, timeout=_TIMEOUT)
    return dist.ProcessGroupGloo(store, rank, 2, _TIMEOUT)


def _pushed(model: torch.nn.Module, names: tuple[str, ...]) -> list[torch.Tensor]:
    by_name = dict(model.named_parameters())
    return [by_name[name] for name in names]


def _flat(params: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([p.detach().float().reshape(-1).cpu() for p in params])


def _load_flat(params: list[torch.Tensor], flat: torch.Tensor) -> None:
    offset = 0
    with torch.no_grad():
        for p in params:
            p.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()


def _send_object(group: Any, value: Any, to: int) -> None:
    data = torch.frombuffer(bytearray(pickle.dumps(value)), dtype=torch.uint8)
    group.send([torch.tensor([data.numel()], dtype=torch.int64)], to, _SIZE).wait()
    group.send([data], to, _BATCH).wait()


def _receive_int(group: Any, source: int, tag: int) -> int:
    value = torch.zeros(1, dtype=torch.int64)
    group.recv([value], source, tag).wait()
    return int(value)


# ---------------------------------------------------------------------------------------------- the sampler


def sampler_policy(job: SamplerJob) -> tuple[torch.nn.Module, Any]:
    """The sampler's copy of the policy at ``job.plan.version``, in eval mode, and its ``PeftModel`` with LoRA
    (the trainer's adapters on the same frozen base: the pushed names are the same parameters), else None."""
    from reasongym.policy.lora import add_adapters

    model, adapted = job.model_class(job.config), None
    if job.lora is not None:
        lora = job.lora
        adapted = add_adapters(
            model, rank=lora.rank, alpha=lora.alpha, dropout=lora.dropout, target_modules=lora.target_modules
        )
    model.load_state_dict(job.weights)
    return model.to(job.device).eval(), adapted


def sampler_main(job: SamplerJob, max_staleness: int) -> None:
    """The sampler process: answer each of the trainer's requests with a batch drawn ahead, from weights at
    most ``max_staleness`` versions behind the request's, until the trainer says stop."""
    from reasongym.envs import make
    from reasongym.generation import HFGenerator
    from reasongym.policy.lora import adapters_merged

    torch.set_num_threads(1)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    group = _pair(job.port, rank=1)
    model, adapted = sampler_policy(job)
    generator = HFGenerator(model, job.tokenizer, batch_size=job.plan.rollout.generation_batch_size)
    env = make(job.env_spec.id, **job.env_spec.kwargs)
    weights = Weights(group, _pushed(model, job.pushed), job.plan.version)

    def draw(cursor: int) -> tuple[Any, int]:
        with torch.no_grad(), adapters_merged(adapted):
            return draw_batch(job.plan, cursor, env, generator, job.tokenizer), weights.version

    draw_ahead(
        job.plan,
        max_staleness,
        weights,
        draw,
        request=lambda: _receive_int(group, 0, _REQUEST),  # the trainer's version when it asked
        answer=lambda message: _send_object(group, message, to=0),
    )


def _exit_with(parent: int) -> None:
    """End this process once its trainer is gone (killed: nobody will take its batches or stop it)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


class Weights:
    """The sampler's side of the weights channel: one pending receive of the next version's header."""

    def __init__(self, group: Any, params: list[torch.Tensor], version: int) -> None:
        self.group, self.params, self.version, self.stopped = group, params, version, False
        self.size = sum(p.numel() for p in params)
        self._post()

    def _post(self) -> None:
        self.header = torch.zeros(1, dtype=torch.int64)
        self.pending = self.group.recv([self.header], 0, _WEIGHTS_HEADER)

    def take(self, at_least: int) -> float:
        """Load every version that has arrived, waiting while the newest is older than ``at_least``; the
        seconds waited."""
        started = time.perf_counter()
        while not self.stopped and (self.version < at_least or self.pending.is_completed()):
            self.pending.wait()
            if int(self.header) == STOP:
                self.stopped = True
                break
            flat = torch.empty(self.size)
            self.group.recv([flat], 0, _WEIGHTS).wait()
            _load_flat(self.params, flat)
            self.version = int(self.header)
            self._post()
        return time.perf_counter() - started


# ---------------------------------------------------------------------------------------------- the trainer


class AsyncRollouts(Ahead):
    """The trainer's side: starts the sampler, asks it for batches, sends it each new version."""

    def __init__(
        self,
        job: SamplerJob,
        max_staleness: int,
        params: list[torch.Tensor],
        exact_logp: bool,
        run: ResumableRun,
    ) -> None:
        context = torch.multiprocessing.get_context("spawn")
        self.process = context.Process(target=sampler_main, args=(job, max_staleness), daemon=True)
        self.process.start()
        self.group = _pair(job.port, rank=0)
        self.params, self.exact_logp = params, exact_logp
        self.sent: list[tuple[Any, torch.Tensor]] = []
        self.run = run
        super().__init__()

    @classmethod
    def start(
        cls,
        job: SamplerJob,
        model: torch.nn.Module,
        max_staleness: int,
        exact_logp: bool,
        run: ResumableRun,
    ) -> AsyncRollouts:
        """The sampler of ``job``, following the trained parameters of ``model``; ``exact_logp``: the trainer
        takes the sampler's log-probs as the ratio's (``stale_old_logp='sampler'``); ``run``: what the
        trainer's error names (how to resume it) if the sampler process dies."""
        return cls(job, max_staleness, _pushed(model, job.pushed), exact_logp, run)

    def exchange(self, version: int) -> dict[str, Any]:
        """Ask for the next batch at ``version``; the sampler's answer. A sampler process that died is named
        (pid, signal or exit code) with what the run has saved, not the transport's message."""
        with helper_died("sampler", self.process, algo=self.run.algo, run_dir=self.run.run_dir):
            request = torch.tensor([version], dtype=torch.int64)
            self.group.send([request], 1, _REQUEST).wait()
            data = torch.empty(_receive_int(self.group, 1, _SIZE), dtype=torch.uint8)
            self.group.recv([data], 1, _BATCH).wait()
        return pickle.loads(data.numpy().tobytes())

    def push(self, version: int) -> None:
        """Send version ``version`` of the trained weights without waiting for the sampler to take it.

        Never waits for the sampler to take an earlier version either: a sampler far enough ahead takes
        versions only when it needs them.
        """
        self.sent = [(work, kept) for work, kept in self.sent if not work.is_completed()]
        header = torch.tensor([version], dtype=torch.int64)
        for tensor, tag in ((header, _WEIGHTS_HEADER), (_flat(self.params), _WEIGHTS)):
            self.sent.append((self.group.send([tensor], 1, tag), tensor))  # the tensor lives until sent

    def close(self) -> None:
        """Stop the sampler process. It holds nothing to keep (the batch it is drawing would be drawn again
        on resume), so it is told to stop, whether it waits for weights or for a request, and killed if it
        is still busy a moment later."""
        if self.process.is_alive():
            self._keep = [torch.tensor([STOP], dtype=torch.int64) for _ in range(2)]
            try:
                self.group.send([self._keep[0]], 1, _WEIGHTS_HEADER)
                self.group.send([self._keep[1]], 1, _REQUEST)
            except RuntimeError:
                pass  # the sampler's side is gone already
            self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


@dataclass(frozen=True)
class AheadSetting:
    """What decides whether a run can draw ahead, and how (`check_async`)."""

    max_staleness: int
    """K."""
    env: Any
    """The environment (a sampler process rebuilds it from its registered id)."""
    passed_in: bool
    """The caller passed a generator in."""
    sampler_is_policy: bool
    """The sampler is ours on the policy module (`HFGenerator`)."""
    holds_weights: bool
    """The sampler is an engine with its own copy of the weights (vLLM): a thread drives it."""
    sharded: bool
    """The policy is sharded over processes (FSDP)."""


def check_async(setting: AheadSetting) -> None:
    """Raise ConfigError for what ``max_staleness`` >= 1 does not support yet, naming why."""
    in_a_process = not setting.holds_weights  # our sampler: a process that rebuilds the environment
    wrappers = python_wrappers(setting.env)
    reasons = {
        "a generator passed in": setting.passed_in,
        "parallelism='fsdp' (the sampler takes whole weights; each rank holds a shard)": setting.sharded,
        "a sampler that is neither ours nor a vLLM engine": (
            not setting.sampler_is_policy and not setting.holds_weights
        ),
        "an environment built in Python (the sampler process rebuilds it from its registered id)": (
            in_a_process and getattr(getattr(setting.env, "spec", None), "id", None) is None
        ),
        f"an environment wrapped in Python ({', '.join(wrappers)}; the sampler process rebuilds it from its "
        "registered id, without them)": in_a_process and bool(wrappers),
    }
    refused = [reason for reason, applies in reasons.items() if applies]
    if refused:
        raise ConfigError(
            f"max_staleness={setting.max_staleness} is not allowed with {'; '.join(refused)}; "
            "use max_staleness=0 (the synchronous loop)"
        )


def python_wrappers(env: Any) -> list[str]:
    """The names of ``env``'s wrappers that are not gymnasium's own (what ``gymnasium.make`` adds)."""
    names = []
    while isinstance(env, gymnasium.Wrapper):
        if not type(env).__module__.startswith("gymnasium."):
            names.append(type(env).__name__)
        env = env.env
    return names
