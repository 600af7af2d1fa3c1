"""The command line takes a program file with a data file, and writes corpora."""

from __future__ import annotations

import json

from autoreparam import cli
from autoreparam.lang.export import write_problem_data
from autoreparam.models import load
from tests.lang.conftest import EXAMPLES


def test_run_reads_a_program_file_and_its_data(tmp_path):
    data = tmp_path / "schools.json"
    write_problem_data(load("eight_schools"), data)
    args = cli.build_parser().parse_args(["run", str(EXAMPLES / "eight_schools.arp"), "--data", str(data)])
    problem = cli._problem(args)
    assert problem.name == "eight_schools" and list(problem.kwargs) == ["y"]
    assert problem.kwargs["y"].tolist() == [28, 8, -3, 7, -1, 1, 18, 12]


def test_program_errors_are_reported_with_their_line(capsys):
    assert cli.main(["run", str(EXAMPLES / "eight_schools.arp"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "eight_schools.arp:3:1: data error: missing data field 'J'" in err


def test_data_is_refused_for_a_zoo_model(capsys):
    assert cli.main(["run", "eight_schools", "--data", "x.json"]) == 2
    assert "--data is for program files" in capsys.readouterr().err


def test_corpus_command(tmp_path, capsys):
    assert cli.main(["corpus", "--n", "12", "--seed", "1", "--out", str(tmp_path / "c")]) == 0
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["n"] == 12 and sum(manifest["splits"].values()) == 12
    assert "12 programs" in capsys.readouterr().out
