"""Run every cell of a protocol, skipping finished ones, with a progress bar of cells done and time left.

The workflow cells (our NUTS, VIP then NUTS, ``auto``, and each peer) time what a user pays, so each
starts with no compiled program in the process: ``auto`` once reused what the VIP-then-NUTS cell
before it had compiled (eight schools: 0.18 s of compilation instead of 8.4 s; found in review). The
``bench`` command also runs without persistent compilation caches (JAX's, PyTensor's numba cache)
unless ``AUTOREPARAM_COMPILATION_CACHE`` or ``PYTENSOR_FLAGS`` say otherwise.
"""

from __future__ import annotations

import json
import time
from typing import Iterable

from autoreparam.benchmark.cells import hmc_key, run_auto_cell, run_hmc_cell, run_nuts_best_cell, run_vip_nuts_cell
from autoreparam.benchmark.peers import missing_requirement, run_peer_cell
from autoreparam.benchmark.protocol import EXTRAS, HMC_METHODS, PEERS, Protocol
from autoreparam.benchmark.store import ResultStore, jsonable
from autoreparam.benchmark.workspace import Workspace, vi_key
from autoreparam.errors import ArgumentError
from autoreparam.mcmc.oracle import oracle_leapfrog
from autoreparam.mcmc.programs import release_compiled_programs
from autoreparam.models import load as load_problem
from autoreparam.progress import task_bar

# Protocol fields that may differ between passes into one folder: each model and seed has cells of its
# own (keys name them) and the report orders models by whichever record it reads first.
ADDITIVE_FIELDS = ("models", "seeds")


def planned_cells(protocol: Protocol, methods=HMC_METHODS, peers=PEERS, extras=EXTRAS) -> int:
    """An upper bound on the number of cells of the methods, peers and extras run (the adaptive L grid
    may stop early); it counted every one whatever was asked (found in review)."""
    per_seed = 1 + len(tuple(methods)) * len(protocol.leapfrog_grid) + len(tuple(extras)) + len(tuple(peers))
    return len(protocol.models) * len(protocol.seeds) * per_seed


def _grid(ws: Workspace, method: str, seed: int, tick) -> None:
    """The oracle over L (``mcmc.oracle``), each L a saved cell, stopping early with ``grid_patience``."""

    def run(num_leapfrog: int) -> dict:
        key = hmc_key(ws.name, method, num_leapfrog, seed)
        if not ws.store.done(key):
            run_hmc_cell(ws, method, num_leapfrog, seed)
        tick(key)
        return ws.store.load(key)

    def score(record: dict) -> tuple[float, float, float]:
        # The R-hat too: without it oracle_leapfrog counts every L as agreeing, so patience counted
        # drops while every L so far disagreed and stopped before the L the chains need (the report
        # never picks a disagreeing L, report/oracle.py). Unknown (None, e.g. a failed cell): NaN.
        value = record.get("ess_per_1000_grads", {})
        mean, se, r_hat = value.get("mean"), value.get("se"), record.get("max_r_hat")
        return (float("-inf") if mean is None else mean, float("nan") if se is None else se,
                float("nan") if r_hat is None else r_hat)

    oracle_leapfrog(run, score, ws.protocol.leapfrog_grid, patience=ws.protocol.grid_patience)


def run_benchmark(
    protocol: Protocol,
    out_dir,
    *,
    data_dir=None,
    quirks: bool = False,
    methods: Iterable[str] = HMC_METHODS,
    peers: Iterable[str] = PEERS,
    extras: Iterable[str] = EXTRAS,
    progress: bool = True,
    deadline_minutes: float | None = None,
) -> ResultStore:
    extras = tuple(extras)
    # A misspelt extra (e.g. "vipnuts") used to run nothing, silently.
    unknown = [name for name in extras if name not in EXTRAS]
    if unknown:
        raise ArgumentError(f"extras (--extras): unknown '{unknown[0]}'; choose from {', '.join(EXTRAS)}, "
                            "or none ('')")
    if not protocol.models or not protocol.seeds:
        raise ArgumentError("the benchmark names no model or no seed (--models, --seeds): nothing would run")
    for model in protocol.models:
        # Every model and its data before the first cell: a missing data file stopped the run only when it
        # reached that model, after the others' cells (found in review).
        load_problem(model, data_dir=data_dir, quirks=quirks)
    store = ResultStore(out_dir)
    with store.exclusive("benchmark"):
        return _run_benchmark(protocol, store, data_dir, quirks, tuple(methods), tuple(peers), extras, progress,
                              deadline_minutes)


