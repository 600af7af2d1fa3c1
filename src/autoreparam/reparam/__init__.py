"""Program transformations: site analysis, site plans, parameterisations and the rewriting handlers."""

from autoreparam.reparam.handlers import (
    LearnableCentringReparam,
    PartialCentringReparam,
    centre,
    learnable_centring,
    noncentre,
    partially_centre,
    reparameterise,
)
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import ReparamPlan, select_sites
from autoreparam.reparam.sites import ModelStructure, SiteInfo, analyse_model

__all__ = [
    "LearnableCentringReparam",
    "ModelStructure",
    "Parameterisation",
    "PartialCentringReparam",
    "ReparamPlan",
    "SiteInfo",
    "analyse_model",
    "centre",
    "learnable_centring",
    "noncentre",
    "partially_centre",
    "reparameterise",
    "select_sites",
]
