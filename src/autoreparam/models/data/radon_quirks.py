"""The radon data as the original autoreparam code built them (``quirks=True``).

A re-implementation, without pandas, of ``load_radon_data`` in mgorinova/autoreparam ``models.py``
(itself adapted from the Stan radon case study), checked against that function run on the same
files. Its quirks, kept on purpose so that results can be compared with the paper's:

* counties are keyed by *name*, so PA's 23 houses with a blank name form a 68th county;
* each county's uranium is looked up by position: entry k of (cty.dat rows of the state, inner-
  merged with the distinct (name, FIPS) pairs of srrs2.dat) goes to the k-th such pair. Duplicate
  cty.dat rows and the blank PA name shift that list, so many counties get another county's value
  (MN 75 of 85, PA 63 of 68, MO 29 of 115, IN 10 of 91, MA 3 of 13, AZ and ND none);
* ``Uppm = 0`` becomes log uranium 0;
* the floor code 9 ("missing") is used as the number 9;
* houses whose FIPS code is missing from cty.dat would be dropped (none are).

The original cast to float32; these arrays stay float64.
"""

from __future__ import annotations

import numpy as np

from autoreparam.errors import DataError
from autoreparam.models.data.cache import read_parsed
from autoreparam.models.data.radon_common import FLOOR_MISSING_CODE, RadonData, county_uranium
from autoreparam.models.data.radon_files import parse_cty


def assemble_like_original(state: str, srrs, cty) -> RadonData:
    """`RadonData` for `state` with the original code's county keys, uranium lookup and floors."""
    rows = np.flatnonzero(srrs["state"] == state)
    fips = srrs["stfips"][rows] * 1000 + srrs["cntyfips"][rows]
    names = srrs["county"][rows]
    cty_rows = np.flatnonzero(cty["st"] == state)
    cty_fips = cty["stfips"][cty_rows] * 1000 + cty["ctfips"][cty_rows]

    # counties = srrs[['county', 'fips']].drop_duplicates(); name -> position (last one wins).
    pairs = list(dict.fromkeys(zip(names.tolist(), fips.tolist())))
    position = {name: k for k, (name, _) in enumerate(pairs)}
    # uranium_levels = cty_state.merge(counties, on='fips')['Uppm']: left (cty) order, one entry
    # per matching pair.
    levels = [cty["Uppm"][r] for r, code in zip(cty_rows, cty_fips) for (_, f) in pairs if f == code]

    # srrs.merge(cty_state, on='fips').drop_duplicates(subset='idnum'): inner join, so houses of
    # counties absent from cty.dat go; the rows duplicated by repeated cty.dat entries go again.
    keep = np.isin(fips, cty_fips) & _first_occurrence(srrs["idnum"][rows])
    rows, fips, names = rows[keep], fips[keep], names[keep]
    county_names = list(dict.fromkeys(names.tolist()))
    lookup = {name: j for j, name in enumerate(county_names)}
    if max(position[name] for name in county_names) >= len(levels):
        raise DataError(f"radon: the original lookup runs past the uranium list for {state}")
    uppm = np.array([levels[position[name]] for name in county_names])
    log_uranium = np.where(uppm > 0, np.log(np.where(uppm > 0, uppm, 1.0)), 0.0)

    first_house = {name: k for k, name in reversed(list(enumerate(names.tolist())))}
    county_fips = np.array([fips[first_house[name]] for name in county_names])
    own_uppm, _ = county_uranium(cty, county_fips)
    code = srrs["floor"][rows]
    return RadonData(
        state=state,
        county=np.array([lookup[name] for name in names.tolist()], dtype=np.int32),
        floor=code.astype(np.float64),
        log_uranium=log_uranium,
        y=np.log(srrs["activity"][rows] + 0.1),
        county_names=tuple(county_names),
        county_fips=county_fips,
        floor_missing=code == FLOOR_MISSING_CODE,
        uranium_missing=own_uppm <= 0,
    )


def count_misassigned_uranium(original: RadonData, data_dir=None) -> int:
    """How many counties of `original` (``quirks=True`` data) carry another county's uranium.

    Each county is compared with the Uppm of its own FIPS code (that of its first house, for PA's
    blank name), using the original's convention log 0 -> 0, so only the lookup error counts.
    """
    own, _ = county_uranium(read_parsed("radon_cty", parse_cty, data_dir), original.county_fips)
    own_log = np.where(own > 0, np.log(np.where(own > 0, own, 1.0)), 0.0)
    return int(np.count_nonzero(~np.isclose(original.log_uranium, own_log, rtol=0.0, atol=1e-12)))


def _first_occurrence(ids: np.ndarray) -> np.ndarray:
    _, first = np.unique(ids, return_index=True)
    mask = np.zeros(len(ids), dtype=bool)
    mask[first] = True
    return mask
