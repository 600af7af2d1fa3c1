"""Static checks of a program before any data is read: names, types, arity, and how each loop runs.

Every error is a `ProgramError` at the offending node. What this pass decides:
- which names are data (``data`` or ``observe``), which data are observed (a sample target),
  which names are latent or deterministic, and each name's base type and rank;
- for every top-level ``for``, whether it runs *vectorised* (one NumPyro plate per loop, one site
  per sample statement) or *unrolled* (one scalar site per element, for sequential models such as
  random walks). A loop is vectorised when its lower bound is the literal 1 and every statement in
  it defines ``name[i, j, ...]`` with exactly the enclosing loop variables and reads the names the
  loop defines only at the indices they were defined at (an inner loop may read the outer ``a[i]``).
  Otherwise it is unrolled, which is allowed only for a top-level loop without nested loops. A
  nested loop's bounds may not depend on the enclosing loop variables (plates are rectangular).
Sizes and index ranges need the data; `compile.py` checks them in a dry run.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from autoreparam.lang import ir
from autoreparam.lang.distributions import lookup, known_names
from autoreparam.lang.errors import ProgramError

ELEMENTWISE = ("exp", "log", "sqrt", "tanh", "inv_logit")
REDUCTIONS = {"sum": 1, "dot": 2}  # name -> arity; arguments are vectors, results scalars
MAX_UNROLLED = 1000  # elements of an unrolled loop; beyond this a program should be vectorised
MAX_LOOP_DEPTH = 32  # nested loops: each is an array axis, beside the values' own (NumPy stops at 64)


@dataclass(frozen=True)
class Symbol:
    kind: str  # "data", "observed", "latent", "deterministic", "loop"
    base: str  # "int" or "real"
    rank: int
    pos: ir.Pos
    elementwise: bool = False  # defined one element at a time (in an unrolled loop or by literal index)


@dataclass
class CheckedProgram:
    """The checker's findings, keyed by node identity where they concern one node."""

    program: ir.Program
    data: dict[str, ir.DataDecl | ir.Observe] = field(default_factory=dict)
    observed: dict[str, ir.Pos] = field(default_factory=dict)  # data names that are sample targets
    symbols: dict[str, Symbol] = field(default_factory=dict)
    unrolled: set[int] = field(default_factory=set)  # id() of the For statements that are unrolled


def _error(kind, node, message):
    return ProgramError(kind, getattr(node, "pos", None), message)


def _literal_info(value) -> tuple[str, int]:
    # (base, rank) of a nested literal; raggedness is checked with the data.
    if isinstance(value, tuple):
        inner = [_literal_info(v) for v in value] or [("int", 0)]
        base = "real" if any(b == "real" for b, _ in inner) else "int"
        return base, 1 + max(r for _, r in inner)
    return ("real" if isinstance(value, float) else "int"), 0


