"""Random programs with data, for training and testing automatic reparameterisation.

Families (one module each) where the best centring differs and that real users write: normal
hierarchies, Neal's funnel chains, hierarchical GLMs, sparse-scale regressions, random walks and
AR(1), Student-t latents. Each program is text in the modelling language (`autoreparam.lang`)
with JSON data drawn from its prior predictive, stratified by informativeness and scaled by
random units; `write_corpus` writes a corpus in splits. Below `infer`, above `reparam`; importing
this package reads no file.
"""

from autoreparam.corpus.common import STRATA, Design, GeneratedProgram
from autoreparam.corpus.registry import FAMILIES, SPLITS, assignment, generate_program
from autoreparam.corpus.writer import write_corpus

__all__ = ["FAMILIES", "SPLITS", "STRATA", "Design", "GeneratedProgram", "assignment", "generate_program", "write_corpus"]
