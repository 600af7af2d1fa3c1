"""Per-element probes against curvatures known in closed form (paper 000 Section 3, eight schools)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import autoreparam.graph.probes as probes
from autoreparam.errors import ModelError
from autoreparam.graph import model_graph
from autoreparam.models import eight_schools, gaussian_section3, gaussian_section3_data

SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], dtype=np.float32)
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], dtype=np.float32)


def _column(graph, site, name):
    return graph.element_features[graph.element_rows(site), graph.element_feature_names.index(name)]


@pytest.mark.parametrize("q, sigma_mu", [(0.01, 1.0), (1.0, 1.0), (100.0, 1.0), (1.0, 3.0)])
def test_section3_ratio_is_log_sigma_mu_squared_q(q, sigma_mu):
    """In theta ~ N(0,1), mu ~ N(theta, s), y_n ~ N(mu, sigma): the likelihood curvature on mu is q = N / sigma^2."""
    y, sigma = gaussian_section3_data(q, n=10, sigma_mu=sigma_mu)
    graph = model_graph(gaussian_section3, y=y, sigma=sigma, sigma_mu=sigma_mu)
    expected = np.log(sigma_mu**2 * q)
    for column in ("log_scale2_curvature", "low_log_scale2_curvature", "high_log_scale2_curvature"):
        assert _column(graph, "mu", column) == pytest.approx([expected], abs=1e-4)
    assert _column(graph, "mu", "log_abs_curvature") == pytest.approx([np.log(q)], abs=1e-4)
    # theta's only child is mu's prior, curvature 1 / s^2, and theta's own scale is 1.
    assert _column(graph, "theta", "log_scale2_curvature") == pytest.approx([-2 * np.log(sigma_mu)], abs=1e-4)
    assert _column(graph, "mu", "curvature_positive_fraction") == [1.0]


def test_eight_schools_probes_in_closed_form():
    graph = model_graph(eight_schools, SIGMA, y=Y)
    # theta_j's only child is y_j ~ N(theta_j, sigma_j): curvature 1 / sigma_j^2 at every point.
    for column in ("log_abs_curvature", "low_log_abs_curvature", "high_log_abs_curvature"):
        np.testing.assert_allclose(_column(graph, "theta", column), -2 * np.log(SIGMA), atol=1e-4)
    # At the prior centre mu = log_tau = 0, so theta_j has scale exp(0) = 1 and mu's children have curvature 8.
    np.testing.assert_allclose(_column(graph, "theta", "log_prior_scale"), 0.0, atol=1e-6)
    assert _column(graph, "mu", "log_abs_curvature") == pytest.approx([np.log(8.0)], abs=1e-4)
    assert _column(graph, "mu", "log_prior_scale") == pytest.approx([np.log(5.0)], abs=1e-6)
    np.testing.assert_array_equal(_column(graph, "mu", "prior_loc_sign"), [0.0])
    # At the centre every theta_j = mu: log_tau's children carry no curvature (0 up to float32 roundoff).
    assert _column(graph, "log_tau", "log_scale2_curvature")[0] < -10.0
    # At the low and high points log_tau = -5 and +5, and every theta_j = mu -/+ tau.
    np.testing.assert_allclose(_column(graph, "theta", "low_log_prior_scale"), -5.0, atol=1e-5)
    np.testing.assert_allclose(_column(graph, "theta", "high_log_prior_scale"), 5.0, atol=1e-5)
    # log_tau's children: sum_j -log_tau - (theta_j - mu)^2 exp(-2 log_tau) / 2 has curvature 2 * 8 * 1^2.
    for point in ("low_", "high_"):
        assert _column(graph, "log_tau", point + "log_abs_curvature") == pytest.approx([np.log(16.0)], abs=1e-3)
        assert _column(graph, "log_tau", point + "log_scale2_curvature") == pytest.approx([np.log(25 * 16.0)],
                                                                                        abs=1e-3)


def test_hutchinson_estimate_is_exact_for_conditionally_independent_elements(monkeypatch):
    exact = model_graph(eight_schools, SIGMA, y=Y)
    monkeypatch.setattr(probes, "EXACT_DIAGONAL_LIMIT", 0)
    estimated = model_graph(eight_schools, SIGMA, y=Y)
    for site in ("theta", "mu"):
        np.testing.assert_allclose(_column(estimated, site, "log_abs_curvature"),
                                   _column(exact, site, "log_abs_curvature"), atol=1e-4)


def test_log_normal_latents_are_probed_in_log_space():
    def model(y):
        s = numpyro.sample("s", dist.LogNormal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(0.0, s), obs=y)

    y = np.array([0.5, -1.5, 2.0], dtype=np.float32)
    graph = model_graph(model, y)
    # d^2/du^2 of sum_i -u - y_i^2 exp(-2u) / 2 at u = log s = 0 (the prior centre) is -2 sum y_i^2.
    assert _column(graph, "s", "log_abs_curvature") == pytest.approx([np.log(2 * np.sum(y**2))], abs=1e-4)
    assert _column(graph, "s", "curvature_sign") == [1.0]


def test_non_finite_probe_at_the_centre_names_the_site():
    def model(y):
        x = numpyro.sample("x", dist.Normal(0.0, 1.0))
        # sqrt(|x|) has no finite curvature at the prior centre x = 0, only at the prior draws.
        numpyro.sample("y", dist.Normal(jnp.sqrt(jnp.abs(x)), 1.0), obs=y)

    with pytest.raises(ModelError, match="site 'x'.*not finite"):
        model_graph(model, 0.0)

    def zero_scale_at_centre(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        x = numpyro.sample("x", dist.Normal(0.0, jnp.abs(mu)))  # scale 0 at the centre mu = 0
        numpyro.sample("y", dist.Normal(x, 1.0), obs=y)

    with pytest.raises(ModelError, match="site '(mu|x)'.*not finite"):
        model_graph(zero_scale_at_centre, 0.0)


def test_a_second_graph_reuses_the_probe_program_with_its_own_data():
    """The probe program is kept per model and layout with the data as arguments: new data of the same
    shapes must give the probes of that data (not of the data first compiled with), and no new program."""
    model_graph(eight_schools, SIGMA, y=Y)
    programs = len(probes._PROBE_PROGRAMS)
    reused = model_graph(eight_schools, 0.1 * SIGMA, y=Y)  # small sigma: the likelihood's curvature grows 100x
    assert len(probes._PROBE_PROGRAMS) == programs
    probes._PROBE_PROGRAMS.clear()
    fresh = model_graph(eight_schools, 0.1 * SIGMA, y=Y)
    np.testing.assert_array_equal(reused.element_features, fresh.element_features)
    first = model_graph(eight_schools, SIGMA, y=Y)
    assert not np.array_equal(first.element_features, fresh.element_features)


def _wide(y):
    # A site above EXACT_DIAGONAL_LIMIT elements: its curvature is read by Hutchinson's probe vectors,
    # the one place the probe program draws from the seed's key.
    tau = numpyro.sample("tau", dist.LogNormal(0.0, 1.0))
    z = numpyro.sample("z", dist.Normal(0.0, tau).expand([y.shape[0]]).to_event(1))
    numpyro.sample("y", dist.Normal(z[1:] * z[:-1], 1.0).to_event(1), obs=y[1:])


@pytest.mark.parametrize("case", ["eight_schools", "hutchinson"])
def test_a_new_seed_reuses_the_site_and_probe_programs_and_draws_its_own_prior_point(case):
    """The seed is an argument of both kept programs, not part of their keys: with it in the keys, each
    new seed of ``infer(method="meta")`` compiled the graph's programs again (radon MN: 0.2 to 0.3 s)."""
    from autoreparam.graph import program

    model, args, kwargs = ((eight_schools, (SIGMA,), {"y": Y}) if case == "eight_schools" else
                           (_wide, (np.linspace(-1.0, 1.0, probes.EXACT_DIAGONAL_LIMIT + 44, dtype=np.float32),), {}))
    model_graph(model, *args, seed=0, **kwargs)
    kept = (dict(program._SITE_PROGRAMS), dict(probes._PROBE_PROGRAMS))
    reused = model_graph(model, *args, seed=1, **kwargs)
    for before, after in zip(kept, (program._SITE_PROGRAMS, probes._PROBE_PROGRAMS)):
        assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)
    name = "theta" if case == "eight_schools" else "z"
    draws = [{s.name: s.value for s in program.trace_sites(model, args, kwargs, seed=k)} for k in (0, 1)]
    assert not np.array_equal(draws[0][name], draws[1][name])  # each seed its own prior draw
    program._SITE_PROGRAMS.clear()
    probes._PROBE_PROGRAMS.clear()
    fresh = model_graph(model, *args, seed=1, **kwargs)
    np.testing.assert_array_equal(reused.element_features, fresh.element_features)
    np.testing.assert_array_equal(reused.node_features, fresh.node_features)
    again = {s.name: s.value for s in program.trace_sites(model, args, kwargs, seed=1)}
    np.testing.assert_array_equal(again[name], draws[1][name])
    if case == "hutchinson":  # the key reaches the probe vectors: another seed, other curvature estimates
        other = model_graph(model, *args, seed=2, **kwargs)
        assert not np.array_equal(other.element_features, fresh.element_features)


