"""auto's redraws: at a higher acceptance, in CP or NCP (divergent or short draws), and the run-on, on
stubbed runs (``auto.redraw``, ``auto.run_on``); the end-to-end cases are in test_auto.py."""

import numpy as np
import pytest

def _stub_redraws(monkeypatch, redrawn_divergences, r_hats=None, target_accept=0.8):
    """``redraw_if_divergent``'s run, stubbed: every segment gives draws with ``redrawn_divergences``
    divergent transitions; R-hat 1 for any draws, or ``r_hats`` in turn."""
    from types import SimpleNamespace

    import autoreparam.auto.redraw as redraw
    from autoreparam.mcmc.segments import SegmentDraws

    def draws(divergent):
        flags = np.zeros((4, 1000), bool)
        flags.flat[:divergent] = True
        return SegmentDraws(np.zeros((4, 1000, 1), np.float32), np.ones((4, 1000), np.int32),
                            np.ones((4, 1000), np.float32), flags)

    calls = []

    def segments(phase, param, chains, codes, target=None):
        calls.append(target)
        return "redrawn chains", draws(redrawn_divergences), None

    r_hats = iter(r_hats or [])
    monkeypatch.setattr(redraw, "shortfall", lambda run, d: (1.0, next(r_hats, 1.0), None))
    run = SimpleNamespace(notes=[], segments=segments, sampler=SimpleNamespace(restart_adaptation=lambda c: c),
                          config=SimpleNamespace(target_accept=target_accept), branch=lambda c: c)
    return run, draws, calls


def test_redraws_never_lower_the_users_acceptance(monkeypatch):
    """A user's target_accept=0.99 was re-adapted towards 0.95 at a divergence (the ladder compared
    against the draws' target, None when the user's own was in force); now only a higher one is tried."""
    from autoreparam.auto.redraw import redraw_if_divergent

    run, draws, calls = _stub_redraws(monkeypatch, 0, target_accept=0.99)
    _, kept, target = redraw_if_divergent(run, None, "chains", draws(1), None, 1000)
    assert calls == [] and int(kept.divergent.sum()) == 1 and target is None and run.notes == []
    run, draws, calls = _stub_redraws(monkeypatch, 0, target_accept=0.9)
    _, kept, target = redraw_if_divergent(run, None, "chains", draws(1), None, 1000)
    assert calls[-1] == 0.95 and target == 0.95 and int(kept.divergent.sum()) == 0


def test_draws_with_a_single_divergence_are_drawn_again(monkeypatch):
    """Any divergence flags the result, so one in 4,000 transitions is drawn again; before, only 0.5%
    was (the invariance fuzzing found 36 programs flagged for 1 to 18 divergences)."""
    from autoreparam.auto.redraw import redraw_if_divergent

    run, draws, calls = _stub_redraws(monkeypatch, 0)
    _, kept, target = redraw_if_divergent(run, None, "chains", draws(1), None, 1000)
    assert calls == [0.95, 0.95] and not kept.divergent.any() and target == 0.95  # retarget, then the draws
    assert run.notes == ["1 of the draws' 4000 transitions diverged: the step size adapted again towards "
                         "acceptance 0.95 and the draws were drawn again"]
    calls.clear()
    redraw_if_divergent(run, None, "chains", draws(0), None, 1000)
    redraw_if_divergent(run, None, "chains", draws(3), 0.99, 1000)  # no higher target left
    assert calls == []


def test_redrawn_draws_that_are_worse_are_not_kept(monkeypatch):
    """An SBC replication of the scan random walk: the retarget to 0.99 left a chain stuck, and 1
    divergence at R-hat 1.03 became 410 at R-hat 1.54."""
    from autoreparam.auto.redraw import redraw_if_divergent

    run, draws, calls = _stub_redraws(monkeypatch, 410)
    chains, kept, _ = redraw_if_divergent(run, None, "chains", draws(1), 0.95, 1000)
    assert calls == [0.99, 0.99] and chains == "chains" and int(kept.divergent.sum()) == 1
    assert run.notes[-1] == ("the redrawn draws were no better (410 divergent, R-hat 1.000, against R-hat 1.000), so "
                             "the earlier draws were kept")


