"""A run records the model it started from by its source when it can be rebuilt from there (no copy of the
weights in the run folder), rebuilds its KL reference from that record, and refuses a source that changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from reasongym.agents.algorithms import preset_configs
from reasongym.agents.runtime.session import RLSession
from reasongym.agents.runtime.setup import start_session
from reasongym.errors import ConfigError
from reasongym.policy.base_model import BASE_FILE, REFERENCE_FILE, fingerprint, source_of
from reasongym.policy.loading import load_base, load_policy, save_policy

ENV = "reasongym/Arithmetic-v0"


@pytest.fixture
def saved_tiny(tiny) -> Callable[..., Path]:
    """``saved_tiny(folder, seed=0)``: the tiny model saved as a model folder there."""

    def save(folder: Path, seed: int = 0) -> Path:
        return save_policy(*tiny(seed=seed), folder)

    return save


def _session(model: torch.nn.Module, tokenizer: object, run_dir: Path) -> RLSession:
    configs = preset_configs("default", "grpo", max_steps=2, num_prompts=2, group_size=2, progress_bar=False)
    return start_session(
        configs["run"],
        configs["rollout"],
        model,
        tokenizer,
        ENV,
        algo="grpo",
        config_record={},
        run_dir=run_dir,
        generator=None,
        with_reference=True,
    )


def test_a_loaded_model_is_recorded_by_source_and_a_changed_one_by_its_weights(
    tmp_path: Path, saved_tiny
) -> None:
    model, tokenizer = load_policy(saved_tiny(tmp_path / "model"))
    assert source_of(model)["source"] == str((tmp_path / "model").resolve())
    session = _session(model, tokenizer, tmp_path / "run")
    session.close()
    record = json.loads((tmp_path / "run" / BASE_FILE).read_text())
    assert record["fingerprint"] == fingerprint(model) and not (tmp_path / "run" / REFERENCE_FILE).exists()
    with torch.no_grad():
        next(model.parameters()).add_(1.0)  # no longer what its source holds
    assert source_of(model) is None
    session = _session(model, tokenizer, tmp_path / "other")
    session.close()
    assert (tmp_path / "other" / REFERENCE_FILE).exists() and not (tmp_path / "other" / BASE_FILE).exists()


def test_a_resume_from_a_changed_model_rebuilds_the_reference_from_the_source(
    tmp_path: Path, saved_tiny
) -> None:
    model, tokenizer = load_policy(saved_tiny(tmp_path / "model"))
    original = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    _session(model, tokenizer, tmp_path / "run").close()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(0.5)  # e.g. the weights a caller trained further in Python
    session = _session(model, tokenizer, tmp_path / "run")
    try:
        for name, tensor in session.learner.reference.state_dict().items():
            torch.testing.assert_close(tensor, original[name], rtol=0, atol=0)
    finally:
        session.close()


def test_a_source_whose_weights_changed_is_refused(tmp_path: Path, saved_tiny) -> None:
    model, tokenizer = load_policy(saved_tiny(tmp_path / "model"))
    _session(model, tokenizer, tmp_path / "run").close()
    saved_tiny(tmp_path / "model", seed=1)  # the folder now holds other weights
    with pytest.raises(
        ConfigError, match="names .* as the run's starting model, but the weights there changed"
    ):
        load_base(tmp_path / "run")
