"""The progress reporter: quiet when disabled, and one postfix per step over every vmapped run."""

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.progress import progress_reporter


def test_disabled_reporter_does_nothing(capsys):
    with progress_reporter(10, "quiet", enabled=False) as report:
        report(0, np.array([1.0]))
    assert capsys.readouterr().err == ""


def test_values_of_one_step_are_gathered_across_vmapped_runs():
    """``jax.debug.callback`` under ``vmap`` calls once per run; the bar must describe all runs of a step."""
    seen = []

    def describe(values):
        seen.append(sorted(values.tolist()))
        return ""

    with progress_reporter(3, "runs", describe=describe) as report:

        def run(offset):
            def body(carry, t):
                jax.debug.callback(report, t, offset + t)
                return carry, None

            jax.lax.scan(body, 0.0, jnp.arange(3))
            return offset

        jax.block_until_ready(jax.vmap(run)(jnp.array([0.0, 10.0, 20.0])))
    assert seen == [[0.0, 10.0, 20.0], [1.0, 11.0, 21.0], [2.0, 12.0, 22.0]]
