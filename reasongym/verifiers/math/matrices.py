r"""Matrix arithmetic in an answer, and vectors written with unit vectors.

An answer (or a gold) may be written as arithmetic on matrices: ``2\begin{pmatrix}1&2\\3&4\end{pmatrix}``
or a gold ``\begin{pmatrix}1&0\\0&1\end{pmatrix} + \begin{pmatrix}1&1\\1&1\end{pmatrix}``. The grammar
computes these entry by entry, each entry staying an expression that is compared like any value later:
a scalar times (or over) a matrix, sums and differences of matrices of one shape, and a minus sign.
A product of two matrices is not understood.

A vector written with the unit vectors ``\mathbf{i}``, ``\mathbf{j}``, ``\mathbf{k}`` (also ``\hat{i}``,
``\vec{i}``) is the column of its coefficients: ``\mathbf{i} + 2\mathbf{j} - 3\mathbf{k}`` is
``(1, 2, -3)``, and ``3\mathbf{i} - \mathbf{j}`` is ``(3, -1)``.
"""

from __future__ import annotations

from reasongym.verifiers.math import nodes as ast
from reasongym.verifiers.math.nodes import Node, Unparseable

__all__ = ["UNIT_VECTORS", "add", "negate", "product", "unit_vector_column"]

UNIT_VECTORS = ("\\mathbf{i}", "\\mathbf{j}", "\\mathbf{k}")
"""The names the lexer gives the unit vectors i, j and k."""


def _shape(matrix: ast.Matrix) -> tuple[int, int]:
    return len(matrix.rows), len(matrix.rows[0])


def _entrywise(matrix: ast.Matrix, change) -> ast.Matrix:  # noqa: ANN001 - a small Node -> Node callable
    return ast.Matrix(tuple(tuple(change(cell) for cell in row) for row in matrix.rows))


def negate(matrix: ast.Matrix) -> ast.Matrix:
    """``-A``: every entry negated."""
    return _entrywise(matrix, ast.Neg)


def product(num: list[Node], den: list[Node]) -> ast.Matrix | None:
    """``num[0] * num[1] * ... / den``, when exactly one factor is a matrix; None when none is.

    Raises:
        Unparseable: Two matrices multiplied, or a matrix in the denominator.
    """
    matrices = [factor for factor in num + den if isinstance(factor, ast.Matrix)]
    if not matrices:
        return None
    if len(matrices) > 1 or any(isinstance(factor, ast.Matrix) for factor in den):
        raise Unparseable("a product of matrices (or a division by one) is not understood")
    matrix = matrices[0]
    scalars = tuple(factor for factor in num if factor is not matrix)
    for factor in scalars + tuple(den):
        if not ast.is_scalar(factor):
            raise Unparseable(f"a {type(factor).__name__.lower()} cannot multiply a matrix")
    return _entrywise(matrix, lambda cell: ast.Mul((*scalars, cell), tuple(den)))


def add(terms: list[Node]) -> ast.Matrix | None:
    """The entrywise sum of matrices (a term may be a negated matrix); None when no term is a matrix.

    Raises:
        Unparseable: A matrix added to a number, or matrices of different shapes.
    """
    if not any(isinstance(term, ast.Matrix) or _negated_matrix(term) for term in terms):
        return None
    matrices = [negate(term.arg) if _negated_matrix(term) else term for term in terms]
    if not all(isinstance(term, ast.Matrix) for term in matrices):
        raise Unparseable("a matrix cannot be added to a number")
    shape = _shape(matrices[0])
    if any(_shape(matrix) != shape for matrix in matrices):
        raise Unparseable("matrices of different shapes cannot be added")
    rows = tuple(
        tuple(ast.Add(tuple(matrix.rows[r][c] for matrix in matrices)) for c in range(shape[1]))
        for r in range(shape[0])
    )
    return ast.Matrix(rows)


def _negated_matrix(term: Node) -> bool:
    return isinstance(term, ast.Neg) and isinstance(term.arg, ast.Matrix)


def _coefficient(term: Node) -> tuple[str, Node]:
    r"""The unit vector a term multiplies and its coefficient: ``-3\mathbf{k}`` gives (k, -3)."""
    if isinstance(term, ast.Neg):
        name, coefficient = _coefficient(term.arg)
        return name, ast.Neg(coefficient)
    factors = term.num if isinstance(term, ast.Mul) else (term,)
    den = term.den if isinstance(term, ast.Mul) else ()
    units = [factor for factor in factors if isinstance(factor, ast.Sym) and factor.name in UNIT_VECTORS]
    others = tuple(factor for factor in factors if factor not in units)
    if len(units) != 1 or any(ast.free_symbols(factor) & set(UNIT_VECTORS) for factor in others + den):
        raise Unparseable("a vector in i, j, k must be a sum of multiples of them")
    coefficient = (
        ast.Mul(others or (ast.Num(1),), den) if den or len(others) > 1 else (others or (ast.Num(1),))[0]
    )
    return units[0].name, coefficient


def unit_vector_column(node: Node) -> ast.Matrix | None:
    r"""The column vector of an expression in ``\mathbf{i}``, ``\mathbf{j}``, ``\mathbf{k}``; None without them.

    Raises:
        Unparseable: The unit vectors appear other than as a sum of multiples of them.
    """
    if not ast.is_scalar(node) or not ast.free_symbols(node) & set(UNIT_VECTORS):
        return None
    components: dict[str, list[Node]] = {name: [] for name in UNIT_VECTORS}
    for term in node.terms if isinstance(node, ast.Add) else (node,):
        name, coefficient = _coefficient(term)
        components[name].append(coefficient)
    size = 3 if components[UNIT_VECTORS[2]] else 2
    column = []
    for name in UNIT_VECTORS[:size]:
        parts = components[name]
        column.append((ast.Num(0) if not parts else parts[0] if len(parts) == 1 else ast.Add(tuple(parts)),))
    return ast.Matrix(tuple(column))
