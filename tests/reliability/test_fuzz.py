"""The fuzzer's small version: the log-density identity on one program of every family, a check
that sees a wrong Jacobian, the prior-reproduction check on a tiny program, and the summary."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.corpus import FAMILIES, generate_program
from autoreparam.reliability.fuzz import MCMC_SETTINGS, plan_fuzz, run_fuzz_task, summarise_fuzz
from autoreparam.reliability.identity import RELATIVE_TOLERANCE, check_program
from autoreparam.reliability.methods import RunSettings

DEPTH_TWO_FUNNEL_NO_DATA = 7  # generate_program(7, 0): z0 ~ N(0, 1), z1 ~ N(0, exp(z0)), z2 ~ N(0, exp(z1))
# The smallest program of each family among the first 120 of corpus seed 0 (compilation dominates the time).
SMALL_PROGRAMS = {"normal_hierarchy": 48, "funnel": 19, "hierarchical_glm": 98, "sparse_regression": 75,
                  "time_series": 16, "student_t_hierarchy": 17}


def test_identity_holds_on_one_program_of_every_family():
    task = {"key": "identity__0__000000", "kind": "identity", "seed": 0, "programs": list(SMALL_PROGRAMS.values())}
    results = run_fuzz_task(task)["results"]
    assert [r["family"] for r in results] == list(SMALL_PROGRAMS) and set(SMALL_PROGRAMS) == set(FAMILIES)
    for r in results:
        assert r["status"] == "ok", r.get("error")
        assert r["failed"] == [] and r["finite_points"] == r["points"] == 3, r
        assert max(e for c, e in r["max_relative_error"].items() if e is not None and c != "round_trip_u") \
            < RELATIVE_TOLERANCE


def test_identity_check_sees_a_wrong_log_jacobian(monkeypatch):
    program = generate_program(DEPTH_TWO_FUNNEL_NO_DATA, 0)[1]
    right = Coordinates.to_cp

    def wrong_jacobian(self, u, param):
        v, z, ldj = right(self, u, param)
        return v, z, 0.99 * ldj

    monkeypatch.setattr(Coordinates, "to_cp", wrong_jacobian)
    failed = check_program(program.text, program.data, seed=0)["failed"]
    assert "identity" in failed and "jacobian" in failed


def test_identity_check_sees_a_wrong_inverse(monkeypatch):
    program = generate_program(DEPTH_TWO_FUNNEL_NO_DATA, 0)[1]
    right = Coordinates.from_cp

    def wrong_inverse(self, v, param):
        u, z, ldj = right(self, v, param)
        return {k: 1.001 * x for k, x in u.items()}, z, ldj

    monkeypatch.setattr(Coordinates, "from_cp", wrong_inverse)
    assert "round_trip" in check_program(program.text, program.data, seed=0)["failed"]


@pytest.mark.slow
def test_an_ill_conditioned_chain_loses_digits_in_u_but_not_in_the_round_trip():
    """Program 28 (a 17-step random walk, separate a, b): recovering u from x cancels digits along the
    chain (a conditioning property of the map), while to_cp(from_cp(v)) = v holds to round-off."""
    program = generate_program(28, 0)[1]
    result = check_program(program.text, program.data, seed=965639753)  # fuzz.py's stable_seed("identity", 0, 28)
    assert result["failed"] == [], result
    assert result["max_relative_error"]["round_trip"] < RELATIVE_TOLERANCE < result["max_relative_error"]["round_trip_u"]


def test_without_observations_keeps_the_log_jacobian_of_constrained_latents():
    """The potential NUTS sees (unconstrained space) of a program with its data removed equals the same
    program written without its observed site: the log-Jacobians of the positive scales stay in."""
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer.util import initialize_model

    from autoreparam.reliability.prior import without_observations

    def with_data(y=None):
        tau = numpyro.sample("tau", dist.HalfNormal(0.02))
        with numpyro.plate("j", 3):
            a = numpyro.sample("a", dist.Normal(0.0, tau))
            numpyro.sample("y", dist.Normal(a, 1.0), obs=y)

    def prior_only():
        tau = numpyro.sample("tau", dist.HalfNormal(0.02))
        with numpyro.plate("j", 3):
            numpyro.sample("a", dist.Normal(0.0, tau))

    y = jnp.array([0.5, -1.0, 2.0])
    blocked = initialize_model(jax.random.PRNGKey(0), without_observations(with_data, y=y), model_kwargs={"y": y})
    bare = initialize_model(jax.random.PRNGKey(0), prior_only)
    for log_tau in (-4.0, -10.0):
        point = {"tau": jnp.array(log_tau), "a": jnp.array([0.01, -0.02, 0.0])}
        np.testing.assert_allclose(blocked.potential_fn(point), bare.potential_fn(point), rtol=1e-6)


def test_prior_is_reproduced_without_observations():
    settings = RunSettings(num_chains=2, num_warmup=300, num_samples=500)
    task = {"key": "p", "kind": "prior", "seed": 0, "program": DEPTH_TWO_FUNNEL_NO_DATA, "method": "ncp/nuts",
            "settings": settings.__dict__}
    result = run_fuzz_task(task)
    assert result["status"] == "ok", result.get("error")
    assert result["exact_elements"] == 1  # z0 ~ N(0, 1): exact mean and variance; z1, z2 against forward draws
    assert result["tests"] == 2 * 3 + 2 and not result["failed"], result


def test_plan_and_summary():
    tasks = plan_fuzz(n=60, seed=0, mcmc_n=0, chunk=25)
    assert [len(t["programs"]) for t in tasks] == [25, 25, 10]
    records = [
        {"kind": "identity", "results": [{"program": 0, "status": "ok", "failed": [], "family": "funnel"},
                                         {"program": 1, "status": "ok", "failed": ["identity"], "family": "glm"},
                                         {"program": 2, "status": "error", "error": "x", "family": "glm"}]},
        {"kind": "prior", "program": 1, "status": "ok", "failed": True, "trustworthy": True, "family": "funnel"},
        {"kind": "prior", "program": 1, "status": "ok", "failed": True, "trustworthy": False, "family": "funnel"},
        {"kind": "invariance", "program": 2, "status": "ok", "failed": False, "trustworthy": True, "family": "glm"},
    ]
    summary = summarise_fuzz(records)
    assert summary["identity"]["programs"] == 3 and len(summary["identity"]["failures"]) == 1
    assert len(summary["identity"]["errors"]) == 1
    assert len(summary["prior"]["failures"]) == 2 and len(summary["prior"]["silent_failures"]) == 1
    assert summary["invariance"]["failures"] == []


@pytest.mark.slow
def test_invariance_on_a_small_hierarchy():
    settings = RunSettings(num_chains=4, num_warmup=500, num_samples=1000)
    task = {"key": "i", "kind": "invariance", "seed": 0, "program": 1, "settings": settings.__dict__,
            "invariance_runs": ["cp", "ncp", "random", "auto"], "run_seeds": "own"}
    result = run_fuzz_task(task)
    assert result["status"] == "ok", result.get("error")
    assert list(result["runs"]) == ["cp", "ncp", "random", "auto"] and len(result["pairs"]) == 6
    assert len(set(result["seeds"].values())) == 4
    assert result["runs"]["auto"]["ran_as"].startswith("auto")
    assert not result["failed"] or not result["trustworthy"], result
    assert np.isfinite(result["min_adjusted_p"])


def test_plan_restricted_to_some_methods():
    every = plan_fuzz(n=0, seed=0, mcmc_n=2, chunk=25)
    some = plan_fuzz(n=0, seed=0, mcmc_n=2, chunk=25, methods=["auto/nuts"], invariance=False)
    assert [t["kind"] for t in some] == ["prior", "prior"] and {t["method"] for t in some} == {"auto/nuts"}
    assert [t["key"] for t in some] == [t["key"] for t in every if t.get("method") == "auto/nuts"]
    assert len(every) == 2 * (len({t.get("method") for t in every if t["kind"] == "prior"}) + 1)
    with pytest.raises(ArgumentError, match="unknown method/kernel 'auto/hmc'"):
        plan_fuzz(n=0, seed=0, mcmc_n=1, chunk=25, methods=["auto/hmc"])


def test_invariance_alone_from_the_command_line():
    from autoreparam.reliability.cli import _prior_cells

    assert _prior_cells("none") == [] and _prior_cells(None) is None and _prior_cells("auto/nuts") == ["auto/nuts"]
    alone = plan_fuzz(n=0, seed=0, mcmc_n=3, chunk=25, methods=_prior_cells("none"))
    every = plan_fuzz(n=0, seed=0, mcmc_n=3, chunk=25)
    assert [t["kind"] for t in alone] == ["invariance"] * 3
    assert [t["key"] for t in alone] == [t["key"] for t in every if t["kind"] == "invariance"]


def test_a_store_refuses_runs_under_other_settings(tmp_path, capsys):
    from autoreparam import cli
    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.methods import refuse_mixed_settings

    store = ResultStore(tmp_path / "inv")
    refuse_mixed_settings(store, RunSettings())  # an empty store takes anything
    store.save("identity__0__000000", {"kind": "identity", "results": []})  # no settings: not a sampling run
    # A record written before target_accept existed reads as its default, so old stores resume.
    store.save("invariance__0__000001", {"kind": "invariance", "settings": {"num_chains": 4, "num_warmup": 500,
                                                                             "num_samples": 1000, "vi": "fast"}})
    same = RunSettings(num_chains=4, num_warmup=500, num_samples=1000)
    refuse_mixed_settings(store, same)
    with pytest.raises(ArgumentError, match="target_accept=0.95.*another --out folder"):
        refuse_mixed_settings(store, RunSettings(num_chains=4, num_warmup=500, num_samples=1000, target_accept=0.95))
    # From the command line: refused before anything runs or is recorded.
    assert cli.main(["fuzz", "--out", str(store.root), "--n", "0", "--mcmc-n", "1", "--target-accept", "0.9",
                     "--serial", "--quiet"]) == 2
    assert "holds runs made with" in capsys.readouterr().err and not (store.root / "commands.txt").exists()


def test_scan_twins_agree_with_their_unrolled_programs():
    tasks = plan_fuzz(n=0, seed=0, mcmc_n=0, chunk=2, scan_twins=3)
    assert [t["kind"] for t in tasks] == ["scan_twin", "scan_twin"]
    results = [r for task in tasks for r in run_fuzz_task(task)["results"]]
    assert [r["family"] for r in results] == ["time_series"] * 3
    for r in results:
        assert r["status"] == "ok", r.get("error")
        assert r["failed"] == [] and r["finite_points"] == r["points"] == 3, r
        assert r["max_relative_error"]["twin_density"] < RELATIVE_TOLERANCE
    summary = summarise_fuzz([{"kind": "scan_twin", "results": results}])
    assert summary["scan_twin"]["programs"] == 3 and summary["scan_twin"]["failures"] == []


def test_scan_twin_check_sees_a_step_read_at_the_wrong_index(monkeypatch):
    """A planted bug: the rewrite inside the scan body reads every step's centring at step 0."""
    from autoreparam.reparam import handlers

    monkeypatch.setattr(handlers, "step_slice", lambda value, step: value if np.ndim(value) == 0 else value[0])
    index = SMALL_PROGRAMS["time_series"]
    result = run_fuzz_task({"key": "t", "kind": "scan_twin", "seed": 0, "programs": [index]})["results"][0]
    assert result["status"] == "ok", result.get("error")
    assert "twin_density" in result["failed"] and "identity" in result["failed"]


