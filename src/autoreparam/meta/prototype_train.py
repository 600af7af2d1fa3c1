"""Training paper 003's prototype (`prototype.py`) as its repository did: observed funnels only.

1,000 models z ~ N(0, 1), x ~ N(0, e^z), y ~ N(x, sigma) with y ~ U(-20, 20) and sigma ~ U(0.1, 20)
(the paper's ranges); per-model mean-field guides; loss = the summed negative ELBO (100 particles,
no per-model normalisation); Adam at 1e-2 with gradients clipped at norm 10 (Pyro's ClippedAdam);
1,000 steps with the network frozen (guides only), then 2,000 joint steps. All funnels share one
graph up to the values of y and sigma, so one vmapped program trains the whole family.
"""

from __future__ import annotations

import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from autoreparam.coordinates import Coordinates
from autoreparam.errors import DataError
from autoreparam.graph import model_graph
from autoreparam.meta.files import read_json, write_json
from autoreparam.meta.prototype import PrototypeGNN, PrototypeGraph, prototype_graph
from autoreparam.models.funnels import FUNNEL_SIGMA_RANGE, FUNNEL_Y_RANGE, funnel_with_observation
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.meanfield import MeanField, elbo_terms, init_meanfield

FORMAT = "autoreparam.meta.prototype"
_Y0, _SIGMA0 = 3.14159, 2.71828  # distinctive template values, found again among the constants


@dataclass(frozen=True)
class PrototypeConfig:
    num_models: int = 1000
    warmup_steps: int = 1000
    train_steps: int = 2000
    particles: int = 100
    learning_rate: float = 1e-2
    clip_norm: float = 10.0
    seed: int = 0


def _template():
    graph = model_graph(funnel_with_observation, y=_Y0, sigma=_SIGMA0)
    proto = prototype_graph(graph)
    y_node = int(np.flatnonzero(np.isclose(proto.value, _Y0, rtol=1e-5))[0])
    sigma_node = int(np.flatnonzero(np.isclose(proto.value, _SIGMA0, rtol=1e-5))[0])
    x_node = int(proto.element_node[graph.element_rows("x")][0])
    return proto, y_node, sigma_node, x_node


def family_loss(config: PrototypeConfig):
    """``(network, guides, y, sigma, key) -> summed negative ELBO`` over the funnels of one batch."""
    proto, y_node, sigma_node, x_node = _template()
    plan = select_sites(analyse_model(funnel_with_observation, y=_Y0, sigma=_SIGMA0), "default")
    base = PrototypeGraph(*(jnp.asarray(a) for a in proto))

    def lam_of(network, y, sigma):
        values = base.value.at[y_node].set(y).at[sigma_node].set(sigma)
        return network(base._replace(value=values))[x_node]

    def negative_elbo(network, guide, y, sigma, key):
        coords = Coordinates(funnel_with_observation, (), {"y": y, "sigma": sigma}, plan)
        param = Parameterisation.tied(plan, {"x": lam_of(network, y, sigma)})
        log_density = lambda u: coords.log_density(coords.unravel(u), param)  # noqa: E731
        return -jnp.mean(elbo_terms(log_density, guide, key, config.particles, stl=False))

    def loss(network, guides, ys, sigmas, key):
        keys = jax.random.split(key, ys.shape[0])
        return jnp.sum(jax.vmap(negative_elbo, in_axes=(None, 0, 0, 0, 0))(network, guides, ys, sigmas, keys))

    return loss, jax.vmap(lam_of, in_axes=(None, 0, 0))


def train_prototype(out: str | Path, config: PrototypeConfig = PrototypeConfig(), progress: bool = True) -> Path:
    """Train the prototype and write ``<out>.eqx`` and ``<out>.json``; returns the JSON path."""
    out = Path(out)
    rng = np.random.default_rng(config.seed)
    ys = jnp.asarray(rng.uniform(*FUNNEL_Y_RANGE, config.num_models), jnp.float32)
    sigmas = jnp.asarray(rng.uniform(*FUNNEL_SIGMA_RANGE, config.num_models), jnp.float32)
    network = PrototypeGNN(key=jax.random.PRNGKey(config.seed))
    guides = jax.vmap(lambda _: init_meanfield(jnp.zeros(2), 0.1))(jnp.arange(config.num_models))
    loss, _ = family_loss(config)
    optimiser = optax.chain(optax.clip_by_global_norm(config.clip_norm), optax.adam(config.learning_rate))
    params = (network, guides)
    opt_state = optimiser.init(eqx.filter(params, eqx.is_array))

    @eqx.filter_jit
    def step(params, opt_state, key, train_network):
        value, grads = eqx.filter_value_and_grad(lambda p: loss(p[0], p[1], ys, sigmas, key))(params)
        network_grads = jax.tree_util.tree_map(lambda g: g * train_network, grads[0])
        updates, opt_state = optimiser.update((network_grads, grads[1]), opt_state, eqx.filter(params, eqx.is_array))
        if not train_network:  # the frozen phase: Adam's step on the network is discarded too
            updates = (jax.tree_util.tree_map(jnp.zeros_like, updates[0]), updates[1])
        return eqx.apply_updates(params, updates), opt_state, value

    key = jax.random.PRNGKey(config.seed)
    start = time.perf_counter()
    losses = []
    total = config.warmup_steps + config.train_steps
    bar = None
    if progress:
        from autoreparam.progress import task_bar

        bar = task_bar(total, "prototype (paper 003)", mininterval=1.0)
    for i in range(total):
        key, sub = jax.random.split(key)
        params, opt_state, value = step(params, opt_state, sub, i >= config.warmup_steps)
        losses.append(float(value))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - start
    out.parent.mkdir(parents=True, exist_ok=True)
    eqx.tree_serialise_leaves(out.with_suffix(".eqx"), params[0])
    card = {"format": FORMAT, "config": asdict(config), "seconds": seconds, "final_loss": float(np.mean(losses[-32:])),
            "hidden": params[0].hidden, "num_layers": params[0].num_layers,
            "machine": f"{platform.node()} ({jax.devices()[0].platform})"}
    return write_json(out.with_suffix(".json"), card)


def load_prototype(stem: str | Path) -> tuple[PrototypeGNN, dict]:
    stem = Path(stem)
    try:
        card = read_json(stem.with_suffix(".json"))
    except FileNotFoundError as error:
        raise DataError(f"no prototype weights at {stem}; train them with `autoreparam meta prototype`") from error
    if card.get("format") != FORMAT:
        raise DataError(f"{stem.with_suffix('.json')} is not a prototype card")
    skeleton = PrototypeGNN(card["hidden"], card["num_layers"], key=jax.random.PRNGKey(0))
    return eqx.tree_deserialise_leaves(stem.with_suffix(".eqx"), skeleton), card


__all__ = ["PrototypeConfig", "family_loss", "load_prototype", "train_prototype", "MeanField"]
