"""Radon in US homes (EPA/SRRS survey; Gelman & Hill 2006, ARM ch. 12-13), one state at a time.

For each house: y = log(activity + 0.1) (pCi/L), its county and the floor of the measurement
(0 basement, 1 first floor, 2 and 3 higher floors); for each county its log soil uranium,
u = log(Uppm) from ``cty.dat``. REFERENCE.md gives the sizes (houses N / counties J):
MN 919/85, IN 1914/91, PA 2389/68, MO 1859/115, ND 1596/53, MA 1659/13, AZ 1507/15.
Those N are every house of the state in ``srrs2.dat``: nothing was dropped.

How this loader handles the data (``quirks=False``), and why:

* Counties are keyed by FIPS code, 1000 * stfips + cntyfips, numbered in FIPS order. The original
  code keyed them by name; 23 PA houses have a blank county name, which it counted as a 68th
  county. Their FIPS codes place them in 12 real counties, so PA has J = 67 here. All other
  states match REFERENCE.md.
* Each county gets its own uranium, matched by FIPS. ``cty.dat`` lists some counties twice (MN
  CARVER and LAC QUI PARLE, MA NORFOLK x3, PA CHESTER); the duplicate rows agree and are merged.
  The original code's positional lookup shifted by those duplicates and gave most counties a
  neighbour's value (MN: 75 of 85).
* ``Uppm = 0`` (AZ LA PAZ; MA BARNSTABLE, DUKES, SUFFOLK) marks a county without a uranium
  measurement, not zero uranium (log 0 = -inf): it is imputed with the mean log uranium of the
  state's other counties and flagged in ``uranium_missing``. A county missing from ``cty.dat``
  would be treated the same way (none is, for these seven states).
* Floor code 9 means "missing" (AZ 99 houses, MA 106, IN 45, PA 19, MO 11; none in MN, ND). The
  original code used 9 as a floor number. By default (``missing_floor="mean"``) those houses are
  kept, so N matches REFERENCE.md, and their floor is set to the mean floor of the state's other
  houses, flagged in ``floor_missing``: mean imputation leaves the model (and its latent
  dimension J + 3) unchanged, and the imputed x carries no information about b2 beyond the
  state's average. ``missing_floor="drop"`` removes those houses instead (N then differs).

``quirks=True`` reproduces the original code's handling instead (`radon_quirks`).
"""

from __future__ import annotations

import os

import numpy as np

from autoreparam.errors import ArgumentError, DataError
from autoreparam.models.data.cache import read_parsed
from autoreparam.models.data.integrity import require_finite
from autoreparam.models.data.radon_common import (
    FLOOR_CODES,
    FLOOR_MISSING_CODE,
    STATES,
    RadonData,
    county_uranium,
)
from autoreparam.models.data.radon_files import parse_cty, parse_srrs2
from autoreparam.models.data.radon_quirks import assemble_like_original

MISSING_FLOOR_POLICIES = ("mean", "drop")


def load_radon(
    state: str,
    data_dir: str | os.PathLike | None = None,
    *,
    quirks: bool = False,
    missing_floor: str = "mean",
) -> RadonData:
    """Houses and counties of one state (``"MN"``, ``"pa"``, ...) from the hash-checked files."""
    state = check_state(state)
    if missing_floor not in MISSING_FLOOR_POLICIES:
        raise ArgumentError(f"missing_floor must be one of {MISSING_FLOOR_POLICIES}, got {missing_floor!r}")
    if quirks and missing_floor != "mean":  # checked before any file is read: the original code keeps
        # floor code 9 as a number, so there is nothing to drop
        raise ArgumentError(f"missing_floor={missing_floor!r} does not apply with quirks=True, which reproduces "
                            "the original code's data (floor code 9 kept as a floor); drop one of the two")
    srrs = read_parsed("radon_srrs2", parse_srrs2, data_dir)
    cty = read_parsed("radon_cty", parse_cty, data_dir)
    if quirks:
        return assemble_like_original(state, srrs, cty)
    return _assemble(state, srrs, cty, missing_floor)


def check_state(state: str) -> str:
    """Upper-case state code, or `ArgumentError` naming the states in ``srrs2.dat``."""
    code = str(state).upper()
    if code not in STATES:
        raise ArgumentError(f"unknown radon state {state!r}; srrs2.dat holds {', '.join(STATES)}")
    return code


def _assemble(state, srrs, cty, missing_floor) -> RadonData:
    rows = np.flatnonzero(srrs["state"] == state)
    code = srrs["floor"][rows]
    unknown = np.setdiff1d(code, FLOOR_CODES + (FLOOR_MISSING_CODE,))
    if unknown.size:
        raise DataError(f"radon/srrs2.dat: {state} has unknown floor code(s) {unknown.tolist()}")
    if missing_floor == "drop":
        rows, code = rows[code != FLOOR_MISSING_CODE], code[code != FLOOR_MISSING_CODE]
    floor_missing = code == FLOOR_MISSING_CODE
    fips = srrs["stfips"][rows] * 1000 + srrs["cntyfips"][rows]
    counties, county = np.unique(fips, return_inverse=True)

    uppm, found = county_uranium(cty, counties)
    uranium_missing = ~found | (uppm <= 0)
    if uranium_missing.all():
        raise DataError(f"radon/cty.dat: no county of {state} has a uranium measurement")
    log_uranium = np.zeros(len(counties))
    log_uranium[~uranium_missing] = np.log(uppm[~uranium_missing])
    log_uranium[uranium_missing] = log_uranium[~uranium_missing].mean()

    floor = code.astype(np.float64)
    if floor_missing.any():
        floor[floor_missing] = code[~floor_missing].mean()
    y = np.log(srrs["activity"][rows] + 0.1)
    require_finite("radon/srrs2.dat", {"y": y, "floor": floor})
    require_finite("radon/cty.dat", {"log_uranium": log_uranium})
    return RadonData(
        state=state,
        county=county.astype(np.int32),
        floor=floor,
        log_uranium=log_uranium,
        y=y,
        county_names=_county_names(srrs["county"][rows], county, len(counties)),
        county_fips=counties,
        floor_missing=floor_missing,
        uranium_missing=uranium_missing,
    )


def _county_names(house_names: np.ndarray, county: np.ndarray, num_counties: int) -> tuple[str, ...]:
    # The first non-blank name given to any house of the county (srrs2.dat spells names with
    # spaces, "LAC QUI PARLE", as ARM does; cty.dat squeezes them).
    names = [""] * num_counties
    for name, j in zip(house_names, county):
        if name and not names[j]:
            names[j] = str(name)
    return tuple(names)
