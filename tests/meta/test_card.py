"""The model card says the ensemble's members differ only in the seed only when that is true."""

from autoreparam.meta_eval.card import _others_differ


def test_the_card_checks_that_members_differ_only_in_the_seed():
    same = [{"config": {"seed": s, "hidden": 64}} for s in (0, 1, 2)]
    assert "only in the seed" in _others_differ(same)
    other = same[:2] + [{"config": {"seed": 2, "hidden": 32}}]
    assert "differ, see" in _others_differ(other)
    assert _others_differ(same[:1]) == ""
