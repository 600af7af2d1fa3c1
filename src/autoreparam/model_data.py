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

import hashlib
from dataclasses import dataclass

import jax
import numpy as np
from numpyro import handlers


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, jax.Array))


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

    @classmethod
    def of(cls, model_args: tuple, model_kwargs: dict) -> "ModelData":
        leaves, treedef = jax.tree_util.tree_flatten((tuple(model_args), dict(model_kwargs)))
        return cls(treedef, tuple(leaves), tuple(i for i, x in enumerate(leaves) if _is_array(x)))

    @classmethod
    def for_model(cls, model, model_args: tuple, model_kwargs: dict) -> "ModelData":
        """``of``, unless the model cannot run on traced data: then every array stays in the program."""
        data = cls.of(model_args, model_kwargs)
        if not data.dynamic or _runs_on_traced_data(model, data):
            return data
        # Copies: a program keeps these arrays, so the caller's later in-place change must not reach it.
        leaves = tuple(np.array(x, copy=True) if i in data.dynamic else x for i, x in enumerate(data.leaves))
        return cls(data.treedef, leaves, (), data.dynamic)

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
        static = tuple(_content(x) if i in self.closed else _hashable(x)
                       for i, x in enumerate(self.leaves) if i not in self.dynamic)
        shapes = tuple((tuple(np.shape(self.leaves[i])), str(self.leaves[i].dtype)) for i in self.dynamic)
        return (self.treedef, static, shapes)


def _content(x) -> tuple:
    """An array kept in the program, by value: keyed by ``id`` it was the same after ``y[:] = new``, and
    every cache handed back the program compiled on the old values, without an error."""
    x = np.ascontiguousarray(x)
    return ("array", x.shape, str(x.dtype), hashlib.blake2b(x.tobytes(), digest_size=16).hexdigest())


def _runs_on_traced_data(model, data: ModelData) -> bool:
    """Trace the model (seeded, every latent sampled) with its data arrays as abstract inputs."""

    def run(arrays):
        args, kwargs = data.rebuild(arrays)
        with handlers.block():
            handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(*args, **kwargs)
        return 0

    try:
        jax.make_jaxpr(run)(data.arrays)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError):
        return False
    except Exception:  # noqa: BLE001 - any other failure is the model's, reported by site analysis
        return True
    return True
