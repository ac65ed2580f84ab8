"""What the evaluation tests share: `evaluate` on the arithmetic environment, quietly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reasongym.evaluation import evaluate

ENV = "reasongym/Arithmetic-v0"


@pytest.fixture
def quiet_eval() -> Callable[..., Any]:
    """``quiet_eval(model, **settings)``: `evaluate` on Arithmetic level 1 without a bar or a table."""

    def run(model: Any, **settings: Any) -> Any:
        return evaluate(model, ENV, **{"difficulty": 1, "progress": False, "verbose": False, **settings})

    return run
