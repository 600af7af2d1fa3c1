"""Eight schools (Rubin 1981; Gelman et al., BDA ch. 5; ARM ch. 19 in stan-dev/example-models).

The 16 numbers are small enough to live in code, as they do in the original autoreparam code
(``models.py:get_eight_schools``). `load_eight_schools` reads the stan-dev file instead; a test
checks the two agree.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autoreparam.errors import DataError
from autoreparam.models.data.cache import read_parsed

# Estimated treatment effects and their standard errors, one per school.
TREATMENT_EFFECTS = (28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0)
TREATMENT_STDDEVS = (15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0)


@dataclass(frozen=True, eq=False)
class EightSchoolsData:
    y: np.ndarray  # (8,) estimated effects
    sigma: np.ndarray  # (8,) their standard errors

    @property
    def num_schools(self) -> int:
        return int(self.y.shape[0])


def eight_schools_data() -> EightSchoolsData:
    """The in-code numbers; needs no file."""
    return EightSchoolsData(np.array(TREATMENT_EFFECTS), np.array(TREATMENT_STDDEVS))


def load_eight_schools(data_dir: str | os.PathLike | None = None) -> EightSchoolsData:
    """The same numbers read from ``eight_schools/schools.data.json`` (hash-checked)."""
    arrays = read_parsed("eight_schools", _parse_schools_json, data_dir)
    return EightSchoolsData(np.array(arrays["y"]), np.array(arrays["sigma"]))


def _parse_schools_json(path: Path) -> dict[str, np.ndarray]:
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    y = np.asarray(raw["y"], dtype=np.float64)
    sigma = np.asarray(raw["sigma_y"], dtype=np.float64)
    if not (y.shape == sigma.shape == (int(raw["N"]),)):
        raise DataError(f"{path}: y, sigma_y and N disagree in size")
    return {"y": y, "sigma": sigma}