def test_site_records_come_from_one_compiled_program_that_reads_each_calls_data():
    """`trace_sites` runs the model as one jitted program kept per model and data layout: a second call
    with new data of the same shapes must record that data (and the same prior draw), with no new program,
    and a scaled site (handlers.scale) keeps its log-likelihood scale."""
    from numpyro import handlers

    from autoreparam.graph import program

    first = {s.name: s for s in program.trace_sites(eight_schools, (SIGMA,), {"y": Y})}
    programs = len(program._SITE_PROGRAMS)
    second = {s.name: s for s in program.trace_sites(eight_schools, (SIGMA,), {"y": -Y})}
    assert len(program._SITE_PROGRAMS) == programs
    np.testing.assert_array_equal(second["y"].value, -Y)
    np.testing.assert_array_equal(first["y"].value, Y)
    np.testing.assert_array_equal(first["theta"].value, second["theta"].value)  # the seed decides the draw
    assert first["theta"].shape == (8,) and first["y"].observed and not first["mu"].observed

    def scaled(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        with handlers.scale(scale=4.0):
            numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)

    records = {s.name: s for s in program.trace_sites(scaled, (np.zeros(3, dtype=np.float32),), {})}
    assert records["y"].log_likelihood_scale == pytest.approx(np.log(4.0))
    assert records["mu"].log_likelihood_scale == 0.0


