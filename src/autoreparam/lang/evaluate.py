"""Expressions evaluated over a loop nest, vectorised: no Python loop per element.

Inside ``K`` vectorised loops every value is an array with ``K`` leading *loop axes* (size 1 where
it does not vary with that loop) followed by its own axes. A loop variable is an index array
(``arange(lower, upper + 1)`` along its own loop axis), so ``a[county[i]]`` is one gather and
``x[n]`` one slice. Values that depend only on data stay numpy arrays (indices, bounds, sizes are
therefore concrete, even under ``jit``); anything touching a latent becomes a JAX array.

``checking=True`` is the compiler's dry run: it raises `ProgramError` for index out of range and
shape mismatch, at the node at fault. The model run skips those checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import expit

from autoreparam.lang import ir
from autoreparam.lang.errors import ProgramError

_ELEMENTWISE = {
    "exp": (np.exp, jnp.exp), "log": (np.log, jnp.log), "sqrt": (np.sqrt, jnp.sqrt),
    "tanh": (np.tanh, jnp.tanh), "inv_logit": (expit, jax.nn.sigmoid),
}
_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}
_JAX_BINARY = {"+": jnp.add, "-": jnp.subtract, "*": jnp.multiply, "/": jnp.true_divide}


def is_static(*values) -> bool:
    return all(isinstance(v, (np.ndarray, np.generic)) for v in values)


def jax_ready(value):
    """``value`` as it may meet a JAX array: a static integer array beyond the integers JAX computes
    with (int32 unless ``jax_enable_x64``) as float64, since JAX would wrap it around without a word
    (``s * 3000000000`` computed s * 1.29e9, ``s * (N * N)`` with N = 1e5 s * 1.41e9; found in review)."""
    if (is_static(value) and np.asarray(value).dtype.kind in "iu" and np.size(value)
            and np.max(np.abs(value)) > np.iinfo(jnp.result_type(int)).max):
        return np.asarray(value, dtype=np.float64)
    return value


@dataclass(frozen=True)
class Loop:
    """A vectorised loop: its variable, first value and number of iterations; its plate's name."""

    var: str
    lower: int
    size: int
    plate: str


class ElementArray:
    """An array defined one element at a time (unrolled loops, ``x[1] ~ ...``)."""

    def __init__(self, name: str, rank: int):
        self.name, self.rank, self.elements = name, rank, {}

    def get(self, key: tuple[int, ...], node):
        if key not in self.elements:
            label = f"{self.name}[{', '.join(map(str, key))}]"
            raise ProgramError("name", node.pos, f"{label} is used before it is defined")
        return self.elements[key]

    def materialise(self, node):
        """The whole array; every element 1..n along each axis must be defined."""
        extents = [max(k[a] for k in self.elements) for a in range(self.rank)] if self.elements else [0] * self.rank
        grid = np.indices(extents).reshape(self.rank, -1).T + 1
        missing = [tuple(int(i) for i in key) for key in grid if tuple(int(i) for i in key) not in self.elements]
        if missing:
            raise ProgramError("name", node.pos, f"'{self.name}' is used whole, but element(s) "
                               f"{', '.join(str(list(m)) for m in missing[:3])} are not defined")
        values = [self.elements[tuple(int(i) for i in key)] for key in grid]
        xp = np if is_static(*values) else jnp
        return xp.reshape(xp.stack([xp.asarray(v if xp is np else jax_ready(v)) for v in values]), tuple(extents))


