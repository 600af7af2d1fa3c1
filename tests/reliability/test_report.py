"""RELIABILITY.md, its JSON and figures from saved records (synthetic ones with known verdicts)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from autoreparam.benchmark.store import ResultStore
from autoreparam.errors import ArgumentError
from autoreparam.reliability.methods import RunSettings
from autoreparam.reliability.ranks import NUM_THINNED, ranks
from autoreparam.reliability.report import (NOTES, SUMMARY, render_reliability, render_reliability_from_summary,
                                            write_reliability_report)


def save_cell(store, method, shift, n=40, seed=0):
    """n replications of funnel_observed-shaped records with exact (shift 0) or shifted posterior draws."""
    rng = np.random.default_rng(seed)
    for r in range(n):
        truth = rng.standard_normal(2)
        draws = rng.standard_normal((NUM_THINNED, 2)) + shift  # exact posterior N(0, 1), or shifted
        store.save(f"funnel_observed__{method.replace('/', '-')}__{r:04d}", {
            "model": "funnel_observed", "method": method, "replication": r, "status": "ok", "labels": ["x", "z"],
            "truth": truth, "thinned": draws, "rank": ranks(truth[None], draws[None])[0], "trustworthy": True,
            "seconds": 1.0, "ran_as": "ncp", "mean_lambda": {}, "settings": RunSettings().__dict__})


def test_report_gives_each_cell_its_verdict(tmp_path):
    store = ResultStore(tmp_path / "sbc")
    save_cell(store, "ncp/nuts", 0.0)
    save_cell(store, "wrong_jacobian/nuts", 1.0, seed=1)
    fuzz = ResultStore(tmp_path / "fuzz")
    fuzz.save("identity__0__000000", {"kind": "identity", "results": [
        {"status": "ok", "program": 0, "family": "funnel", "failed": [], "max_relative_error": {"identity": 1e-16}},
        {"status": "ok", "program": 1, "family": "funnel", "failed": ["identity"], "max_relative_error": {"identity": 0.1}}]})
    path = write_reliability_report(tmp_path / "sbc", tmp_path / "fuzz", tmp_path, power_sims=5)
    text = path.read_text()
    rows = {line.split("|")[2].strip(): line for line in text.splitlines()
            if line.startswith("| funnel_observed |") and line.count("|") == 12}  # the cell tables' rows
    assert rows["ncp/nuts"].rstrip().endswith("| pass |")
    assert rows["wrong_jacobian/nuts"].rstrip().endswith("| **FAIL** |")
    assert "draws shifted by +0.5 posterior sd" in text and "| identity | 2 | 2 | 1 |" in text
    summary = json.loads((tmp_path / SUMMARY).read_text())
    cells = {c["method"]: c for c in summary["sbc"]["cells"]}
    assert cells["ncp/nuts"]["passed"] and not cells["wrong_jacobian/nuts"]["passed"]
    assert summary["fuzz"]["counts"]["identity"] == {"programs": 2, "checks": 2, "failed": 1, "silent": 1, "errors": 0,
                                                         "families": ["funnel"]}
    assert (tmp_path / summary["sbc"]["figures"][0]).stat().st_size > 10_000


def test_report_of_fuzzing_alone_into_a_new_folder_and_of_nothing(tmp_path):
    fuzz = ResultStore(tmp_path / "fuzz")
    fuzz.save("identity__0__000000", {"kind": "identity", "results": [
        {"status": "ok", "program": 0, "family": "funnel", "failed": [], "max_relative_error": {"identity": 1e-16}}]})
    path = write_reliability_report(tmp_path / "no_sbc", tmp_path / "fuzz", tmp_path / "new" / "report", power_sims=5)
    assert path == tmp_path / "new" / "report" / "RELIABILITY.md" and "| identity | 1 | 1 | 0 |" in path.read_text()
    # The sampling checks' settings are read from the store's own runs, target acceptance included.
    assert "4 chains x 500 warm-up + 1000 draws at target acceptance 0.8" in path.read_text()
    fuzz.save("invariance__0__000001", {"kind": "invariance", "program": 1, "family": "funnel", "status": "ok",
                                         "failed": False, "trustworthy": True, "pairs": {}, "runs": {},
                                         "settings": {"num_chains": 4, "num_warmup": 500, "num_samples": 1000,
                                                      "vi": "fast", "target_accept": 0.95}})
    path = write_reliability_report(tmp_path / "no_sbc", tmp_path / "fuzz", tmp_path / "new" / "report", power_sims=5)
    assert "at target acceptance 0.95" in path.read_text()
    with pytest.raises(ArgumentError, match="no results in .*no_sbc or .*no_fuzz"):
        write_reliability_report(tmp_path / "no_sbc", tmp_path / "no_fuzz", tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


def test_a_part_without_records_is_carried_over_from_the_summary_and_says_so(tmp_path):
    store = ResultStore(tmp_path / "sbc")
    save_cell(store, "ncp/nuts", 0.0)
    fuzz = ResultStore(tmp_path / "fuzz")
    fuzz.save("identity__0__000000", {"kind": "identity", "results": [
        {"status": "ok", "program": 0, "family": "funnel", "failed": ["identity"], "max_relative_error": {"identity": 0.1}}]})
    first = write_reliability_report(tmp_path / "sbc", tmp_path / "fuzz", tmp_path / "out", power_sims=5).read_text()
    assert "carried over" not in first
    # A checkout with new SBC records but no fuzz records keeps the fuzzing section, and says where it came from.
    save_cell(store, "cp/nuts", 1.0, seed=2)
    with pytest.warns(UserWarning, match="no records in .*no_fuzz: the fuzzing section is carried over"):
        text = write_reliability_report(tmp_path / "sbc", tmp_path / "no_fuzz", tmp_path / "out", power_sims=5).read_text()
    assert "The fuzzing section below is carried over from" in text
    assert "| identity | 1 | 1 | 1 | 1 | 0 | funnel |" in text and "| funnel_observed | cp/nuts |" in text
    summary = json.loads((tmp_path / "out" / SUMMARY).read_text())
    assert summary["carried_over"] == ["fuzz"] and summary["fuzz"]["counts"]["identity"]["failed"] == 1


def test_the_document_renders_again_from_its_summary_alone(tmp_path):
    store = ResultStore(tmp_path / "sbc")
    save_cell(store, "ncp/nuts", 0.0)
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "reliability_findings.md").write_text("## Notes\n\nWritten by hand.\n")
    written = write_reliability_report(tmp_path / "sbc", tmp_path / "no_fuzz", out, power_sims=5).read_text()
    assert written.endswith("Written by hand.\n")
    assert render_reliability_from_summary(out).read_text() == written
    with pytest.raises(ArgumentError, match="no summary at"):
        render_reliability_from_summary(tmp_path / "empty")


def test_the_committed_reliability_report_is_its_committed_summary_and_notes_rendered():
    """RELIABILITY.md must be what `autoreparam reliability --summary-only` writes: edit the notes in
    docs/reliability_findings.md, not the document."""
    root = Path(__file__).resolve().parents[2]
    summary = json.loads((root / SUMMARY).read_text())
    expected = render_reliability(summary, (root / NOTES).read_text())
    assert (root / "RELIABILITY.md").read_text() == expected, (
        "RELIABILITY.md is not its summary and notes rendered: run `autoreparam reliability --summary-only`")


def test_a_summary_from_older_code_or_with_non_finite_values_gives_a_clear_answer(tmp_path):
    store = ResultStore(tmp_path / "sbc")
    save_cell(store, "ncp/nuts", 0.0)
    out = tmp_path / "out"
    write_reliability_report(tmp_path / "sbc", tmp_path / "no_fuzz", out, power_sims=5)
    summary = json.loads((out / SUMMARY).read_text())
    summary["sbc"]["cells"][0]["worst_sd_ratio"] = None  # a NaN, as the JSON stores it
    assert "n/a" in render_reliability(summary)
    del summary["fuzz_settings"]
    (out / SUMMARY).write_text(json.dumps(summary))
    with pytest.raises(ArgumentError, match="lacks fuzz_settings"):
        render_reliability_from_summary(out)


def _prior(store, program, method, failed, trusted, target_accept=None):
    store.save(f"prior__0__{program:06d}__{method.replace('/', '-')}", {
        "kind": "prior", "program": program, "family": "funnel", "method": method, "status": "ok", "failed": failed,
        "trustworthy": trusted, "worst": "pit_mean of z", "min_adjusted_p": 1e-5 if failed else 0.5,
        "settings": {"num_chains": 4, "num_warmup": 500, "num_samples": 1000, "vi": "fast",
                     "target_accept": target_accept}})


def test_several_fuzz_folders_are_read_as_one_and_refused_when_they_overlap_or_mix_settings(tmp_path):
    first, second = ResultStore(tmp_path / "a"), ResultStore(tmp_path / "b")
    _prior(first, 1, "cp/nuts", failed=True, trusted=False)
    _prior(first, 2, "cp/nuts", failed=False, trusted=True)
    _prior(second, 1, "auto/nuts", failed=True, trusted=True)  # a silent failure
    (second.root / "commands.txt").write_text("2026-11-28T09:00Z abc1234 autoreparam fuzz --out b\n")
    second.save("invariance__0__000001", {
        "kind": "invariance", "program": 1, "invariance_runs": ["cp", "ncp", "random", "auto"], "family": "funnel", "status": "ok", "failed": True, "trustworthy": False,
        "worst": "cp vs ncp", "min_adjusted_p": 1e-6,
        "runs": {"cp": {"trustworthy": False}, "ncp": {"trustworthy": True}, "random": {"trustworthy": True},
                 "auto": {"trustworthy": True}},
        "pairs": {"cp vs ncp": {"failed": True, "both_trustworthy": False, "min_adjusted_p": 1e-6},
                  "ncp vs auto": {"failed": False, "both_trustworthy": True, "min_adjusted_p": 0.4}}})
    path = write_reliability_report(tmp_path / "no_sbc", f"{first.root},{second.root}", tmp_path / "out", power_sims=5)
    text = path.read_text()
    assert "| prior | 2 | 3 | 2 | 1 | 0 |" in text  # programs 1 and 2, three checks, from both folders
    assert "| cp/nuts | 2 | 1 | 0 | 1 | 0 |" in text and "| auto/nuts | 1 | 1 | 1 | 0 | 0 |" in text
    assert "| cp vs ncp | 1 | 1 | 0 | 0 |" in text and "| ncp vs auto | 1 | 0 | 1 | 0 |" in text
    assert "cp 0 of 1, ncp 1 of 1, random 1 of 1, auto 1 of 1" in text
    assert "abc1234 autoreparam fuzz --out b" in text
    assert f"--fuzz {first.root},{second.root} --out ." in text  # the header names the folders it read
    # The same check in two folders would count twice.
    _prior(ResultStore(tmp_path / "c"), 2, "cp/nuts", failed=False, trusted=True)
    with pytest.raises(ArgumentError, match="both hold the check prior__0__000002__cp-nuts"):
        write_reliability_report(tmp_path / "no_sbc", [first.root, tmp_path / "c"], tmp_path / "out2", power_sims=5)
    # Checks at another target acceptance are another experiment.
    _prior(ResultStore(tmp_path / "d"), 3, "cp/nuts", failed=False, trusted=True, target_accept=0.95)
    with pytest.raises(ArgumentError, match="different settings"):
        write_reliability_report(tmp_path / "no_sbc", [first.root, tmp_path / "d"], tmp_path / "out3", power_sims=5)
    # A named folder without results (a typo) would drop out while the header still named it.
    with pytest.raises(ArgumentError, match="no fuzzing results in .*typo"):
        write_reliability_report(tmp_path / "no_sbc", [first.root, tmp_path / "typo"], tmp_path / "out4", power_sims=5)
    # Invariance checks of three runs (written before auto joined) and of four would be added together.
    ResultStore(tmp_path / "e").save("invariance__0__000009", {
        "kind": "invariance", "program": 9, "family": "funnel", "status": "ok", "failed": False, "trustworthy": True,
        "runs": {}, "pairs": {}})
    with pytest.raises(ArgumentError, match="invariance checks of the runs cp,ncp,random,auto and .* of cp,ncp,random"):
        write_reliability_report(tmp_path / "no_sbc", [second.root, tmp_path / "e"], tmp_path / "out5", power_sims=5)


def _invariance_record(program, failed, settings=None):
    return {"kind": "invariance", "program": program, "family": "funnel", "status": "ok", "failed": failed,
            "trustworthy": True, "pairs": {}, "runs": {},
            "settings": settings or {"num_chains": 4, "num_warmup": 500, "num_samples": 1000, "vi": "fast",
                                     "target_accept": None}}


def test_a_rerun_check_replaces_its_numbers_and_the_others_are_carried_one_by_one(tmp_path):
    """`--carry-fuzz`: the identity check's numbers come from the committed summary, the invariance
    check's from the fresh records, and the document says which is which."""
    (tmp_path / "old_identity" / "cells").mkdir(parents=True)
    (tmp_path / "old_identity" / "commands.txt").write_text(
        "2026-11-01T00:00Z abc1234 autoreparam fuzz --out OLD_IDENTITY --n 2 --mcmc-n 0\n")
    identity = ResultStore(tmp_path / "old_identity")
    identity.save("identity__0__000000", {"kind": "identity", "results": [
        {"status": "ok", "program": 0, "family": "funnel", "failed": ["identity"], "max_relative_error": {"identity": 0.1}}]})
    old_invariance = ResultStore(tmp_path / "old_invariance")
    old_invariance.save("invariance__0__000001", _invariance_record(1, True))
    old_invariance.save("invariance__0__000002", _invariance_record(2, True))
    out = tmp_path / "out"
    folders = [str(tmp_path / "old_identity"), str(tmp_path / "old_invariance")]
    write_reliability_report(tmp_path / "no_sbc", ",".join(folders), out, power_sims=5)
    # Rerun: the invariance check alone, at new code, in a new folder; the identity records are gone.
    fresh = ResultStore(tmp_path / "fresh")
    for program in (1, 2, 3):
        fresh.save(f"invariance__0__{program:06d}", _invariance_record(program, program == 3))
    text = write_reliability_report(tmp_path / "no_sbc", tmp_path / "fresh", out, power_sims=5,
                                    carry_fuzz=[folders[0]]).read_text()
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["fuzz"]["counts"]["identity"]["failed"] == 1  # carried
    assert summary["fuzz"]["counts"]["invariance"]["programs"] == 3  # fresh, not the old 2
    assert summary["fuzz"]["counts"]["invariance"]["failed"] == 1
    assert summary["fuzz"]["max_relative_error"] == {"identity": 0.1}
    assert [f["invariant"] for f in summary["fuzz"]["failures"]] == ["identity", "invariance"]
    assert summary["carried_over"] == ["fuzz:identity"]
    assert "The fuzzing check identity below is carried over from" in text
    assert f"--fuzz {tmp_path / 'fresh'} --carry-fuzz {folders[0]} --out ." in text
    assert "--out OLD_IDENTITY" not in text  # the command names another folder than the carried one
    assert render_reliability_from_summary(out).read_text() == text
    # Folders the summary did not read, or a rerun holding every check, are refused with the reason.
    with pytest.raises(ArgumentError, match="was not read from that folder"):
        write_reliability_report(tmp_path / "no_sbc", tmp_path / "fresh", out, carry_fuzz=[str(tmp_path / "elsewhere")])
    other = ResultStore(tmp_path / "other_settings")
    other.save("invariance__0__000001", _invariance_record(1, False, {"num_chains": 2, "num_warmup": 500,
                                                                      "num_samples": 1000, "vi": "fast",
                                                                      "target_accept": None}))
    with pytest.raises(ArgumentError, match="carried checks ran with .* the fresh ones with"):
        write_reliability_report(tmp_path / "no_sbc", tmp_path / "other_settings", out, carry_fuzz=[folders[0]])


