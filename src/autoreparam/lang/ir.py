"""The typed intermediate representation of a program: frozen dataclasses, compared by structure.

Every node carries its source position (`Pos`), excluded from equality so that
``parse(print_program(ir)) == ir`` holds for every program. Expressions are untyped trees; the
checker (`check.py`) gives each one a `Type`. Negative constants are ``Neg(Num(v))`` with ``v >= 0``
(that is what the parser produces), except inside observed literals, which hold signed numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Pos:
    """1-based line and column of a node's first character."""

    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


_NOWHERE = Pos()


def _pos():
    return field(default=_NOWHERE, compare=False, repr=False)


@dataclass(frozen=True)
class Type:
    """A value's type: ``base`` is "int" or "real"; ``dims`` are size expressions, one per axis."""

    base: str
    dims: tuple["Expr", ...] = ()

    @property
    def rank(self) -> int:
        return len(self.dims)


# Expressions -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    value: int | float  # int for an integer literal, float otherwise; never negative
    pos: Pos = _pos()


@dataclass(frozen=True)
class Var:
    name: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class Index:
    """``name[i, j]``: 1-based indices, one per leading axis of ``name``."""

    name: str
    indices: tuple["Expr", ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class Call:
    """A built-in function: exp, log, sqrt, tanh, inv_logit, sum, dot."""

    func: str
    args: tuple["Expr", ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * /
    left: "Expr"
    right: "Expr"
    pos: Pos = _pos()


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    pos: Pos = _pos()


Expr = Union[Num, Var, Index, Call, BinOp, Neg]

# Statements --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataDecl:
    """``data name: real[N, D]``: a field read from the JSON data."""

    name: str
    type: Type
    pos: Pos = _pos()


@dataclass(frozen=True)
class Observe:
    """``observe y = [28, 8, -3]``: data given in the program text (the slides' form)."""

    name: str
    value: int | float | tuple  # nested tuples of signed numbers
    pos: Pos = _pos()


@dataclass(frozen=True)
class Sample:
    """``target ~ dist(args)``; observed when the target names data."""

    target: Var | Index
    dist: str
    args: tuple[Expr, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class Assign:
    """``target = value``: a deterministic quantity (no sample site)."""

    target: Var | Index
    value: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class For:
    """``for (var in lower .. upper)`` with an indented body; bounds are inclusive."""

    var: str
    lower: Expr
    upper: Expr
    body: tuple["Stmt", ...]
    pos: Pos = _pos()


Stmt = Union[DataDecl, Observe, Sample, Assign, For]


@dataclass(frozen=True)
class Program:
    statements: tuple[Stmt, ...]


def target_name(target: Var | Index) -> str:
    return target.name


def walk_statements(statements):
    """Every statement, depth first, loops before their bodies."""
    for stmt in statements:
        yield stmt
        if isinstance(stmt, For):
            yield from walk_statements(stmt.body)


def walk_expr(expr):
    """Every sub-expression of ``expr``, itself first."""
    yield expr
    children = {
        Index: lambda e: e.indices,
        Call: lambda e: e.args,
        BinOp: lambda e: (e.left, e.right),
        Neg: lambda e: (e.operand,),
    }.get(type(expr), lambda e: ())
    for child in children(expr):
        yield from walk_expr(child)
