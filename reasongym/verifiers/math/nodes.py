"""The syntax tree of a parsed math answer, and the two ways parsing can fail.

Nodes are small frozen dataclasses so that they hash (parsed gold answers are cached), compare
structurally, and pickle (the sympy step runs them in a worker process). Nothing here evaluates
anything: :mod:`reasongym.verifiers.math.evaluate` and :mod:`reasongym.verifiers.math.to_sympy` do.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


class AnswerRejected(Exception):
    """An answer cannot be graded; ``reason`` says why in words."""

    def __init__(self, reason: str) -> None:
        """Keep ``reason``, a short phrase for people reading graded rollouts."""
        super().__init__(reason)
        self.reason = reason


class Unparseable(AnswerRejected):
    """The text is not in the answer grammar."""


class Refused(AnswerRejected):
    """The answer is in the grammar but too costly to evaluate (a number with millions of digits)."""


# ---- scalar expressions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    """The literal ``mantissa * 10**exp10``.

    ``decimals`` is the number of shown decimals of an approximate (decimal-point) literal, and
    None for exact ones (integers, ``2e3``).
    """

    mantissa: int
    exp10: int = 0
    decimals: int | None = None

    @property
    def value(self) -> Fraction:
        """The exact value; callers check the cost first, since ``exp10`` may be huge."""
        if self.exp10 >= 0:
            return Fraction(self.mantissa * 10**self.exp10)
        return Fraction(self.mantissa, 10**-self.exp10)


@dataclass(frozen=True)
class Sym:
    """A variable such as ``x`` or ``a_1``."""

    name: str


@dataclass(frozen=True)
class Const:
    """``pi``, ``e``, ``i`` (imaginary unit) or ``oo`` (infinity)."""

    name: str


@dataclass(frozen=True)
class Add:
    r"""A sum; subtraction is a ``Neg`` term, ``\pm`` a ``PlusMinus`` term."""

    terms: tuple[Node, ...]


@dataclass(frozen=True)
class Mul:
    """The product of ``num`` divided by the product of ``den`` (``den`` may be empty)."""

    num: tuple[Node, ...]
    den: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Neg:
    """Unary minus."""

    arg: Node


@dataclass(frozen=True)
class PlusMinus:
    r"""``\pm arg``: the answer stands for both signs."""

    arg: Node
    minus_first: bool = False


@dataclass(frozen=True)
class Pow:
    """``base ** exp``."""

    base: Node
    exp: Node


@dataclass(frozen=True)
class Root:
    """The ``index``-th root; odd roots of negative reals are real."""

    arg: Node
    index: Node


@dataclass(frozen=True)
class Func:
    """A named function: sin, cos, ..., log (natural, or base ``args[1]``), exp, abs, floor, ceil."""

    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Factorial:
    """``arg!`` (step 1) or the double factorial ``arg!!`` (step 2)."""

    arg: Node
    step: int = 1


@dataclass(frozen=True)
class Binom:
    """The binomial coefficient ``n choose k``."""

    n: Node
    k: Node


@dataclass(frozen=True)
class Percent:
    """``arg %``: arg / 100 inside arithmetic; a whole answer keeps the mark for grading."""

    arg: Node


@dataclass(frozen=True)
class Degree:
    r"""``arg ^\circ``: arg * pi / 180 inside arithmetic; a whole answer is an angle quantity."""

    arg: Node


# ---- answer structures ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseNum:
    """A numeral written in another base, ``204_5``; graded by its digits, not its value."""

    digits: str
    base: int


@dataclass(frozen=True)
class Seq:
    """A tuple (ordered), set or bare list of solutions (both unordered).

    ``kind`` is "tuple", "set" or "list"; ``hedged`` marks a list joined by the words "or"/"and".
    """

    kind: str
    items: tuple[Node, ...]
    hedged: bool = False


@dataclass(frozen=True)
class Colon:
    """Whole numbers joined by colons, ``4:30`` or ``3:1``: a clock time or a ratio.

    ``clock`` is True when it is written like a time (``h:mm`` or ``h:mm:ss``, two-digit minutes
    and seconds up to 59, hours up to 24); ``half`` is "am" or "pm" when that followed, and then
    it certainly is a time. Which one it is gets decided when it is compared.
    """

    parts: tuple[int, ...]
    clock: bool = False
    half: str | None = None


@dataclass(frozen=True)
class Interval:
    """An interval of reals; ``lo``/``hi`` may be minus/plus infinity."""

    lo: Node
    hi: Node
    lo_closed: bool
    hi_closed: bool


@dataclass(frozen=True)
class Union:
    """A union of intervals."""

    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Matrix:
    """A matrix (or vector) given row by row."""

    rows: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True)
class Rel:
    """A relation chain ``sides[0] ops[0] sides[1] ...`` with ops among = != < <= > >=."""

    ops: tuple[str, ...]
    sides: tuple[Node, ...]


@dataclass(frozen=True)
class Labeled:
    """``label = value`` where the label names the unknown (``x = 3``, ``f(x) = 2x``)."""

    label: Node
    value: Node


@dataclass(frozen=True)
class Unit:
    """A unit of measure: ``factor * pi**pi_power`` base units of ``dims`` (dimension, power) pairs."""

    name: str
    dims: tuple[tuple[str, int], ...]
    factor: Fraction = Fraction(1)
    pi_power: int = 0


@dataclass(frozen=True)
class Quantity:
    r"""A value with a unit (``5 cm``, ``$3``, ``30^\circ``)."""

    value: Node
    unit: Unit


@dataclass(frozen=True)
class Text:
    r"""An answer in words (``\text{Monday}``), lower-cased and space-joined."""

    text: str


Node = (
    Num
    | Sym
    | Const
    | Add
    | Mul
    | Neg
    | PlusMinus
    | Pow
    | Root
    | Func
    | Factorial
    | Binom
    | Percent
    | Degree
    | BaseNum
    | Seq
    | Colon
    | Interval
    | Union
    | Matrix
    | Rel
    | Labeled
    | Quantity
    | Text
)

SCALAR_TYPES = (Num, Sym, Const, Add, Mul, Neg, PlusMinus, Pow, Root, Func, Factorial, Binom, Percent, Degree)


def is_scalar(node: Node) -> bool:
    """True for nodes that can take part in arithmetic."""
    return isinstance(node, SCALAR_TYPES)


_LEAVES = (Num, Sym, Const, BaseNum, Colon, Unit, Text)


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes of ``node`` (empty for leaves and units)."""
    if isinstance(node, _LEAVES):  # most nodes of a tree: one test instead of fifteen
        return ()
    if isinstance(node, Add):
        return node.terms
    if isinstance(node, Mul):
        return node.num + node.den
    if isinstance(node, (Neg, PlusMinus, Factorial, Percent, Degree)):
        return (node.arg,)
    if isinstance(node, Pow):
        return (node.base, node.exp)
    if isinstance(node, Root):
        return (node.arg, node.index)
    if isinstance(node, Func):
        return node.args
    if isinstance(node, Binom):
        return (node.n, node.k)
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Interval):
        return (node.lo, node.hi)
    if isinstance(node, Union):
        return node.parts
    if isinstance(node, Matrix):
        return tuple(cell for row in node.rows for cell in row)
    if isinstance(node, Rel):
        return node.sides
    if isinstance(node, Labeled):
        return (node.label, node.value)
    if isinstance(node, Quantity):
        return (node.value,)
    return ()


def free_symbols(node: Node) -> frozenset[str]:
    """The names of the variables in ``node``."""
    if isinstance(node, Sym):
        return frozenset((node.name,))
    names: frozenset[str] = frozenset()
    for child in children(node):
        names |= free_symbols(child)
    return names


def has_approximate(node: Node) -> bool:
    """True when a decimal-point literal occurs in ``node`` (its value is a rounding)."""
    if isinstance(node, Num):
        return node.decimals is not None
    return any(has_approximate(child) for child in children(node))


def is_int_literal(node: object) -> bool:
    """Whether ``node`` is a whole number written without decimals or an exponent (``12``, not ``12.0``)."""
    return isinstance(node, Num) and node.exp10 == 0 and node.decimals is None and node.mantissa >= 0
