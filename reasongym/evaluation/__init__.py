"""Evaluation: pass@k, pass^k, maj@k and avg@n over graded samples; run a model or grade stored completions.

``evaluate`` samples through an environment with an `EvalConfig` (torch and transformers load only when it
runs a model); ``grade_completions`` grades completions produced elsewhere; ``report`` compares evaluation
files; ``plots`` draws pass@k against k. Names load on first use, so that ``reasongym.pass_at_k`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasongym.evaluation.config import EvalConfig
    from reasongym.evaluation.estimators import (
        Votes,
        avg_at_n,
        bootstrap_ci,
        count_votes,
        maj_at_k,
        pass_at_k,
        pass_hat_k,
    )
    from reasongym.evaluation.plots import plot_pass_at_k
    from reasongym.evaluation.records import load_records
    from reasongym.evaluation.report import EvalReport, compare_reports, load_report, summarize
    from reasongym.evaluation.runner import evaluate
    from reasongym.evaluation.stored import grade_completions

_LAZY = {
    "EvalConfig": "config",
    "avg_at_n": "estimators",
    "bootstrap_ci": "estimators",
    "Votes": "estimators",
    "count_votes": "estimators",
    "maj_at_k": "estimators",
    "pass_at_k": "estimators",
    "pass_hat_k": "estimators",
    "EvalReport": "report",
    "compare_reports": "report",
    "load_records": "records",
    "load_report": "report",
    "plot_pass_at_k": "plots",
    "summarize": "report",
    "evaluate": "runner",
    "grade_completions": "stored",
}

__all__ = [
    "EvalConfig",
    "EvalReport",
    "Votes",
    "avg_at_n",
    "bootstrap_ci",
    "compare_reports",
    "count_votes",
    "evaluate",
    "grade_completions",
    "load_records",
    "load_report",
    "maj_at_k",
    "pass_at_k",
    "pass_hat_k",
    "plot_pass_at_k",
    "summarize",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"reasongym.evaluation.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'reasongym.evaluation' has no attribute {name!r}")
