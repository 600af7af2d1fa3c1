"""One evaluation folder, one evaluation: a resumed or second command with other options is refused before
it runs anything, and the card is written only from results of the default network."""

from __future__ import annotations

import json

import pytest

from autoreparam.cli import main
from autoreparam.errors import ArgumentError
from autoreparam.meta.predict import SHIPPED
from autoreparam.meta_eval.run import plan_evaluation


def test_a_folder_refuses_another_protocol_or_network(tmp_path):
    plan = plan_evaluation(tmp_path, protocol="tiny", parts=("funnel",))
    assert len(plan.tasks) == 25 and plan.timing == []
    record = json.loads((tmp_path / "protocol.json").read_text())
    assert record["network_name"] == SHIPPED and record["protocol"]["name"] == "tiny"
    again = plan_evaluation(tmp_path, protocol="tiny", parts=("funnel", "timing"))  # other parts: a resume
    assert len(again.timing) == 11
    with pytest.raises(ArgumentError, match="another protocol"):
        plan_evaluation(tmp_path, protocol="cpu", parts=("timing",))
    with pytest.raises(ArgumentError, match="another networks, network_name"):
        plan_evaluation(tmp_path, protocol="tiny", network="runs/seed_0/meta_gnn", parts=("funnel",))
    assert json.loads((tmp_path / "protocol.json").read_text()) == record  # nothing rewritten


def test_the_card_is_refused_for_another_networks_results(tmp_path, capsys):
    (tmp_path / "protocol.json").write_text(json.dumps({"protocol": {"name": "tiny"}, "network_name": "meta_gnn"}))
    assert main(["meta", "report", "--results", str(tmp_path), "--out", str(tmp_path), "--card"]) == 2
    assert "evaluated meta_gnn" in capsys.readouterr().err
    assert not (tmp_path / "META.md").exists()
    assert main(["meta", "report", "--results", str(tmp_path / "nothing"), "--out", str(tmp_path)]) == 2
    assert "not an evaluation folder" in capsys.readouterr().err
    assert main(["meta", "report", "--results", str(tmp_path), "--out", str(tmp_path), "--light-results", "x"]) == 2
