"""Student-t group effects (robust hierarchies): the normal hierarchy with theta_j ~ t_nu(mu, tau).

nu is log-uniform on [1, 31.6]; everything else as `normal_hierarchy`. Held out of training by
default, to test whether what is learned on normal latents carries over to another family.
"""

from __future__ import annotations

import numpy as np

from autoreparam.corpus import normal_hierarchy
from autoreparam.corpus.common import Design, GeneratedProgram

FAMILY = "student_t_hierarchy"


def generate(rng: np.random.Generator, design: Design) -> GeneratedProgram:
    return normal_hierarchy.generate(rng, design, latent="student_t")
