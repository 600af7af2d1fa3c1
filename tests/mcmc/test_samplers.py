"""Every method and both kernels against posteriors known exactly (Monte Carlo z-scores, fixed seeds).

Targets: the Section 3 model (paper 000 Section 3; Gaussian posterior in closed form, 002 Appendix A)
and Neal's funnel z ~ N(0, 3), x ~ N(0, exp(z/2)), whose z-marginal is N(0, 3) and x-mean is 0.
"""

import numpy as np
import pytest

import autoreparam as ar
from autoreparam.models import gaussian_section3, gaussian_section3_data, gaussian_section3_posterior, neals_funnel

from mcmc_helpers import SMALL_VI, assert_matches

CONFIGS = [
    ("cp", "hmc"),
    ("ncp", "hmc"),
    ("vip", "hmc"),
    ("ihmc", "hmc"),
    ("cp", "nuts"),
    ("ncp", "nuts"),
    ("vip", "nuts"),
    ("auto", "nuts"),
]


def _run(model, args, kwargs, method, kernel, seed=0, **options):
    return ar.infer(
        model, *args, method=method, kernel=kernel, num_chains=4, num_warmup=400, num_samples=1000,
        seed=seed, num_leapfrog=4, vi_config=SMALL_VI, progress=False, **options, **kwargs,
    )


@pytest.fixture(scope="module")
def section3():
    y, sigma = gaussian_section3_data(q=1.0, n=10, sigma_mu=1.0, seed=0)
    mean, cov = gaussian_section3_posterior(y, sigma, 1.0)  # order (mu, theta)
    sd = np.sqrt(np.diag(cov))
    return (y, sigma), {"mu": (mean[0], sd[0]), "theta": (mean[1], sd[1])}


@pytest.mark.parametrize("method,kernel", CONFIGS)
def test_section3_posterior_is_recovered(section3, method, kernel):
    (y, sigma), truth = section3
    result = _run(gaussian_section3, (y, sigma), {}, method, kernel)
    assert set(result.samples) == {"mu", "theta"}
    assert result.samples["mu"].shape == (4, 1000)
    assert_matches(result.samples, truth)


FUNNEL_TRUTH = {"z": (0.0, 3.0)}


@pytest.mark.parametrize(
    "method,kernel",
    [c for c in CONFIGS if c[0] not in ("cp", "ihmc")]
    + [pytest.param("cp", "hmc", marks=pytest.mark.slow), pytest.param("cp", "nuts", marks=pytest.mark.slow),
       # 24 s of a suite over its 15-minute budget; iHMC's posterior stays in CI on the Section 3 model.
       pytest.param("ihmc", "hmc", marks=pytest.mark.slow)],
)
def test_funnel_z_marginal_is_recovered(method, kernel):
    result = _run(neals_funnel, (), {}, method, kernel, seed=1)
    assert_matches(result.samples, FUNNEL_TRUTH)
    x = result.samples["x"]
    # x's sd is infinite-tailed in z; test its mean against 0 with the sample's own s.e. only.
    flat = x.reshape(-1)
    assert abs(flat.mean()) < 3.29 * flat.std() / np.sqrt(len(flat) / 20)
