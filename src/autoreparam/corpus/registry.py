"""The families, by name, and which program of a corpus gets which family, split, size and stratum."""

from __future__ import annotations

from typing import Callable

import numpy as np

from autoreparam.corpus import funnel, glm, normal_hierarchy, sparse_regression, student_t, time_series
from autoreparam.corpus.common import STRATA, Design, GeneratedProgram
from autoreparam.errors import ArgumentError

FAMILIES: dict[str, Callable[[np.random.Generator, Design], GeneratedProgram]] = {
    normal_hierarchy.FAMILY: normal_hierarchy.generate,
    funnel.FAMILY: funnel.generate,
    glm.FAMILY: glm.generate,
    sparse_regression.FAMILY: sparse_regression.generate,
    time_series.FAMILY: time_series.generate,
    student_t.FAMILY: student_t.generate,
}
SPLITS = ("train", "interpolation", "extrapolation", "held_out_family")
# Of every 20 programs of a family that is not held out: 14 train, 3 interpolation, 3 extrapolation.
_SPLIT_CYCLE = ("train",) * 14 + ("interpolation",) * 3 + ("extrapolation",) * 3


def assignment(index: int, held_out_family: str) -> tuple[str, str, Design]:
    """(family, split, design) of program ``index``; the same for every corpus size."""
    names = list(FAMILIES)
    family = names[index % len(names)]
    turn = index // len(names)
    split = "held_out_family" if family == held_out_family else _SPLIT_CYCLE[turn % len(_SPLIT_CYCLE)]
    stratum = STRATA[turn % len(STRATA)]
    return family, split, Design(size="large" if split == "extrapolation" else "train", stratum=stratum)


def generate_program(index: int, seed: int = 0, held_out_family: str = student_t.FAMILY) -> tuple[str, GeneratedProgram]:
    """Program ``index`` of the corpus with ``seed``: reproducible, independent of the others.

    Returns its split and the program; the generator's random stream is ``default_rng([seed, index])``.
    """
    # Checked here too (``write_corpus`` did): a misspelt family put the held-out family into training,
    # and a negative seed failed inside NumPy (found in review).
    if held_out_family not in FAMILIES:
        raise ArgumentError(f"unknown held-out family {held_out_family!r}; families: {', '.join(FAMILIES)}")
    for name, value in (("index", index), ("seed", seed)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
            raise ArgumentError(f"{name} must be a non-negative integer, got {value!r}")
    index, seed = int(index), int(seed)
    family, split, design = assignment(index, held_out_family)
    rng = np.random.default_rng([seed, index])
    program = FAMILIES[family](rng, design)
    params = {**program.params, "size": design.size, "seed": [seed, index]}
    return split, GeneratedProgram(program.family, program.text, program.data, params)
