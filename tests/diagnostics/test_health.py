"""Plain-language warnings: chains that disagree, too few effective draws, divergences (diagnostics/health.py)."""

import numpy as np
import pytest

from autoreparam.diagnostics.health import assess, near_overflow
from autoreparam.diagnostics.standard import standard_diagnostics


def _chains(rng, means, rho=0.3, draws=1000):
    x = np.empty((len(means), draws))
    x[:, 0] = rng.standard_normal(len(means))
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(len(means))
    return x + np.asarray(means)[:, None]


@pytest.fixture(scope="module")
def good():
    rng = np.random.default_rng(1)
    return standard_diagnostics({"mu": _chains(rng, [0.0] * 4), "theta": np.stack([_chains(rng, [0.0] * 4)] * 2, -1)})


def test_healthy_chains_get_no_warning(good):
    health = assess(good, num_chains=4, num_draws=1000, divergences=0)
    assert health.trustworthy and not health.warnings and not health.advice


def test_chains_that_disagree_are_named_with_their_r_hat():
    rng = np.random.default_rng(2)
    standard = standard_diagnostics({"mu": _chains(rng, [0.0] * 4), "tau": _chains(rng, [-2.0, 0.0, 0.0, 2.0])})
    health = assess(standard, num_chains=4, num_draws=1000, divergences=0, space_labels=("vip",), kernel="hmc")
    assert not health.trustworthy
    assert any("chains disagree" in w and "tau" in w for w in health.warnings)
    assert "kernel='nuts'" in health.advice


def test_too_few_effective_draws_are_reported_with_the_element():
    rng = np.random.default_rng(3)
    standard = standard_diagnostics({"theta": np.stack([_chains(rng, [0.0] * 4, rho=0.995)] * 3, -1)})
    health = assess(standard, num_chains=4, num_draws=1000, divergences=0)
    assert any("too few effective draws" in w and "theta[" in w for w in health.warnings)


def test_divergences_of_a_fixed_parameterisation_are_a_warning(good):
    health = assess(good, num_chains=4, num_draws=1000, divergences=40, space_labels=("cp",))
    assert any("40 of 4000 transitions" in w for w in health.warnings)
    assert "method='ncp'" in health.advice


def test_ihmc_divergences_confined_to_one_half_are_a_note_not_a_warning(good):
    per_space = np.array([[500, 2], [480, 1], [520, 3], [510, 0]])  # the CP half in a funnel's neck
    health = assess(good, num_chains=4, num_draws=1000, divergences=2010, space_divergences=per_space,
                    space_labels=("cp", "ncp"), kernel="ihmc")
    assert health.trustworthy
    assert any("NCP half keeps the chain moving" in n for n in health.notes)


def test_ihmc_divergences_in_every_half_are_a_warning(good):
    per_space = np.array([[500, 200], [480, 190], [520, 210], [510, 205]])
    health = assess(good, num_chains=4, num_draws=1000, divergences=2100, space_divergences=per_space,
                    space_labels=("cp", "ncp"), kernel="ihmc")
    assert not health.trustworthy and "no half" in health.warnings[0]


def test_ihmc_halves_that_both_diverge_a_little_are_a_warning():
    """Both halves under 1% each was a note saying each half kept the chain moving where the other
    could not (found in review): no half is clean there, so it is plain HMC's case, a warning."""
    rng = np.random.default_rng(6)
    good = standard_diagnostics({"mu": _chains(rng, [0.0] * 4, draws=1000)})

    def health(per_chain):
        per_space = np.array([per_chain] * 4)
        return assess(good, num_chains=4, num_draws=1000, divergences=int(per_space.sum()),
                      space_divergences=per_space, space_labels=("cp", "ncp"), kernel="ihmc")

    assert not health([9, 9]).trustworthy and "no half" in health([9, 9]).warnings[0]
    clean_ncp = health([9, 0])  # a half with none moves the chain: a note naming it
    assert clean_ncp.trustworthy and "the NCP half keeps the chain moving" in clean_ncp.notes[0]
    loud_cp = health([200, 5])  # a loud centred half beside a quiet one: a note naming the quiet one
    assert loud_cp.trustworthy and "the NCP half keeps" in loud_cp.notes[0]


def test_one_chain_cannot_check_agreement():
    rng = np.random.default_rng(4)
    standard = standard_diagnostics({"mu": _chains(rng, [0.0], draws=2000)})
    health = assess(standard, num_chains=1, num_draws=2000, divergences=0)
    assert any("one chain" in n for n in health.notes)


def test_a_constant_element_is_a_warning_and_hides_no_other_r_hat():
    # A constant element has R-hat NaN (and so the maximum over elements): it must not switch off the
    # check of the others, and it is itself a sign that the chains did not move.
    rng = np.random.default_rng(0)
    shifted = rng.standard_normal((2, 400))
    shifted[1] += 3.0
    # c: its first element is constant by its support (as an LKJ Cholesky factor's L[0, 0] = 1)
    partly_fixed = np.stack([np.full((2, 400), 1.0), rng.standard_normal((2, 400))], axis=-1)
    standard = standard_diagnostics({"stuck": np.full((2, 400, 2), 3.0), "b": shifted, "c": partly_fixed})
    assert standard.max_r_hat == pytest.approx(float(np.max(standard.r_hat["b"])))  # the NaN ones left out
    health = assess(standard, num_chains=2, num_draws=400, divergences=0)
    assert not health.trustworthy
    assert any("R-hat" in w and "for b" in w for w in health.warnings)
    assert any(w.startswith("stuck never changed") for w in health.warnings)
    assert not any("c[0]" in w for w in health.warnings)


