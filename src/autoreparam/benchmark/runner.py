"""Run every cell of a protocol, skipping finished ones, with a progress bar of cells done and time left."""

from __future__ import annotations

import time
from typing import Iterable

from autoreparam.benchmark.cells import hmc_key, run_auto_cell, run_hmc_cell, run_nuts_best_cell, run_vip_nuts_cell
from autoreparam.benchmark.peers import missing_requirement, run_peer_cell
from autoreparam.benchmark.protocol import HMC_METHODS, PEERS, Protocol
from autoreparam.benchmark.store import ResultStore
from autoreparam.benchmark.workspace import Workspace, vi_key
from autoreparam.mcmc.oracle import oracle_leapfrog
from autoreparam.progress import task_bar


def planned_cells(protocol: Protocol) -> int:
    """An upper bound on the number of cells (the adaptive L grid may stop early)."""
    per_seed = 1 + len(HMC_METHODS) * len(protocol.leapfrog_grid) + 3 + len(PEERS)
    return len(protocol.models) * len(protocol.seeds) * per_seed


def _grid(ws: Workspace, method: str, seed: int, tick) -> None:
    """The oracle over L (``mcmc.oracle``), each L a saved cell, stopping early with ``grid_patience``."""

    def run(num_leapfrog: int) -> dict:
        key = hmc_key(ws.name, method, num_leapfrog, seed)
        if not ws.store.done(key):
            run_hmc_cell(ws, method, num_leapfrog, seed)
        tick(key)
        return ws.store.load(key)

    def score(record: dict) -> tuple[float, float]:
        value = record.get("ess_per_1000_grads", {})
        mean, se = value.get("mean"), value.get("se")
        return (float("-inf") if mean is None else mean, float("nan") if se is None else se)

    oracle_leapfrog(run, score, ws.protocol.leapfrog_grid, patience=ws.protocol.grid_patience)


def run_benchmark(
    protocol: Protocol,
    out_dir,
    *,
    data_dir=None,
    quirks: bool = False,
    methods: Iterable[str] = HMC_METHODS,
    peers: Iterable[str] = PEERS,
    extras: Iterable[str] = ("nuts", "vip_nuts", "auto"),
    progress: bool = True,
    deadline_minutes: float | None = None,
) -> ResultStore:
    store = ResultStore(out_dir)
    bar = task_bar(planned_cells(protocol), "benchmark cells", enabled=progress)
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
        _run_all(protocol, store, data_dir, quirks, tuple(methods), tuple(runnable), tuple(extras), tick)
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


def _run_all(protocol, store, data_dir, quirks, methods, peers, extras, tick) -> None:
    for model in protocol.models:
        ws = Workspace(model, protocol, store, data_dir=data_dir, quirks=quirks)
        for seed in protocol.seeds:
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
                    run()
                tick(key)
            for peer in peers:
                key = f"peer__{model}__{peer}__s{seed}"
                if not store.done(key):
                    run_peer_cell(ws, peer, seed)
                tick(key)