def test_a_disagreement_of_two_trusted_runs_is_silent_even_if_the_third_run_is_flagged():
    from autoreparam.reliability.prior import FUZZ_ALPHA, invariance_pairs

    fail, ok = FUZZ_ALPHA / 10, 0.5
    # cp vs ncp: pass; cp vs random: pass; ncp vs random: fail. cp flagged, ncp and random trusted.
    adjusted = np.array([ok, ok, ok, ok, fail, ok])
    pairs, trustworthy = invariance_pairs(adjusted, {"cp": False, "ncp": True, "random": True})
    assert [p["failed"] for p in pairs.values()] == [False, False, True]
    assert pairs["ncp vs random"]["both_trustworthy"] and pairs["ncp vs random"]["min_adjusted_p"] == fail
    assert trustworthy  # silent: the flag on cp did not warn about ncp and random disagreeing
    # The same disagreement with random flagged: the user of random was warned, ncp is the likely right one.
    assert not invariance_pairs(adjusted, {"cp": True, "ncp": True, "random": False})[1]
    # Passing: trustworthy means every run was trusted.
    assert invariance_pairs(np.full(6, ok), {"cp": True, "ncp": True, "random": True})[1]
    assert not invariance_pairs(np.full(6, ok), {"cp": False, "ncp": True, "random": True})[1]
    # A NaN test beside a failing one hid it (np.min is NaN, and NaN < alpha is False); a pair whose
    # every test is NaN tested nothing and fails (found in review).
    masked = np.array([ok, ok, ok, ok, np.nan, fail])
    pairs, _ = invariance_pairs(masked, {"cp": True, "ncp": True, "random": True})
    assert pairs["ncp vs random"]["failed"] and pairs["ncp vs random"]["min_adjusted_p"] == fail
    untested = np.array([ok, ok, ok, ok, np.nan, np.nan])
    assert invariance_pairs(untested, {"cp": True, "ncp": True, "random": True})[0]["ncp vs random"]["failed"]