def test_a_single_chain_that_never_moved_is_a_warning():
    """ESS calls a constant series perfectly mixed (ArviZ: ESS = its length) and one chain has no
    R-hat: a site stuck at one value read as healthy with one chain (found in review)."""
    rng = np.random.default_rng(5)
    standard = standard_diagnostics({"mu": _chains(rng, [0.0], draws=2000), "tau": np.full((1, 2000), 0.7)})
    assert standard.ess_bulk["tau"] == 2000.0 and standard.stuck_sites == ("tau",)
    health = assess(standard, num_chains=1, num_draws=2000, divergences=0)
    assert not health.trustworthy and health.warnings[0].startswith("tau never changed")
    # Chains stuck at different values: the R-hat warning and this one.
    apart = np.repeat(np.array([[0.1], [0.9]]), 400, axis=1)
    health = assess(standard_diagnostics({"tau": apart}), num_chains=2, num_draws=400, divergences=0)
    assert any(w.startswith("tau never changed") for w in health.warnings)


def test_elements_constant_by_their_support_are_healthy():
    import numpyro.distributions as dist
    from jax import random

    draws = np.asarray(dist.LKJCholesky(3, 2.0).sample(random.PRNGKey(0), (4, 500)))
    rng = np.random.default_rng(3)
    health = assess(standard_diagnostics({"L": draws, "mu": _chains(rng, [0.0] * 4, draws=500)}), num_chains=4,
                    num_draws=500, divergences=0)
    assert health.trustworthy, health.warnings


def test_advice_never_suggests_the_method_that_ran_or_a_method_that_changes_nothing():
    rng = np.random.default_rng(2)
    standard = standard_diagnostics({"mu": _chains(rng, [0.0] * 4), "tau": _chains(rng, [-2.0, 0.0, 0.0, 2.0])})
    auto = assess(standard, num_chains=4, num_draws=1000, divergences=0, space_labels=("rule",), kernel="nuts",
                  method="auto")
    assert "method='auto'" not in auto.advice and "method='vip'" in auto.advice
    auto_cp = assess(standard, num_chains=4, num_draws=1000, divergences=0, space_labels=("cp",), kernel="nuts",
                     method="auto")
    assert "method='auto'" not in auto_cp.advice
    fixed = assess(standard, num_chains=4, num_draws=1000, divergences=0, space_labels=("cp",), kernel="nuts",
                   method="cp", reparameterisable=False)
    assert "no latent of this model can be reparameterised" in fixed.advice and "method='ncp'" not in fixed.advice


def test_a_diverging_auto_result_is_not_told_to_raise_the_acceptance_it_already_raised():
    # auto's ladder redraws divergent draws towards 0.99 and tries CP and NCP there (found in review).
    rng = np.random.default_rng(2)
    standard = standard_diagnostics({"mu": _chains(rng, [0.0] * 4)})
    auto = assess(standard, num_chains=4, num_draws=1000, divergences=12, space_labels=("rule",), kernel="nuts",
                  method="auto")
    assert "target_accept=0.99" not in auto.advice and "already adapted towards acceptance 0.99" in auto.advice
    fixed = assess(standard, num_chains=4, num_draws=1000, divergences=12, space_labels=("ncp",), kernel="nuts",
                   method="ncp")
    assert fixed.advice.startswith("target_accept=0.99")


def test_draws_beyond_the_square_root_of_the_float_range_are_found_by_element():
    """Beyond sqrt(max) (1.8e19 in float32) a square overflows; infinite draws are refused elsewhere."""
    rng = np.random.default_rng(4)
    theta = rng.standard_normal((4, 100, 3)).astype(np.float32)
    assert near_overflow({"theta": theta}) is None
    theta[1, 5, 2], theta[0, 0, 0] = -2.6e37, np.inf
    name, reach, dtype = near_overflow({"mu": np.zeros((4, 100), np.float32), "theta": theta})
    assert (name, dtype) == ("theta[2]", np.float32) and reach == pytest.approx(2.6e37, rel=1e-6)
    assert near_overflow({"theta": theta[..., 1:].astype(np.float64) * 1e10}) is None  # 2.6e47 is fine in float64


def test_divergences_where_draws_near_overflow_name_the_site_and_put_x64_first(good):
    """Fuzz program 709: NCP on ``z3 ~ N(0, exp(z2))`` diverged where ``exp(z2)`` overflows, and the
    warning blamed the posterior's curvature and advised smaller steps, which cannot help there."""
    extreme = ("z3", 2.6e37, np.dtype(np.float32))
    health = assess(good, num_chains=4, num_draws=1000, divergences=40, space_labels=("ncp",), kernel="nuts",
                    extreme=extreme)
    assert any("z3's draws reach 2.6e+37" in w and "float32" in w for w in health.warnings)
    assert health.advice.startswith("64-bit JAX (jax.config.update('jax_enable_x64', True)")
    quiet = assess(good, num_chains=4, num_draws=1000, divergences=0, extreme=extreme)
    assert quiet.trustworthy and any("z3's draws reach" in n for n in quiet.notes)
