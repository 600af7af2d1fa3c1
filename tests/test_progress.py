"""The progress reporter: quiet when disabled, and one postfix per step over every vmapped run."""

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.progress import progress_reporter, task_bar


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


def test_task_bar_off_a_terminal_prints_a_few_plain_lines(capsys):
    """Under pytest stderr is no terminal: 200 tasks give a start line and ten more, no carriage returns."""
    bar = task_bar(200, "fuzz: sampling")
    for k in range(200):
        bar.set_postfix_str(f"task {k}", refresh=False)
        bar.update(1)
    bar.write("failed: task 7")
    bar.close()
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert lines[0] == "fuzz: sampling: 0 of 200 done" and len(lines) == 12
    assert lines[-2] == "fuzz: sampling: 200 of 200 done (last: task 199)" and lines[-1] == "failed: task 7"


def test_task_bar_resumed_and_disabled(capsys):
    bar = task_bar(7, "cells", initial=5)
    bar.update(1)
    bar.update(1)
    assert capsys.readouterr().err.splitlines() == ["cells: 5 of 7 done", "cells: 6 of 7 done", "cells: 7 of 7 done"]
    quiet = task_bar(7, "cells", enabled=False)
    quiet.update(3)
    quiet.close()
    assert capsys.readouterr().err == ""


def test_off_a_terminal_the_last_state_and_each_quarter_of_a_long_loop_get_a_line(capsys):
    # Found in review: a task bar closed between lines never said where it ended, and a variational fit
    # printed only its first line ("four plain lines" were promised).
    bar = task_bar(20, "x")
    for _ in range(3):
        bar.update(1)
    bar.close()
    assert capsys.readouterr().err.splitlines() == ["x: 0 of 20 done", "x: 2 of 20 done", "x: 3 of 20 done"]
    with progress_reporter(8, "VI", describe=lambda values: f"best ELBO {values.max():.1f}") as report:
        for step in range(8):
            report(step, np.array([float(step)]))
    assert capsys.readouterr().err.splitlines() == [
        "VI: 8 steps", "VI: 2 of 8 steps, best ELBO 1.0", "VI: 4 of 8 steps, best ELBO 3.0",
        "VI: 6 of 8 steps, best ELBO 5.0", "VI: 8 of 8 steps, best ELBO 7.0"]
