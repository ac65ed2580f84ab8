"""The metrics picture (`reasongym.runs.plots`): panels read as words, equal curves merge, flags and flat lines
stay apart, no legend covers a curve; an SFT run draws its curves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_the_metrics_picture_merges_equal_panels_and_leaves_flags_out(tmp_path: Path) -> None:
    from reasongym.runs.metrics import MetricsWriter
    from reasongym.runs.plots import _panels, plot_metrics

    with MetricsWriter(tmp_path, tensorboard=False) as writer:
        for step in range(1, 31):
            share = step / 30
            writer.log(
                step,
                {
                    "rollout/reward_mean": share,
                    "rollout/correct_rate": share,
                    "train/entropy": 1 - share,
                    "train/entropy_collapsed": float(step > 20),
                    "loss/policy": 0.1,
                    "loss/total": 0.1,
                },
            )
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    panels = _panels(records, ("rollout/reward_mean", "rollout/correct_rate", "train/entropy", "loss/"))
    assert [(title, [label for label, _, _ in series]) for title, series in panels] == [
        ("reward (batch mean) = correct samples (share)", ["rollout/reward_mean"]),
        ("token entropy", ["train/entropy"]),  # the 0/1 flag is no curve
        ("losses", ["policy = total"]),
    ]
    png = plot_metrics(
        tmp_path, tmp_path / "m.png", keys=("rollout/reward_mean", "rollout/correct_rate", "train/")
    )
    width, height = (
        int.from_bytes(png.read_bytes()[16:20], "big"),
        int.from_bytes(png.read_bytes()[20:24], "big"),
    )
    assert width <= 1300 and height <= 1000  # rows of at most three panels, not one row 3,000 px wide


def test_plot_panels_read_as_words_and_flat_lines_stay_apart() -> None:
    """Legends name curves by whole words (max, mean, min: not "ax, ean, in"); two panels that are flat at the
    same value are two panels (they were merged into one run-on title); each known panel has a title in words."""
    from reasongym.agents.runtime.session import PLOT_KEYS
    from reasongym.runs.plots import PANEL_TITLES, _panels

    records = [
        {
            "step": step,
            "train/ratio_max": 1.0 + step * 1e-6,
            "train/ratio_mean": 1.0,
            "train/ratio_min": 1.0 - 1e-6,
            "rollout/reward_mean": 0.0,
            "train/clip_high_frac": 0.0,
            "loss/policy": 0.0,
            "rollout/all_correct_group_frac": 0.0,
            "rollout/all_wrong_group_frac": 1.0,
        }
        for step in (1, 2, 3)
    ]
    panels = dict(_panels(records, PLOT_KEYS))
    ratio = panels["importance ratio, new / old policy"]
    assert [label for label, _, _ in ratio] == ["max", "mean", "min"]
    assert [label for label, _, _ in panels["groups all correct or all wrong (share)"]] == [
        "correct",
        "wrong",
    ]
    assert {"reward (batch mean)", "fraction of tokens clipped", "losses"} <= set(panels)
    assert all(key in PANEL_TITLES for key in PLOT_KEYS)


def test_an_sft_run_draws_its_curves(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from reasongym.agents.algorithms import preset_configs
    from reasongym.agents.sft import train_sft
    from reasongym.policy.tiny import tiny_policy

    configs = preset_configs("tiny", "sft", max_steps=3, progress_bar=False, stop_at_accuracy=None)
    model, tokenizer = tiny_policy(0)
    train_sft(
        configs["sft"], model, tokenizer, [("1+1=", "2"), ("2+2=", "4")], run=configs["run"], run_dir=tmp_path
    )
    assert (tmp_path / "metrics.png").stat().st_size > 10_000


def test_no_legend_covers_a_curve(tmp_path: Path) -> None:
    from reasongym.agents.runtime.session import PLOT_KEYS
    from reasongym.runs.plots import metrics_figure

    # the ratio's three curves fill their panel, where the legend used to sit on the min
    rows = [
        {
            "step": step,
            "train/ratio_max": 1 + 1e-6 * (step % 3),
            "train/ratio_mean": 1.0,
            "train/ratio_min": 1 - 1e-6 * (step % 2),
            "rollout/all_correct_group_frac": 0.1 * step,
            "rollout/all_wrong_group_frac": 1 - 0.1 * step,
        }
        for step in range(1, 9)
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    figure = metrics_figure(tmp_path / "metrics.jsonl", PLOT_KEYS, title="t")
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    legends = [(axes, axes.get_legend()) for axes in figure.axes if axes.get_legend() is not None]
    assert len(legends) == 2
    for axes, legend in legends:
        box, plot_area = legend.get_window_extent(renderer), axes.get_window_extent(renderer)
        assert not box.overlaps(plot_area), axes.get_title()
