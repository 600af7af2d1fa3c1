"""The VI protocol: the paper's defaults, validation of every field and the learning-rate schedule."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.vi.protocol import PAPER, VIConfig


def test_defaults_are_the_papers_protocol():
    """REFERENCE.md "Protocol of the authors' code"; our default differs only in VIP's starting lambdas."""
    assert PAPER == VIConfig(vip_starts=(0.5,))
    assert VIConfig().vip_starts == (0.05, 0.5, 0.95) and PAPER.vip_starts == (0.5,)
    assert PAPER.num_steps == 3000 and PAPER.num_samples == 256
    assert PAPER.learning_rates == (0.02, 0.05, 0.1, 0.2, 0.4)
    assert PAPER.decay_factors == (1 / 5, 1 / 20) and PAPER.select_window == 32


@pytest.mark.parametrize(
    "num_steps, boundaries",
    [(3000, (1000, 2000)), (1500, (500, 1000)), (30, (10, 20))],
)
def test_learning_rate_schedule_factor(num_steps, boundaries):
    """1 before a third of the steps, 1/5 until two thirds, then 1/20 (paper 002 Appendix C)."""
    config = VIConfig(num_steps=num_steps, progress=False)
    first, second = boundaries
    expected = {0: 1.0, first - 1: 1.0, first: 0.2, second - 1: 0.2, second: 0.05, num_steps - 1: 0.05}
    for step, factor in expected.items():
        assert float(config.learning_rate_factor(step)) == pytest.approx(factor, rel=1e-6), step
    # traced steps (inside lax.scan) give the same schedule
    steps = jnp.arange(num_steps)
    factors = np.asarray(jax.jit(jax.vmap(config.learning_rate_factor))(steps))
    np.testing.assert_allclose(factors[:first], 1.0)
    np.testing.assert_allclose(factors[first:second], 0.2, rtol=1e-6)
    np.testing.assert_allclose(factors[second:], 0.05, rtol=1e-6)


def test_custom_schedule():
    config = VIConfig(num_steps=100, decay_fractions=(0.5,), decay_factors=(0.1,), progress=False)
    assert float(config.learning_rate_factor(49)) == 1.0
    assert float(config.learning_rate_factor(50)) == pytest.approx(0.1)
    constant = VIConfig(num_steps=100, decay_fractions=(), decay_factors=(), progress=False)
    assert float(constant.learning_rate_factor(99)) == 1.0


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"num_steps": 0}, "num_steps"),
        ({"num_steps": -5}, "num_steps"),
        ({"num_samples": 0}, "num_samples"),
        ({"select_window": 0}, "select_window"),
        ({"final_num_samples": -1}, "final_num_samples"),
        ({"learning_rates": ()}, "learning_rates"),
        ({"learning_rates": (0.1, 0.0)}, "learning_rates"),
        ({"learning_rates": (-0.1,)}, "learning_rates"),
        ({"decay_fractions": (0.5,), "decay_factors": (0.1, 0.2)}, "decay_f"),
        ({"init_scale": 0.0}, "init_scale"),
        ({"init_scale": -1.0}, "init_scale"),
    ],
)
def test_invalid_config_is_an_argument_error_naming_the_field(kwargs, field):
    with pytest.raises(ArgumentError, match=field):
        VIConfig(**kwargs)


@pytest.mark.parametrize("kwargs", [{"learning_rates": (float("nan"),)}, {"init_scale": float("nan")}], ids=["lr", "init_scale"])
def test_nan_config_values_are_rejected(kwargs):
    with pytest.raises(ArgumentError, match=next(iter(kwargs))):
        VIConfig(**kwargs)


def test_negative_decay_factor_is_rejected():
    with pytest.raises(ArgumentError, match="decay_factors"):
        VIConfig(decay_factors=(0.2, -0.05))


# --- found in review (2026-11-29): each failed before its fix ---------------------------------------
def test_lists_become_tuples_so_that_the_config_can_key_a_compiled_program():
    config = VIConfig(vip_starts=[0.5], decay_fractions=[0.5], decay_factors=[0.1], learning_rates=[0.1])
    assert config.vip_starts == (0.5,) and config.decay_fractions == (0.5,) and config.learning_rates == (0.1,)
    hash(config)  # a list made the program cache's key unhashable: a bare TypeError mid-fit


@pytest.mark.parametrize(
    "bad",
    [
        dict(decay_fractions=(2 / 3, 1 / 3), decay_factors=(1 / 20, 1 / 5)),  # the 1/20 decay was never applied
        dict(init_scale="0.1"),
        dict(init_scale=None),
        dict(stl="no"),  # truthy: STL stayed on
        dict(progress="no"),
        dict(final_num_samples=1),  # a standard error of zero
    ],
)
def test_settings_that_cannot_mean_what_they_say_are_refused(bad):
    with pytest.raises(ArgumentError, match="VIConfig"):
        VIConfig(**bad)
