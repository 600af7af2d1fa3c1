"""Evaluation models named by plain JSON specs (so Ray can ship them): zoo, program, funnel, Section 3."""

from __future__ import annotations

from typing import Callable

from autoreparam.errors import ArgumentError


def spec_name(spec: dict) -> str:
    kind = spec["kind"]
    if kind == "zoo":
        return spec["name"]
    if kind == "program":
        return f"{spec['split']}/{spec['id']}"
    if kind == "funnel":
        return f"funnel_y{spec['y']:+g}_s{spec['sigma']:g}"
    if kind == "section3":
        return f"section3_q{spec['q']:g}_s{spec['sigma_mu']:g}"
    raise ArgumentError(f"unknown model spec kind {kind!r}")


def load_spec(spec: dict) -> tuple[Callable, tuple, dict]:
    """``(model, args, kwargs)`` of a spec."""
    from autoreparam.models import load

    kind = spec["kind"]
    if kind == "zoo":
        problem = load(spec["name"])
    elif kind == "funnel":
        problem = load("funnel_with_observation", y=spec["y"], sigma=spec["sigma"])
    elif kind == "section3":
        problem = load("gaussian_section3", q=spec["q"], sigma_mu=spec["sigma_mu"], n=spec.get("n", 10), seed=0)
    elif kind == "program":
        from autoreparam.lang import compile_program

        return tuple(compile_program(spec["program"], spec["data"]))
    else:
        raise ArgumentError(f"unknown model spec kind {kind!r}")
    return problem.model, tuple(problem.args), dict(problem.kwargs)
