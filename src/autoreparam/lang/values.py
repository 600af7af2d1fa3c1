"""The numbers a compiled model computes with, and what to say when one is out of bounds.

A literal must fit the model's float type (float32 unless JAX runs in 64 bits), and when NumPyro
refuses a distribution's parameter, the advice is for the argument it names: constants and data, or
a latent.
"""

from __future__ import annotations

import re

import jax.numpy as jnp
import numpy as np
import numpyro

from autoreparam.lang import ir
from autoreparam.lang.errors import ProgramError
from autoreparam.lang.evaluate import is_static
from autoreparam.precision import float_dtype

# NumPyro's names for the parameters it validates, where they differ from the language's
_NUMPYRO_PARAMETER_NAMES = {"logits": "logit", "probs": "prob", "concentration": "shape", "concentration1": "alpha",
                            "concentration0": "beta", "total_count": "count"}


def _refused_parameter(error: ValueError) -> str | None:
    """NumPyro's name of the parameter its validation error names ("... got invalid scale parameter.")."""
    named = re.search(r"invalid (\w+) parameter", str(error))
    return named.group(1) if named else None


def first_invalid_element(spec, values, error: ValueError) -> str:
    """``[2]`` for the first element of a vectorised site whose parameter NumPyro refused, or ``""``."""
    refused = _refused_parameter(error)
    if refused is None:
        return ""
    with numpyro.validation_enabled(False):
        fn = spec.build(*values)
    constraint, value = fn.arg_constraints.get(refused), getattr(fn, refused, None)
    if constraint is None or value is None or jnp.ndim(value) == 0:
        return ""
    invalid = np.argwhere(~np.asarray(constraint.check(value)))
    return f"[{', '.join(str(int(i) + 1) for i in invalid[0])}]" if len(invalid) else ""


def invalid_parameter_advice(spec, values, error: ValueError) -> str:
    """What to fix when NumPyro refuses a distribution's parameters: advice for the argument it names.

    The argument, not the statement, decides: in ``normal(mu, s[j])`` with a data scale of 0, blaming
    the latent ``mu`` sent the user to the wrong line (found in review).
    """
    refused = _refused_parameter(error)
    culprit = _NUMPYRO_PARAMETER_NAMES.get(refused, refused)
    suspects = [(param, value) for param, value in zip(spec.params, values) if param == culprit]
    suspects = suspects or list(zip(spec.params, values))
    which = f"its {culprit}" if culprit in spec.params else "its parameters"
    if all(is_static(value) for _, value in suspects):
        return f"{which} comes from constants and data alone: check the constants and data this statement gives it"
    if any(not bool(jnp.all(jnp.isfinite(jnp.asarray(value)))) or (param != "loc" and bool(jnp.any(value == 0)))
           for param, value in suspects):
        # e.g. exp() of a latent drawn far out: the prior is right, the float type overflowed (a
        # depth-3 funnel at 2% of prior draws was told to fix its prior; found in review)
        return (f"a latent feeds {which}, and here it is not finite, or 0 after underflowing, "
                f"in {float_dtype()} (e.g. exp() of a latent drawn far out); enable 64-bit JAX "
                "(jax.config.update('jax_enable_x64', True)) or bound the expression")
    return (f"a latent feeds {which}: give that latent a prior on the parameter's domain "
            "(e.g. a scale from half_normal, lognormal or exp() of a real latent)")


def check_literals(program: ir.Program) -> None:
    """A number written in the program must fit the float type the model computes with.

    ``s * 1e39`` in float32 went to JAX as a Python float, overflowed to inf behind NumPy's warning
    (and crashed the interpreter where warnings are errors; found in review).
    """
    largest = float(np.finfo(float_dtype()).max)
    for stmt in ir.walk_statements(program.statements):
        exprs = {ir.Sample: lambda s: s.args, ir.Assign: lambda s: (s.value, s.target),
                 ir.For: lambda s: (s.lower, s.upper)}.get(type(stmt), lambda s: ())(stmt)
        for expr in exprs:
            for sub in ir.walk_expr(expr):
                if isinstance(sub, ir.Num) and abs(sub.value) > largest:
                    raise ProgramError("value", sub.pos, f"the number {sub.value:g} is beyond the numbers the model "
                                       f"computes with ({float_dtype()}: magnitude at most {largest:.2g}): rescale "
                                       "the model, or enable 64-bit JAX (jax.config.update('jax_enable_x64', True))")