def test_given_prior_points_reproduce_the_prior_features_and_other_points_move_them():
    """``probe_points`` replaces the three prior points: handed the prior points themselves it must give
    the same features; handed eight schools with tau = e^2 everywhere, theta's scale must read 2."""
    from autoreparam.graph.program import trace_sites

    latents = [s for s in trace_sites(eight_schools, (SIGMA,), {"y": Y}, 0) if not s.observed]
    prior_points = probes._points(eight_schools, (SIGMA,), {"y": Y}, latents)
    given = {s.name: np.asarray(p) for s, p in zip(latents, prior_points)}
    prior = model_graph(eight_schools, SIGMA, y=Y)
    again = model_graph(eight_schools, SIGMA, y=Y, probe_points=given)
    np.testing.assert_allclose(again.element_features, prior.element_features, atol=1e-5)
    moved = dict(given, log_tau=np.full((3,), 2.0, dtype=np.float32))
    graph = model_graph(eight_schools, SIGMA, y=Y, probe_points=moved)
    for point in ("", "low_", "high_"):
        np.testing.assert_allclose(_column(graph, "theta", point + "log_prior_scale"), 2.0, atol=1e-5)


def test_probe_points_of_the_wrong_shape_or_missing_name_the_site():
    good = {"mu": np.zeros(3), "log_tau": np.zeros(3), "theta": np.zeros((3, 8))}
    with pytest.raises(ModelError, match=r"site 'theta': probe points must have shape \(3, 8\)"):
        model_graph(eight_schools, SIGMA, y=Y, probe_points=dict(good, theta=np.zeros(8)))
    with pytest.raises(ModelError, match="site 'log_tau': no probe point"):
        model_graph(eight_schools, SIGMA, y=Y, probe_points={"mu": good["mu"], "theta": good["theta"]})


