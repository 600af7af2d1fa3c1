"""Peer plumbing that needs no optional extra: the compile meter, the port registry, and that the
library never imports PyMC or nutpie (they are the optional peers extra)."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

from autoreparam.benchmark import pymc_ports
from autoreparam.benchmark.compile_meter import CompileMeter, union_length
from autoreparam.errors import ArgumentError
from autoreparam.models import load


def test_union_length_counts_nested_and_overlapping_spans_once():
    assert union_length([]) == 0.0
    assert union_length([(0.0, 1.0), (0.2, 0.5)]) == pytest.approx(1.0)  # nested: trace inside trace
    assert union_length([(0.0, 1.0), (0.5, 2.0), (3.0, 4.0)]) == pytest.approx(3.0)
    assert union_length([(3.0, 4.0), (0.0, 1.0)]) == pytest.approx(2.0)  # order does not matter


def test_compile_meter_sees_a_first_call_and_not_a_cached_one():
    def f(x):
        return jnp.sin(x) @ jnp.cos(x).T + x.sum()

    jitted = jax.jit(f)
    x = jnp.ones((7, 3))  # a shape no other test compiles
    with CompileMeter() as first:
        jitted(x).block_until_ready()
    with CompileMeter() as second:
        jitted(x).block_until_ready()
    assert first.seconds > 0.0
    assert second.seconds == 0.0


def test_a_problem_without_a_pymc_port_is_refused_by_name():
    problem = load("neals_funnel")
    assert not pymc_ports.has_port(problem)
    with pytest.raises(ArgumentError, match="no PyMC port of problem 'neals_funnel'.*ported models: eight_schools"):
        pymc_ports.build(problem)


def test_the_library_and_the_benchmark_never_import_pymc_or_nutpie():
    code = (
        "import sys, autoreparam, autoreparam.cli, autoreparam.benchmark.runner, "
        "autoreparam.benchmark.report, autoreparam.benchmark.nutpie_peer, autoreparam.benchmark.pymc_ports\n"
        "print(sorted(m for m in ('pymc', 'nutpie', 'pytensor', 'numba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
