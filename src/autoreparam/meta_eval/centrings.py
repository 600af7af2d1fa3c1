"""Every method's centring of one model: fixed, predicted (meta, prototype) and learned (VIP, meta-VIP)."""

from __future__ import annotations

import numpy as np

from autoreparam.graph import ModelGraph
from autoreparam.meta.predict import centring_per_site, graph_for, predict_graph
from autoreparam.meta.prototype import prototype_lambda
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import ReparamPlan
from autoreparam.vi.fits import Learned


def predicted(plan: ReparamPlan, graph: ModelGraph, networks: dict, prototype, call: tuple | None = None
              ) -> dict[str, Parameterisation]:
    """Predicted centrings: one per network (label -> MetaGNN) and the prototype's.

    ``graph`` is the model's graph at the prior points; a network that reads its probes at a fit
    (``probes="fit"``) gets its own graph of ``call`` = ``(model, args, kwargs)``.
    """
    built = {"prior": graph}

    def graph_of(net):
        if net.probes in built:
            return built[net.probes]
        if call is None:
            raise ValueError(f"a network that reads its probes at {net.probes!r} points needs the model call")
        return graph_for(net, *call, built=built)

    out = {label: predict_graph(graph_of(net), net).parameterisation(plan) for label, net in networks.items()}
    if prototype is not None:
        lam = centring_per_site(graph, prototype_lambda(prototype, graph))
        out["prototype"] = Parameterisation.tied(plan, {n: lam[n][0] for n in plan.names})
    return out


def targets(plan: ReparamPlan, predictions: dict, vip_starts, learned: bool = True) -> dict:
    """What `fit_parameterisations` fits: the fixed centrings, and (``learned``) VIP and VIP started
    from the prediction."""
    out = {"cp": Parameterisation.centred(plan), "ncp": Parameterisation.non_centred(plan),
           "half": Parameterisation.tied(plan, 0.5), **predictions}
    if learned:
        out["vip"] = Learned(tuple(vip_starts))
        if "meta" in predictions:
            out["meta_vip"] = Learned((predictions["meta"],))
    return out


def summary(param: Parameterisation, limit: int = 256) -> dict:
    """lambda per site: every value for small sites, else mean / min / max."""
    out = {}
    for name, value in param.lam.items():
        flat = np.asarray(value, dtype=float).ravel()
        out[name] = flat.tolist() if flat.size <= limit else {"mean": flat.mean(), "min": flat.min(), "max": flat.max()}
    return out
