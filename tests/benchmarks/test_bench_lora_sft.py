"""benchmarks/bench_lora_sft.py --learning: the probes' CPU-seconds leave the probes out, in both modes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.conftest import run_script

SCRIPT = "benchmarks.bench_lora_sft"
PROBE_CPU_S = 1000.0
"""What each probe costs on the test's clock: far more than anything else, so counting it as training shows."""


class TickingClock:
    """A CPU clock that advances one second each time it is read, and ``PROBE_CPU_S`` more while a probe runs:
    what the curve counts follows from the code alone, not from how fast this machine is."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now

    def probe(self, *args: Any, **kwargs: Any) -> float:
        """Stands in for the greedy probe: costs ``PROBE_CPU_S`` and scores a fixed accuracy."""
        self.now += PROBE_CPU_S
        return 0.25


@pytest.mark.parametrize("mode", ["full", "lora"])
def test_each_probe_reports_the_training_cpu_before_it_without_the_probes(
    bench: Any, tiny: Any, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reasongym.evaluation.runner

    clock = TickingClock()
    monkeypatch.setattr(reasongym.evaluation.runner, "greedy_pass_at_1", clock.probe)
    model, tokenizer = tiny()
    weights_before = {name: p.detach().clone() for name, p in model.named_parameters()}
    curve = bench.learning_curve(
        model, tokenizer, mode, steps=6, probe_every=2, probe_problems=4, clock=clock
    )

    assert [probe["step"] for probe in curve["probes"]] == [2, 4, 6]
    assert [probe["accuracy"] for probe in curve["probes"]] == [0.25] * 3
    # The clock reads: start 1; each probe reads it before (training so far) and after (the probe's cost).
    # Training before probe i is i ticks; each probe costs PROBE_CPU_S plus its own tick.
    assert [probe["train_cpu_s"] for probe in curve["probes"]] == [1.0, 2.0, 3.0]
    assert curve["probe_cpu_s"] == 3 * (PROBE_CPU_S + 1)
    assert curve["train_cpu_s"] == 4.0  # the final reading: one more tick, no probe
    assert len(curve["loss_at_each_probe"]) == 3 and curve["lr"] == bench.LEARNING_RATES[mode]
    after = {name.replace(".base_layer", ""): p.detach() for name, p in model.named_parameters()}
    changed = {name for name, weight in weights_before.items() if not after[name].equal(weight)}
    if mode == "full":
        assert changed, "full fine-tuning changed no weight"
    else:  # only the adapters train; the model's own weights stay as loaded
        assert not changed, f"LoRA changed the model's own weights: {sorted(changed)[:3]}"
        adapters = [name for name, p in model.named_parameters() if p.requires_grad]
        assert adapters and all("lora_" in name for name in adapters)


def test_first_reaching_finds_the_first_probe_at_the_target(bench: Any) -> None:
    probes = [
        {"accuracy": 0.1, "train_cpu_s": 10},
        {"accuracy": 0.3, "train_cpu_s": 20},
        {"accuracy": 0.4, "train_cpu_s": 30},
    ]
    assert bench.first_reaching(probes, 0.3)["train_cpu_s"] == 20
    assert bench.first_reaching(probes, 0.5) is None


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--steps", "0"], "--steps 0: at least 1 allowed"),
        (["--learning", "--steps", "5"], "--steps 5: --learning needs at least 10"),
        (["--learning", "--replot", "--plot", "{tmp}/none.png"], "--replot: no {tmp}/none.json"),
    ],
)
def test_bad_flags_exit_with_the_value_and_what_is_allowed(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    flags = [flag.replace("{tmp}", str(tmp_path)) for flag in flags]
    done = run_script(SCRIPT, "--model", "unused", *flags, timeout=120)
    assert done.returncode != 0 and message.replace("{tmp}", str(tmp_path)) in done.stderr