def test_invariance_checks_at_own_seeds_are_reported_beside_those_at_one_seed_and_carry_them(tmp_path):
    """A pass planned since 2026-12-02 (each run at its own seed) is its own check, `invariance_own_seeds`:
    rerun alone, it leaves the committed one-seed check's numbers and tables carried, not replaced."""
    def record(program, failed, own):
        pairs = {"cp vs ncp": {"failed": failed, "both_trustworthy": True, "min_adjusted_p": 1e-6 if failed else 0.5}}
        return {**_invariance_record(program, failed), "trustworthy": failed,
                "runs": {"cp": {"trustworthy": True}, "ncp": {"trustworthy": True}}, "pairs": pairs,
                **({"run_seeds": "own"} if own else {})}

    shared = ResultStore(tmp_path / "shared")
    for program in (1, 2):
        shared.save(f"invariance__0__{program:06d}", record(program, program == 2, own=False))
    out = tmp_path / "out"
    write_reliability_report(tmp_path / "no_sbc", tmp_path / "shared", out, power_sims=5)
    fresh = ResultStore(tmp_path / "own")
    for program in (1, 2, 3):
        fresh.save(f"invariance__0__{program:06d}", record(program, False, own=True))
    text = write_reliability_report(tmp_path / "no_sbc", tmp_path / "own", out, power_sims=5,
                                    carry_fuzz=[str(tmp_path / "shared")]).read_text()
    counts = json.loads((out / SUMMARY).read_text())["fuzz"]["counts"]
    assert counts["invariance"]["programs"] == 2 and counts["invariance"]["failed"] == 1  # carried
    assert counts["invariance_own_seeds"]["programs"] == 3 and counts["invariance_own_seeds"]["failed"] == 0
    assert "| invariance | 2 | 2 | 1 | 1 | 0 | funnel |" in text
    assert "| invariance_own_seeds | 3 | 3 | 0 | 0 | 0 | funnel |" in text
    one_seed = text.index("Check `invariance` (every run at the program's seed)")
    own_seeds = text.index("Check `invariance_own_seeds` (each run at a seed of its own)")
    assert "| cp vs ncp | 2 | 1 | 2 | 1 |" in text[one_seed:own_seeds]  # the carried table
    assert "| cp vs ncp | 3 | 0 | 3 | 0 |" in text[own_seeds:]
    assert render_reliability_from_summary(out).read_text() == text


def test_a_carried_check_keeps_the_commands_written_with_an_absolute_out_folder():
    """A pass run with ``--out /abs/path/results/x`` made the summary's folder ``results/x``; carrying
    that check kept only the commands whose ``--out`` was the same string (one was lost in use)."""
    from autoreparam.reliability.carry import made_in

    absolute = "2026-12-03T06:16Z 26cd909 autoreparam fuzz --out /work/main/results/inv_own_seeds --n 0"
    relative = "2026-12-03T05:31Z 4cede86 autoreparam fuzz --out results/inv_own_seeds --n 0"
    assert made_in(absolute, ["results/inv_own_seeds"]) and made_in(relative, ["results/inv_own_seeds"])
    assert not made_in(absolute, ["results/own_seeds"])  # a suffix of a name is not the folder
    assert not made_in(absolute, ["results/inv"])
    assert not made_in("autoreparam fuzz --n 0", ["results/inv_own_seeds"])
    assert made_in("x --out /a/results/inv_own_seeds/ --n 0", ["/a/results/inv_own_seeds"])
