"""Hierarchical models of the paper's experiments, written centred as a modeller would.

Gorinova, Moore & Hoffman (2020), "Automatic Reparameterisation of Probabilistic Programs",
ICML, Section 6 and REFERENCE.md; data from Gelman & Hill (2006), ARM. Every latent is Normal and
centred; vector latents live under a `numpyro.plate`; the observed site is ``y`` and ``y=None``
gives prior predictive draws.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from autoreparam.models.indexing import take_or_zero


def eight_schools(sigma, y=None):
    """Eight schools (Rubin 1981; BDA ch. 5): school effects theta_j around a common mu.

    mu ~ N(0, 5); log_tau ~ N(0, 5); theta_j ~ N(mu, exp(log_tau)); y_j ~ N(theta_j, sigma_j).
    """
    sigma = jnp.asarray(sigma)
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 5.0))
    with numpyro.plate("schools", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, jnp.exp(log_tau)))
        numpyro.sample("y", dist.Normal(theta, sigma), obs=y)


def radon(county, floor, log_uranium, num_counties, y=None):
    """Radon with a county-level uranium predictor (ARM ch. 12.6), unit noise scale.

    mu_a, b1, b2 ~ N(0, 1); m_c ~ N(mu_a + b1 u_c, 1); y_i ~ N(m_{c_i} + b2 x_i, 1).
    """
    m, b2 = _radon_county_means(log_uranium, num_counties)
    county, floor = jnp.asarray(county), jnp.asarray(floor)
    with numpyro.plate("houses", county.shape[0]):
        numpyro.sample("y", dist.Normal(m[county] + b2 * floor, 1.0), obs=y)


def radon_stddvs(county, floor, log_uranium, num_counties, y=None):
    """`radon` with one inferred log noise scale per county (the original ``get_radon_model_stddvs``).

    As `radon`, plus log_m_sd_c ~ N(0, 1) and y_i ~ N(m_{c_i} + b2 x_i, exp(log_m_sd_{c_i})).
    """
    m, b2 = _radon_county_means(log_uranium, num_counties)
    with numpyro.plate("counties", num_counties):
        log_m_sd = numpyro.sample("log_m_sd", dist.Normal(0.0, 1.0))
    county, floor = jnp.asarray(county), jnp.asarray(floor)
    with numpyro.plate("houses", county.shape[0]):
        numpyro.sample("y", dist.Normal(m[county] + b2 * floor, jnp.exp(log_m_sd[county])), obs=y)


def _radon_county_means(log_uranium, num_counties):
    # The part both radon variants share: population and county levels.
    mu_a = numpyro.sample("mu_a", dist.Normal(0.0, 1.0))
    b1 = numpyro.sample("b1", dist.Normal(0.0, 1.0))
    b2 = numpyro.sample("b2", dist.Normal(0.0, 1.0))
    with numpyro.plate("counties", num_counties):
        m = numpyro.sample("m", dist.Normal(mu_a + b1 * jnp.asarray(log_uranium), 1.0))
    return m, b2


def election88(state, black, female, num_states, y=None):
    """Logistic regression of the 1988 vote on state, race and sex (ARM ch. 14.1).

    mu_a ~ N(0, 100); log_sigma_a ~ N(0, 10); a_s ~ N(mu_a, exp(log_sigma_a));
    b1, b2 ~ N(0, 100); y_i ~ Bernoulli(logit = a_{s_i} + b1 black_i + b2 female_i).
    """
    mu_a = numpyro.sample("mu_a", dist.Normal(0.0, 100.0))
    log_sigma_a = numpyro.sample("log_sigma_a", dist.Normal(0.0, 10.0))
    with numpyro.plate("states", num_states):
        a = numpyro.sample("a", dist.Normal(mu_a, jnp.exp(log_sigma_a)))
    b1 = numpyro.sample("b1", dist.Normal(0.0, 100.0))
    b2 = numpyro.sample("b2", dist.Normal(0.0, 100.0))
    state = jnp.asarray(state)
    logits = take_or_zero(a, state) + b1 * jnp.asarray(black) + b2 * jnp.asarray(female)
    with numpyro.plate("respondents", state.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=logits), obs=y)


def electric(pair, grade, grade_pair, treatment, num_pairs, num_grades, y=None):
    """The Electric Company experiment with pair intercepts (ARM ch. 23.2).

    mu_g ~ N(0, 1); log_sigma_y_g ~ N(0, 1); a_p ~ N(100 mu_{grade_pair_p}, 1);
    b_g ~ N(0, 100); y_i ~ N(a_{pair_i} + b_{grade_i} treatment_i, exp(log_sigma_y_{grade_i})).
    The factor 100 puts test scores (about 50-120) on the unit scale of mu.
    """
    with numpyro.plate("grades", num_grades):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        log_sigma_y = numpyro.sample("log_sigma_y", dist.Normal(0.0, 1.0))
    with numpyro.plate("pairs", num_pairs):
        a = numpyro.sample("a", dist.Normal(100.0 * take_or_zero(mu, grade_pair), 1.0))
    with numpyro.plate("grades", num_grades):
        b = numpyro.sample("b", dist.Normal(0.0, 100.0))
    grade = jnp.asarray(grade)
    loc = take_or_zero(a, pair) + take_or_zero(b, grade) * jnp.asarray(treatment)
    scale = jnp.exp(take_or_zero(log_sigma_y, grade))
    with numpyro.plate("classrooms", grade.shape[0]):
        numpyro.sample("y", dist.Normal(loc, scale), obs=y)
