"""Which latent sites to reparameterise, and a recorded reason for every site.

Policies (the user's ``sites`` argument):
- ``"default"``: latents whose prior location or scale depends on another latent (found by tracing).
  Plain priors with constant location and scale are left as written: non-centring them only
  rescales a coordinate, which a diagonal preconditioner does anyway.
- ``"all"``: every location-scale latent, as the paper's code does (REFERENCE.md, "Protocol").
- a list of site names: exactly those; each must be a latent of a supported family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from autoreparam.errors import ArgumentError, SiteError
from autoreparam.reparam.families import supported_family_names
from autoreparam.reparam.in_scan import EXPAND_INSTEAD, SAMPLE_SHAPE_IN_SCAN
from autoreparam.reparam.sites import ModelStructure, SiteInfo


@dataclass(frozen=True)
class SiteDecision:
    name: str
    reparameterise: bool
    reason: str


@dataclass(frozen=True)
class ReparamPlan:
    """The sites a parameterisation acts on, with a decision and a reason for every latent."""

    structure: ModelStructure
    sites: tuple[SiteInfo, ...]
    decisions: tuple[SiteDecision, ...]
    policy: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sites)

    def site(self, name: str) -> SiteInfo:
        return self.structure[name]

    def report(self) -> str:
        """A table a person reads: one line per latent site."""
        width = max(len(d.name) for d in self.decisions)
        lines = [f"{'site':<{width}}  reparameterised  reason"]
        for d in self.decisions:
            lines.append(f"{d.name:<{width}}  {'yes' if d.reparameterise else 'no ':<15}  {d.reason}")
        return "\n".join(lines)


def _unsupported_reason(site: SiteInfo) -> str:
    return (
        f"left centred: {site.distribution} has no location-scale form "
        f"(supported: {', '.join(supported_family_names())})"
    )


# The auxiliary site that replaces a rewritten latent, named as NumPyro's LocScaleReparam names it.
AUX_SUFFIX = "_decentered"


def aux_name(name: str) -> str:
    """The name of the auxiliary site that replaces latent ``name``."""
    return f"{name}{AUX_SUFFIX}"


def _name_clash(site: SiteInfo, structure: ModelStructure) -> str | None:
    taken = set(structure.names) | set(structure.observed)
    if aux_name(site.name) in taken:
        return f"its auxiliary site would be called '{aux_name(site.name)}', a name the model already uses"
    return None


# NumPyro's substitute reads step i of a scanned value by its iteration count, which a reversed scan
# runs backwards; the auxiliary series of a rewritten site would be read out of order (reparam.in_scan).
_IN_REVERSED_SCAN = "sampled inside scan(..., reverse=True), whose steps NumPyro substitutes out of order"


# A site whose log density NumPyro multiplies by s (handlers.scale) has the unnormalised density
# p(z)^s. Moving to z~ = (z - lambda mu) / s_z^(1 - lambda) needs p(z(z~))^s |dz/dz~|, but the rewritten
# program scales the auxiliary site's density by s and adds no Jacobian, which leaves out
# (1 - s)(1 - lambda) log(scale) per element: a wrong posterior with healthy diagnostics (NumPyro's
# LocScaleReparam does the same). Such sites stay centred.
_SCALED = "its log density is scaled (numpyro.handlers.scale or a subsampled plate), which the rewrite cannot carry"


def _decide(site: SiteInfo, policy: str, structure: ModelStructure) -> SiteDecision:
    if site.family is None:
        return SiteDecision(site.name, False, _unsupported_reason(site))
    clash = _name_clash(site, structure)
    if clash:
        return SiteDecision(site.name, False, f"left centred: {clash} (rename that site to rewrite this one)")
    if site.in_reversed_scan:
        return SiteDecision(site.name, False, f"left centred: {_IN_REVERSED_SCAN}")
    if site.sample_shape_in_scan:
        return SiteDecision(site.name, False, f"left centred: {SAMPLE_SHAPE_IN_SCAN} ({EXPAND_INSTEAD} to rewrite it)")
    if site.scaled:
        return SiteDecision(site.name, False, f"left centred: {_SCALED}")
    if policy == "all":
        return SiteDecision(site.name, True, f"{site.distribution} latent ('all' policy)")
    if site.has_latent_prior:
        return SiteDecision(
            site.name, True, f"{site.distribution} prior depends on latent(s) {', '.join(site.depends_on)}"
        )
    return SiteDecision(site.name, False, "left centred: prior location and scale are constants")


def _site_names(sites, structure: ModelStructure) -> list[str]:
    """``sites`` as a list of names, or an ``ArgumentError`` listing the model's latents.

    ``sites=3`` failed as a bare "'int' object is not iterable" (found in review).
    """
    try:
        names = list(sites)
    except TypeError:
        names = None
    if names is None or not all(isinstance(name, str) for name in names):
        shown = repr(sites) if len(repr(sites)) <= 60 else repr(sites)[:57] + "..."
        raise ArgumentError(f"sites must be 'default', 'all' or a list of site names (latents: "
                            f"{', '.join(structure.names)}), got {type(sites).__name__} {shown}")
    return names


def select_sites(structure: ModelStructure, sites: str | Sequence[str] = "default") -> ReparamPlan:
    """Apply a site policy to an analysed model and record the decision for every latent."""
    if isinstance(sites, str):
        if sites not in ("default", "all"):
            raise ArgumentError(f"sites must be 'default', 'all' or a list of site names, got '{sites}'")
        decisions = tuple(_decide(s, sites, structure) for s in structure.latents)
        policy = sites
    else:
        requested = _site_names(sites, structure)
        known = set(structure.names)
        for name in requested:
            if name in structure.observed:
                raise SiteError(name, "is observed; only latent sites can be reparameterised")
            if name not in known:
                raise SiteError(name, f"is not a latent site of the model (latents: {', '.join(structure.names)})")
            site = structure[name]
            if site.family is None:
                raise SiteError(name, _unsupported_reason(site).replace("left centred: ", "cannot reparameterise: "))
            if site.in_reversed_scan:
                raise SiteError(name, f"cannot reparameterise: {_IN_REVERSED_SCAN}; scan forwards over "
                                "reversed inputs instead, or leave it out")
            if site.sample_shape_in_scan:
                raise SiteError(name, f"cannot reparameterise: {SAMPLE_SHAPE_IN_SCAN}; {EXPAND_INSTEAD}, "
                                "or leave it out")
            if site.scaled:
                raise SiteError(name, f"cannot reparameterise: {_SCALED}; leave it out")
            clash = _name_clash(site, structure)
            if clash:
                raise SiteError(name, f"cannot reparameterise: {clash}; rename that site")
        decisions = tuple(
            SiteDecision(s.name, True, "requested by name")
            if s.name in requested
            else SiteDecision(s.name, False, "not requested")
            for s in structure.latents
        )
        policy = "explicit"
    chosen = tuple(structure[d.name] for d in decisions if d.reparameterise)
    return ReparamPlan(structure, chosen, decisions, policy)
