"""`reasongym.ranges`: every numeric field of every config has a range, and NaN, infinity and huge numbers are
refused in each."""

from __future__ import annotations

import pytest

from reasongym.errors import ConfigError


def _config_classes() -> list[type]:
    from reasongym.agents.config import LoRAConfig, RolloutConfig, RunConfig
    from reasongym.agents.dapo import DAPOConfig
    from reasongym.agents.distill import DistillConfig
    from reasongym.agents.grpo import GRPOConfig
    from reasongym.agents.offpolicy import ImportanceSamplingConfig
    from reasongym.agents.sft import SFTConfig
    from reasongym.agents.star import STaRConfig
    from reasongym.evaluation.config import EvalConfig
    from reasongym.generation.engines import VLLMSettings

    return [
        LoRAConfig,
        RunConfig,
        RolloutConfig,
        VLLMSettings,
        ImportanceSamplingConfig,
        GRPOConfig,
        DAPOConfig,
        STaRConfig,
        SFTConfig,
        DistillConfig,
        EvalConfig,
    ]


def _numeric_fields(cls: type) -> list[str]:
    import dataclasses
    import typing

    from reasongym.ranges import _numeric

    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if _numeric(hints[f.name])[0]]


def test_every_numeric_field_of_every_config_has_a_range() -> None:
    from reasongym.ranges import FIELD_RANGES

    fields = {f"{cls.__name__}.{name}" for cls in _config_classes() for name in _numeric_fields(cls)}
    assert fields - set(FIELD_RANGES) == set() and set(FIELD_RANGES) - fields == set()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 10**21, 10**400])
def test_nan_infinity_and_huge_numbers_are_refused_in_every_numeric_field(bad: float) -> None:
    for cls in _config_classes():
        for name in _numeric_fields(cls):
            with pytest.raises(ConfigError, match=rf"{name}=.* is not allowed; expected"):
                cls(**{name: bad})
