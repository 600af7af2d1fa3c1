"""Hostile input at the edges: the command line and data files, and models at the edge of what is
supported (very many sites, scan misuse, missing data, masked observations): a correct result or a
clear error that names the argument, file or site and says what to do. Split from
``test_hostile_input.py`` (the models and settings they share are in ``hostile_models.py``)."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import autoreparam as ar
from autoreparam import cli, validation
from autoreparam.errors import ArgumentError, CompilationWarning, DataError, ModelError
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.models import data
from hostile_models import TINY, VI, Y_WALK, random_walk


# --- the command line and data files --------------------------------------------------------------
@pytest.fixture(scope="module")
def real_data_dir() -> Path:
    """``$AUTOREPARAM_DATA``, else ``shared/data`` beside the checkout; skips if absent."""
    root = Path(os.environ.get("AUTOREPARAM_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
    if not (root / data.FILES["electric"].relpath).is_file():
        pytest.skip(f"real data not found under {root} (set AUTOREPARAM_DATA)")
    return root


def _corrupt_copy(tmp_path, data_dir, name="electric"):
    spec = data.FILES[name]
    target = tmp_path / spec.relpath
    target.parent.mkdir(parents=True)
    shutil.copyfile(data_dir / spec.relpath, target)
    target.write_bytes(target.read_bytes()[:-20])  # truncated, as an interrupted copy leaves it
    return target


def test_corrupted_data_file_names_the_file_and_what_to_do(tmp_path, real_data_dir):
    target = _corrupt_copy(tmp_path, real_data_dir)
    with pytest.raises(DataError, match="expected sha256") as info:
        data.load_electric(tmp_path)
    assert str(target) in str(info.value) and "download('electric')" in str(info.value)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "no_such_model"], "unknown problem 'no_such_model'"),
        (["run", "eight_schools", "--chains", "0", "--quiet"], "num_chains must be a positive integer"),
        (["run", "radon_mn", "--data-dir", "{tmp}", "--quiet"], "radon/srrs2.dat' not found"),
        (["vip", "gaussian_section3", "--option", "nonsense=1"], "takes no option"),
        (["download", "nope"], "unknown data set or file 'nope'"),
        (["run", "gaussian_section3", "--option", "q=abc", "--quiet"], "q must be a number, got 'abc'"),
        (["run", "eight_schools", "--lam", "0.3", "--method", "cp", "--quiet"], "--lam sets the lambda of --method given"),
        (["run", "eight_schools", "--method", "given", "--quiet"], "--method given samples at a lambda you give: add --lam"),
        (["run", "eight_schools", "--meta-probes", "fit", "--quiet"], "--meta-probes is for --method meta"),
        (["graph", "eight_schools", "--sites", "thetaa"], "--sites does not apply to graph"),
        (["graph", "eight_schools", "--json", "/proc/no_such_folder/g.json"], "cannot write --json /proc/no_such_folder"),
        # HMC's options under NUTS did nothing, without a word (found in review)
        (["run", "eight_schools", "--leapfrog", "8", "--quiet"], "num_leapfrog=8 configure fixed-length HMC"),
        (["compare", "eight_schools", "--paper", "--quiet"], "step_size_rule='sign', oracle_metric='paper' configure"),
    ],
)
def test_command_line_errors_are_one_line_and_exit_2(argv, message, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("autoreparam: error:") and message in err


@pytest.mark.parametrize("argv,message", [
    (["fuzz", "--chunk", "0"], "argument --chunk: must be a positive integer, got '0'"),
    (["fuzz", "--n", "-5"], "argument --n: must be a non-negative integer, got '-5'"),
    (["sbc", "--replications", "0"], "argument --replications: must be a positive integer"),
    (["sbc", "--num-cpus", "0"], "argument --num-cpus: must be a positive integer"),
    (["corpus", "--seed", "-1", "--out", "{tmp}/c"], "argument --seed: must be a non-negative integer"),
    (["bench", "--seeds", "0,a"], "argument --seeds: must be an integer, got 'a'"),
    (["run", "eight_schools", "--sites", ""], "argument --sites: names no site, got ''"),
    (["vip", "eight_schools", "--sites", " , "], "argument --sites: names no site"),
    (["fuzz", "--target-accept", "1"], "argument --target-accept: must lie strictly between 0 and 1, got '1'"),
    (["sbc", "--target-accept", "high"], "argument --target-accept: must be a number between 0 and 1"),
    # bare ValueErrors from inside the commands before (found in review)
    (["bench", "--grid", "1,x"], "argument --grid: must be an integer, got 'x'"),
    (["report", "--extra", "gpu_run"], "argument --extra: must be TITLE=DIR"),
    (["meta", "train", "--corpus", "c", "--out", "o", "--seeds", "0,x"], "argument --seeds: must be an integer"),
])
def test_bad_numbers_on_the_command_line_stop_before_anything_runs(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["bench", "--methods", "cp,nope", "--out", "{tmp}/b"], "--methods: unknown 'nope'; choose from cp"),
    (["bench", "--peers", "nope", "--out", "{tmp}/b"], "--peers: unknown 'nope'"),
    (["corpus", "--n", "2", "--out", "{tmp}/file"], "is a file; the corpus needs a new folder"),
])
def test_bad_names_and_folders_stop_before_anything_runs(argv, message, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert cli.main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_graph_json_goes_into_a_new_folder(tmp_path, capsys):
    target = tmp_path / "new" / "g.json"
    assert cli.main(["graph", "eight_schools", "--json", str(target)]) == 0
    assert json.loads(target.read_text())["node_type"]


def test_command_line_corrupted_data_file(tmp_path, real_data_dir, capsys):
    target = _corrupt_copy(tmp_path, real_data_dir)
    assert cli.main(["run", "electric", "--data-dir", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "expected sha256" in err and str(target) in err


def test_command_line_interrupt_exits_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_run", interrupted)
    assert cli.main(["run", "eight_schools"]) == 130
    assert "interrupted" in capsys.readouterr().err


def _loop_of(steps):
    def model():
        level = 0.0
        for t in range(steps):
            level = numpyro.sample(f"level_{t}", dist.Normal(level, 1.0))

    return model


def test_a_model_with_very_many_sites_is_told_to_use_scan_before_anything_compiles(monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompilationWarning)
        validation.warn_if_unrolled([f"level_{t}" for t in range(validation.MANY_SITES)])  # at the limit: quiet
    monkeypatch.setattr(validation, "MANY_SITES", 3)
    # The warning raised as an error: the call stops where it warns, and nothing may have compiled.
    for entry in (lambda m: ar.infer(m, method="ncp", **TINY), lambda m: ar.fit_vip(m, config=VI)):
        compiled = PROGRAMS.num_compilations
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompilationWarning)
            with pytest.raises(CompilationWarning, match=r"4 latent sample sites \(level_0, level_1, level_2, \.\.\.\).*scan"):
                entry(_loop_of(4))
        assert PROGRAMS.num_compilations == compiled


def test_numpyro_s_reparam_around_a_scan_model_gets_an_error_that_says_why():
    from numpyro.infer.reparam import LocScaleReparam

    wrapped = numpyro.handlers.reparam(random_walk, config={"walk": LocScaleReparam(0.0)})
    with pytest.raises(ModelError, match="meets the sites of a scan body only after the scan"):
        ar.infer(wrapped, Y_WALK, method="ncp", **TINY)


def test_a_scan_over_zero_steps_gets_an_error_that_says_why():
    with pytest.raises(ModelError, match="scan over zero steps"):
        ar.infer(random_walk, np.zeros(0, np.float32), method="ncp", **TINY)


def test_a_model_called_without_its_data_says_the_draws_are_its_prior():
    def model(y=None):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)

    # Only the decision's text is checked: the shortest run (fixed-L HMC, a 20-step fit) says it.
    forgotten = ar.infer(model, method="cp", **TINY)
    assert "no observed site, so these draws are its prior" in forgotten.decision
    given = ar.infer(model, y=0.5, method="cp", **TINY)
    assert "prior" not in given.decision


def test_obs_mask_imputation_is_not_flagged_for_the_draws_that_have_no_density():
    """NumPyro's obs_mask samples '<name>_unobserved' at every position; at the observed ones it has no
    density and wanders (R-hat 2.4 here before), which flagged a correct run with advice that cannot help."""
    def model(y, mask):
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        tau = numpyro.sample("tau", dist.HalfNormal(5.0))
        with numpyro.plate("n", y.shape[0]):
            numpyro.sample("y", dist.Normal(mu, tau), obs=y, obs_mask=mask)

    y = np.array([1.0, 2.0, 0.0, 3.0, -1.0, 0.5])
    mask = np.array([True, True, False, True, True, False])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        result = ar.infer(model, y, mask, num_chains=4, num_warmup=500, num_samples=500, progress=False)
    r_hat = result.diagnostics.standard.r_hat["y_unobserved"]
    assert np.all(np.isnan(r_hat[mask])) and np.all(r_hat[~mask] < 1.05)
    assert "y_unobserved: 4 of its 6 elements are masked out of the density" in result.decision
    assert np.ptp(result.samples["y_unobserved"][..., 0]) > 0  # the draws themselves are returned untouched
    # The paper's ESS reads only the elements with a density (a constant stand-in would count as ESS 0).
    assert result.diagnostics.efficiency.mean > 0 and result.diagnostics.efficiency.min_element_name != "y_unobserved[0]"


@pytest.mark.slow  # 20 s of the suite; the obs_mask imputation test above covers the masked diagnostics
def test_a_fully_observed_obs_mask_site_is_not_called_stuck():
    """obs_mask all True (nothing missing): every element of y_unobserved is without density; the site
    must not read as 'never changed', nor the run as untrustworthy."""
    def model(y, mask):
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        with numpyro.plate("n", y.shape[0]):
            numpyro.sample("y", dist.Normal(mu, 1.0), obs=y, obs_mask=mask)

    y = np.array([1.0, 2.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("cp", "auto"):
            # 1000 draws: with 300, CP's max R-hat (bulk and tail) for mu read 1.015 at ESS 3,695 on one
            # host, noise of the short chains' tail R-hat that flagged the run (1.0006 with 1000).
            result = ar.infer(model, y, np.ones(3, dtype=bool), method=method, num_chains=4, num_warmup=300,
                              num_samples=1000, progress=False)
            assert result.diagnostics.health.trustworthy, result.diagnostics.health.warnings


def test_a_flagged_run_on_the_command_line_warns_once_in_its_summary(capsys):
    # 20 warm-up steps of centred NUTS on eight schools cannot be trusted; the summary says so, and
    # Python's warning (which would repeat it beside a line of our source) stays silent.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli.main(["run", "eight_schools", "--method", "cp", "--kernel", "nuts", "--chains", "2",
                         "--warmup", "20", "--samples", "20", "--quiet"]) == 0
    assert "WARNING:" in capsys.readouterr().out
    assert not [w for w in caught if issubclass(w.category, ar.ConvergenceWarning)]


def test_the_documented_warning_and_errors_are_importable_from_the_package():
    # README tells users to filter `autoreparam.ConvergenceWarning`; it was documented but not exported.
    from autoreparam import errors

    assert all(hasattr(ar, name) for name in ar.__all__)
    assert ar.ConvergenceWarning is errors.ConvergenceWarning
    assert issubclass(ar.SiteError, ar.ModelError) and issubclass(ar.ArgumentError, ar.AutoreparamError)


def test_model_options_on_the_command_line_keep_integers_and_exponents():
    """Every --option number was a float (n=20 refused as not a positive integer, seed=1 a bare
    TypeError) and q=1e-2 stayed text (a bare TypeError): found in review."""
    args = cli.build_parser().parse_args(["run", "gaussian_section3", "--option", "n=20", "--option", "q=1e-2",
                                          "--option", "seed=1"])
    problem = cli._problem(args)
    assert problem.name == "gaussian_section3"


def test_radon_quirks_refuse_a_missing_floor_policy_they_would_ignore():
    from autoreparam.models import load

    with pytest.raises(ArgumentError, match="missing_floor='drop' does not apply with quirks=True"):
        load("radon_az", quirks=True, missing_floor="drop")


def test_chains_stuck_at_a_nan_gradient_are_told_why():
    """A term finite everywhere whose gradient is NaN (jnp.where differentiates both branches): the run
    said only that x never changed; now its warning names the gradient and the latent."""
    import jax.numpy as jnp

    def model():
        x = numpyro.sample("x", dist.Normal(0.0, 1.0))
        numpyro.factor("f", jnp.where(x > 100.0, jnp.sqrt(x - 100.0), 0.0))

    with pytest.warns(ar.ConvergenceWarning, match=r"gradient with respect to x is NaN or infinite.*density itself is finite"):
        result = ar.infer(model, **TINY)
    assert not result.trustworthy and "x never changed" in " ".join(result.diagnostics.health.warnings)
