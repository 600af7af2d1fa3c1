"""``predict_parameterisation``: the trained network's centring for any model, with no per-model fitting.

Paper 003, "Method" step 5: build the model's graph, run the network once, and read one lambda per
latent element (or a and b, in the separate form). The shipped weights live in ``meta/weights/`` and
are read on the first call (importing this module reads no file); `load_network` reads others.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

import equinox as eqx
import numpy as np

from autoreparam import compilation_cache
from autoreparam.errors import ArgumentError, SiteError
from autoreparam.graph import ModelGraph, model_graph
from autoreparam.graph.types import NodeType
from autoreparam.meta.batching import pad_graphs
from autoreparam.meta.ensemble import MetaEnsemble
from autoreparam.meta.fit_points import fit_points, probed_graph
from autoreparam.meta.network import PROBES, MetaGNN
from autoreparam.meta.weights import load_network
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import ReparamPlan
from autoreparam.validation import check_call

Network = MetaGNN | MetaEnsemble  # an ensemble is called like one network
# Stems of the shipped weights in autoreparam/meta/weights/, each with its model card.
SHIPPED_PRIOR = "meta_gnn"  # trained on graphs probed at the prior points; META.md's full evaluation
SHIPPED_FIT = "meta_gnn_fit"  # trained on graphs probed at a short fit (benchmarks/results/meta_fit_points)
# The default since 2026-11-28: NUTS in its centrings drew 1.76x the ESS per gradient of the prior
# network's over the zoo (geometric mean, 3 seeds; benchmarks/results/meta_fit_nuts).
SHIPPED = SHIPPED_FIT
CARDS = {SHIPPED_PRIOR: "MODEL_CARD.md", SHIPPED_FIT: "MODEL_CARD_fit.md"}


def shipped_stem(name: str = SHIPPED) -> Path:
    """Path stem of weights shipped with the package (``.eqx`` and ``.json`` beside it)."""
    return Path(str(resources.files("autoreparam.meta") / "weights" / name))


@functools.lru_cache(maxsize=4)
def _cached(stem: str) -> tuple[Network, dict]:
    return load_network(stem)


def default_network(name: str = SHIPPED) -> Network:
    """A shipped network (by default the default one): an ensemble of three training seeds
    (`meta/ensemble.py`), read once per process."""
    return _cached(str(shipped_stem(name)))[0]


@eqx.filter_jit
def _forward(network: Network, batch):
    return network(batch)


def network_logits(network: Network, graphs: Sequence[ModelGraph]) -> list[np.ndarray]:
    """Per graph the ``(elements, 1 or 2)`` logits of its element rows (padded batch, one jitted call)."""
    padded, rows = pad_graphs(graphs)
    # NumPy arrays straight into the jitted call: `jnp.asarray` of each, run eagerly, compiled a small
    # program per array shape in every new process.
    logits = np.asarray(_forward(network, padded), dtype=np.float64)
    return [logits[r] for r in rows]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free; exactly 0 or 1 only at |x| > ~40


def centring_per_site(graph: ModelGraph, values: np.ndarray) -> dict[str, np.ndarray]:
    """Element rows ``(M, k)`` of ``graph`` to ``{site: (k, *shape)}`` for every location-scale latent."""
    out = {}
    for node in np.flatnonzero(graph.node_type == int(NodeType.LATENT_LOC_SCALE)):
        rows = np.flatnonzero(graph.element_node == node)
        rows = rows[np.argsort(graph.element_index[rows], kind="stable")]
        shape = graph.node_shape[node]
        out[graph.node_name[node]] = np.stack([values[rows, j].reshape(shape) for j in range(values.shape[1])])
    return out


@dataclass(frozen=True)
class MetaPrediction:
    """The predicted centring of every location-scale latent: a (location) and b (scale), site-shaped.

    In the tied form (the shipped network's) a = b = lambda. ``seconds``: building the graph (its
    tracing and probes) and running the network, each including any compilation.
    """

    loc_centring: dict[str, np.ndarray]
    scale_centring: dict[str, np.ndarray]
    form: str
    seconds: dict = field(default_factory=dict)

    @property
    def lam(self) -> dict[str, np.ndarray]:
        """lambda per site (the scale centring b in the separate form); 1 = centred, 0 = non-centred."""
        return dict(self.scale_centring)

    def parameterisation(self, plan: ReparamPlan) -> Parameterisation:
        """The prediction restricted to the sites ``plan`` reparameterises."""
        missing = [n for n in plan.names if n not in self.scale_centring]
        if missing:
            raise SiteError(missing[0], "the network predicted no centring for this site (it is not a "
                                        "location-scale latent of the model's graph)")
        a = {n: self.loc_centring[n] for n in plan.names}
        b = {n: self.scale_centring[n] for n in plan.names}
        return Parameterisation.tied(plan, b) if self.form == "tied" else Parameterisation.separate(plan, a, b)


def graph_for(network: Network, model: Callable, args: tuple, kwargs: dict, seed: int = 0,
              built: dict | None = None) -> ModelGraph:
    """``model(*args, **kwargs)``'s graph with its probes where ``network`` reads them (``network.probes``).

    ``built`` (probes -> graph) holds graphs already built for this model call, so that networks
    reading the same probes share one; a new graph is added to it.
    """
    built = {} if built is None else built
    if network.probes not in built:
        built[network.probes] = probed_graph(model, args, kwargs, network.probes, seed)
    return built[network.probes]


def predict_graph(graph: ModelGraph, network: Network | None = None) -> MetaPrediction:
    """The network's centring for an already built graph. Without ``network``: the one trained on
    graphs read at the prior points, where `model_graph` reads them unless given ``probe_points``."""
    network = default_network(SHIPPED_PRIOR) if network is None else network
    start = time.perf_counter()
    values = _sigmoid(network_logits(network, [graph])[0])
    per_site = centring_per_site(graph, values)
    seconds = {"network": time.perf_counter() - start}
    loc = {n: v[0] for n, v in per_site.items()}
    scale = {n: v[-1] for n, v in per_site.items()}
    return MetaPrediction(loc, scale, network.form, seconds)


def predict(model: Callable, /, *args, network: Network | None = None, seed: int = 0, probes: str | None = None,
            **kwargs) -> MetaPrediction:
    """Build ``model(*args, **kwargs)``'s graph and run the network on it (no sampling).

    ``probes`` says where the graph's probes are read; by default where ``network`` was trained to
    read them (``network.probes``). ``"prior"``: at the prior points, fitting nothing. ``"fit"``: at
    the mean and +-1 sd of a short non-centred mean-field fit (`autoreparam.meta.fit_points`, 4,000
    gradients), which ``seconds`` reports as ``fit``. Without ``network``, the shipped network
    trained at those points: by default (and for ``"fit"``) ``meta_gnn_fit``, read at the fit
    (``meta/weights/MODEL_CARD_fit.md``); for ``"prior"`` ``meta_gnn``, read at the prior points,
    fitting nothing (``MODEL_CARD.md``, META.md). Reading a network at points it was not trained on
    is allowed for measurement (`benchmarks/meta_fit_points.py`). ``seed`` seeds that fit (and the
    graph's traced draws), so with ``"fit"`` probes lambda moves with it (eight schools' log_tau:
    0.59 to 0.68 over seeds 0 to 3); ``infer`` predicts at seed 0 whatever its own seed.
    Like ``infer``, it switches on the persistent compilation cache (`autoreparam.compilation_cache`),
    so that a new process reuses the compiled probe and network programs of an earlier one.
    """
    if probes not in (None, *PROBES):
        raise ArgumentError(f"probes must be one of {', '.join(map(repr, PROBES))}, got {probes!r}")
    if network is None:
        network = default_network(SHIPPED_PRIOR if probes == "prior" else SHIPPED)
    elif not isinstance(network, (MetaGNN, MetaEnsemble)):
        # A stem as text failed as "'str' object is not callable" (found in review).
        raise ArgumentError(f"network must be a loaded network (autoreparam.meta.weights.load_network(stem)[0]) "
                            f"or None for the shipped one, got {type(network).__name__} {network!r:.60}")
    probes = network.probes if probes is None else probes
    args, kwargs, seed = check_call(model, args, kwargs, seed, entry=predict)
    compilation_cache.ensure()
    seconds = {}
    points = None
    if probes == "fit":
        points, seconds["fit"] = fit_points(model, args, kwargs, seed)
    start = time.perf_counter()
    graph = model_graph(model, *args, seed=seed, probe_points=points, **kwargs)
    seconds["graph"] = time.perf_counter() - start
    prediction = predict_graph(graph, network)
    seconds.update(prediction.seconds)
    seconds["total"] = sum(seconds.values())
    return MetaPrediction(prediction.loc_centring, prediction.scale_centring, prediction.form, seconds)


def predict_parameterisation(model: Callable, /, *args, network: Network | None = None, seed: int = 0,
                             probes: str | None = None, **kwargs) -> dict[str, np.ndarray]:
    """lambda in [0, 1] per location-scale latent of ``model(*args, **kwargs)``, one per element (site-shaped).

    1 = centred, 0 = non-centred (paper 000 Section 5.2). The meta-learned network of paper 003 reads
    the model's graph (`autoreparam.graph.model_graph`) and predicts lambda with no per-model
    optimisation; see docs/meta.md for its accuracy and its cost (the graph's probes dominate).
    ``ar.infer(model, ..., method="meta")`` samples in this parameterisation. ``probes="fit"`` reads
    the graph's probes at a short non-centred fit (the default) or ``"prior"`` at the prior points,
    each with the shipped network trained there (`predict`).
    """
    return predict(model, *args, network=network, seed=seed, probes=probes, **kwargs).lam
