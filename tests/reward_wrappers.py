"""Reward wrappers shared by the training tests (importable from any test: pytest puts ``tests/`` on
``sys.path`` for its conftest.py, this folder having no ``__init__.py``)."""

from __future__ import annotations

from typing import Any

import gymnasium


class DigitReward(gymnasium.Wrapper):
    """Reward = the share of digits in the completion: an untrained model gets different rewards within a
    group, so every step has a non-zero loss and moves the weights (the verifier's 0/1 would give it zeros)."""

    def step(self, action: Any) -> Any:
        observation, _, terminated, truncated, info = self.env.step(action)
        return (
            observation,
            sum(c.isdigit() for c in action) / max(len(action), 1),
            terminated,
            truncated,
            info,
        )
