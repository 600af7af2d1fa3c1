"""What both radon assemblies share: the state codes, floor codes, `RadonData` and the uranium lookup.

`radon` (our handling) and `radon_quirks` (the original code's) both build a `RadonData`; keeping the
shared pieces here lets each import them without importing the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autoreparam.errors import DataError

STATES = ("AZ", "IN", "MA", "MN", "MO", "ND", "PA")
FLOOR_CODES = (0, 1, 2, 3)
FLOOR_MISSING_CODE = 9


@dataclass(frozen=True, eq=False)
class RadonData:
    state: str
    county: np.ndarray  # (N,) int32 county of each house, 0-based
    floor: np.ndarray  # (N,) float64 floor of each measurement
    log_uranium: np.ndarray  # (J,) float64 county log uranium
    y: np.ndarray  # (N,) float64 log(activity + 0.1)
    county_names: tuple[str, ...]  # (J,)
    county_fips: np.ndarray  # (J,) int64
    floor_missing: np.ndarray  # (N,) bool: floor code 9 in the file
    uranium_missing: np.ndarray  # (J,) bool: no uranium measurement (imputed)

    @property
    def num_houses(self) -> int:
        return int(self.y.shape[0])

    @property
    def num_counties(self) -> int:
        return int(self.log_uranium.shape[0])


def county_uranium(cty, fips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Uppm of each county in `fips` and whether cty.dat lists it; duplicate rows must agree."""
    cty_fips = cty["stfips"] * 1000 + cty["ctfips"]
    uppm = np.zeros(len(fips))
    found = np.zeros(len(fips), dtype=bool)
    for j, code in enumerate(fips):
        values = cty["Uppm"][cty_fips == code]
        if values.size == 0:
            continue
        if np.ptp(values) > 0:
            raise DataError(f"radon/cty.dat: county {code} is listed with different Uppm values {values.tolist()}")
        uppm[j], found[j] = values[0], True
    return uppm, found
