"""End to end, marked slow (training and evaluation are commands, not unit tests): a tiny corpus is
labelled through a local Ray cluster, trained for a few steps (then resumed), evaluated and reported."""

from __future__ import annotations

import json

import pytest

from autoreparam.cli import main

# Ray starts its local cluster with subprocess (fork, then exec at once) after JAX is initialised in
# this process; JAX warns of any fork, and pytest makes that warning an error in the fork hook.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")]


def test_labels_train_resume_evaluate_report(tmp_path, monkeypatch):
    corpus, labels, run, results = (tmp_path / n for n in ("corpus", "labels", "run", "eval"))
    assert main(["corpus", "--n", "12", "--seed", "0", "--out", str(corpus)]) == 0
    assert main(["meta", "labels", "--corpus", str(corpus), "--out", str(labels), "--limit", "4",
                 "--num-cpus", "1", "--quiet"]) == 0
    assert len(list((labels / "train").glob("*.graph.json"))) == 4
    train = ["meta", "train", "--corpus", str(corpus), "--labels", str(labels), "--out", str(run), "--seeds", "0",
             "--regression-steps", "10", "--elbo-steps", "4", "--batch-models", "2", "--elbo-models", "2", "--quiet"]
    assert main(train) == 0
    log = (run / "seed_0" / "log.jsonl").read_text().splitlines()
    assert len(log) == 14 and json.loads(log[-1])["phase"] == "elbo"
    assert main(train) == 0  # finished: resumes at the end, trains nothing more
    assert len((run / "seed_0" / "log.jsonl").read_text().splitlines()) == 14
    stem = str(run / "seed_0" / "meta_gnn")
    assert main(["meta", "evaluate", "--out", str(results), "--protocol", "tiny", "--parts", "funnel",
                 "--network", stem, "--serial", "--quiet"]) == 0
    assert len(list((results / "funnel").glob("*.json"))) == 25
    assert main(["meta", "report", "--results", str(results), "--out", str(tmp_path)]) == 0
    assert "## Targets" in (tmp_path / "META.md").read_text()
