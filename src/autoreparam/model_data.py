"""A model's arguments split into arrays (runtime arguments of compiled programs) and everything else.

Compiled programs take the data's arrays as arguments rather than closing over them, so that one
executable serves new data of the same shapes; the non-array parts (sizes, flags, strings) and the
arguments' structure become part of the program's key (``mcmc.programs``).

Some models compute with their data in NumPy (``np.repeat(groups, counts)``, ``np.unique(county)``):
such a model cannot run on traced data. ``ModelData.for_model`` finds out with one abstract trace
and then keeps copies of the arrays in the program (closed over, keyed by their content): correct,
and reused for the same data (a new seed), though new data then compile anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from numpyro import handlers


def _is_array(x) -> bool:
    """An array a compiled program can take as an argument: numbers or booleans. Text arrays (county
    names as ``np.str_``) stay in the program, keyed by content (they failed as arguments, with an
    error that blamed the model; found in review)."""
    return isinstance(x, (np.ndarray, np.generic, jax.Array)) and np.dtype(x.dtype).kind in "biufc"


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return ("unhashable", id(x))


@dataclass(frozen=True, eq=False)
class ModelData:
    """``(model_args, model_kwargs)`` as arrays (``arrays``) plus a key for everything else."""

    treedef: object
    leaves: tuple
    dynamic: tuple  # positions of the array leaves passed as runtime arguments
    closed: tuple = ()  # positions of array leaves the model needs concrete (kept in the program)
    reads: str | None = None  # digest of what the model reads besides its arguments (``_reads``)

    @classmethod
    def of(cls, model_args: tuple, model_kwargs: dict) -> "ModelData":
        leaves, treedef = jax.tree_util.tree_flatten((tuple(model_args), dict(model_kwargs)))
        return cls(treedef, tuple(leaves), tuple(i for i, x in enumerate(leaves) if _is_array(x)))

    @classmethod
    def for_model(cls, model, model_args: tuple, model_kwargs: dict) -> "ModelData":
        """``of``, unless the model cannot run on traced data: then every array stays in the program.
        Either way ``reads`` digests what else the traced model reads (``_reads``)."""
        data = cls.of(model_args, model_kwargs)
        jaxpr, traceable = _abstract_trace(model, data)
        if data.dynamic and not traceable:
            # Copies: a program keeps these arrays, so the caller's later in-place change must not reach it.
            leaves = tuple(np.array(x, copy=True) if i in data.dynamic else x for i, x in enumerate(data.leaves))
            data = cls(data.treedef, leaves, (), data.dynamic)
            jaxpr, _ = _abstract_trace(model, data)
        return dataclasses.replace(data, reads=_reads(jaxpr))

    @property
    def arrays(self) -> tuple:
        return tuple(self.leaves[i] for i in self.dynamic)

    def rebuild(self, arrays) -> tuple[tuple, dict]:
        """``(model_args, model_kwargs)`` with the arrays replaced (e.g. by a compiled program's arguments)."""
        leaves = list(self.leaves)
        for i, value in zip(self.dynamic, arrays, strict=True):
            leaves[i] = value
        args, kwargs = jax.tree_util.tree_unflatten(self.treedef, leaves)
        return tuple(args), dict(kwargs)

    @property
    def key(self) -> tuple:
        """The arguments' structure, non-array values and array shapes and dtypes: equal keys mean
        that a program traced on one set of arguments computes the right thing on the other.

        The shapes belong here, not only in a compiled executable's signature: the caches keyed on it
        keep a jitted function whose closure (the coordinates' flat layout, the sites' shapes) was
        built for the first data. Without them, the same model called on data of another size (8
        schools, then 12) retraced that closure on the new data and failed inside JAX ("Sum of
        sizes 10 must be equal to dimension 1 of the operand shape [256, 14]").
        """
        static = tuple(_content(x) if i in self.closed or isinstance(x, (np.ndarray, np.generic)) else _hashable(x)
                       for i, x in enumerate(self.leaves) if i not in self.dynamic)
        shapes = tuple((tuple(np.shape(self.leaves[i])), str(self.leaves[i].dtype)) for i in self.dynamic)
        return (self.treedef, static, shapes, self.reads)


def _content(x) -> tuple:
    """An array kept in the program, by value: keyed by ``id`` it was the same after ``y[:] = new``, and
    every cache handed back the program compiled on the old values, without an error."""
    x = np.ascontiguousarray(x)
    raw = repr(x.tolist()).encode() if x.dtype.kind == "O" else x.tobytes()  # objects' bytes are addresses
    return ("array", x.shape, str(x.dtype), hashlib.blake2b(raw, digest_size=16).hexdigest())


def content_key(value):
    """A hashable key for a value a compiled program keeps as constants (e.g. an init strategy's
    values): arrays and numbers by content, dicts and sequences item by item, anything else as itself
    (or by ``id`` if unhashable)."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), content_key(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(content_key(v) for v in value))
    if isinstance(value, (np.ndarray, np.generic, jax.Array)) or (
            isinstance(value, (int, float, complex)) and not isinstance(value, bool)):
        return _content(np.asarray(value))
    return _hashable(value)


def _abstract_trace(model, data: ModelData):
    """The model (seeded, every latent sampled) traced with its data arrays as abstract inputs:
    ``(closed jaxpr or None, whether it runs on traced data)``."""

    def run(arrays):
        args, kwargs = data.rebuild(arrays)
        with handlers.block():
            trace = handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(*args, **kwargs)
        # Every site's value and log density: an observation read from a global enters no other
        # computation of the trace, and the digest (``_reads``) must see it.
        sites = [site for site in trace.values() if site["type"] == "sample"]
        densities = []
        for site in sites:
            try:
                densities.append(jnp.sum(site["fn"].log_prob(site["value"])))
            except Exception:  # noqa: BLE001 - only for the digest; the model's own failures surface elsewhere
                continue
        return [site["value"] for site in sites], densities

    try:
        return jax.make_jaxpr(run)(data.arrays), True
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError):
        return None, False
    except Exception:  # noqa: BLE001 - any other failure is the model's, reported by site analysis
        return None, True


def _reads(jaxpr) -> str | None:
    """A digest of the traced model's program and its constants: what it reads besides its arguments.

    A model that reads a module global (``obs=Y``) or arrays of its closure has them built into every
    compiled program as constants; keyed only by the function, ``Y = new_data`` (or ``Y[:] = ...``)
    and a second call handed back the program compiled on the old values, with no error (found in
    review: a fit on Y = 50 returned the fit on Y = 0). The program's text holds scalar constants
    and shapes; the constants' bytes, the arrays. None where the model could not be traced (keyed
    by the function alone, as before). An array changed in place is beyond this: once a NumPy array
    has been a constant of a compiled JAX program, JAX keeps reading its old values even in eager
    operations (jax 0.10.2: ``jnp.sum(Y)`` after ``Y[:] = ...`` still sums the old Y), so a new
    array must be assigned.
    """
    if jaxpr is None:
        return None
    digest = hashlib.blake2b(str(jaxpr.jaxpr).encode(), digest_size=16)
    for const in jaxpr.consts:
        value = np.ascontiguousarray(np.asarray(const))
        digest.update(f"{value.shape}{value.dtype}".encode())
        digest.update(value.tobytes())
    return digest.hexdigest()
