"""MetricsWriter: config first, namespaced keys, flushed strict JSON lines, crash tolerance, plots, backends."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from reasongym.errors import ConfigError
from reasongym.runs.metrics import NAMESPACES, MetricsWriter, dumps_strict, read_metrics
from reasongym.runs.plots import plot_metrics


def _strict_loads(text: str) -> object:
    """json.loads that refuses NaN, Infinity and -Infinity, which Python's json accepts by default."""

    def refuse(name: str) -> object:
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


@dataclass(frozen=True)
class _Config:
    lr: float = 1e-3
    env: str = "reasongym/GSM8K-v0"
    out: Path = Path("runs")


def test_the_config_is_written_before_any_metric(tmp_path: Path) -> None:
    writer = MetricsWriter(tmp_path / "run", tensorboard=False, config=_Config())
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == {
        "lr": 1e-3,
        "env": "reasongym/GSM8K-v0",
        "out": "runs",
    }
    assert (tmp_path / "run" / "metrics.jsonl").read_text() == ""
    writer.close()


def test_each_line_is_flushed_as_it_is_logged(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer:
        writer.log(1, {"rollout/reward_mean": 0.25, "loss/policy": np.float32(1.5), "train/skipped": True})
        writer.log(2, {"eval/pass@1": 0.5, "perf/tokens_per_s": 100})
        lines = read_metrics(tmp_path / "metrics.jsonl")  # read while the writer is still open
    assert [line["step"] for line in lines] == [1, 2]
    assert lines[0]["rollout/reward_mean"] == 0.25 and lines[0]["loss/policy"] == 1.5
    assert lines[0]["train/skipped"] == 1 and lines[1]["perf/tokens_per_s"] == 100
    assert all(isinstance(line["time"], float) for line in lines)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("reward_mean", "metric key 'reward_mean' has no known namespace"),
        ("los/policy", "did you mean 'loss/policy'?"),
        ("charts/reward", "namespace one of ['rollout', 'loss', 'eval'"),
    ],
)
def test_keys_without_a_known_namespace_are_refused(tmp_path: Path, key: str, message: str) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer, pytest.raises(ConfigError) as raised:
        writer.log(1, {key: 1.0})
    assert message in str(raised.value)
    assert all(namespace in str(raised.value) for namespace in NAMESPACES)


def test_a_key_with_an_empty_name_is_refused(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer, pytest.raises(ConfigError) as raised:
        writer.log(1, {"loss/": 1.0})
    assert "metric key 'loss/' has an empty name; keys look like 'loss/name'" in str(raised.value)


def test_extra_namespaces_are_allowed_when_declared(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False, extra_namespaces=("curriculum",)) as writer:
        writer.log(0, {"curriculum/level": 3})
    assert read_metrics(tmp_path)[0]["curriculum/level"] == 3


@pytest.mark.parametrize(
    ("step", "metrics", "message"),
    [
        (-1, {"loss/x": 1.0}, "step=-1 is not allowed; expected an integer >= 0"),
        (1.5, {"loss/x": 1.0}, "step=1.5 is not allowed"),
        (1, {"loss/x": "high"}, "metric 'loss/x' has value 'high' of type str; expected a number"),
    ],
)
def test_bad_steps_and_values_are_refused(tmp_path: Path, step: object, metrics: dict, message: str) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer, pytest.raises(ConfigError) as raised:
        writer.log(step, metrics)
    assert message in str(raised.value)


def test_non_finite_values_are_written_as_null_so_the_file_stays_strict_json(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer:
        writer.log(1, {"loss/total": float("nan"), "loss/kl": float("inf"), "loss/policy": 0.5})
    line = (tmp_path / "metrics.jsonl").read_text()
    assert "NaN" not in line and "Infinity" not in line
    assert json.loads(line)["loss/total"] is None and json.loads(line)["loss/policy"] == 0.5


def test_a_non_finite_config_value_is_written_as_null(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False, config={"lr": float("nan"), "clip": (0.2, float("inf"))}):
        pass
    assert _strict_loads((tmp_path / "config.json").read_text()) == {"lr": None, "clip": [0.2, None]}


def test_resuming_rewrites_bare_nan_of_an_older_file_as_null(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "rollout/len_correct_mean": NaN}\n{"step": 2, "loss/x": 1.0}\n')
    MetricsWriter(tmp_path, tensorboard=False, resume_from_step=1).close()
    lines = [_strict_loads(line) for line in path.read_text().splitlines()]
    assert lines == [{"step": 1, "rollout/len_correct_mean": None}]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            {"a": float("nan"), "b": [1.0, float("-inf")], "c": {"d": np.float64("inf")}},
            {"a": None, "b": [1.0, None], "c": {"d": None}},
        ),
        ({"n": np.float32(0.5), "i": 3, "s": "NaN"}, {"n": 0.5, "i": 3, "s": "NaN"}),
    ],
)
def test_dumps_strict_writes_null_for_every_non_finite_number(value: object, expected: object) -> None:
    assert _strict_loads(dumps_strict(value)) == expected


def test_dumps_strict_raises_when_a_non_finite_value_slips_through() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        dumps_strict({"x": object()}, default=lambda _: float("nan"))


def test_a_line_cut_off_by_a_crash_is_skipped_but_a_broken_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "loss/x": 1.0}\n{"step": 2, "loss/x": 0.5}\n{"step": 3, "lo')
    assert [record["step"] for record in read_metrics(path)] == [1, 2]
    path.write_text('{"step": 1}\n{"step": 2, "lo\n{"step": 3}\n')
    with pytest.raises(ValueError, match="metrics.jsonl:2 is not valid JSON"):
        read_metrics(path)


def test_resuming_drops_the_lines_logged_after_the_checkpoint(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer:
        for step in range(1, 6):
            writer.log(step, {"loss/x": float(step)})
    with MetricsWriter(tmp_path, tensorboard=False, resume_from_step=3) as writer:
        writer.log(4, {"loss/x": 40.0})
    assert [(r["step"], r["loss/x"]) for r in read_metrics(tmp_path)] == [
        (1, 1.0),
        (2, 2.0),
        (3, 3.0),
        (4, 40.0),
    ]


def test_plot_draws_a_png_of_the_logged_curves(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=False) as writer:
        for step in range(1, 11):
            writer.log(
                step, {"rollout/reward_mean": step / 10, "loss/policy": 1 / step, "eval/accuracy": step / 20}
            )
    out = plot_metrics(tmp_path / "metrics.jsonl", tmp_path / "plots" / "curves.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
    with pytest.raises(
        ConfigError, match=r"match no logged metric; logged keys: \['eval/accuracy', 'loss/policy'"
    ):
        plot_metrics(tmp_path, tmp_path / "none.png", keys=("rollout/entropy",))


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None, reason="tensorboard is not installed")
def test_tensorboard_mirror_writes_event_files(tmp_path: Path) -> None:
    with MetricsWriter(tmp_path, tensorboard=True) as writer:
        writer.log(1, {"loss/policy": 1.0})
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed")
def test_asking_for_wandb_without_the_package_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="wandb_project='demo' but the `wandb` package is not installed"):
        MetricsWriter(tmp_path, tensorboard=False, wandb_project="demo")


def test_importing_the_metrics_module_loads_no_heavy_package() -> None:
    code = "import sys, reasongym.runs.metrics; print(sorted({'torch', 'matplotlib', 'wandb'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
