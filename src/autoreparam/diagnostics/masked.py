"""Draws without density left out of the diagnostics.

A latent element masked out of the density (NumPyro's obs_mask imputation site ``<name>_unobserved``
at the observed positions, or a latent under ``handlers.mask``) has no target to converge to: HMC
lets it wander, its R-hat is about 2.4 and its ESS tiny, and a correct run would be flagged with
advice that cannot help. The masks come from site analysis (``SiteInfo.without_density``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np


@dataclass(frozen=True)
class DiagnosticViews:
    """The draws each diagnostic reads.

    ``standard``: every site keeps its shape (so per-element R-hat and ESS index as the site does);
    masked elements are held at 0, whose R-hat is 0/0 = NaN and left out of the worst R-hat
    (`standard_diagnostics`); a site with no element left is dropped (else it would read as stuck).
    ``efficiency``: masked elements removed, since the paper's ESS counts a constant series as the
    worst possible one: a partly masked site becomes one scalar entry per kept element, named by its
    index in the site (``x[3]``), so that the worst element is named as the site indexes it (flattened
    to its kept elements, the site's names were their positions among them; found in review).
    """

    standard: dict
    efficiency: dict


def diagnostic_views(samples: Mapping, masks: Mapping[str, np.ndarray]) -> DiagnosticViews:
    """``samples`` {site: (chains, draws, *shape)}; ``masks`` {site: bool array of the site's shape, True
    where the element has no density}."""
    if not masks:
        return DiagnosticViews(dict(samples), dict(samples))
    standard, efficiency = dict(samples), {}
    for name, value in samples.items():
        mask = masks.get(name)
        if mask is None or not mask.any():
            efficiency[name] = value
            continue
        values = np.asarray(value)
        if mask.all():
            del standard[name]
            continue
        held = np.array(values, copy=True)
        held[..., mask] = 0.0
        standard[name] = held
        for index in np.argwhere(~mask):
            efficiency[f"{name}[{','.join(map(str, index))}]"] = values[(Ellipsis, *index)]
    if not standard:  # nothing but masked sites: nothing to leave the diagnostics
        return DiagnosticViews(dict(samples), dict(samples))
    return DiagnosticViews(standard, efficiency)
