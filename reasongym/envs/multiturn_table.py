"""Multi-turn environments: the catalog rows only (cheap to import; nothing is built here).

Both tuples are part of the built-in table; any other id gets the same treatment through
``make_tool_env(<id>)`` and ``make_retry_env(<id>)``.
"""

from __future__ import annotations

from reasongym.envs.catalog import CatalogEntry

_TOOL_ENV = "reasongym.envs.multiturn:ToolReasoningEnv"
_RETRY_ENV = "reasongym.envs.multiturn:RetryReasoningEnv"

MULTITURN_ENVS: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        id="reasongym/ToolArithmetic-v0",
        source="reasongym.envs.procedural.arithmetic:source",
        description=(
            "Multi-turn: 4-5 operation arithmetic (level 5) with a <calc> calculator and a <sympy> tool "
            "before the final answer."
        ),
        answer_type="math",
        size="procedural",
        env_kwargs={"difficulty": 5},
        entry_point=_TOOL_ENV,
    ),
)

RETRY_ENVS: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        id="reasongym/GSM8K-Retry-v0",
        source="reasongym.envs.benchmarks.gsm8k:source",
        description="Multi-turn: GSM8K with up to 3 attempts, told when wrong; reward 0.5**attempt.",
        answer_type="math",
        size="train 7473, test 1319",
        entry_point=_RETRY_ENV,
    ),
    CatalogEntry(
        id="reasongym/ArithmeticRetry-v0",
        source="reasongym.envs.procedural.arithmetic:source",
        description="Multi-turn: level-4 arithmetic with up to 3 attempts, told when wrong; reward 0.5**attempt.",
        answer_type="math",
        size="procedural",
        env_kwargs={"difficulty": 4},
        entry_point=_RETRY_ENV,
    ),
)
