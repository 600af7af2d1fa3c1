"""The benchmark runner's resume and grid rules, without running a sampler: the oracle's grid sees
R-hat, a folder made with other settings is refused, unknown extras are named, and the per-cell
diagnostics use every chain. Hand-made records (test fixtures, not benchmark results)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from autoreparam.benchmark import runner
from autoreparam.benchmark.cells import hmc_key
from autoreparam.benchmark.protocol import get_protocol
from autoreparam.benchmark.store import ResultStore
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.errors import ArgumentError
from autoreparam.mcmc.config import PAPER_L_GRID


def test_the_grid_counts_drops_only_once_some_l_has_agreeing_chains(tmp_path, monkeypatch):
    # Short L: chains disagree (R-hat > 1.01) and their per-chain scores fall; L = 8 is the first good one.
    cells = {1: (2.77, 1.3), 2: (1.7, 1.2), 4: (1.3, 1.1), 8: (9.0, 1.0), 16: (12.0, 1.0)}
    ran = []

    def fake_cell(ws, method, num_leapfrog, seed):
        ran.append(num_leapfrog)
        mean, r_hat = cells.get(num_leapfrog, (0.5, 1.0))
        ws.store.save(hmc_key(ws.name, method, num_leapfrog, seed),
                      {"ess_per_1000_grads": {"mean": mean, "se": 0.1}, "max_r_hat": r_hat})

    monkeypatch.setattr(runner, "run_hmc_cell", fake_cell)
    protocol = dataclasses.replace(get_protocol("cpu"), leapfrog_grid=PAPER_L_GRID, grid_patience=2)
    ws = SimpleNamespace(name="toy", protocol=protocol, store=ResultStore(tmp_path))
    runner._grid(ws, "cp", 0, lambda key: None)
    assert ran == [1, 2, 4, 8, 16, 32, 64]  # stopped two drops after the best agreeing L, not at L = 4


def _stored(store: ResultStore, protocol, quirks=False) -> None:
    store.save("vi__eight_schools__s0", {"kind": "vi", "protocol": protocol.to_dict(), "quirks": quirks})


def test_bench_refuses_a_folder_made_with_other_settings(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(runner, "_run_all", lambda *args: ran.append(args[0]))
    monkeypatch.setattr(runner, "load_problem", lambda *args, **kwargs: None)  # radon's data need not be here
    _stored(ResultStore(tmp_path), get_protocol("tiny"))
    with pytest.raises(ArgumentError) as error:
        runner.run_benchmark(get_protocol("tiny", num_samples=500, num_chains=8), tmp_path, progress=False)
    message = str(error.value)
    assert str(tmp_path) in message and "--out" in message
    assert "num_samples 80 there, 500 now" in message and "num_chains 4 there, 8 now" in message
    with pytest.raises(ArgumentError, match="quirks False there, True now"):
        runner.run_benchmark(get_protocol("tiny"), tmp_path, quirks=True, progress=False)
    assert ran == []
    # Other models and seeds add cells of their own; the same settings resume.
    runner.run_benchmark(get_protocol("tiny", models=("radon_mn",), seeds=(1, 2)), tmp_path, progress=False)
    runner.run_benchmark(get_protocol("tiny"), tmp_path, progress=False)
    assert len(ran) == 2


def test_bench_names_an_unknown_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "_run_all", lambda *args: None)
    with pytest.raises(ArgumentError, match=r"--extras.*unknown 'vipnuts'.*nuts, vip_nuts, auto"):
        runner.run_benchmark(get_protocol("tiny"), tmp_path, extras=("nuts", "vipnuts"), progress=False)
    assert ResultStore(tmp_path).is_empty()
    runner.run_benchmark(get_protocol("tiny"), tmp_path, extras=(), progress=False)


def _thirty_chains():
    rng = np.random.default_rng(0)
    draws = rng.normal(size=(30, 200, 3)).astype(np.float32)  # more chains than MAX_RUNNING_CHAINS (20)
    draws[20:, :, 2] += 0.5  # the chains past 20 disagree a little on one element
    return draws, {"a": draws[:, :, :2], "b": draws[:, :, 2]}


def test_cell_diagnostics_use_every_chain_as_the_seconds_do():
    from autoreparam.benchmark.summary import summarise

    draws, samples = _thirty_chains()
    num_chains, num_draws, _ = draws.shape
    everything = standard_diagnostics(samples)
    first_20 = standard_diagnostics({k: v[:20] for k, v in samples.items()})
    assert everything.min_ess_bulk != pytest.approx(first_20.min_ess_bulk, rel=0.1)
    assert everything.max_r_hat > first_20.max_r_hat  # only every chain sees the disagreement
    chains = SimpleNamespace(
        draws=draws, grad_evals=np.full(num_chains, 1000.0), warmup_grad_evals=np.full(num_chains, 500.0),
        divergences=np.zeros(num_chains), warmup_divergences=np.zeros(num_chains),
        acceptance=np.full((num_chains, 1), 0.8), step_size=np.full((num_chains, 1), 0.1),
        num_chains=num_chains, num_draws=num_draws, seconds={"sampling": 1.0},
    )
    record, _ = summarise(chains, samples, keep_draws=50)
    assert record["min_ess_bulk"] == pytest.approx(everything.min_ess_bulk)
    assert record["min_ess_tail"] == pytest.approx(everything.min_ess_tail)
    assert record["max_r_hat"] == pytest.approx(everything.max_r_hat)


def test_blocked_diagnostics_equal_one_call_over_everything():
    from autoreparam.benchmark.summary import all_chain_diagnostics

    draws, samples = _thirty_chains()
    everything = standard_diagnostics(samples)
    blocked = all_chain_diagnostics(samples, block_values=draws.shape[0] * draws.shape[1])  # one element a call
    assert blocked == pytest.approx({"min_ess_bulk": everything.min_ess_bulk,
                                     "min_ess_tail": everything.min_ess_tail, "max_r_hat": everything.max_r_hat})


def test_nuts_on_the_best_method_prefers_hmc_runs_whose_chains_agree():
    """The choice ignored R-hat: a per-chain ESS of chains that disagree overstates, and it won."""
    from types import SimpleNamespace

    from autoreparam.benchmark.cells import best_single_space_method

    def hmc(method, L, score, r_hat):
        return {"kind": "hmc", "model": "m", "seed": 0, "method": method, "num_leapfrog": L,
                "ess_per_1000_grads": {"mean": score}, "max_r_hat": r_hat}

    records = [hmc("cp", 4, 9.0, 1.8), hmc("ncp", 8, 2.0, 1.004), hmc("vip", 16, 3.0, 1.2)]
    ws = SimpleNamespace(name="m", store=SimpleNamespace(records=lambda: records))
    assert best_single_space_method(ws, 0) == ("ncp", 8)
    records[1]["max_r_hat"] = 1.3  # none agrees: the best score, as before
    assert best_single_space_method(ws, 0) == ("cp", 4)


def test_bench_checks_every_model_s_data_and_its_out_folder_before_the_first_cell(tmp_path, monkeypatch):
    # Found in review: a missing data file stopped the run only when it reached that model (after the
    # others' cells), an --out that is a file only after the first fits, and no model ran nothing, exit 0.
    from autoreparam.errors import DataError

    ran = []
    monkeypatch.setattr(runner, "_run_all", lambda *args: ran.append(args[0]))
    with pytest.raises(DataError, match="german_credit|not found"):
        runner.run_benchmark(get_protocol("tiny", models=("eight_schools", "german_credit")), tmp_path / "out",
                             data_dir=tmp_path / "nowhere", progress=False)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ArgumentError, match="--out .*a_file is a file; give a folder"):
        runner.run_benchmark(get_protocol("tiny"), tmp_path / "a_file", progress=False)
    with pytest.raises(ArgumentError, match="names no model or no seed"):
        runner.run_benchmark(get_protocol("tiny", models=()), tmp_path / "out", progress=False)
    assert ran == []
    assert runner.planned_cells(get_protocol("tiny"), methods=("cp",), peers=(), extras=()) == \
        1 + len(get_protocol("tiny").leapfrog_grid)


def test_two_runs_cannot_write_one_folder_at_once(tmp_path):
    store = ResultStore(tmp_path)
    with store.exclusive("benchmark"):
        with pytest.raises(ArgumentError, match="another sbc is writing to"):
            with ResultStore(tmp_path).exclusive("sbc"):
                pass
    with ResultStore(tmp_path).exclusive("sbc"):  # released when the first run ends
        pass


def test_a_damaged_record_or_arrays_file_is_named_on_resume(tmp_path):
    from autoreparam.errors import DataError

    store = ResultStore(tmp_path)
    store.save("cell", {"a": 1}, {"x": np.arange(3)})
    assert store.load("cell")["a"] == 1 and store.arrays("cell")["x"].tolist() == [0, 1, 2]
    npz = tmp_path / "arrays" / "cell.npz"
    npz.write_bytes(npz.read_bytes()[:40])
    with pytest.raises(DataError, match="arrays file .*cell.npz is damaged.*delete .*cell.json"):
        store.arrays("cell")
    npz.unlink()
    with pytest.raises(DataError, match="the arrays of result cell are missing"):
        store.arrays("cell")
    record = tmp_path / "cells" / "cell.json"
    record.write_text(record.read_text()[:5])
    with pytest.raises(DataError, match="cell.json is not valid JSON"):
        store.load("cell")


def test_each_workflow_cell_starts_with_no_compiled_program(tmp_path, monkeypatch):
    """The workflow cells time a user's first call: auto once ran on the programs the VIP-then-NUTS cell
    before it compiled (eight schools: 0.18 s of compilation instead of 8.4 s; found in review)."""
    from autoreparam.mcmc.programs import PROGRAMS

    seen = {}

    class FakeWorkspace:
        def __init__(self, model, protocol, store, **kwargs):
            self.name, self.protocol, self.store = model, protocol, store

        def fits(self, seed):
            pass

    def cell(name):
        def run(ws, *args):
            # What the cell finds, then what it leaves behind for the next one.
            seen[name] = len(PROGRAMS._compiled)
            PROGRAMS(("left by", name), lambda: (lambda x: x + 1), (np.float32(1.0),))
            key = f"peer__{ws.name}__{args[0]}__s0" if name == "peer" else f"{name}__{ws.name}__s0"
            ws.store.save(key, {"kind": name})
        return run

    monkeypatch.setattr(runner, "Workspace", FakeWorkspace)
    for name in ("nuts_best", "vip_nuts", "auto"):
        monkeypatch.setattr(runner, f"run_{name}_cell", cell(name))
    monkeypatch.setattr(runner, "run_peer_cell", cell("peer"))
    PROGRAMS(("left by", "an earlier call"), lambda: (lambda x: x * 2), (np.float32(1.0),))
    runner._run_all(get_protocol("tiny", models=("eight_schools",)), ResultStore(tmp_path), None, False, (),
                    ("numpyro_nuts_cp",), ("nuts", "vip_nuts", "auto"), lambda key: None)
    assert seen == {"nuts_best": 0, "vip_nuts": 0, "auto": 0, "peer": 0}


def test_bench_runs_without_persistent_compilation_caches_unless_asked(tmp_path, monkeypatch):
    """A benchmark times first calls: an earlier run's persistent cache once served auto's compilation."""
    import os

    from autoreparam import cli

    seen = []
    monkeypatch.setattr(runner, "run_benchmark", lambda *a, **k: seen.append(
        (os.environ.get("AUTOREPARAM_COMPILATION_CACHE"), os.environ.get("PYTENSOR_FLAGS"))) or ResultStore(tmp_path))
    for name in ("AUTOREPARAM_COMPILATION_CACHE", "PYTENSOR_FLAGS"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["bench", "--protocol", "tiny", "--out", str(tmp_path), "--quiet"]) == 0
    monkeypatch.setenv("AUTOREPARAM_COMPILATION_CACHE", "1")
    monkeypatch.setenv("PYTENSOR_FLAGS", "floatX=float32")
    assert cli.main(["bench", "--protocol", "tiny", "--out", str(tmp_path), "--quiet"]) == 0
    assert seen == [("0", "numba__cache=False"), ("1", "floatX=float32,numba__cache=False")]


def test_bench_switches_off_a_cache_the_user_gave_jax(tmp_path, monkeypatch):
    """A user's JAX_COMPILATION_CACHE_DIR still served bench's first calls (found in review)."""
    import jax

    from autoreparam import cli, compilation_cache

    monkeypatch.setattr(runner, "run_benchmark", lambda *a, **k: ResultStore(tmp_path))
    monkeypatch.delenv("AUTOREPARAM_COMPILATION_CACHE", raising=False)
    monkeypatch.setitem(compilation_cache._STATE, "decided", False)
    jax.config.update("jax_enable_compilation_cache", True)
    try:
        assert cli.main(["bench", "--protocol", "tiny", "--out", str(tmp_path), "--quiet"]) == 0
        assert jax.config.jax_enable_compilation_cache is False and compilation_cache.ensure() is False
    finally:
        jax.config.update("jax_enable_compilation_cache", True)
        compilation_cache._STATE.update(decided=False, enabled=False)