@pytest.mark.parametrize("before, after, kept", [(1.034, 1.543, "earlier"), (1.005, 1.02, "earlier"),
                                                 (1.024, 1.035, "redrawn"), (1.005, 1.009, "redrawn")])
def test_redrawn_draws_with_fewer_divergences_are_kept_unless_their_chains_disagree(monkeypatch, before, after, kept):
    """Chains that agree (R-hat < 1.01) are never traded for chains that do not; between two that do
    not, up to the pilot's 1.05 is noise (an SBC replication went from 53 divergences at R-hat 1.024 to
    22 at 1.035)."""
    from autoreparam.auto.redraw import redraw_if_divergent

    run, draws, _ = _stub_redraws(monkeypatch, 0, r_hats=[before, after])
    _, draws_kept, _ = redraw_if_divergent(run, None, "chains", draws(5), 0.95, 1000)
    assert int(draws_kept.divergent.sum()) == {"earlier": 5, "redrawn": 0}[kept]


def _stub_fixed_fallback(monkeypatch, divergent_in, r_hats=(), reaches=(), costly_in=(), target_accept=0.8,
                         costly_steps=11, readapt_steps=1):
    """``fixed_if_divergent``'s run, stubbed: a plan with one site of two elements; re-adaptation
    segments are clean, and the draws of the parameterisations named in ``divergent_in`` (or
    ``costly_in``: 11 gradients per transition against the draws' 1) are asked to stop after 50
    transitions. R-hat 1 and ESS at the line for any draws, or ``r_hats`` and ``reaches`` in turn: the
    kept draws' first, read once, then each clean candidate's."""
    from types import SimpleNamespace

    import autoreparam.auto.redraw as redraw
    from autoreparam.mcmc.segments import SegmentDraws

    plan = SimpleNamespace(sites=(SimpleNamespace(name="theta", shape=(2,)),), names=("theta",))

    def draws(divergent, length=1000):
        flags = np.zeros((4, length), bool)
        flags.flat[:divergent] = True
        return SegmentDraws(np.zeros((4, length, 1), np.float32), np.ones((4, length), np.int32),
                            np.ones((4, length), np.float32), flags)

    tried, calls = [], []

    def segments(phase, param, chains, codes, source=None, target=None, stop=None, fresh_metric=False):
        name = "cp" if float(np.min(param.lam["theta"])) == 1.0 else "ncp"
        calls.append((phase, name, chains, len(codes), source is not None, target, fresh_metric))
        if fresh_metric:  # the re-adaptation, at ``readapt_steps`` gradients per transition
            return f"{name} adapted", draws(0, 50), stop(np.full((4, 50), readapt_steps), 0, None)
        tried.append(name)
        if name in divergent_in:
            return f"{name} drawn", draws(1, 50), stop(np.ones((4, 50)), 1, None)
        if name in costly_in:
            return f"{name} drawn", draws(0, 50), stop(np.full((4, 50), costly_steps), 0, None)
        assert stop(np.ones((4, 1000)), 0, None) is None
        return f"{name} drawn", draws(0), None

    r_hats, reaches = iter(r_hats), iter(reaches)
    monkeypatch.setattr(redraw, "shortfall", lambda run, d: (next(reaches, 1.0), next(r_hats, 1.0), None))
    run = SimpleNamespace(notes=[], segments=segments, coords=SimpleNamespace(plan=plan, dim=2),
                          sampler=SimpleNamespace(restart_adaptation=lambda c, imm=None: c),
                          config=SimpleNamespace(target_accept=target_accept), branch=lambda c: c)
    return run, draws, tried, plan, calls


