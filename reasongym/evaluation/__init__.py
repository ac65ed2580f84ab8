"""Evaluation: pass@k, maj@k and avg@n over graded samples."""

from reasongym.evaluation.estimators import avg_at_n, bootstrap_ci, majority_vote, pass_at_k

__all__ = ["avg_at_n", "bootstrap_ci", "majority_vote", "pass_at_k"]
