"""MCMC diagnostics: the paper's ESS metric, ArviZ's standard diagnostics, moment errors.

Draws are always {site name: array (chains, draws, *shape)}. Importing this package loads neither
ArviZ nor matplotlib.
"""

from autoreparam.diagnostics.autocorrelation import autocorrelation, autocovariance
from autoreparam.diagnostics.draws import Draws, as_draws, element_names
from autoreparam.diagnostics.ess import (
    EfficiencyMetric,
    ess_by_site,
    ess_of_series,
    ess_per_chain,
    paper_metric,
)
from autoreparam.diagnostics.moments import (
    GoldStandard,
    MomentErrors,
    gold_standard,
    log_checkpoints,
    moment_errors,
    pooled_moments,
)
from autoreparam.diagnostics.standard import (
    StandardDiagnostics,
    bulk_ess,
    rank_rhat,
    standard_diagnostics,
    tail_ess,
)

__all__ = [
    "Draws",
    "EfficiencyMetric",
    "GoldStandard",
    "MomentErrors",
    "StandardDiagnostics",
    "as_draws",
    "autocorrelation",
    "autocovariance",
    "bulk_ess",
    "element_names",
    "ess_by_site",
    "ess_of_series",
    "ess_per_chain",
    "gold_standard",
    "log_checkpoints",
    "moment_errors",
    "paper_metric",
    "pooled_moments",
    "rank_rhat",
    "standard_diagnostics",
    "tail_ess",
]
