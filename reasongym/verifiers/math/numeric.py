r"""Compare two scalar answers, cheapest test first: exact rationals, mpmath numbers, then sympy.

1. Both sides rational (integers, decimals, fractions, percents, perfect roots): exact
   ``Fraction`` comparison. No mpmath, no sympy, no worker process.
2. Both sides constant: mpmath at a precision that grows with the estimated size of the values, so
   that ``2^{2023} + \sqrt 2`` and ``2^{2023} + \sqrt 3`` stay apart. When both values are
   indistinguishable from zero the question goes to sympy.
3. Variables: both sides are evaluated at fixed random real and complex points; a difference at
   any point is a definite "not equal" (a fast filter). Agreement is then tested numerically across
   the plane (:func:`_numeric_identity`: the same variables, no abs/floor/ceil, ten points in all
   four quadrants, agreement to 45+ digits and again at twice the precision), which accepts
   without sympy. Otherwise sympy decides in the worker, under the time limit: equal only when it
   reduces ``gold - pred`` to 0.

Decimals (rules and reasons in :mod:`decimals`): a decimal gold is exact, and the caller adds what
it may round; an exact fraction gold whose decimals never end accepts a decimal literal of three or
more significant digits that is its rounding or cut-off (``0.333`` for ``1/3``); any other exact gold
needs an exact prediction, or a decimal one with about ten significant digits (relative error <= 5e-10,
and under 0.5 for an integer gold). ``tol``, when given, is an absolute tolerance: half a unit of a
chain member's last digit (:mod:`forms`), or a double's precision for a gold printed from a float.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from reasongym.errors import VerifierOutOfMemory, VerifierTimeout
from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.cost import estimate_digits
from reasongym.verifiers.math.decimals import decimal_states, terminates
from reasongym.verifiers.math.evaluate import exact_value, numeric_context, numeric_value
from reasongym.verifiers.math.nodes import Node, Refused

__all__ = ["Match", "SymbolicCheck", "compare_scalars", "APPROX_REL_TOL"]

APPROX_REL_TOL = Fraction(5, 10**10)
"""Largest relative error of a decimal prediction for an exact gold (about ten significant digits)."""
_BASE_DPS = 40
# High-precision gamma or trig functions cost seconds at thousands of digits; past this cap a
# numeric tie goes to sympy instead.
_MAX_DPS = 300
_SAMPLES = 6
_WIDE_SAMPLES = 10


@dataclass(frozen=True)
class Match:
    """The result of comparing a gold answer with a prediction."""

    equal: bool
    reason: str


class SymbolicCheck:
    """Calls the sympy step (``to_sympy._symbolic_equal``) in a worker, within one budget per comparison.

    Every call of one comparison shares the time budget. The callable pickles by reference to a loader, so this process never imports sympy while the
    worker imports it before the clock starts.
    """

    def __init__(self, timeout: float) -> None:
        """Allow the sympy calls of one comparison ``timeout`` seconds in all, counted from now."""
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.asked = False
        """Whether the comparison asked sympy: then its result depended on the time left."""

    def __call__(self, gold: Node, pred: Node) -> bool:
        """True when sympy simplifies ``gold - pred`` to zero.

        Raises VerifierTimeout when the budget is spent (without starting the call) or the call runs past
        what is left of it, and Refused (graded REFUSED, naming the limit) when it needs more memory than
        the worker may use.
        """
        from reasongym.verifiers.timeout import WORKER_MEMORY_BYTES, run_with_timeout

        self.asked = True
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise VerifierTimeout(f"the comparison's time budget of {self.timeout:g} s is spent")
        try:
            return bool(run_with_timeout(_SYMPY_STEP, (gold, pred), left))
        except VerifierOutOfMemory as error:
            raise Refused(
                f"the symbolic comparison needed more than {WORKER_MEMORY_BYTES >> 20} MiB"
            ) from error
        except RuntimeError as error:  # the worker died (killed), or deep recursion
            raise VerifierTimeout(f"the sympy step failed: {error}") from error


class _LazySympyStep:  # pragma: no mutate block (runs in the worker, which mutation testing cannot see)
    """A picklable stand-in for ``to_sympy._symbolic_equal`` that does not import sympy here."""

    def __init__(self) -> None:
        # Read by run_with_timeout for its messages, as for a plain function.
        self.__module__ = "reasongym.verifiers.math.to_sympy"
        self.__qualname__ = "_symbolic_equal"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (_load_sympy_step, ("_symbolic_equal",))

    def __call__(self, gold: Node, pred: Node) -> bool:
        return bool(_load_sympy_step("_symbolic_equal")(gold, pred))


def _load_sympy_step(name: str) -> Any:  # pragma: no mutate block (runs in the worker)
    from reasongym.verifiers.math import to_sympy

    return getattr(to_sympy, name)


_SYMPY_STEP = _LazySympyStep()


def _within_tolerance(
    gold: Any, pred: Any, tol: Fraction | None, approximate: bool, exact_only: bool
) -> bool:
    """The tolerance ``tol`` allows, or the one a decimal prediction of an exact gold allows.

    A gold whose decimal expansion ends (7, 3/4) can be written exactly, so ``exact_only`` leaves
    a decimal prediction no tolerance; 1/3 or pi allow about ten significant digits.
    """
    diff = abs(pred - gold)
    if tol is not None:
        if isinstance(diff, Fraction):
            return diff <= tol * (1 + Fraction(1, 10**12))
        return diff <= float(tol) * (1 + 1e-12)
    if approximate and not exact_only:
        rel = APPROX_REL_TOL if isinstance(diff, Fraction) else float(APPROX_REL_TOL)
        return diff <= rel * abs(gold)
    return False


def _compare_rationals(gold: Fraction, pred: Fraction, tol: Fraction | None, approximate: bool) -> Match:
    """Exact comparison, then the tolerance a decimal gold or a decimal prediction allows."""
    if gold == pred:
        return Match(True, "equal values")
    if _within_tolerance(gold, pred, tol, approximate, terminates(gold)):
        return Match(True, "equal within the rounding of the decimals")
    return Match(False, _unequal(pred, gold))


def _unequal(pred: Fraction, gold: Fraction) -> str:
    """'p is not g' for two different values, or their difference where both print alike.

    Six significant digits show 10^400 + 1 and 10^400 the same; the reason must never read 'x is not x'.
    """
    shown_pred, shown_gold = _show(pred), _show(gold)
    if shown_pred != shown_gold:
        return f"{shown_pred} is not {shown_gold}"
    return f"the values differ by {_show(pred - gold)} (both about {shown_gold})"


def _show(value: Any) -> str:
    if not isinstance(value, Fraction):
        return str(value)[:40]
    if value == 0 or max(value.numerator.bit_length(), value.denominator.bit_length()) < 120:
        return str(value)
    # str() of a 5,000-digit int raises and float() overflows, so scale by a power of ten first.
    exponent = math.floor(math.log10(abs(value.numerator)) - math.log10(value.denominator))
    mantissa = float(value / Fraction(10) ** exponent)
    return f"{mantissa:.6f}e{exponent:+d}"


def _needed_dps(gold: Node, pred: Node) -> int:
    """Digits that keep values of this size apart (2^2023 + sqrt 2 vs 2^2023 + sqrt 3)."""
    return _BASE_DPS + int(max(estimate_digits(gold), estimate_digits(pred)))


def _brief(ctx: Any, value: Any, digits: int = 12) -> str:
    with ctx.workdps(digits + 3):  # printing a 5,000-digit mpf would hit Python's int-to-str limit
        return ctx.nstr(+value, digits)


def _differ(ctx: Any, pred: Any, gold: Any) -> str:
    """'p is not g', with enough digits that the two printed numbers differ."""
    for digits in (12, 20, 30):
        shown = _brief(ctx, pred, digits), _brief(ctx, gold, digits)
        if shown[0] != shown[1]:
            break
    return f"{shown[0]} is not {shown[1]}"


def _compare_constants(gold: Node, pred: Node, tol: Fraction | None, symbolic: SymbolicCheck) -> Match:
    needed = _needed_dps(gold, pred)
    dps = min(needed, _MAX_DPS)
    try:
        g, p = numeric_value(gold, dps), numeric_value(pred, dps)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return Match(False, "a value is undefined")
    ctx = numeric_context(dps)
    if ctx.isnan(g) or ctx.isnan(p):
        return Match(False, "a value is undefined")
    if ctx.isinf(g) or ctx.isinf(p):
        return Match(bool(g == p), "infinite values" if g == p else "an infinite value differs")
    diff, scale = abs(g - p), max(abs(g), abs(p))
    tiny = ctx.mpf(10) ** (-(dps - 15))
    if scale < tiny:  # both indistinguishable from zero: only sympy can tell
        return _ask_sympy(gold, pred, symbolic)
    if diff <= scale * ctx.mpf(10) ** (-(dps - 10)):
        if needed > dps:  # agreement at capped precision proves nothing for values this large
            return _ask_sympy(gold, pred, symbolic)
        return Match(True, f"equal values (to {dps - 10} digits)")
    approximate = ast.has_approximate(pred) or ast.has_approximate(gold)
    if _within_tolerance(g, p, tol, approximate, _terminating_exact(gold)):
        return Match(True, "equal within the rounding of the decimals")
    return Match(False, _differ(ctx, p, g))


def _terminating_exact(node: Node) -> bool:
    try:
        value = exact_value(node)
    except ZeroDivisionError:
        return False
    return value is not None and terminates(value)


def _sample_points(names: frozenset[str], ctx: Any) -> list[dict[str, Any]]:
    rng = random.Random(20240611)  # fixed: grading must not depend on the run
    points = []
    for k in range(_SAMPLES):
        point = {}
        for name in sorted(names):
            real = ctx.mpf(rng.uniform(0.35, 2.35))
            point[name] = ctx.mpc(real, rng.uniform(-1.5, 1.5)) if k >= _SAMPLES - 2 else real
        points.append(point)
    return points


def _compare_functions(gold: Node, pred: Node, names: frozenset[str], symbolic: SymbolicCheck) -> Match:
    dps = min(_needed_dps(gold, pred), _MAX_DPS)
    ctx = numeric_context(dps)
    approximate = ast.has_approximate(pred) or ast.has_approximate(gold)
    rel = ctx.mpf(float(APPROX_REL_TOL)) if approximate else ctx.mpf(10) ** (-(dps - 15))
    for point in _sample_points(names, ctx):
        try:
            g, p = numeric_value(gold, dps, point), numeric_value(pred, dps, point)
        except (ZeroDivisionError, ValueError, OverflowError, TypeError, KeyError):
            continue
        if not (ctx.isfinite(g) and ctx.isfinite(p)):
            continue
        if abs(g - p) > rel * max(abs(g), abs(p), ctx.mpf(10) ** (-(dps // 2))):
            where = ", ".join(f"{n}={_brief(ctx, v)}" for n, v in point.items())
            return Match(False, f"the expressions differ at {where}")
    if approximate:
        return Match(True, "equal at every sampled point (decimal coefficients)")
    digits = _numeric_identity(gold, pred)
    if digits:
        return Match(True, f"equal at {_WIDE_SAMPLES} random real and complex points to {digits} digits")
    return _ask_sympy(gold, pred, symbolic)


def _wide_points(names: frozenset[str], ctx: Any) -> list[dict[str, Any]]:
    """Points in all four quadrants, half of them real: branch cuts and |x| show up here."""
    rng = random.Random(20240612)
    points = []
    for k in range(_WIDE_SAMPLES):
        point = {}
        for name in sorted(names):
            real = ctx.mpf(rng.uniform(0.35, 2.35) * rng.choice((-1, 1)))
            point[name] = ctx.mpc(real, rng.uniform(-1.5, 1.5)) if k % 2 else real
        points.append(point)
    return points


def _uses_non_analytic(node: Node) -> bool:
    if isinstance(node, ast.Func) and node.name in ("abs", "floor", "ceil"):
        return True
    return any(_uses_non_analytic(child) for child in ast.children(node))


def _numeric_identity(gold: Node, pred: Node) -> int:
    """The digits to which two exact expressions agree at every wide point, at two precisions; else 0.

    Two different analytic expressions in the same variables cannot agree to 45 and then 105
    digits at ten random points across the plane (besides real points of either sign, complex points
    in every quadrant, so branch cuts show), so such agreement is accepted as equality without
    sympy. Not used for abs, floor and ceil, for values too large to evaluate at the capped
    precision, or when the variables differ (``x + y - y`` goes to sympy).
    """
    names = ast.free_symbols(gold)
    if names != ast.free_symbols(pred) or _uses_non_analytic(gold) or _uses_non_analytic(pred):
        return 0
    low = _needed_dps(gold, pred) + 20
    if 2 * low > _MAX_DPS:
        return 0
    for dps in (low, 2 * low):
        ctx = numeric_context(dps)
        rel, agreed = ctx.mpf(10) ** (-(dps - 15)), 0
        for point in _wide_points(names, ctx):
            try:
                g, p = numeric_value(gold, dps, point), numeric_value(pred, dps, point)
            except (ZeroDivisionError, ValueError, OverflowError, TypeError, KeyError):
                continue
            if not (ctx.isfinite(g) and ctx.isfinite(p)):
                continue
            if abs(g - p) > rel * max(abs(g), abs(p), ctx.mpf(10) ** (-(dps // 2))):
                return 0
            agreed += 1
        if agreed < _WIDE_SAMPLES - 2:
            return 0
    return 2 * low - 15


def _ask_sympy(gold: Node, pred: Node, symbolic: SymbolicCheck) -> Match:
    try:
        equal = symbolic(gold, pred)
    except (TypeError, ValueError, ZeroDivisionError, ArithmeticError, RecursionError) as error:
        return Match(False, f"sympy could not compare the expressions ({type(error).__name__})")
    if equal:
        return Match(True, "equal (sympy simplifies the difference to 0)")
    return Match(False, "sympy does not simplify the difference to 0")


def compare_scalars(gold: Node, pred: Node, tol: Fraction | None, symbolic: SymbolicCheck) -> Match:
    """Compare two scalar expressions, cheapest test first (see the module docstring).

    Args:
        gold: The gold expression.
        pred: The predicted expression.
        tol: An absolute tolerance (a chain member's rounding, a float-printed gold's precision), or None.
        symbolic: The bounded sympy step, called only when the cheaper tests cannot decide.

    Returns:
        Whether they are equal, and why.

    Raises:
        VerifierTimeout: The sympy step ran past its time limit.
    """
    try:
        g, p = exact_value(gold), exact_value(pred)
    except ZeroDivisionError:
        return Match(False, "division by zero")
    if g is not None and p is not None:
        stated = decimal_states(g, pred) if tol is None and g != p else None
        if stated:
            return Match(True, "the decimal is the gold rounded or cut off at its last digit")
        if stated is False:
            return Match(False, _unequal(p, g))
        return _compare_rationals(g, p, tol, ast.has_approximate(pred))
    names = ast.free_symbols(gold) | ast.free_symbols(pred)
    if not names:
        return _compare_constants(gold, pred, tol, symbolic)
    return _compare_functions(gold, pred, names, symbolic)