@pytest.mark.parametrize("lam, divergent_in, order, chosen", [
    (0.7, (), ["cp"], "cp"),  # nearer centred: CP first, and clean
    (0.3, (), ["ncp"], "ncp"),
    (0.7, ("cp",), ["cp", "ncp"], "ncp"),  # CP abandoned at its first divergence
    (0.7, ("cp", "ncp"), ["cp", "ncp"], "rule"),  # every parameterisation diverges (German credit)
])
def test_draws_still_divergent_at_the_top_of_the_ladder_are_drawn_in_cp_or_ncp(monkeypatch, lam, divergent_in,
                                                                               order, chosen):
    """Generated programs 44, 62, 80, 124, 250, 393 and 422 kept 1 to 26 divergences in the rule's
    lambda after the acceptance ladder, while a fixed centring's run of the same program was trusted."""
    from autoreparam.auto.redraw import fixed_if_divergent
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, calls = _stub_fixed_fallback(monkeypatch, divergent_in)
    rule = Parameterisation.tied(plan, lam)
    label, param, chains, kept, target = fixed_if_divergent(run, "rule", rule, "rule chains", draws(3), None, 1000,
                                                            {"rule"})
    assert tried == order and label == chosen
    # Each candidate: re-adapted from the rule's chains (moved from its lambda, a fresh metric), then
    # drawn from the adapted chains, both at the ladder's top acceptance whatever the draws' own.
    for name in order:
        assert ("sampling", name, "rule chains", 150, True, 0.99, True) in calls
        assert ("sampling", name, f"{name} adapted", 1000, False, 0.99, False) in calls
    if chosen == "rule":
        assert param is rule and chains == "rule chains" and int(kept.divergent.sum()) == 3 and target is None
        assert all("abandoned" in n for n in run.notes)
    else:
        assert chains == f"{chosen} drawn" and not kept.divergent.any() and target == 0.99
        assert run.notes[-1].endswith(f"drawn again in {chosen.upper()} at acceptance 0.99 (none diverged, R-hat "
                                      "1.000, 100% of the effective draws asked)")


def test_a_re_adaptation_that_costs_more_than_its_draws_may_is_abandoned(monkeypatch):
    """Uncapped, CP's re-adaptation spent 197,000 gradients where the kept draws cost 3,100 (found in
    review): it may spend what the draws may (``FIXED_COST`` times the kept draws' per transition, for
    every draw), no more."""
    from autoreparam.auto.redraw import FIXED_COST, fixed_if_divergent
    from autoreparam.reparam.parameterisation import Parameterisation

    # The kept draws cost 1 gradient per transition: 50 transitions at 1000 / 50 * FIXED_COST + 1 each
    # pass the budget of 1000 draws.
    steps = 1000 / 50 * FIXED_COST + 1
    run, draws, tried, plan, calls = _stub_fixed_fallback(monkeypatch, (), readapt_steps=steps)
    rule = Parameterisation.tied(plan, 0.7)
    label, param, chains, kept, target = fixed_if_divergent(run, "rule", rule, "rule chains", draws(3), None, 1000,
                                                            {"rule"})
    assert tried == [] and label == "rule" and param is rule and int(kept.divergent.sum()) == 3
    assert len(run.notes) == 2 and all("re-adaptation, tried next at acceptance 0.99, cost too much within 50 "
                                       "transitions and was abandoned" in note for note in run.notes)
    run, draws, tried, plan, calls = _stub_fixed_fallback(monkeypatch, (), readapt_steps=steps - 2)
    assert fixed_if_divergent(run, "rule", rule, "rule chains", draws(3), None, 1000, {"rule"})[0] == "cp"


