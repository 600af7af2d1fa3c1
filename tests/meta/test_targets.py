"""META.md's verdicts on a share of the zoo when some models were not run."""

from autoreparam.meta_eval.targets import zoo_share_verdict


def test_untimed_models_are_bounded_not_ignored():
    # 10 of 11 timed and all 10 faster: 10/11 >= 80% whatever the last one does.
    assert zoo_share_verdict(10, 10, 11, 0.8)["met"] is True
    # 2 of 11 timed, both faster: the other 9 decide.
    assert zoo_share_verdict(2, 2, 11, 0.8)["met"] is None
    # 6 of 9 timed faster, 2 untimed: at best 8/11 = 73%, missed whatever they do.
    assert zoo_share_verdict(6, 9, 11, 0.8)["met"] is False
    # Everything timed: the plain share.
    assert zoo_share_verdict(9, 11, 11, 0.8)["met"] is True and zoo_share_verdict(8, 11, 11, 0.8)["met"] is False
