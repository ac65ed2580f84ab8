"""Answer verifiers: extract the final answer from a completion, then compare it with the gold.

``verify(completion, gold, kind)`` grades one completion and ``verify_many`` a batch; ``KINDS``
lists the answer kinds. Importing this package does not import sympy: the math grader loads it on
first use.
"""

from reasongym.verifiers.api import KINDS, verify, verify_many
from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.extract import Extraction, extract_boxed, extract_math_answer

__all__ = [
    "KINDS",
    "Extraction",
    "Outcome",
    "Verdict",
    "extract_boxed",
    "extract_math_answer",
    "verify",
    "verify_many",
]