class Evaluator:
    """Evaluates expressions in an environment of global arrays under a stack of loops."""

    def __init__(self, env: dict, checking: bool, watched=()):
        self.env = env
        self.checking = checking
        self.loops: list[Loop] = []
        self.unrolled: dict[str, int] = {}
        # Which elements of the ``watched`` arrays (the observed data) the program reads: an AR(1) reads
        # y[1] as its start without sampling it; data neither sampled nor read would be silently dropped.
        self.reads = {name: np.zeros(np.shape(env[name]), bool) for name in watched if name in env}

    def _value(self, name: str, node):
        if name not in self.env:
            # Only observed data given as None (the prior predictive) is missing from the model's run.
            raise ProgramError("data", node.pos, f"'{name}' is observed data, read here before any statement samples "
                               "it, so this program cannot run without its data (e.g. for the prior predictive, "
                               f"with the observed keyword arguments dropped): pass {name}=... to the model")
        return self.env[name]

    @property
    def depth(self) -> int:
        return len(self.loops)

    def loop_shape(self) -> tuple[int, ...]:
        return tuple(loop.size for loop in self.loops)

    def _lift(self, value):
        # A loop-invariant value gets the current loop axes, of size 1.
        value = value if isinstance(value, (np.ndarray, jax.Array)) else np.asarray(value)
        return value.reshape((1,) * self.depth + tuple(value.shape))

    def loop_index(self, depth: int) -> np.ndarray:
        loop = self.loops[depth]
        shape = [1] * self.depth
        shape[depth] = loop.size
        return np.arange(loop.lower, loop.lower + loop.size).reshape(shape)

    def variable(self, name: str, node):
        """A name's value with the current loop axes in front."""
        for depth, loop in enumerate(self.loops):
            if loop.var == name:
                return self.loop_index(depth)
        if name in self.unrolled:
            return self._lift(np.asarray(self.unrolled[name]))
        value = self._value(name, node)
        if name in self.reads:
            self.reads[name][...] = True
        return self._lift(value.materialise(node) if isinstance(value, ElementArray) else value)

    # Expressions ------------------------------------------------------------------------------
    def eval(self, e):
        if isinstance(e, ir.Num):
            return self._lift(np.asarray(e.value))
        if isinstance(e, ir.Var):
            return self.variable(e.name, e)
        if isinstance(e, ir.Index):
            return self.index(e)
        if isinstance(e, ir.Neg):
            return -self.eval(e.operand)
        if isinstance(e, ir.BinOp):
            left, right = self.align(self.eval(e.left), self.eval(e.right), e)
            if not is_static(left, right):
                return _JAX_BINARY[e.op](jax_ready(left), jax_ready(right))
            # 1 / 0 among constants: the statement that uses the value reports it at its line
            # (``check``'s domain test), so NumPy's warning would only repeat it without saying where.
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return _BINARY[e.op](left, right)
        if isinstance(e, ir.Call):
            return self.call(e)
        raise TypeError(e)

    def align(self, a, b, node):
        """Pad the scalar one of (a, b) with trailing axes, so both broadcast past the loop axes."""
        ra, rb = a.ndim - self.depth, b.ndim - self.depth
        if ra < rb:
            a = a.reshape(a.shape[: self.depth] + (1,) * (rb - ra) + a.shape[self.depth :])
        elif rb < ra:
            b = b.reshape(b.shape[: self.depth] + (1,) * (ra - rb) + b.shape[self.depth :])
        if self.checking and ra and rb and a.shape[self.depth :] != b.shape[self.depth :]:
            raise ProgramError("shape", node.pos, f"shape mismatch: {a.shape[self.depth:]} and {b.shape[self.depth:]}")
        return a, b

    def call(self, e: ir.Call):
        args = [self.eval(a) for a in e.args]
        if e.func in _ELEMENTWISE:
            np_fn, jnp_fn = _ELEMENTWISE[e.func]
            if not is_static(*args):
                return jnp_fn(args[0])
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # as for 1 / 0 above
                return np_fn(args[0])
        if e.func == "sum":
            return args[0].sum(-1)
        a, b = self.align(args[0], args[1], e)
        if not is_static(a, b):
            a, b = jax_ready(a), jax_ready(b)
        loop_axes = slice(0, self.depth)
        # A loop-invariant operand makes this a matrix-vector product, as hand-written code would.
        if all(s == 1 for s in b.shape[loop_axes]):
            return a @ b.reshape(-1)
        if all(s == 1 for s in a.shape[loop_axes]):
            return b @ a.reshape(-1)
        return (a * b).sum(-1)

    def index(self, e: ir.Index):
        base = self._value(e.name, e)
        positions = [self._loop_position(i) for i in e.indices]
        if not isinstance(base, ElementArray) and None not in positions and len(set(positions)) == len(positions):
            return self._slice(base, positions, e)
        indices = [self.eval(i) for i in e.indices]
        if isinstance(base, ElementArray):
            # One element by its full key; a row (fewer indices than axes) or a gather needs the whole array.
            if len(indices) == base.rank and all(np.size(i) == 1 for i in indices):
                key = tuple(int(np.asarray(i).reshape(())) for i in indices)
                return self._lift(base.get(key, e))
            base = base.materialise(e)
        if self.checking:
            self._check_range(base, indices, e)
        zero_based = tuple(np.broadcast_arrays(*[np.asarray(i) - 1 for i in indices]))
        if e.name in self.reads:
            self.reads[e.name][zero_based] = True
        return base[zero_based]

    def _loop_position(self, index_expr):
        if isinstance(index_expr, ir.Var):
            for depth, loop in enumerate(self.loops):
                if loop.var == index_expr.name:
                    return depth
        return None

    def _slice(self, base, depths, e):
        # Indexing by loop variables only: a static slice per axis, then axes moved to their loops.
        for axis, depth in enumerate(depths):
            loop = self.loops[depth]
            if self.checking and (loop.lower < 1 or loop.lower - 1 + loop.size > base.shape[axis]):
                raise ProgramError("shape", e.pos, _range_message(e, axis, base.shape[axis], loop.lower, loop.lower + loop.size - 1))
        window = tuple(slice(self.loops[d].lower - 1, self.loops[d].lower - 1 + self.loops[d].size) for d in depths)
        if e.name in self.reads:
            self.reads[e.name][window] = True
        sliced = base[window]
        order = sorted(range(len(depths)), key=lambda a: depths[a])
        rest = list(range(len(depths), sliced.ndim))
        sliced = sliced.transpose(order + rest) if order != list(range(len(depths))) else sliced
        shape = [1] * self.depth
        for depth in depths:
            shape[depth] = self.loops[depth].size
        return sliced.reshape(tuple(shape) + tuple(sliced.shape[len(depths) :]))

    def _check_range(self, base, indices, e):
        for axis, index in enumerate(indices):
            index = np.asarray(index)
            if index.size and (index.min() < 1 or index.max() > base.shape[axis]):
                raise ProgramError("shape", e.indices[axis].pos,
                                   _range_message(e, axis, base.shape[axis], int(index.min()), int(index.max())))


def _range_message(e: ir.Index, axis: int, extent: int, low: int, high: int) -> str:
    from autoreparam.lang.printer import print_expr

    return (f"index out of range for the data given: {print_expr(e.indices[axis])} takes values {low}..{high}, "
            f"but axis {axis + 1} of '{e.name}' has indices 1..{extent}")
