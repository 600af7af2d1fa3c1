"""One evaluation folder, one evaluation: a resumed or second command with other options is refused before
it runs anything, and the card is written only from results of the default network."""

from __future__ import annotations

import json

import pytest

from autoreparam.cli import main
from autoreparam.corpus import write_corpus
from autoreparam.errors import ArgumentError, DataError
from autoreparam.meta.weights import save_network
from autoreparam.meta.predict import SHIPPED
from autoreparam.meta_eval.run import plan_evaluation

from .conftest import small_network


def test_a_folder_refuses_another_protocol_or_network(tmp_path):
    plan = plan_evaluation(tmp_path, protocol="tiny", parts=("funnel",))
    assert len(plan.tasks) == 25 and plan.timing == []
    record = json.loads((tmp_path / "protocol.json").read_text())
    assert record["network_name"] == SHIPPED and record["protocol"]["name"] == "tiny"
    again = plan_evaluation(tmp_path, protocol="tiny", parts=("funnel", "timing"))  # other parts: a resume
    assert len(again.timing) == 11
    with pytest.raises(ArgumentError, match="another protocol"):
        plan_evaluation(tmp_path, protocol="cpu", parts=("timing",))
    stem = tmp_path / "runs" / "seed_0" / "meta_gnn"
    save_network(stem, small_network())
    with pytest.raises(ArgumentError, match="another networks, network_name"):
        plan_evaluation(tmp_path, protocol="tiny", network=str(stem), parts=("funnel",))
    assert json.loads((tmp_path / "protocol.json").read_text()) == record  # nothing rewritten


def test_one_network_named_by_a_relative_and_an_absolute_path_is_one_evaluation(tmp_path, monkeypatch):
    """A resume that spelt the network's path the other way was refused as another network (found in review)."""
    stem = tmp_path / "runs" / "seed_0" / "meta_gnn"
    save_network(stem, small_network())
    monkeypatch.chdir(tmp_path)
    plan_evaluation(tmp_path / "out", protocol="tiny", network="runs/seed_0/meta_gnn", parts=("funnel",))
    plan_evaluation(tmp_path / "out", protocol="tiny", network=str(stem), parts=("funnel",))
    record = json.loads((tmp_path / "out" / "protocol.json").read_text())
    assert record["networks"]["meta"] == str(stem)
    other = tmp_path / "runs" / "seed_1" / "meta_gnn"
    save_network(other, small_network())
    with pytest.raises(ArgumentError, match="another networks"):
        plan_evaluation(tmp_path / "out", protocol="tiny", network="runs/seed_1/meta_gnn", parts=("funnel",))


def test_bad_parts_a_missing_network_and_another_corpus_are_refused_before_anything_runs(tmp_path):
    # Found in review: a misspelt part, or held_out without a corpus, ran nothing with exit status 0; a
    # network without a card failed in every task; results of another corpus were reused silently.
    with pytest.raises(ArgumentError, match="--parts: unknown 'fuunel'"):
        plan_evaluation(tmp_path / "a", protocol="tiny", parts=("fuunel",))
    with pytest.raises(ArgumentError, match="give --corpus"):
        plan_evaluation(tmp_path / "a", protocol="tiny", parts=("held_out",))
    with pytest.raises(DataError, match="no network card"):
        plan_evaluation(tmp_path / "a", protocol="tiny", network=str(tmp_path / "nowhere"), parts=("funnel",))
    assert not (tmp_path / "a" / "protocol.json").exists()
    write_corpus(tmp_path / "c1", n=3, seed=0)
    write_corpus(tmp_path / "c2", n=3, seed=1)
    plan_evaluation(tmp_path / "b", corpus=tmp_path / "c1", protocol="tiny", parts=("funnel",))
    with pytest.raises(ArgumentError, match="another corpus"):
        plan_evaluation(tmp_path / "b", corpus=tmp_path / "c2", protocol="tiny", parts=("funnel",))


def test_meta_commands_refuse_counts_that_mean_nothing(capsys):
    from autoreparam import cli

    parser = cli.build_parser()
    for argv in (["meta", "train", "--corpus", "c", "--out", "o", "--limit", "-2"],
                 ["meta", "train", "--corpus", "c", "--out", "o", "--seeds", ","],
                 ["meta", "train", "--corpus", "c", "--out", "o", "--elbo-models", "0"],
                 ["meta", "labels", "--corpus", "c", "--out", "o", "--limit", "-25"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        err = capsys.readouterr().err
        assert "must be a positive integer" in err or "names no number" in err


def test_the_card_is_refused_for_another_networks_results(tmp_path, capsys):
    (tmp_path / "protocol.json").write_text(json.dumps({"protocol": {"name": "tiny"}, "network_name": "meta_gnn"}))
    assert main(["meta", "report", "--results", str(tmp_path), "--out", str(tmp_path), "--card"]) == 2
    assert "evaluated meta_gnn" in capsys.readouterr().err
    assert not (tmp_path / "META.md").exists()
    assert main(["meta", "report", "--results", str(tmp_path / "nothing"), "--out", str(tmp_path)]) == 2
    assert "not an evaluation folder" in capsys.readouterr().err
    assert main(["meta", "report", "--results", str(tmp_path), "--out", str(tmp_path), "--light-results", "x"]) == 2


def test_labels_check_the_corpus_first_and_the_report_names_a_damaged_result(tmp_path):
    from autoreparam.meta.labels import MANIFEST, make_labels
    from autoreparam.meta_eval.collect import errors

    with pytest.raises(DataError, match="index.jsonl not found"):
        make_labels(tmp_path / "nowhere", tmp_path / "labels", serial=True, progress=False)
    assert not (tmp_path / "labels" / MANIFEST).exists()  # it refused the right command afterwards
    (tmp_path / "held_out").mkdir()
    (tmp_path / "held_out" / "x.json").write_text('{"spec": ')
    assert "damaged" in errors(tmp_path / "held_out")[0]["error"]