def test_a_scan_time_series_sees_the_curvature_its_next_step_puts_on_each_element():
    """level_t ~ N(level_{t-1}, tau) written with ``scan`` (y_t ~ N(level_t, 1)) is one site whose elements
    are each other's children: element t's curvature counts level_{t+1}'s prior (1 / tau^2) beside its
    observation, exactly as the unrolled program's scalar sites do (the probe once left out the whole
    own site; found in review)."""
    from autoreparam.reliability.models import random_walk_scan

    y = np.array([0.3, -0.2, 0.8, 1.1, 0.4], dtype=np.float32)

    def unrolled(y):
        tau = numpyro.sample("tau", dist.HalfNormal(1.0))
        previous = jnp.zeros(())
        for t in range(len(y)):
            previous = numpyro.sample(f"level{t}", dist.Normal(previous, tau))
            numpyro.sample(f"y{t}", dist.Normal(previous, 1.0), obs=y[t])

    scan_graph, loop_graph = model_graph(random_walk_scan, len(y), y=y), model_graph(unrolled, y)
    for column in ("log_abs_curvature", "low_log_abs_curvature", "high_log_abs_curvature",
                   "log_scale2_curvature"):
        expected = np.concatenate([_column(loop_graph, f"level{t}", column) for t in range(len(y))])
        np.testing.assert_allclose(_column(scan_graph, "level", column), expected, atol=1e-4)
    # tau's children are the same densities in both programs.
    np.testing.assert_allclose(_column(scan_graph, "tau", "log_abs_curvature"),
                               _column(loop_graph, "tau", "log_abs_curvature"), atol=1e-4)


def test_an_observation_computed_from_latents_puts_its_curvature_on_them():
    """``obs=f(z)`` reads z through its value: the probe once held every value fixed, observed ones too
    (found in review: log |c| of z fell from 9.21 to 0)."""
    def model(y):
        z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([4]).to_event(1))
        numpyro.sample("total", dist.Normal(0.0, 0.01), obs=z.sum())
        numpyro.sample("y", dist.Normal(z, 1.0).to_event(1), obs=y)

    graph = model_graph(model, np.zeros(4, np.float32))
    # d^2/dz_j^2 of -(sum z)^2 / (2 * 0.01^2) - sum (y - z)^2 / 2: 1e4 + 1.
    np.testing.assert_allclose(_column(graph, "z", "log_abs_curvature"), np.log(1e4 + 1.0), atol=1e-4)


def test_an_infinite_derivative_on_one_site_leaves_the_others_probes_exact():
    """Every site's curvature through one gradient meets another site's infinite derivative as 0 * inf:
    the probe falls back on one gradient per site (found in review: an exact 0 became NaN, replaced by
    the centre's value, and a non-finite curvature was blamed on the wrong site)."""
    def cube_root(y):
        a = numpyro.sample("a", dist.Normal(0.0, 1.0))
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(a * jnp.cbrt(b + 1.0), 1.0), obs=y)

    graph = model_graph(cube_root, 0.4)
    # At the low point b = -1, so a's only child no longer reads a: curvature exactly 0 (log floor -30).
    assert _column(graph, "a", "low_log_abs_curvature") == [-30.0]

    def square_root(y):
        a = numpyro.sample("a", dist.Normal(0.0, 1.0))
        x = numpyro.sample("x", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(a + jnp.sqrt(jnp.abs(x)), 1.0), obs=y)

    with pytest.raises(ModelError, match="site 'x'.*not finite"):
        model_graph(square_root, 0.0)
