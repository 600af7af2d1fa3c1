"""The oracle never picks an L at which chains disagree, and the pooled score sees what the paper's cannot."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from autoreparam.mcmc.oracle import oracle_leapfrog, oracle_over_families
from autoreparam.sampling import efficiency_score, leapfrog_families


def _ar1(rng, chains, draws, rho, means):
    """AR(1) chains with unit marginal variance around per-chain means."""
    x = np.empty((chains, draws))
    x[:, 0] = rng.standard_normal(chains)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(chains)
    return x + np.asarray(means)[:, None]


class _Coords:
    """Just enough of ``Coordinates`` for the score: draws are already one scalar site."""

    without_density: dict = {}  # every element has a density

    def split_original(self, flat):
        return {"z": np.asarray(flat)[..., 0]}


def _result(draws):
    return SimpleNamespace(draws=draws[..., None], grad_evals=np.full(draws.shape[0], float(draws.shape[1])))


def test_pooled_score_sees_chains_that_disagree_and_the_paper_metric_does_not():
    rng = np.random.default_rng(0)
    # Each chain mixes well around its own mean, and the means are far apart: a stuck sampler.
    stuck = _result(_ar1(rng, 4, 1000, 0.2, [-3.0, -1.0, 1.0, 3.0]))
    mixing = _result(_ar1(rng, 4, 1000, 0.5, [0.0] * 4))
    paper, pooled = efficiency_score(_Coords(), "paper"), efficiency_score(_Coords(), "pooled")
    paper_stuck, _, rhat_stuck = paper(stuck)
    paper_mixing, _, rhat_mixing = paper(mixing)
    assert paper_stuck > paper_mixing  # the per-chain metric prefers the stuck chains
    assert pooled(stuck)[0] < 0.05 * pooled(mixing)[0]  # pooled ESS does not
    assert rhat_stuck > 1.5 and rhat_mixing < 1.01


def test_a_candidate_whose_chains_disagree_is_never_chosen_while_another_agrees():
    table = {1: (50.0, 1.2), 2: (20.0, 1.001), 4: (30.0, 1.005), 8: (40.0, 1.3)}
    result = oracle_leapfrog(lambda L: L, lambda L: (table[L][0], 0.0, table[L][1]), (1, 2, 4, 8))
    assert result.best_leapfrog == 4 and result.agreeing
    assert "chains disagree" in result.table()


def test_when_no_candidate_agrees_the_best_score_wins_and_says_so():
    table = {1: (5.0, 1.5), 2: (9.0, 1.2)}
    result = oracle_leapfrog(lambda L: L, lambda L: (table[L][0], 0.0, table[L][1]), (1, 2))
    assert result.best_leapfrog == 2 and not result.agreeing


def test_patience_counts_drops_only_after_chains_first_agree():
    # Short trajectories do not mix (R-hat high); the search must reach the L that does.
    table = {1: (9.0, 1.4), 2: (8.0, 1.3), 4: (7.0, 1.2), 8: (6.0, 1.001), 16: (3.0, 1.0), 32: (2.0, 1.0)}
    seen = []
    result = oracle_leapfrog(lambda L: seen.append(L) or L, lambda L: (table[L][0], 0.0, table[L][1]),
                             tuple(table), patience=2)
    assert result.best_leapfrog == 8
    assert seen == [1, 2, 4, 8, 16, 32]


def test_ihmc_searches_equal_and_lopsided_leapfrog_counts():
    families = leapfrog_families((1, 2, 4), num_spaces=2)
    assert families == [[(1, 1), (2, 2), (4, 4)], [(2, 1), (4, 1)], [(1, 2), (1, 4)]]
    assert leapfrog_families((1, 2, 4), num_spaces=1) == [[1, 2, 4]]
    scores = {(1, 1): 1.0, (2, 2): 2.0, (4, 4): 1.5, (2, 1): 0.5, (4, 1): 0.4, (1, 2): 3.0, (1, 4): 5.0}
    result = oracle_over_families(lambda L: L, lambda L: (scores[L], math.nan), families, patience=2)
    assert result.best_leapfrog == (1, 4)
    assert set(result.scores) == set(scores)


def test_a_bad_grid_is_refused():
    from autoreparam.errors import ArgumentError
    from autoreparam.mcmc.oracle import check_grid

    with pytest.raises(ArgumentError, match="positive"):
        check_grid((1, 0))
    with pytest.raises(ArgumentError, match="empty"):
        check_grid(())


def test_a_candidate_given_twice_runs_once():
    from autoreparam.mcmc.oracle import check_grid

    assert check_grid([4, 4, 8, (1, 2), (1, 2)]) == (4, 8, (1, 2))
    assert check_grid(np.array([1, 2])) == (1, 2)