@pytest.mark.parametrize("reaches, r_hats, order, chosen", [
    ((0.6, 0.3, 1.2), (1.0, 1.0, 1.0), ["cp", "ncp"], "ncp"),  # CP (nearer) as short, NCP passes: program 485
    ((0.6, 1.5), (1.0, 1.0), ["cp"], "cp"),
    ((0.6, 0.9, 0.8), (1.0, 1.0, 1.0), ["cp", "ncp"], "rule"),  # neither passes: the earlier draws stay
    ((1.3, 1.4, 1.4), (1.02, 1.02, 1.03), ["cp", "ncp"], "rule"),  # only R-hat short, and both candidates' too
])
def test_clean_draws_still_short_after_the_run_on_are_drawn_in_cp_or_ncp_if_those_pass(monkeypatch, reaches, r_hats,
                                                                                         order, chosen):
    from autoreparam.auto.redraw import fixed_if_short
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, calls = _stub_fixed_fallback(monkeypatch, (), r_hats=r_hats, reaches=reaches)
    rule = Parameterisation.tied(plan, 0.55)
    label, param, chains, kept, target = fixed_if_short(run, "rule", rule, "rule chains", draws(0), None, 1000,
                                                        {"rule"}, reaches[0], r_hats[0])
    assert tried == order and label == chosen and target is None
    for name in order:  # re-adapted and drawn at the acceptance the draws ran at (here the default)
        assert ("sampling", name, "rule chains", 150, True, None, True) in calls
    if chosen == "rule":
        assert param is rule and chains == "rule chains" and "earlier draws were kept" in run.notes[-1]
    else:
        assert chains == f"{chosen} drawn" and run.notes[-1].startswith("the draws had 60% of the effective draws")


def test_the_cp_or_ncp_fallback_keeps_a_users_higher_acceptance(monkeypatch):
    from autoreparam.auto.redraw import fixed_if_divergent
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, calls = _stub_fixed_fallback(monkeypatch, (), target_accept=0.995)
    rule = Parameterisation.tied(plan, 0.7)
    assert fixed_if_divergent(run, "rule", rule, "rule chains", draws(3), None, 1000, {"rule"})[4] == 0.995
    assert ("sampling", "cp", "rule chains", 150, True, 0.995, True) in calls


@pytest.mark.parametrize("transitions_per_draw, abandoned", [(1, False), (2, True)])
def test_the_short_fallbacks_cost_cap_is_per_transition(monkeypatch, transitions_per_draw, abandoned):
    """After the run-on each kept draw carries two transitions' gradients (``every_second``): the cap
    of ``FIXED_COST`` times the kept draws' cost is per transition, so a candidate at 6 gradients per
    transition against the draws' 2 per kept pair (1 per transition) is abandoned, and against 2 per
    single transition is not."""
    from autoreparam.auto.redraw import fixed_if_short
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, _ = _stub_fixed_fallback(monkeypatch, (), reaches=(0.6, 1.2), costly_in=("cp",),
                                                      costly_steps=12)
    kept = draws(0)
    kept = kept._replace(steps=np.full_like(kept.steps, 2))
    label = fixed_if_short(run, "rule", Parameterisation.tied(plan, 0.7), "rule chains", kept, None, 1000,
                           {"rule", "ncp"}, 0.6, 1.0, transitions_per_draw)[0]
    assert tried == ["cp"] and (label == "rule") == abandoned


def test_the_short_fallback_leaves_draws_that_pass_or_diverge(monkeypatch):
    from autoreparam.auto.redraw import fixed_if_short
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, _ = _stub_fixed_fallback(monkeypatch, ())
    rule = Parameterisation.tied(plan, 0.55)
    assert fixed_if_short(run, "rule", rule, "c", draws(0), None, 1000, {"rule"}, 1.0, 1.01)[0] == "rule"
    assert fixed_if_short(run, "rule", rule, "c", draws(2), None, 1000, {"rule"}, 0.6, 1.0)[0] == "rule"
    assert fixed_if_short(run, "rule", rule, "c", draws(0), None, 1000, {"rule", "cp", "ncp"}, 0.6, 1.0)[0] == "rule"
    assert tried == [] and run.notes == []