def test_a_check_whose_every_test_is_nan_fails():
    from autoreparam.reliability.prior import _verdict

    summary = {"trustworthy": True}
    assert _verdict(np.array([np.nan, np.nan]), ["x", "x"], ["pit_mean", "pit_spread"], summary, 0.0)["failed"]
    assert not _verdict(np.array([np.nan, 0.5]), ["x", "x"], ["pit_mean", "pit_spread"], summary, 0.0)["failed"]


def test_exact_prior_tests_go_through_the_cdf_where_numpyro_has_one():
    """A plate's half-normal (an expanded distribution, which has no CDF of its own) is tested through
    its base's CDF; a multivariate normal, which has none, by its exact mean and variance."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from autoreparam.reliability.prior import _exact_priors, _exact_tests

    def model():
        with numpyro.plate("j", 3):
            numpyro.sample("s", dist.HalfNormal(2.0))
        numpyro.sample("m", dist.MultivariateNormal(jnp.zeros(2), jnp.eye(2)))

    rng = np.random.default_rng(0)
    samples = {"s": np.abs(rng.normal(0.0, 2.0, (4, 500, 3))), "m": rng.normal(size=(4, 500, 2))}
    pvalues, labels, kinds = _exact_tests(_exact_priors(model, {}, ["m", "s"]), samples)
    assert kinds == ["exact_mean"] * 2 + ["exact_variance"] * 2 + ["exact_pit_mean"] * 3 + ["exact_pit_spread"] * 3
    assert labels == ["m[0]", "m[1]"] * 2 + ["s[0]", "s[1]", "s[2]"] * 2
    assert np.min(np.concatenate(pvalues)) > 1e-3
    samples["s"] = samples["s"] * 1.3  # too wide: the CDF's spread test sees it
    pvalues, _, _ = _exact_tests(_exact_priors(model, {}, ["m", "s"]), samples)
    assert np.concatenate(pvalues)[-3:].max() < 1e-3


def test_auto_joins_the_invariance_check_as_a_fourth_run():
    from autoreparam.reliability.prior import FUZZ_ALPHA, invariance_pairs, invariance_run_labels, pairs_of

    assert pairs_of(["cp", "ncp", "random"]) == (("cp", "ncp"), ("cp", "random"), ("ncp", "random"))
    assert pairs_of(["auto", "random", "ncp", "cp"])[3:] == (("cp", "auto"), ("ncp", "auto"), ("random", "auto"))
    for bad in (["cp", "ncp"], ["cp", "ncp", "random", "vip"]):
        with pytest.raises(ArgumentError, match="choose cp, ncp, random and optionally auto"):
            invariance_run_labels(bad)
    fail, ok = FUZZ_ALPHA / 10, 0.5
    adjusted = np.full(12, ok)
    adjusted[9] = fail  # the pair ncp vs auto (the fifth: tests 8 and 9), its second test
    trusted = {"cp": False, "ncp": True, "random": False, "auto": True}
    pairs, trustworthy = invariance_pairs(adjusted, trusted)
    assert [name for name, p in pairs.items() if p["failed"]] == ["ncp vs auto"] and trustworthy
    assert not invariance_pairs(adjusted, {**trusted, "auto": False})[1]
    plan = plan_fuzz(n=0, seed=0, mcmc_n=1, chunk=25, methods=[])
    assert plan[0]["invariance_runs"] == ["cp", "ncp", "random", "auto"]


def test_a_store_keeps_one_set_of_invariance_runs(tmp_path, capsys):
    from autoreparam import cli
    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.fuzz import refuse_mixed_invariance_runs, stored_invariance_runs

    store = ResultStore(tmp_path / "inv")
    assert stored_invariance_runs(store) is None
    refuse_mixed_invariance_runs(store, ["cp", "ncp", "random", "auto"])  # an empty store takes any
    # Written before `auto` joined: no invariance_runs field, three runs (and no run_seeds: one seed).
    store.save("invariance__0__000001", {"kind": "invariance", "settings": asdict(MCMC_SETTINGS), "status": "ok",
                                         "program": 1, "family": "funnel", "failed": False, "trustworthy": True})
    assert stored_invariance_runs(store) == ("cp", "ncp", "random")
    with pytest.raises(ArgumentError, match="--invariance-runs cp,ncp,random"):
        refuse_mixed_invariance_runs(store, ["cp", "ncp", "random", "auto"])
    # The same runs, but they shared one seed: checks planned now (each run at its own) go elsewhere.
    with pytest.raises(ArgumentError, match="shared one seed.*another --out folder"):
        refuse_mixed_invariance_runs(store, ["cp", "ncp", "random"])
    fresh = ResultStore(tmp_path / "fresh")
    fresh.save("invariance__0__000001", plan_fuzz(n=0, seed=0, mcmc_n=1, chunk=25, methods=[])[0])
    refuse_mixed_invariance_runs(fresh, ["cp", "ncp", "random", "auto"])
    # From the command line (the default is all four): refused before anything runs or is recorded.
    assert cli.main(["fuzz", "--out", str(store.root), "--n", "0", "--mcmc-n", "1", "--serial", "--quiet"]) == 2
    assert "holds invariance checks of the runs cp,ncp,random" in capsys.readouterr().err
    assert not (store.root / "commands.txt").exists()
    # A pass that plans no invariance check (the identities alone) is not refused.
    assert cli.main(["fuzz", "--out", str(store.root), "--n", "0", "--mcmc-n", "0", "--scan-twins", "0",
                     "--serial", "--quiet"]) == 0


def test_identity_chunks_resumed_with_more_programs_or_another_chunk_skip_and_double_nothing():
    """Keyed by their first program alone, a rerun with --n 5 after --n 3 (chunks of 2) took the chunk
    holding program 2 alone for the one holding 2 and 3, and never checked 3; another --chunk checked
    programs twice and counted both (found in review)."""
    from autoreparam.reliability.fuzz import plan_fuzz, summarise_fuzz

    def keys(n, chunk):
        return {t["key"]: t["programs"] for t in plan_fuzz(n, 0, 0, chunk) if t["kind"] == "identity"}

    first, grown = keys(3, 2), keys(5, 2)
    left = [programs for key, programs in grown.items() if key not in first]
    assert sorted(p for programs in left for p in programs) == [2, 3, 4]

    def record(programs):
        return {"kind": "identity", "results": [{"program": p, "status": "ok", "failed": False, "family": "funnel"}
                                                for p in programs]}

    summary = summarise_fuzz([record([0, 1]), record([2]), record([0, 1, 2]), record([3, 4])])
    assert summary["identity"]["programs"] == 5


def test_a_rejected_command_is_not_recorded_and_deadlines_must_be_positive(tmp_path, capsys):
    # Found in review: sbc --models nosuch and fuzz --mcmc-methods bogus/x failed, but the folder's
    # commands.txt (which RELIABILITY.md quotes) gained the line; --deadline-minutes -5 ran nothing.
    from autoreparam import cli

    for argv in (["sbc", "--out", str(tmp_path), "--serial", "--models", "nosuch"],
                 ["sbc", "--out", str(tmp_path), "--serial", "--methods", "bogus/nuts"],
                 ["fuzz", "--out", str(tmp_path), "--serial", "--mcmc-methods", "bogus/x"],
                 ["fuzz", "--out", str(tmp_path), "--serial", "--invariance-runs", "cp,ncp"]):
        assert cli.main(argv) == 2, argv
        assert "autoreparam: error: " in capsys.readouterr().err
    assert not (tmp_path / "commands.txt").exists()
    for value in ("-5", "nan", "inf"):
        with pytest.raises(SystemExit):
            cli.main(["sbc", "--out", str(tmp_path), "--deadline-minutes", value])
        assert "positive, finite number of minutes" in capsys.readouterr().err


def test_each_run_of_an_invariance_check_has_a_seed_of_its_own():
    """The agreement test assumes independent runs; runs at one seed share momenta and uniforms."""
    from autoreparam.reliability.prior import INVARIANCE_RUNS, invariance_run_labels, invariance_run_seed

    labels = invariance_run_labels(INVARIANCE_RUNS)
    seeds = [invariance_run_seed(11, label) for label in labels]
    assert len(set(seeds)) == len(labels) and invariance_run_seed(11, "cp") == 11
    assert all(0 <= s < 2**31 for s in seeds)
    assert invariance_run_seed(12, "ncp") != invariance_run_seed(11, "ncp")


def test_invariance_runs_are_planned_at_seeds_of_their_own_and_counted_apart(monkeypatch):
    """Tasks planned now carry ``run_seeds``; `check_invariance` then gives each run its own seed and
    records them, and the summary counts such checks apart from those whose runs shared the seed."""
    from autoreparam.reliability import prior
    from autoreparam.reliability.prior import invariance_run_seed

    used = []

    def fake_run(spec, model, args, kwargs, seed, settings):  # draws of one N(0, 1) element; no sampling
        used.append(seed)
        return {"z0": np.random.default_rng(seed).standard_normal((4, 200))}, {"trustworthy": True}

    monkeypatch.setattr(prior, "run_spec", fake_run)
    task = plan_fuzz(n=0, seed=0, mcmc_n=1, chunk=25, methods=[])[0]
    assert task["run_seeds"] == "own"
    own = run_fuzz_task(task)
    assert own["status"] == "ok", own.get("error")
    run_seed = used[0]
    assert own["seeds"] == {label: invariance_run_seed(run_seed, label) for label in ("cp", "ncp", "random", "auto")}
    assert used == list(own["seeds"].values()) and len(set(used)) == 4
    used.clear()
    shared = run_fuzz_task({k: v for k, v in task.items() if k != "run_seeds"})  # planned before 2026-12-02
    assert set(shared["seeds"].values()) == {run_seed} and used == [run_seed] * 4
    summary = summarise_fuzz([own, shared, {**own, "program": own["program"] + 1, "failed": True}])
    assert summary["invariance"]["programs"] == 1 and summary["invariance_own_seeds"]["programs"] == 2
    assert len(summary["invariance_own_seeds"]["failures"]) == 1 and summary["invariance"]["failures"] == []
    assert "invariance_own_seeds" not in summarise_fuzz([shared])  # stores written before the check existed


def test_the_deadline_counts_from_the_call_not_from_after_planning(tmp_path, monkeypatch):
    # Planning 2,000 sampled programs took about 10 minutes, and the deadline used to start after it:
    # a planner slower than the deadline must leave nothing started.
    import time

    from autoreparam.reliability import fuzz

    real_plan = fuzz.plan_fuzz

    def slow_plan(*args, **kwargs):
        time.sleep(0.5)
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(fuzz, "plan_fuzz", slow_plan)
    store = fuzz.run_fuzz(tmp_path / "late", n=2, mcmc_n=0, chunk=1, serial=True, progress=False,
                          deadline_minutes=0.1 / 60)
    assert list(store.records()) == []
    store = fuzz.run_fuzz(tmp_path / "in_time", n=2, mcmc_n=0, chunk=1, serial=True, progress=False,
                          deadline_minutes=10.0)
    assert len(list(store.records())) == 2  # the same call with time to spare checks both programs
