"""The model card says the ensemble's members differ only in the seed only when that is true."""

from autoreparam.meta_eval.card import _others_differ


def test_the_card_checks_that_members_differ_only_in_the_seed():
    same = [{"config": {"seed": s, "hidden": 64}} for s in (0, 1, 2)]
    assert "only in the seed" in _others_differ(same)
    other = same[:2] + [{"config": {"seed": 2, "hidden": 32}}]
    assert "differ, see" in _others_differ(other)
    assert _others_differ(same[:1]) == ""


def test_the_default_networks_card_is_what_its_committed_results_give(tmp_path, monkeypatch):
    # The committed card must not disagree with the committed results it reads: META.md's evaluation of
    # the default network, and the lighter comparison that made it the default.
    from pathlib import Path

    from autoreparam.meta.predict import CARDS, SHIPPED, shipped_stem
    from autoreparam.meta_eval.card import write_model_card

    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the card names the results folder from the root
    stem = shipped_stem(SHIPPED)
    written = write_model_card(stem, Path("benchmarks/results/meta_eval"), tmp_path / "card.md",
                               light_results=Path("benchmarks/results/meta_fit_points/indexed_synthetic_set"))
    assert written.read_text() == (stem.parent / CARDS[SHIPPED]).read_text()
    text = written.read_text()
    assert "| German credit: share of VIP's ELBO gain | 84% (11.3 of 13.4 nat) |" in text
    assert "(closer on 2 of 7) | 0.018 to 0.071 |" in text
    assert "| German credit: >= 70% of VIP's ELBO gain over best fixed |" in text
