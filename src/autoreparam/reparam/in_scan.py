"""Partial centring of sites sampled inside ``numpyro.contrib.control_flow.scan``.

NumPyro's ``scan`` runs its body under ``block`` and forwards only ``seed``, ``substitute``,
``condition`` and ``replay`` into it, so a ``reparam`` handler around the model never sees the sites
of a time series written with ``scan``: the one way to write a long series that compiles in
seconds. A site sampled in the body appears outside as one stacked site of shape
``(length, *step_shape)``, and its centring arrays have that shape too (``Parameterisation``).

``ScanBodyCentring`` intercepts the ``control_flow`` message and wraps the body in NumPyro's own
``reparam`` handler, with each step's slice of the centring arrays. The step index travels in the
scanned inputs (``xs``, paired with ``arange(length)``): the body's ``reparam`` handler runs before
the ``infer_config`` that tells NumPyro's own handlers the index, so it cannot read it there. Inside
the body each site becomes ``{name}_decentered`` (sampled) and ``{name}`` (deterministic), stacked
over steps like any scanned site, and NumPyro's ``substitute`` slices the auxiliary series per step
as it does every scanned value: the log density is the same sum of auxiliary densities as for a site
outside ``scan`` (paper 000 Section 5.2).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
from numpyro import handlers
from numpyro.primitives import Messenger

from autoreparam.errors import SiteError


def step_slice(value, step):
    """Step ``step`` of a stacked series; a scalar applies to every step."""
    return value if jnp.ndim(value) == 0 else value[step]


class ScanBodyCentring(Messenger):
    """Carry partial centring into every ``scan`` body the model runs.

    ``make_reparam(name, step)``: the NumPyro ``Reparam`` for site ``name`` at (traced) step
    ``step``, or None to leave the site as written.
    """

    def __init__(self, fn: Callable | None, make_reparam: Callable):
        self.make_reparam = make_reparam
        super().__init__(fn)

    def process_message(self, msg):
        if msg["type"] != "control_flow":
            return
        body, init, xs, length, reverse = msg["args"]
        if length is None:
            leaves = jax.tree_util.tree_leaves(xs)
            length = jnp.shape(leaves[0])[0]
        make_reparam = self.make_reparam

        def body_with_step(carry, x_and_step):
            x, step = x_and_step

            def config(site):
                if site["type"] != "sample" or site.get("is_observed"):
                    return None
                reparam = make_reparam(site["name"], step)
                if reparam is not None and tuple(site["kwargs"].get("sample_shape", ())):
                    raise SiteError(site["name"], f"cannot reparameterise: {SAMPLE_SHAPE_IN_SCAN}; {EXPAND_INSTEAD} "
                                    "instead")
                if reparam is not None and reverse:
                    # NumPyro's substitute slices a scanned value by the iteration count, which a
                    # reversed scan runs backwards: the auxiliary series would be read out of order.
                    raise SiteError(site["name"], "is sampled inside scan(..., reverse=True), which cannot be "
                                    "reparameterised; scan forwards over reversed inputs instead")
                return reparam

            return handlers.reparam(body, config=config)(carry, x)

        msg["args"] = (body_with_step, init, (xs, jnp.arange(length)), length, reverse)


# NumPyro hands a reparameteriser only the distribution, and scan's body runs under ``block``, out of
# reach of ``handlers.FoldSampleShape``: a site drawn with a sample_shape S in the body would be
# rewritten as one value broadcast over its S draws, a different model (found in review).
SAMPLE_SHAPE_IN_SCAN = "sampled with a sample_shape inside a scan body, which the rewrite would turn into one value per step"
EXPAND_INSTEAD = "write the draws as a distribution with that batch shape (e.g. .expand([S]))"


class ScanBodySites(Messenger):
    """Record, during site analysis, the sites ``ScanBodyCentring`` cannot rewrite: those sampled
    inside a ``scan(..., reverse=True)`` body (``reversed``) and those sampled with a ``sample_shape``
    inside any scan body (``shaped``, ``SAMPLE_SHAPE_IN_SCAN``)."""

    def __init__(self, fn: Callable | None = None):
        self.reversed: set[str] = set()
        self.shaped: set[str] = set()
        super().__init__(fn)

    def process_message(self, msg):
        if msg["type"] != "control_flow":
            return
        body, recorder, reverse = msg["args"][0], self, msg["args"][4]

        def recording_body(carry, x):
            with _BodySites(recorder, reverse):
                return body(carry, x)

        msg["args"] = (recording_body, *msg["args"][1:])


class _BodySites(Messenger):
    def __init__(self, recorder: ScanBodySites, reverse: bool):
        self.recorder, self.reverse = recorder, reverse
        super().__init__()

    def process_message(self, msg):
        if msg["type"] != "sample" or msg["is_observed"]:
            return
        if self.reverse:
            self.recorder.reversed.add(msg["name"])
        if tuple(msg["kwargs"].get("sample_shape", ())):
            self.recorder.shaped.add(msg["name"])
