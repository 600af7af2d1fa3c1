"""IR -> program text, with the fewest parentheses that keep the tree: ``parse(print_program(p)) == p``."""

from __future__ import annotations

from autoreparam.lang import ir

INDENT = "  "
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
_UNARY = 3
_ATOM = 4


def _number(value: int | float) -> str:
    # repr is the shortest text that reads back to the same float, and always has '.' or 'e'.
    return repr(value) if isinstance(value, float) else str(int(value))


def _precedence(expr: ir.Expr) -> int:
    if isinstance(expr, ir.BinOp):
        return _PRECEDENCE[expr.op]
    return _UNARY if isinstance(expr, ir.Neg) else _ATOM


def _wrapped(expr: ir.Expr, minimum: int) -> str:
    text = print_expr(expr)
    return f"({text})" if _precedence(expr) < minimum else text


def _args(args) -> str:
    return ", ".join(print_expr(a) for a in args)


def print_expr(expr: ir.Expr) -> str:
    """One expression as text."""
    if isinstance(expr, ir.Num):
        return _number(expr.value)
    if isinstance(expr, ir.Var):
        return expr.name
    if isinstance(expr, ir.Index):
        return f"{expr.name}[{_args(expr.indices)}]"
    if isinstance(expr, ir.Call):
        return f"{expr.func}({_args(expr.args)})"
    if isinstance(expr, ir.Neg):
        return "-" + _wrapped(expr.operand, _UNARY)
    if isinstance(expr, ir.BinOp):
        level = _PRECEDENCE[expr.op]
        # Operators are left-associative: a right operand of equal precedence needs parentheses.
        return f"{_wrapped(expr.left, level)} {expr.op} {_wrapped(expr.right, level + 1)}"
    raise TypeError(f"not an expression: {expr!r}")


def _literal(value) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return _number(value)


def _type(type_: ir.Type) -> str:
    return type_.base + (f"[{_args(type_.dims)}]" if type_.dims else "")


def _statement(stmt: ir.Stmt, depth: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(stmt, ir.DataDecl):
        return [f"{pad}data {stmt.name}: {_type(stmt.type)}"]
    if isinstance(stmt, ir.Observe):
        return [f"{pad}observe {stmt.name} = {_literal(stmt.value)}"]
    if isinstance(stmt, ir.Sample):
        return [f"{pad}{print_expr(stmt.target)} ~ {stmt.dist}({_args(stmt.args)})"]
    if isinstance(stmt, ir.Assign):
        return [f"{pad}{print_expr(stmt.target)} = {print_expr(stmt.value)}"]
    if isinstance(stmt, ir.For):
        head = f"{pad}for ({stmt.var} in {print_expr(stmt.lower)} .. {print_expr(stmt.upper)})"
        return [head] + [line for s in stmt.body for line in _statement(s, depth + 1)]
    raise TypeError(f"not a statement: {stmt!r}")


def print_program(program: ir.Program) -> str:
    """The program as text, two spaces per indentation level, one statement per line."""
    return "".join(line + "\n" for stmt in program.statements for line in _statement(stmt, 0))