def _run_benchmark(protocol, store, data_dir, quirks, methods, peers, extras, progress, deadline_minutes):
    refuse_other_settings(store, protocol, quirks)
    bar = task_bar(planned_cells(protocol, methods, peers, extras), "benchmark cells", enabled=progress)
    started = time.perf_counter()

    def tick(key: str) -> None:
        bar.set_postfix_str(key[:60], refresh=False)
        bar.update(1)
        if deadline_minutes is not None and time.perf_counter() - started > 60 * deadline_minutes:
            raise _Deadline()

    runnable = []
    for peer in peers:
        reason = missing_requirement(peer)
        if reason is None:
            runnable.append(peer)
        else:  # not saved as a failed cell, so that a rerun after installing the extra runs it
            bar.write(f"skipping peer {peer}: {reason}")
    try:
        _run_all(protocol, store, data_dir, quirks, methods, tuple(runnable), extras, tick)
    except _Deadline:
        bar.write(f"deadline of {deadline_minutes} min reached; finished cells are kept, rerun to continue")
    bar.close()
    store.root.mkdir(parents=True, exist_ok=True)
    # One line per call: a resumed benchmark's wall time is the sum of its passes.
    with open(store.root / "wall_seconds.txt", "a") as log:
        log.write(f"{time.perf_counter() - started:.1f}\n")
    return store


class _Deadline(Exception):
    pass


def _settings(protocol: dict, quirks) -> dict:
    """The settings a cell depends on, as its JSON record stores them (tuples read back as lists)."""
    settings = {k: v for k, v in protocol.items() if k not in ADDITIVE_FIELDS}
    return json.loads(json.dumps(jsonable({**settings, "quirks": quirks})))


def refuse_other_settings(store: ResultStore, protocol: Protocol, quirks: bool) -> None:
    """Refuse to add cells to a folder whose cells were made with other settings.

    A rerun skips every finished key, and keys name no setting, so ``--samples 500`` into a folder of
    80-draw cells reused them silently and the report mixed both. As ``sbc`` and ``fuzz`` do
    (``reliability.methods.refuse_mixed_settings``), every pass is checked here, so the first record
    speaks for all. Other models and seeds may be added; a setting an old record lacks is not compared.
    """
    stored = store.first_record("protocol")
    if stored is None:
        return
    before = _settings(stored["protocol"], stored.get("quirks", False))
    now = _settings(protocol.to_dict(), quirks)
    differ = [f"{k} {before[k]!r} there, {now[k]!r} now" for k in now if k in before and before[k] != now[k]]
    if differ:
        raise ArgumentError(f"{store.root} holds benchmark cells made with other settings ({'; '.join(differ)}); "
                            "finished cells would be reused as if made with these: write to another --out "
                            "folder, or repeat the settings it ran with")


def _run_all(protocol, store, data_dir, quirks, methods, peers, extras, tick) -> None:
    for model in protocol.models:
        ws = Workspace(model, protocol, store, data_dir=data_dir, quirks=quirks)
        for seed in protocol.seeds:
            release_compiled_programs()  # the fits are timed too (they are part of the VIP workflows' seconds)
            ws.fits(seed)
            tick(vi_key(model, seed))
            for method in methods:
                _grid(ws, method, seed, tick)
            for extra, key, run in (
                ("nuts", f"nuts__{model}__s{seed}", lambda: run_nuts_best_cell(ws, seed)),
                ("vip_nuts", f"vip_nuts__{model}__s{seed}", lambda: run_vip_nuts_cell(ws, seed)),
                ("auto", f"auto__{model}__s{seed}", lambda: run_auto_cell(ws, seed)),
            ):
                if extra not in extras:
                    continue
                if not store.done(key):
                    release_compiled_programs()  # a user's first call: nothing compiled by an earlier cell
                    run()
                tick(key)
            for peer in peers:
                key = f"peer__{model}__{peer}__s{seed}"
                if not store.done(key):
                    release_compiled_programs()
                    run_peer_cell(ws, peer, seed)
                tick(key)
