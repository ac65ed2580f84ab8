"""Procedural (generated) environments: the catalog rows only.

Each row names a ``source(seed=0, ...)`` function in one module of this package; the module (and
numpy, and sympy where a generator needs it) is imported only when the environment is made.
"""

from __future__ import annotations

from reasongym.envs.catalog import CatalogEntry

_MODULE = "reasongym.envs.procedural"

PROCEDURAL_ENVS: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        id="reasongym/Arithmetic-v0",
        source=f"{_MODULE}.arithmetic:source",
        description="Multi-step integer arithmetic, from 2-digit addition with carries to 5-operation expressions.",
        answer_type="math",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/Fractions-v0",
        source=f"{_MODULE}.fractions:source",
        description="Add, subtract, multiply and divide fractions; answer in lowest terms.",
        answer_type="math",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/LinearEquation-v0",
        source=f"{_MODULE}.linear_equation:source",
        description="Solve one linear equation for x; integer or fraction solution.",
        answer_type="math",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/LinearSystem-v0",
        source=f"{_MODULE}.linear_system:source",
        description="Solve a 2x2 linear system; answer the ordered pair (x, y).",
        answer_type="math",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/PolynomialRoots-v0",
        source=f"{_MODULE}.polynomial_roots:source",
        description="All roots of a quadratic or cubic with rational roots, as an unordered list.",
        answer_type="math",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/NumberTheory-v0",
        source=f"{_MODULE}.number_theory:source",
        description="gcd, lcm, number of divisors, remainders and modular powers; integer answers.",
        answer_type="math",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/Combinatorics-v0",
        source=f"{_MODULE}.combinatorics:source",
        description="AIME-style counting (arrangements, committees, restrictions); integer answers 0-999.",
        answer_type="integer",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/Countdown-v0",
        source=f"{_MODULE}.countdown:source",
        description="Reach a target with + - * / using each given number exactly once (TinyZero's task).",
        answer_type="countdown",
        size="procedural",
    ),
    CatalogEntry(
        id="reasongym/QuantityComparison-v0",
        source=f"{_MODULE}.quantity_comparison:source",
        description="Multiple-choice comparisons and conversions of weights, lengths, times and speeds.",
        answer_type="choice",
        size="procedural",
    ),
)
