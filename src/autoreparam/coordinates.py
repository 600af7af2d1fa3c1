"""Coordinates: the bijection between a model's original latents and any parameterisation, and its density.

Three coordinate systems appear everywhere in autoreparam:

- ``z``: the original latents in constrained space (what the user's model declares and reads);
- ``v``: the centred program's unconstrained coordinates, ``v = biject_to(support)^-1(z)``; these are
  the CP-HMC coordinates and the hub through which every other parameterisation is mapped;
- ``u``: the unconstrained coordinates of a parameterisation, ``u = biject_to(aux support)^-1(zt)``
  with ``zt`` the auxiliary (decentred) value of paper 000 Section 5.2.

All three are dicts keyed by the ORIGINAL site names, so initial values and results are always
named as the user named them. Maps are pure functions of a ``Parameterisation`` (a pytree), so they
can be jitted, differentiated with respect to lambda (VIP) and vmapped over chains.

The log density of ``u`` is computed by NumPyro on the rewritten program (``reparameterise``): that is
the density of the auxiliary sites, which is exact and numerically better than the original density
plus a log-Jacobian. The identity ``log p_u(u) = log p_v(v(u)) + log|det dv/du|`` is tested.
"""

from __future__ import annotations

import copy
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from numpyro import handlers
from numpyro.distributions import biject_to
from numpyro.infer.util import potential_energy
from numpyro.primitives import Messenger

from autoreparam.errors import ArgumentError, SiteError
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.model_data import ModelData
from autoreparam.reparam.handlers import FoldSampleShape, aux_name, decentre_site, reparameterise
from autoreparam.reparam.in_scan import step_slice
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import ReparamPlan


class _SetLatents(Messenger):
    """Run the centred model, setting each latent from a per-site rule ``rule(name, fn, step) -> z``.

    The rule sees the site's distribution with every upstream latent already set, which is what makes
    the maps exact for hierarchies whose priors depend on other latents. ``step`` is None for a site
    outside ``scan``.
    """

    def __init__(self, fn, names, rule):
        self.names, self.rule = frozenset(names), rule
        super().__init__(fn)

    def process_message(self, msg):
        if msg["type"] == "sample" and not msg["is_observed"] and msg["name"] in self.names:
            # Outside scan, and also for a scanned site when scan replays its stacked trace to us
            # afterwards: its stacked distribution then holds every step's location and scale.
            msg["value"] = self.rule(msg["name"], msg["fn"], None)
        elif msg["type"] == "control_flow":
            # numpyro.contrib.control_flow.scan runs its body under `block`; like `substitute`, hand it
            # a substitution so every step reads the value we set. Inside the body the rule only gives
            # step i's value, so that later steps see it (a step's value is a tracer of the body, never
            # to be recorded); the maps record whole series at the replay above.
            msg["kwargs"]["substitute_stack"].append(("substitute", self._inside_scan))

    def _inside_scan(self, site):
        if site["type"] == "sample" and not site["is_observed"] and site["name"] in self.names:
            return self.rule(site["name"], site["fn"], site["infer"]["_scan_current_index"])
        return None


def _sum(x) -> jax.Array:
    return jnp.sum(jnp.asarray(x))


def _centring(param: Parameterisation, name: str, step) -> tuple:
    """A site's (a, b): whole arrays, or step ``step``'s slices inside ``scan``."""
    a, b = param.loc_centring[name], param.scale_centring[name]
    return (a, b) if step is None else (step_slice(a, step), step_slice(b, step))