class _Checker:
    def __init__(self, program: ir.Program):
        self.out = CheckedProgram(program)
        self.scope: dict[str, Symbol] = {}
        self.loop_stack: list[str] = []  # enclosing loop variables, outermost first
        self.in_unrolled = False

    # Declarations are global: the slides observe y after the loop that uses it.
    def declare_data(self):
        for stmt in ir.walk_statements(self.out.program.statements):
            if not isinstance(stmt, (ir.DataDecl, ir.Observe)):
                continue
            if stmt.name in self.out.data:
                raise _error("name", stmt, f"'{stmt.name}' is given data twice (also at {self.out.data[stmt.name].pos})")
            self.out.data[stmt.name] = stmt
            if isinstance(stmt, ir.DataDecl):
                base, rank = stmt.type.base, stmt.type.rank
            else:
                base, rank = _literal_info(stmt.value)
            self.scope[stmt.name] = Symbol("data", base, rank, stmt.pos)
        for stmt in ir.walk_statements(self.out.program.statements):
            if isinstance(stmt, ir.DataDecl):
                for dim in stmt.type.dims:
                    self.static_int(dim, "a size")

    # Expressions ------------------------------------------------------------------------------
    def expr(self, e) -> tuple[str, int]:
        """(base type, rank) of an expression, or a ProgramError."""
        if isinstance(e, ir.Num):
            return ("real" if isinstance(e.value, float) else "int"), 0
        if isinstance(e, ir.Var):
            symbol = self.lookup(e.name, e)
            return symbol.base, symbol.rank
        if isinstance(e, ir.Index):
            symbol = self.lookup(e.name, e)
            if len(e.indices) > symbol.rank:
                raise _error("type", e, f"'{e.name}' has {symbol.rank} axis(es) but is indexed with {len(e.indices)}")
            for index in e.indices:
                self.static_int(index, f"an index of '{e.name}'")
            return symbol.base, symbol.rank - len(e.indices)
        if isinstance(e, ir.Neg):
            return self.expr(e.operand)
        if isinstance(e, ir.BinOp):
            (lb, lr), (rb, rr) = self.expr(e.left), self.expr(e.right)
            if lr and rr and lr != rr:
                raise _error("shape", e, f"'{e.op}' of a rank-{lr} and a rank-{rr} value")
            base = "int" if lb == rb == "int" and e.op != "/" else "real"
            return base, max(lr, rr)
        if isinstance(e, ir.Call):
            return self.call(e)
        raise TypeError(e)

    def call(self, e: ir.Call):
        known = ELEMENTWISE + tuple(REDUCTIONS)
        if e.func not in known:
            hint = difflib.get_close_matches(e.func, known, n=1)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise _error("name", e, f"unknown function '{e.func}'{extra}; expected one of: {', '.join(known)}")
        arity = REDUCTIONS.get(e.func, 1)
        if len(e.args) != arity:
            raise _error("type", e, f"{e.func} takes {arity} argument(s), got {len(e.args)}")
        infos = [self.expr(a) for a in e.args]
        if e.func in ELEMENTWISE:
            return "real", infos[0][1]
        for arg, (_, rank) in zip(e.args, infos):
            if rank != 1:
                raise _error("type", arg, f"{e.func} needs vector arguments, got a rank-{rank} value")
        base = "int" if e.func == "sum" and infos[0][0] == "int" else "real"
        return base, 0

    def lookup(self, name, node) -> Symbol:
        if name not in self.scope:
            defined = sorted(self.scope)
            hint = difflib.get_close_matches(name, defined, n=1, cutoff=0.5)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise _error("name", node, f"undefined variable '{name}'{extra}: define it before this line or declare it as data")
        return self.scope[name]

    def static_int(self, e, what: str):
        """An integer scalar that depends only on data and loop variables (indices, bounds, sizes)."""
        base, rank = self.expr(e)
        if base != "int" or rank != 0:
            raise _error("type", e, f"{what} must be an integer scalar, got a {base} value of rank {rank}")
        for sub in ir.walk_expr(e):
            if isinstance(sub, (ir.Var, ir.Index)):
                kind = self.scope[sub.name].kind
                # Observed data are data: `N ~ poisson(3)` before `for (n in 1 .. N)` was refused, and accepted
                # after it (found in review).
                if kind not in ("data", "observed", "loop"):
                    raise _error("type", sub, f"{what} may depend only on data and loop variables; '{sub.name}' is {kind}")

    # Statements -------------------------------------------------------------------------------
    def block(self, statements):
        for stmt in statements:
            if isinstance(stmt, (ir.DataDecl, ir.Observe)):
                if self.loop_stack:
                    raise _error("syntax", stmt, "data and observe statements belong at the top level, not in a loop")
            elif isinstance(stmt, ir.For):
                self.for_loop(stmt)
            elif isinstance(stmt, ir.Sample):
                self.sample(stmt)
            else:
                self.assign(stmt)

    def for_loop(self, stmt: ir.For):
        self.static_int(stmt.lower, "a loop bound")
        self.static_int(stmt.upper, "a loop bound")
        for bound in (stmt.lower, stmt.upper):
            # Nested loops are plates, which are rectangular: an inner size may not vary with an outer index.
            outer = [sub for sub in ir.walk_expr(bound) if isinstance(sub, ir.Var) and sub.name in self.loop_stack]
            if outer:
                raise _error("shape", outer[0], f"the bounds of a nested loop may not depend on the enclosing loop "
                             f"variable '{outer[0].name}' (nested loops are rectangular plates): loop over the "
                             "largest size, or flatten the nest into one loop over all elements")
        if stmt.var in self.scope:
            raise _error("name", stmt, f"loop variable '{stmt.var}' is already defined at {self.scope[stmt.var].pos}")
        if len(self.loop_stack) >= MAX_LOOP_DEPTH:
            # Each loop is an array axis, and NumPy holds at most 64 (a bare ValueError; found in review).
            raise _error("shape", stmt, f"loops nest more than {MAX_LOOP_DEPTH} deep here; flatten some of them into "
                         "one loop over all their elements")
        unroll = not self.loop_stack and _needs_unrolling(stmt, [])
        if unroll:
            nested = [s for s in ir.walk_statements(stmt.body) if isinstance(s, ir.For)]
            if nested:
                raise _error("syntax", nested[0], "a sequential loop (one that reads its own earlier elements, or "
                             "does not start at 1) is unrolled, and an unrolled loop may not contain loops")
            self.out.unrolled.add(id(stmt))
            self.in_unrolled = True
        elif self.loop_stack and _needs_unrolling(stmt, list(self.loop_stack)):
            raise _error("syntax", stmt, "a nested loop must start at 1 and define and read its names at exactly "
                         "the enclosing loop variables; only a top-level loop may be sequential")
        self.scope[stmt.var] = Symbol("loop", "int", 0, stmt.pos)
        self.loop_stack.append(stmt.var)
        self.block(stmt.body)
        self.loop_stack.pop()
        del self.scope[stmt.var]
        if unroll:
            self.in_unrolled = False

    def define(self, target, kind: str, base: str, node):
        name = target.name
        if isinstance(target, ir.Var) and self.loop_stack:
            raise _error("syntax", node, f"inside a loop a statement defines an element, e.g. "
                         f"{name}[{', '.join(self.loop_stack)}], not the whole of '{name}'")
        elementwise = self.in_unrolled or (isinstance(target, ir.Index) and not self.loop_stack)
        if isinstance(target, ir.Index):
            for index in target.indices:
                self.static_int(index, f"an index of '{name}'")
        rank = len(target.indices) if isinstance(target, ir.Index) else 0
        existing = self.scope.get(name)
        if existing is not None and existing.kind == "data":
            if kind == "deterministic":
                raise _error("name", node, f"'{name}' is data (declared at {existing.pos}) and cannot be assigned")
            if existing.rank != rank:
                raise _error("shape", node, f"'{name}' has rank {existing.rank} as data but is sampled with {rank} index(es)")
            self.out.observed[name] = node.pos
            self.scope[name] = Symbol("observed", existing.base, rank, existing.pos, elementwise)
        elif existing is not None:
            same_kind = existing.kind == kind or (existing.kind, kind) == ("observed", "latent")
            if not (existing.elementwise and elementwise and same_kind):
                raise _error("name", node, f"'{name}' is already defined at {existing.pos}")
            if existing.rank != rank:
                # x[1] then x[1, 5] made a stray site outside x, and y[2] of a matrix observed a whole row
                # as one scalar site (found in review).
                raise _error("shape", node, f"'{name}' is defined with {existing.rank} index(es) at {existing.pos}, "
                             f"here with {rank}: give every element of '{name}' the same number of indices")
        else:
            self.scope[name] = Symbol(kind, base, rank, node.pos, elementwise)

    def sample(self, stmt: ir.Sample):
        spec = lookup(stmt.dist)
        if spec is None:
            hint = difflib.get_close_matches(stmt.dist, known_names(), n=1)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise _error("name", stmt, f"unknown distribution '{stmt.dist}'{extra}; known: {', '.join(known_names())}")
        args = stmt.args
        if spec.optional_zero_loc and len(args) == len(spec.params) + 1:
            if args[0] != ir.Num(0) and args[0] != ir.Num(0.0):
                raise _error("type", args[0], f"{spec.name} starts at 0: its location, if given, must be 0")
            args = args[1:]
        if len(args) != len(spec.params):
            raise _error("type", stmt, f"{spec.name} takes {len(spec.params)} argument(s) "
                         f"({', '.join(spec.params)}), got {len(stmt.args)}")
        for param, arg in zip(spec.params, args):
            base, rank = self.expr(arg)
            if rank != 0:
                raise _error("type", arg, f"argument '{param}' of {spec.name} must be a scalar per element, "
                             f"got a rank-{rank} value (index it, or use dot/sum)")
            if param in spec.int_params and base != "int":
                raise _error("type", arg, f"argument '{param}' of {spec.name} must be an integer")
        is_data = self.scope.get(stmt.target.name, Symbol("", "", 0, ir.Pos())).kind in ("data", "observed")
        if spec.support == "int" and not is_data:
            raise _error("type", stmt, f"'{stmt.target.name}' would be a discrete latent ({spec.name}); gradient-"
                         "based inference needs continuous latents: declare it as data to observe it")
        self.define(stmt.target, "latent", spec.support, stmt)

    def assign(self, stmt: ir.Assign):
        base, rank = self.expr(stmt.value)
        if isinstance(stmt.target, ir.Index) and rank != 0:
            raise _error("type", stmt, f"an indexed assignment needs a scalar per element, got rank {rank}")
        self.define(stmt.target, "deterministic", base, stmt)
        if isinstance(stmt.target, ir.Var):
            symbol = self.scope[stmt.target.name]
            self.scope[stmt.target.name] = Symbol(symbol.kind, base, rank, symbol.pos)


