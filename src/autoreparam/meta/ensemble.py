"""An ensemble of networks trained with different seeds: their lambda averaged, element by element.

Training the same network from three seeds gave Section 3 errors of 0.068, 0.047 and 0.043, and
German credit ELBO gains of 8.7, 4.0 and 4.7 nat (META.md, "Stability over training seeds"): which
seed is best depends on the model. Averaging the members' predictions (a deep ensemble,
Lakshminarayanan, Pritzel & Blundell 2017, Section 2.4: the mixture's mean) removes the arbitrary
choice of one seed and the part of the error that varies between seeds; it costs one forward pass per
member, a few milliseconds against the graph's probes. Averaging lambda is not averaging ELBOs:
where members disagree widely the mean can be worse than most of them (German credit's beta: 0.46,
0.12 and 0.15 average to 0.24, whose NUTS run diverged; docs/meta_reading.md).

``MetaEnsemble`` stacks its members' arrays along a leading axis (one module, one compiled program,
``equinox.filter_vmap`` over members) and returns logits like `MetaGNN`, so every caller of a network
takes an ensemble unchanged. The combination: lambda = mean over members of sigmoid(logit), returned
as its logit.
"""

from __future__ import annotations

from typing import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from autoreparam.meta.batching import PaddedBatch
from autoreparam.meta.network import MetaGNN

_EDGE = 1e-7  # keeps the mean lambda's logit finite when every member is saturated at 0 or 1


class MetaEnsemble(eqx.Module):
    """``size`` networks of one architecture, arrays stacked on axis 0; called like `MetaGNN`."""

    members: MetaGNN
    size: int = eqx.field(static=True)

    @property
    def hidden(self) -> int:
        return self.members.hidden

    @property
    def num_steps(self) -> int:
        return self.members.num_steps

    @property
    def form(self) -> str:
        return self.members.form

    @property
    def probes(self) -> str:
        return self.members.probes

    def __call__(self, batch: PaddedBatch) -> jax.Array:
        """Logits of the members' mean lambda, ``(M, 1)`` (tied) or ``(M, 2)`` (separate)."""
        logits = eqx.filter_vmap(lambda member: member(batch))(self.members)
        lam = jnp.clip(jnp.mean(jax.nn.sigmoid(logits), axis=0), _EDGE, 1.0 - _EDGE)
        return jnp.log(lam) - jnp.log1p(-lam)


def stack_networks(networks: Sequence[MetaGNN]) -> MetaEnsemble:
    """One ensemble of ``networks`` (at least two, of one architecture: hidden size, rounds, form)."""
    networks = list(networks)
    if len(networks) < 2:
        raise ValueError(f"an ensemble needs at least two networks, got {len(networks)}")
    first = networks[0]
    arrays = [eqx.partition(n, eqx.is_array)[0] for n in networks]
    for index, other in enumerate(networks[1:], start=1):
        if (other.hidden, other.num_steps, other.form, other.probes) != \
                (first.hidden, first.num_steps, first.form, first.probes) or \
                jax.tree_util.tree_structure(arrays[index]) != jax.tree_util.tree_structure(arrays[0]):
            raise ValueError(f"network {index} has another architecture than network 0 "
                             f"({other.hidden}, {other.num_steps}, {other.form!r}, probes {other.probes!r} "
                             f"against {first.hidden}, {first.num_steps}, {first.form!r}, probes "
                             f"{first.probes!r}); an ensemble needs one")
    stacked = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *arrays)
    return MetaEnsemble(eqx.combine(stacked, eqx.partition(first, eqx.is_array)[1]), len(networks))


def ensemble_skeleton(make_member, size: int, key: jax.Array) -> MetaEnsemble:
    """An ensemble of ``size`` fresh members ``make_member(key)`` (shapes for loading saved arrays)."""
    members = eqx.filter_vmap(make_member)(jax.random.split(key, size))
    return MetaEnsemble(members, size)