def test_the_fixed_fallback_skips_candidates_already_tried_and_clean_draws(monkeypatch):
    from autoreparam.auto.redraw import fixed_if_divergent
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, _ = _stub_fixed_fallback(monkeypatch, ())
    rule = Parameterisation.tied(plan, 0.7)
    assert fixed_if_divergent(run, "rule", rule, "c", draws(0), 0.99, 1000, {"rule"})[0] == "rule"
    assert fixed_if_divergent(run, "rule", rule, "c", draws(2), 0.99, 1000, {"rule", "cp", "ncp"})[0] == "rule"
    centred = Parameterisation.centred(plan)
    assert fixed_if_divergent(run, "cp", centred, "c", draws(2), 0.99, 1000, {"rule", "cp", "ncp"})[0] == "cp"
    assert tried == []
    assert fixed_if_divergent(run, "cp", centred, "c", draws(2), 0.99, 1000, {"rule", "cp"})[0] == "ncp"
    assert tried == ["ncp"]


@pytest.mark.parametrize("why, stub", [
    ("R-hat", dict(r_hats=[1.005, 1.02, 1.03])),  # clean, but chains that disagree
    ("ESS", dict(reaches=[0.9, 0.3, 0.4])),  # clean, but out of the run-on's reach
    ("cost", dict(costly_in=("cp", "ncp"))),  # more than ten times the draws' gradients per transition
])
def test_fixed_draws_that_are_clean_but_worse_are_not_kept(monkeypatch, why, stub):
    from autoreparam.auto.redraw import fixed_if_divergent
    from autoreparam.reparam.parameterisation import Parameterisation

    run, draws, tried, plan, _ = _stub_fixed_fallback(monkeypatch, (), **stub)
    label, _, chains, kept, _ = fixed_if_divergent(run, "rule", Parameterisation.tied(plan, 0.7), "c", draws(2), 0.99,
                                                   1000, {"rule"})
    assert label == "rule" and chains == "c" and int(kept.divergent.sum()) == 2 and tried == ["cp", "ncp"]
    assert ("cost too much" in run.notes[-1]) == (why == "cost")


def test_every_second_draw_keeps_every_transitions_gradients_and_divergences():
    from autoreparam.auto.run_on import every_second
    from autoreparam.mcmc.segments import SegmentDraws

    draws = SegmentDraws(np.arange(8, dtype=np.float32).reshape(1, 8, 1), np.arange(1, 9).reshape(1, 8),
                         np.linspace(0.1, 0.8, 8).reshape(1, 8), np.array([[False, True] + [False] * 6]))
    kept = every_second(draws)
    assert kept.draws.ravel().tolist() == [1, 3, 5, 7] and kept.steps.ravel().tolist() == [3, 7, 11, 15]
    assert kept.divergent.ravel().tolist() == [True, False, False, False] and kept.steps.sum() == draws.steps.sum()
    assert np.allclose(kept.accept.ravel(), [0.15, 0.35, 0.55, 0.75])
    assert every_second(SegmentDraws(*(a[:, :7] for a in draws))).steps.shape == (1, 3)  # whole pairs only


@pytest.mark.parametrize("reach, r_hat, divergent, runs_on", [
    (0.8, 1.0, 0, True), (1.2, 1.013, 0, True),  # a little short: ESS, or R-hat
    (1.2, 1.005, 0, False), (0.3, 1.0, 0, False),  # trusted already; too far to reach by doubling
    (0.8, 1.2, 0, False), (0.8, 1.0, 1, False),  # chains that plainly disagree; divergent draws
])
def test_clean_draws_a_little_short_run_on(monkeypatch, reach, r_hat, divergent, runs_on):
    from types import SimpleNamespace

    import autoreparam.auto.run_on as run_on
    from autoreparam.mcmc.segments import SegmentDraws

    flags = np.zeros((4, 100), bool)
    flags.flat[:divergent] = True
    draws = SegmentDraws(np.zeros((4, 100, 1), np.float32), np.ones((4, 100), np.int32), np.ones((4, 100)), flags)
    readings = iter([(reach, r_hat, "before"), (1.1, 1.004, "after")])
    monkeypatch.setattr(run_on, "shortfall", lambda run, d: next(readings))
    ran = []

    def segments(phase, param, chains, codes, target=None):
        ran.append((phase, len(codes), target))
        return "longer chains", draws._replace(divergent=np.zeros((4, 100), bool)), None

    run = SimpleNamespace(notes=[], segments=segments, branch=lambda c: c)
    chains, kept, standard = run_on.run_on_if_short(run, None, "chains", draws, 0.95, 100)
    assert (ran == [("sampling", 100, 0.95)]) == runs_on
    assert chains == ("longer chains" if runs_on else "chains") and kept.draws.shape == (4, 100, 1)
    # The diagnostics of the draws kept, for the result (None where divergent draws needed none).
    assert standard == ("after" if runs_on else None if divergent else "before")
    if runs_on:
        assert kept.steps.sum() == 800 and "every second draw was kept (110%, R-hat 1.004)" in run.notes[-1]


