"""auto's second pilot at a shorter step (``auto.step_probe``), on stubbed pilots; end to end on a model."""

from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

import autoreparam as ar
from autoreparam.auto.pilot import PilotScore
from autoreparam.auto.step_probe import PROBE_FACTOR, PROBE_MARGIN, probe_shorter_step
from autoreparam.mcmc.segments import Chains, SegmentDraws
from autoreparam.mcmc.warmup import WindowState


def _score(ess_per_1000, r_hat=1.0, divergent=0.0):
    return PilotScore(label="rule", ess_per_1000_grads=ess_per_1000, ess_per_transition=0.8, grads_per_transition=7.0,
                      max_r_hat=r_hat, divergent_share=divergent, gradients=1.0, seconds=0.0)


def _draws(length):
    return SegmentDraws(np.zeros((4, length, 1), np.float32), np.ones((4, length), np.int32),
                        np.ones((4, length), np.float32), np.zeros((4, length), bool))


def _probe(probe_ess, best, num_samples=1000, length=100, pilot_length=None):
    chains = Chains(jnp.zeros((4, 1)), WindowState(None, None, jnp.full(4, 0.5), jnp.ones((4, 1))), jnp.zeros((4, 2)))
    seen = []

    def pilot_fn(run, label, param, chains, length, surplus, target=None):
        seen.append(float(chains.adapt.step_size[0]))
        return chains, _draws(length), _score(probe_ess)

    run = SimpleNamespace(notes=[], config=SimpleNamespace(num_samples=num_samples))
    pilot = _draws(length if pilot_length is None else pilot_length)
    out, pilot, probed = probe_shorter_step(run, pilot_fn, "rule", None, chains, pilot, best, length, None)
    return out, pilot, probed, seen, run.notes


def test_a_shorter_step_that_draws_clearly_more_per_gradient_is_kept():
    out, pilot, probed, seen, notes = _probe(probe_ess=100.0, best=_score(70.0))
    assert np.isclose(seen[0], 0.5 * PROBE_FACTOR)  # the probe ran at the shorter step
    assert np.allclose(out.adapt.step_size, 0.5 * PROBE_FACTOR) and "went on at it" in notes[0]
    assert pilot.draws.shape[1] == 200 and probed.ess_per_1000_grads == 100.0  # the probe's draws are kept


def test_a_shorter_step_within_the_margin_gives_the_adapted_step_back():
    out, pilot, probed, _, notes = _probe(probe_ess=70.0 * PROBE_MARGIN * 0.99, best=_score(70.0))
    assert np.allclose(out.adapt.step_size, 0.5) and "went on at the adapted step size" in notes[0]
    assert f"against 70.00 (it needed {PROBE_MARGIN:g}x)" in notes[0]
    assert pilot.draws.shape[1] == 200 and probed is not None  # its draws are kept all the same


def test_no_probe_after_an_unhealthy_pilot_or_without_room_for_it():
    for best in (_score(70.0, r_hat=1.2), _score(70.0, divergent=0.02)):
        out, pilot, probed, seen, _ = _probe(probe_ess=500.0, best=best)
        assert probed is None and not seen and pilot.draws.shape[1] == 100
    _, _, probed, seen, _ = _probe(probe_ess=500.0, best=_score(70.0), num_samples=250, length=100)
    assert probed is None and not seen
    # Room is read from the pilot as drawn: one that ran on to twice its length (or carries the
    # warm-up's surplus) leaves no room at 3x its nominal length (found in review).
    _, _, probed, seen, _ = _probe(probe_ess=500.0, best=_score(70.0), num_samples=300, length=100, pilot_length=200)
    assert probed is None and not seen
    _, _, probed, _, _ = _probe(probe_ess=500.0, best=_score(70.0), num_samples=300, length=100)
    assert probed is not None


def _gaussian():
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("j", 20):
        numpyro.sample("theta", dist.Normal(mu, 1.0))


def test_auto_runs_the_probe_and_names_it_in_its_decision():
    result = ar.infer(_gaussian, method="auto", num_chains=4, num_warmup=400, num_samples=800, seed=0,
                      progress=False)
    assert f"at {PROBE_FACTOR:g}x the step size" in result.decision
    assert result.samples["theta"].shape == (4, 800, 20)
    assert result.gradients["pilots"] > 0 and result.trustworthy
