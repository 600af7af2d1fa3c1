"""Exact analysis of parameterisations for linear-Gaussian models (Section 3 and Appendix A).

Nothing here touches the file system on import; `write_figures` loads matplotlib when called.
"""

from autoreparam.analysis.conditioning import (
    BestDiagonal,
    best_diagonal_preconditioner,
    condition_number,
    condition_number_best_diagonal,
)
from autoreparam.analysis.figures import fig2c_data, fig4_data, write_figures
from autoreparam.analysis.linear_gaussian import (
    LinearGaussianModel,
    posterior_covariance,
    posterior_precision,
    prior_precision,
    topological_order,
)
from autoreparam.analysis.partial_centring import (
    centring_jacobian,
    inverse_centring_jacobian,
    reparameterised_posterior_covariance,
    reparameterised_posterior_precision,
    to_original,
)
from autoreparam.analysis.simple_model import (
    KappaRow,
    best_lambda,
    kappa_cp,
    kappa_ncp,
    kappa_of_lambda,
    kappa_table,
    simple_model,
    simple_model_covariance,
)

__all__ = [
    "BestDiagonal",
    "KappaRow",
    "LinearGaussianModel",
    "best_diagonal_preconditioner",
    "best_lambda",
    "centring_jacobian",
    "condition_number",
    "condition_number_best_diagonal",
    "fig2c_data",
    "fig4_data",
    "inverse_centring_jacobian",
    "kappa_cp",
    "kappa_ncp",
    "kappa_of_lambda",
    "kappa_table",
    "posterior_covariance",
    "posterior_precision",
    "prior_precision",
    "reparameterised_posterior_covariance",
    "reparameterised_posterior_precision",
    "simple_model",
    "simple_model_covariance",
    "to_original",
    "topological_order",
    "write_figures",
]