class Coordinates:
    """The coordinate maps and log densities of one model, bound to its data, under a site plan.

    The data's arrays (``data``) can be swapped for others of the same shapes (``with_data``), so a
    compiled program takes them as runtime arguments and serves new data without recompiling;
    ``program_key`` names everything else a program built on these coordinates depends on.
    """

    def __init__(self, model: Callable, model_args: tuple, model_kwargs: dict, plan: ReparamPlan):
        self.model = model
        self.model_args = tuple(model_args)
        self.model_kwargs = dict(model_kwargs)
        self.plan = plan
        self._data = ModelData.for_model(model, self.model_args, self.model_kwargs)
        self.structure = plan.structure
        self.names = self.structure.names
        template = {s.name: jnp.zeros(s.unconstrained_shape) for s in self.structure.latents}
        flat, self._unravel = ravel_pytree(template)
        self.dim = int(flat.size)
        original = {s.name: jnp.zeros(s.shape) for s in self.structure.latents}
        flat, self._unravel_original = ravel_pytree(original)
        self.original_dim = int(flat.size)

    # --- data as runtime arguments ---------------------------------------------------------------
    @property
    def data(self) -> tuple:
        """The data's arrays (every array leaf of the model's arguments), in a fixed order."""
        return self._data.arrays

    def with_data(self, data) -> "Coordinates":
        """The same coordinates bound to other arrays of the same structure (e.g. traced arguments)."""
        bound = copy.copy(self)
        bound.model_args, bound.model_kwargs = self._data.rebuild(data)
        return bound

    @property
    def without_density(self) -> dict:
        """{latent: bool array of its shape, True where the element has no density} for latents with
        masked-out elements (`SiteInfo.without_density`; `diagnostics.masked`)."""
        return {s.name: s.without_density for s in self.structure.latents if s.without_density is not None}

    @property
    def flat_has_density(self) -> np.ndarray | None:
        """(dim,) bool over the flat unconstrained coordinates, False where the element has no density
        (`without_density`), or None when every element has one. A mask covers whole events
        (`sites._masked_out`), so an event's unconstrained coordinates (e.g. a simplex's K - 1) share
        its element's mark."""
        masks = self.without_density
        if not masks:
            return None
        marks = {}
        for site in self.structure.latents:
            shape = site.unconstrained_shape
            if site.name not in masks:
                marks[site.name] = np.ones(shape, dtype=bool)
                continue
            batch = site.shape[:len(site.shape) - site.event_dim]
            absent = masks[site.name][(Ellipsis,) + (0,) * site.event_dim].reshape(batch)
            event = shape[len(batch):]
            marks[site.name] = np.broadcast_to(~absent.reshape(batch + (1,) * len(event)), shape)
        # ravel_pytree lays the sites out as the coordinates' own flat vectors do (sorted by name)
        return np.asarray(ravel_pytree({n: jnp.asarray(m, jnp.float32) for n, m in marks.items()})[0]) > 0.5

    @property
    def program_key(self) -> tuple:
        """What a compiled program on these coordinates depends on besides its arguments: the model,
        the data's structure and non-array values, and the site plan."""
        plan = (self.plan.names, self.structure.names, self.plan.policy)
        return (self.model, self._data.key, plan)

    # --- flat vectors (what samplers and VI see) ------------------------------------------------
    def ravel(self, tree: dict) -> jax.Array:
        return ravel_pytree({n: tree[n] for n in self.names})[0]

    def unravel(self, flat: jax.Array) -> dict:
        return self._unravel(flat)

    def ravel_original(self, z: dict) -> jax.Array:
        """Constrained original values to one flat vector (the layout diagnostics read)."""
        return ravel_pytree({n: z[n] for n in self.names})[0]

    def unravel_original(self, flat: jax.Array) -> dict:
        return self._unravel_original(flat)

    def split_original(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """``(..., original_dim)`` numpy array -> {site: (..., *shape)}; the inverse of ``ravel_original``."""
        flat = np.asarray(flat)
        lead, out, offset = flat.shape[:-1], {}, 0
        for name in sorted(self.names):
            site = self.structure[name]
            out[name] = flat[..., offset : offset + site.size].reshape(lead + site.shape)
            offset += site.size
        return out

    def _labels(self, shape_of) -> list[str]:
        labels = {}
        for site in self.structure.latents:
            shape = shape_of(site)
            idx = np.ndindex(*shape) if shape else [()]
            labels[site.name] = [site.name + (f"[{','.join(map(str, i))}]" if i else "") for i in idx]
        return [lab for n in sorted(labels) for lab in labels[n]]

    def element_names(self) -> list[str]:
        """A label per flat unconstrained coordinate, e.g. ``theta[3]``, in ``ravel`` order."""
        return self._labels(lambda site: site.unconstrained_shape)

    def original_element_names(self) -> list[str]:
        """A label per flat original (constrained) element, in ``ravel_original`` order."""
        return self._labels(lambda site: site.shape)

    def _check(self, tree: dict, what: str) -> None:
        missing = [n for n in self.names if n not in tree]
        if missing:
            raise ArgumentError(f"{what} has no value for latent site '{missing[0]}'")

    # --- densities ------------------------------------------------------------------------------
    def log_density(self, u: dict, param: Parameterisation) -> jax.Array:
        """Log joint density of the rewritten program at unconstrained coordinates ``u``."""
        self._check(u, "position")
        rewritten = reparameterise(self.model, param)
        params = {(aux_name(n) if n in param.loc_centring else n): u[n] for n in self.names}
        return -potential_energy(rewritten, self.model_args, self.model_kwargs, params)

    def log_density_cp(self, v: dict) -> jax.Array:
        """Log joint density of the centred program at its unconstrained coordinates ``v``."""
        self._check(v, "position")
        return -potential_energy(self.model, self.model_args, self.model_kwargs, {n: v[n] for n in self.names})

    # --- maps -----------------------------------------------------------------------------------
    def _run(self, rule) -> None:
        seeded = handlers.seed(_SetLatents(FoldSampleShape(self.model), self.names, rule), rng_seed=0)
        handlers.block(seeded)(*self.model_args, **self.model_kwargs)

    def to_cp(self, u: dict, param: Parameterisation):
        """``u -> (v, z, log|det dv/du|)``: from a parameterisation's coordinates to the centred ones."""
        self._check(u, "position")
        v, z, ldj = {}, {}, [jnp.zeros(())]

        def rule(name, fn, step):
            to_support = biject_to(fn.support)
            if name in param.loc_centring:
                aux, transform = decentre_site(name, fn, *_centring(param, name, step))
                to_aux = biject_to(aux.support)
                u_site = u[name] if step is None else u[name][step]
                zt = to_aux(u_site)
                value = transform(zt)
                if step is not None:
                    return value
                v[name] = to_support.inv(value)
                ldj.append(_sum(to_aux.log_abs_det_jacobian(u_site, zt)))
                ldj.append(_sum(transform.log_abs_det_jacobian(zt, value)))
                ldj.append(-_sum(to_support.log_abs_det_jacobian(v[name], value)))
            else:
                value = to_support(u[name] if step is None else u[name][step])
                if step is not None:
                    return value
                v[name] = u[name]
            z[name] = value
            return value

        self._run(rule)
        return v, z, sum(ldj)

    def _from(self, source: dict, param: Parameterisation, constrained: bool):
        u, z, ldj = {}, {}, [jnp.zeros(())]

        def rule(name, fn, step):
            to_support = biject_to(fn.support)
            if step is not None:  # inside scan: the step's original value is all later steps need
                return source[name][step] if constrained else to_support(source[name][step])
            if constrained:
                value = source[name]
                v_site = to_support.inv(value)
            else:
                v_site = source[name]
                value = to_support(v_site)
            if name in param.loc_centring:
                aux, transform = decentre_site(name, fn, param.loc_centring[name], param.scale_centring[name])
                to_aux = biject_to(aux.support)
                zt = transform.inv(value)
                u[name] = to_aux.inv(zt)
                ldj.append(_sum(to_support.log_abs_det_jacobian(v_site, value)))
                ldj.append(-_sum(transform.log_abs_det_jacobian(zt, value)))
                ldj.append(-_sum(to_aux.log_abs_det_jacobian(u[name], zt)))
            else:
                u[name] = v_site
            z[name] = value
            return value

        self._run(rule)
        return u, z, sum(ldj)

    def from_cp(self, v: dict, param: Parameterisation):
        """``v -> (u, z, log|det du/dv|)``: from the centred coordinates to a parameterisation's."""
        self._check(v, "position")
        return self._from(v, param, constrained=False)

    def from_original(self, z: dict, param: Parameterisation) -> dict:
        """Constrained original values (e.g. a user's ``init_to_value``) to coordinates ``u``."""
        self._check(z, "values")
        return self._from(z, param, constrained=True)[0]

    def start_vector(self, z: dict, param: Parameterisation) -> jax.Array:
        """``ravel(from_original(z, param))``, the flat start of a fit or a sampler, in one compiled program.

        Compiled, not run op by op: the first eager pass through a model compiles every primitive it
        meets on its own, 0.9 s (eight schools) to 1.7 s (radon MN) of a first ``infer`` call, against
        0.06 to 0.08 s for this program (benchmarks/start_vector.py). Data and parameterisation are runtime arguments, so one
        executable serves every centring of a call and later calls on data of the same shapes.
        """
        self._check(z, "values")
        values = {n: jnp.asarray(z[n]) for n in self.names}

        def build():
            def start(data, values, param):
                bound = self.with_data(data)
                return bound.ravel(bound.from_original(values, param))

            return start

        flat, _, _ = PROGRAMS(("start_vector", self.program_key), build, (self.data, values, param))
        # Traced, NumPyro's argument checks do not run, so a value outside its site's support (a NaN, a
        # negative scale) came back as NaN where the eager map raised (found in review): name the site.
        # Checked on the host: jnp.isfinite compiled two small programs of their own on a first call.
        if not np.all(np.isfinite(np.asarray(flat))):
            bad = next(n for n, u in self.unravel(flat).items() if not np.all(np.isfinite(np.asarray(u))))
            raise SiteError(bad, "the start values are not finite in this parameterisation's coordinates: give "
                            "finite values inside each site's support (e.g. a positive scale) with init_strategy=, "
                            "or another parameterisation")
        return flat

    def to_original(self, u: dict, param: Parameterisation) -> dict:
        """Coordinates ``u`` to the original latents in constrained space, keyed by original names."""
        return self.to_cp(u, param)[1]

    # --- vectorised helpers ---------------------------------------------------------------------
    def to_original_flat(self, param: Parameterisation) -> Callable:
        """``x (..., dim) -> {name: (..., *shape)}``: a flat-vector map vectorised over leading axes."""

        def one(x):
            return self.to_original(self.unravel(x), param)

        def many(x):
            x = jnp.asarray(x)
            lead = x.shape[:-1]
            out = jax.vmap(one)(x.reshape((-1, self.dim)))
            return {k: val.reshape(lead + val.shape[1:]) for k, val in out.items()}

        return many
