"""Evaluation: pass@k, maj@k and avg@n over graded samples; run a model or grade stored completions.

``evaluate`` samples through an environment (torch and transformers load only when it runs a model);
``grade_completions`` grades completions produced elsewhere; ``report`` compares evaluation files and
plots pass@k against k.
"""

from reasongym.evaluation.estimators import avg_at_n, bootstrap_ci, majority_vote, pass_at_k
from reasongym.evaluation.report import (
    EvalReport,
    compare_reports,
    load_records,
    load_report,
    plot_pass_at_k,
    summarize,
)
from reasongym.evaluation.runner import evaluate
from reasongym.evaluation.stored import grade_completions

__all__ = [
    "EvalReport",
    "avg_at_n",
    "bootstrap_ci",
    "compare_reports",
    "evaluate",
    "grade_completions",
    "load_records",
    "load_report",
    "majority_vote",
    "pass_at_k",
    "plot_pass_at_k",
    "summarize",
]
