"""`Problem`: a model together with the data it is conditioned on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, eq=False)
class Problem:
    """A ready-to-run inference problem: ``model(*args, **kwargs)`` under NumPyro handlers.

    The observation, if any, is ``kwargs["y"]``; dropping it gives the prior predictive model, except
    for ``gaussian_section3`` and ``funnel_with_observation``, whose ``y`` is a required argument.
    ``data_note`` says how the data handling differs from the original paper's code, so that a
    result compared with a published one can say so.
    """

    name: str
    model: Callable[..., Any]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    description: str = ""
    data_note: str = ""

    def __call__(self) -> Any:
        return self.model(*self.args, **self.kwargs)
