"""Radon: our data handling (uranium per county, floor code 9) and the original's quirks."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.models import data
from autoreparam.models.data.cache import read_parsed
from autoreparam.models.data.radon import STATES
from autoreparam.models.data.radon_files import parse_cty, parse_srrs2
from autoreparam.models.data.radon_quirks import count_misassigned_uranium


def _uppm_by_fips(data_dir):
    cty = read_parsed("radon_cty", parse_cty, data_dir)
    fips = cty["stfips"] * 1000 + cty["ctfips"]
    return {int(f): float(u) for f, u in zip(fips, cty["Uppm"])}


@pytest.mark.parametrize("state", STATES)
def test_each_county_gets_its_own_uranium(data_dir, state):
    d = data.load_radon(state, data_dir)
    uppm = _uppm_by_fips(data_dir)
    measured = ~d.uranium_missing
    own = np.array([uppm[int(f)] for f in d.county_fips])
    np.testing.assert_allclose(d.log_uranium[measured], np.log(own[measured]))
    # Counties with Uppm 0 (no measurement) get the mean of the measured ones.
    np.testing.assert_array_equal(d.uranium_missing, own <= 0)
    np.testing.assert_allclose(d.log_uranium[~measured], d.log_uranium[measured].mean())
    # Every house is in the county its FIPS code names.
    srrs = read_parsed("radon_srrs2", parse_srrs2, data_dir)
    rows = srrs["state"] == state
    np.testing.assert_array_equal(d.county_fips[d.county], srrs["stfips"][rows] * 1000 + srrs["cntyfips"][rows])


def test_duplicate_cty_rows_do_not_shift_uranium(data_dir):
    # cty.dat lists CARVER (27019) twice; the county after it must keep its own value.
    d = data.load_radon("MN", data_dir)
    uppm = _uppm_by_fips(data_dir)
    j = int(np.flatnonzero(d.county_fips == 27021)[0])  # CASS, right after CARVER
    np.testing.assert_allclose(d.log_uranium[j], np.log(uppm[27021]))


@pytest.mark.parametrize("state", ["AZ", "MA"])
def test_floor_code_9_is_missing_not_a_number(data_dir, state):
    srrs = read_parsed("radon_srrs2", parse_srrs2, data_dir)
    code = srrs["floor"][srrs["state"] == state]
    d = data.load_radon(state, data_dir)
    np.testing.assert_array_equal(d.floor_missing, code == 9)
    assert d.floor_missing.sum() > 0 and d.floor.max() <= 3
    np.testing.assert_array_equal(d.floor[~d.floor_missing], code[code != 9])
    np.testing.assert_allclose(d.floor[d.floor_missing], code[code != 9].mean())
    dropped = data.load_radon(state, data_dir, missing_floor="drop")
    assert dropped.num_houses == int(np.sum(code != 9)) and not dropped.floor_missing.any()
    np.testing.assert_array_equal(dropped.y, d.y[~d.floor_missing])


def test_quirks_misassign_uranium_as_reference_says(data_dir):
    original = data.load_radon("MN", data_dir, quirks=True)
    assert count_misassigned_uranium(original, data_dir) == 75  # REFERENCE.md: "MN: 75 of 85"
    assert original.num_counties == 85
    # The lookup shifts by one after CARVER's duplicate row: CASS gets CARVER's value.
    uppm = _uppm_by_fips(data_dir)
    cass = original.county_names.index("CASS")
    np.testing.assert_allclose(original.log_uranium[cass], np.log(uppm[27019]))
    expected = {"AZ": 0, "IN": 10, "MA": 3, "MO": 29, "ND": 0, "PA": 63}
    for state, wrong in expected.items():
        assert count_misassigned_uranium(data.load_radon(state, data_dir, quirks=True), data_dir) == wrong, state


def test_quirks_use_floor_9_and_zero_uranium_as_numbers(data_dir):
    original = data.load_radon("AZ", data_dir, quirks=True)
    assert np.sum(original.floor == 9.0) == 99
    lapaz = original.county_names.index("LA PAZ")
    assert original.log_uranium[lapaz] == 0.0  # Uppm 0 -> log uranium 0
    ours = data.load_radon("AZ", data_dir)
    assert ours.floor.max() < 9 and ours.log_uranium[ours.county_fips == 4012][0] != 0.0


def test_quirks_count_blank_county_name_as_a_county(data_dir):
    original = data.load_radon("PA", data_dir, quirks=True)
    assert "" in original.county_names and original.num_counties == 68
    assert np.sum(original.county == original.county_names.index("")) == 23
    assert "" not in data.load_radon("PA", data_dir).county_names


def test_unknown_state_and_policy(data_dir):
    with pytest.raises(ArgumentError, match="MN"):
        data.load_radon("CA", data_dir)
    with pytest.raises(ArgumentError, match="missing_floor"):
        data.load_radon("MN", data_dir, missing_floor="zero")