def _pattern(loop_vars) -> tuple:
    return tuple(ir.Var(v) for v in loop_vars)


def _needs_unrolling(stmt: ir.For, outer: list[str]) -> bool:
    """True unless the loop can run as plates (see the module docstring)."""
    if stmt.lower != ir.Num(1):
        return True
    # Name -> the loop variables it is defined at. A nested loop may read a name defined by an enclosing
    # loop at that loop's own variables (`a[i]` inside `for j`): a slice broadcast along the inner plate.
    defined: dict[str, tuple] = {}

    def visit(statements, loop_vars) -> bool:
        for s in statements:
            if isinstance(s, ir.For):
                if s.lower != ir.Num(1) or visit(s.body, loop_vars + [s.var]):
                    return True
                continue
            if isinstance(s, (ir.DataDecl, ir.Observe)):
                continue
            exprs = list(s.args) if isinstance(s, ir.Sample) else [s.value]
            for e in exprs:
                for sub in ir.walk_expr(e):
                    if isinstance(sub, ir.Var) and sub.name in defined:
                        return True
                    if isinstance(sub, ir.Index) and sub.name in defined and sub.indices != defined[sub.name]:
                        return True
            target = s.target
            if not isinstance(target, ir.Index) or target.indices != _pattern(loop_vars):
                return True
            defined[target.name] = _pattern(loop_vars)
        return False

    return visit(stmt.body, outer + [stmt.var])


def check(program: ir.Program) -> CheckedProgram:
    """Check ``program`` without data; raises `ProgramError` at the first fault."""
    checker = _Checker(program)
    checker.declare_data()
    checker.block(program.statements)
    checker.out.symbols = dict(checker.scope)
    return checker.out
