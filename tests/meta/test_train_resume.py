"""Checkpoints and resume of `meta.train.Trainer`: same data only, bit-for-bit, consistent files."""

from __future__ import annotations

import dataclasses
import json

import equinox as eqx
import jax
import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.meta import train as T
from autoreparam.meta.dataset import Item

CONFIG = T.TrainConfig(hidden=8, num_steps=2, batch_models=1, regression_steps=10, elbo_steps=0, checkpoint_every=5)


class Stop(Exception):
    pass


def _items(graphs, value):
    return [Item({"family": f, "split": "train", "id": str(i)}, g, np.full(g.num_elements, value, np.float32))
            for i, (f, g) in enumerate(zip("ab", graphs))]


def _leaves(network):
    return np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(eqx.filter(network, eqx.is_array))])


def _interrupted(items, out, at, record=None, config=CONFIG):
    """A run killed just before step ``at`` would run (``at`` steps done and logged)."""
    trainer = T.Trainer(items, out, config, record or {})
    original = trainer.regression_step

    def step():
        if trainer.step == at:
            raise Stop
        return original()

    trainer.regression_step = step
    with pytest.raises(Stop):
        trainer.run(progress=False)


@pytest.fixture(scope="module")
def uninterrupted(graphs, tmp_path_factory):
    trainer = T.Trainer(_items(graphs, 0.9), tmp_path_factory.mktemp("full"), CONFIG, {})
    trainer.run(progress=False)
    return _leaves(trainer.network)


# Killed at step 7 (last checkpoint at step 5), or at step 3 before any checkpoint with a log line cut
# short by the kill (its steps were logged twice, and the cut line blocked resume; found in review).
@pytest.mark.parametrize("killed_at, resumed_at", [(7, 5), (3, 0)])
def test_resumed_run_equals_uninterrupted_and_logs_each_step_once(graphs, uninterrupted, tmp_path, killed_at,
                                                                   resumed_at):
    _interrupted(_items(graphs, 0.9), tmp_path, at=killed_at)
    with open(tmp_path / "log.jsonl", "a") as log:
        log.write('{"step": 4, "lo')
    resumed = T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {})
    assert resumed.step == resumed_at
    resumed.run(progress=False)
    np.testing.assert_array_equal(_leaves(resumed.network), uninterrupted)
    steps = [json.loads(line)["step"] for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 11))


def test_resume_on_other_training_data_is_refused(graphs, tmp_path):
    _interrupted(_items(graphs, 0.9), tmp_path, at=6, record={"labels": ["A"], "limit": None})
    with pytest.raises(ArgumentError, match="other training data.*labels.*new --out"):
        T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {"labels": ["B"], "limit": None})
    with pytest.raises(ArgumentError, match="limit"):
        T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {"labels": ["A"], "limit": 1})
    with pytest.raises(ArgumentError, match="items_sha256"):  # same names, other labels' values
        T.Trainer(_items(graphs, 0.1), tmp_path, CONFIG, {"labels": ["A"], "limit": None})
    assert T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {"labels": ["A"], "limit": None}).step == 5


def test_kill_between_weights_and_json_resumes_a_consistent_pair(graphs, uninterrupted, tmp_path, monkeypatch):
    real = T.write_json

    def killed(path, payload):
        if path.name == "checkpoint.json" and payload["step"] == 10:
            raise Stop  # the weights of step 10 are on disk, the JSON still says step 5
        return real(path, payload)

    monkeypatch.setattr(T, "write_json", killed)
    with pytest.raises(Stop):
        T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {}).run(progress=False)
    monkeypatch.setattr(T, "write_json", real)
    resumed = T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {})
    assert resumed.step == 5
    resumed.run(progress=False)
    np.testing.assert_array_equal(_leaves(resumed.network), uninterrupted)
    assert [p.name for p in tmp_path.glob("checkpoint*.eqx")] == ["checkpoint_0000010.eqx"]


def test_warm_start_is_written_before_the_checkpoint_of_its_step(graphs, tmp_path, monkeypatch):
    config = T.TrainConfig(hidden=8, num_steps=2, batch_models=1, regression_steps=5, elbo_steps=2,
                           checkpoint_every=5)

    def killed(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(T, "save_network", killed)
    with pytest.raises(Stop):
        T.Trainer(_items(graphs, 0.9), tmp_path, config, {}).run(progress=False)
    # A checkpoint at step 5 would resume in the ELBO phase and never write warm_start.eqx.
    assert not (tmp_path / "checkpoint.json").exists()


# Found in review (2026-11-29): each failed before its fix.
def test_damaged_checkpoints_are_named(graphs, tmp_path):
    from autoreparam.errors import DataError

    _interrupted(_items(graphs, 0.9), tmp_path, at=7)
    weights = next(tmp_path.glob("checkpoint_*.eqx"))
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(DataError, match="checkpoint weights .*checkpoint_0000005.eqx are missing or damaged"):
        T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {})
    (tmp_path / "checkpoint.json").write_text('{"step": 5, "con')
    with pytest.raises(DataError, match="checkpoint .*checkpoint.json is damaged"):
        T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {})


def test_training_that_diverges_stops_and_keeps_the_last_checkpoint(graphs, tmp_path):
    from autoreparam.errors import DataError

    trainer = T.Trainer(_items(graphs, 0.9), tmp_path, CONFIG, {})
    original = trainer.regression_step
    trainer.regression_step = lambda: {**original(), "loss": float("nan")} if trainer.step == 6 else original()
    with pytest.raises(DataError, match="diverged at step 7 .*last checkpoint"):
        trainer.run(progress=False)
    assert json.loads((tmp_path / "checkpoint.json").read_text())["step"] == 5


def test_a_second_trainer_of_another_seed_compiles_no_step_program(graphs, uninterrupted, tmp_path):
    """The jitted steps take the optimiser as a static argument, hashed by its functions: a fresh
    optimiser per Trainer compiled the step again for every resume and every training seed."""
    from tests.conftest import XlaCompilations

    trainer = T.Trainer(_items(graphs, 0.9), tmp_path, dataclasses.replace(CONFIG, seed=1), {})
    with XlaCompilations() as compilations:
        trainer.run(progress=False)
    assert not [m for m in compilations.messages if "_regression_step" in m], compilations.messages