def test_a_run_on_that_is_no_better_is_not_kept(monkeypatch):
    from types import SimpleNamespace

    import autoreparam.auto.run_on as run_on
    from autoreparam.mcmc.segments import SegmentDraws

    draws = SegmentDraws(np.zeros((4, 100, 1), np.float32), np.ones((4, 100), np.int32), np.ones((4, 100)),
                         np.zeros((4, 100), bool))
    # fewer effective draws; R-hat over the line; R-hat short and no better; ESS fallen below the line
    for before, later in [((0.8, 1.005), (0.7, 1.0)), ((0.8, 1.005), (1.1, 1.03)), ((1.2, 1.02), (1.2, 1.03)),
                          ((1.2, 1.02), (0.9, 1.005))]:
        readings = iter([before + ("before",), later + ("after",)])
        monkeypatch.setattr(run_on, "shortfall", lambda run, d: next(readings))
        run = SimpleNamespace(notes=[], segments=lambda *a, **k: ("longer chains", draws, None), branch=lambda c: c)
        chains, kept, standard = run_on.run_on_if_short(run, None, "chains", draws, None, 100)
        assert chains == "chains" and kept is draws and standard == "before"
        assert "so the earlier draws were kept" in run.notes[-1]


def test_one_chain_has_no_r_hat_and_its_redraws_can_be_kept():
    """R-hat is NaN with one chain (``diagnostics.standard``): the redraws' keep rule must not read
    NaN as chains that disagree, or every redraw of a one-chain run is paid for and thrown away."""
    from autoreparam.auto.redraw import _agree

    assert _agree(np.nan, np.nan) and _agree(1.0, np.nan) and not _agree(1.005, 1.02)


def test_draws_that_overflowed_are_refused_with_causes_and_advice_not_bare():
    """Fuzz program 955 (``z3 ~ N(0, exp(z2))`` with no data) overflows float32 in 1.3% of its prior draws; a
    chain that went there stopped ``auto`` inside the run-on's diagnostics with "draws contain NaN or
    infinite values" alone. The refusal now says why and what to do, as the pilots' did."""
    from types import SimpleNamespace

    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from autoreparam.auto.run_on import shortfall
    from autoreparam.coordinates import Coordinates
    from autoreparam.errors import SiteError
    from autoreparam.mcmc.segments import SegmentDraws
    from autoreparam.reparam.selection import select_sites
    from autoreparam.reparam.sites import analyse_model

    def funnel():
        z = numpyro.sample("z", dist.Normal(0.0, 1.0))
        numpyro.sample("x", dist.Normal(0.0, jnp.exp(z)))

    coords = Coordinates(funnel, (), {}, select_sites(analyse_model(funnel)))
    flat = np.random.default_rng(0).normal(size=(4, 100, 2)).astype(np.float32)
    flat[2, 7, coords.original_element_names().index("x")] = np.inf
    draws = SegmentDraws(flat, np.ones((4, 100), np.int32), np.ones((4, 100), np.float32), np.zeros((4, 100), bool))
    run = SimpleNamespace(coords=coords, diagnosed=lambda fn, *args: fn(*args))
    with pytest.raises(SiteError, match=r"site 'x': 1 of its 400 drawn values are NaN or infinite.*overflow the float"):
        shortfall(run, draws)
