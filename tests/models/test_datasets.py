"""Shapes, sizes and contents of each data set, as REFERENCE.md states them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autoreparam.models import data

# REFERENCE.md: houses N / counties J per state, as the original code found them.
REFERENCE_RADON_SIZES = {
    "MN": (919, 85), "IN": (1914, 91), "PA": (2389, 68), "MO": (1859, 115),
    "ND": (1596, 53), "MA": (1659, 13), "AZ": (1507, 15),
}
# Ours key counties by FIPS: PA's blank-name pseudo-county disappears (see data/radon.py).
CORRECT_RADON_COUNTIES = {**{s: j for s, (_, j) in REFERENCE_RADON_SIZES.items()}, "PA": 67}


@pytest.mark.parametrize("state", sorted(REFERENCE_RADON_SIZES))
def test_radon_sizes(data_dir, state):
    n, j = REFERENCE_RADON_SIZES[state]
    original = data.load_radon(state, data_dir, quirks=True)
    assert (original.num_houses, original.num_counties) == (n, j)
    ours = data.load_radon(state.lower(), data_dir)
    assert (ours.num_houses, ours.num_counties) == (n, CORRECT_RADON_COUNTIES[state])
    for d in (original, ours):
        assert d.county.shape == d.floor.shape == d.y.shape == (d.num_houses,)
        assert d.log_uranium.shape == (d.num_counties,) == (len(d.county_names),)
        assert d.county.dtype == np.int32
        # Every county index is used and in range.
        assert np.array_equal(np.unique(d.county), np.arange(d.num_counties))
        assert np.all(np.isfinite(d.y)) and np.all(np.isfinite(d.log_uranium))


def test_radon_outcome_is_log_activity(data_dir):
    d = data.load_radon("MN", data_dir)
    # ARM's MN radon: y = log(activity + 0.1); first house in AITKIN has activity 2.2.
    assert d.county_names[0] == "AITKIN" and d.county_fips[0] == 27001
    np.testing.assert_allclose(d.y[0], np.log(2.2 + 0.1))
    assert set(np.unique(d.floor)) == {0.0, 1.0}


def test_german_credit_design(data_dir):
    d = data.load_german_credit(data_dir)
    assert d.x.shape == (1000, 62) and d.y.shape == (1000,)
    assert int(d.y.sum()) == 700 and set(np.unique(d.y)) == {0, 1}
    assert len(d.feature_names) == 62 and d.feature_names[0] == "intercept"
    np.testing.assert_array_equal(d.x[:, 0], 1.0)
    numeric = d.x[:, 1:8]
    np.testing.assert_allclose(numeric.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(numeric.std(axis=0, ddof=1), 1.0)
    onehot = d.x[:, 8:]
    assert set(np.unique(onehot)) == {0.0, 1.0}
    np.testing.assert_array_equal(onehot.sum(axis=1), 13.0)  # one level per categorical attribute
    assert np.all(onehot.sum(axis=0) > 0)  # every level present
    # Levels in np.unique (string) order, as the original: A410 sorts between A41 and A42.
    purpose = [n for n in d.feature_names if n.startswith("attr4=")]
    assert purpose[:4] == ["attr4=A40", "attr4=A41", "attr4=A410", "attr4=A42"]
    # The first loan: duration 6 months is attribute 2, the first numeric column.
    lines = (data_dir / "german_credit/german.data").read_text().splitlines()
    raw_duration = np.array([float(line.split()[1]) for line in lines])
    np.testing.assert_allclose(numeric[:, 0], (raw_duration - raw_duration.mean()) / raw_duration.std(ddof=1))


def test_election88(data_dir):
    d = data.load_election88(data_dir)
    assert d.num_respondents == 11566 and d.num_states == 51
    assert d.state.shape == d.black.shape == d.female.shape == d.y.shape == (11566,)
    assert d.state.min() == 0 and d.state.max() == 50
    raw = json.loads((data_dir / "election88/election88_full.data.json").read_text())
    np.testing.assert_array_equal(d.state + 1, raw["state"])
    np.testing.assert_array_equal(d.y, raw["y"])


def test_electric(data_dir):
    d = data.load_electric(data_dir)
    assert (d.num_classrooms, d.num_pairs, d.num_grades) == (192, 96, 4)
    assert d.pair.shape == d.grade.shape == d.treatment.shape == d.y.shape == (192,)
    assert d.grade_pair.shape == (96,)
    for index, size in ((d.pair, 96), (d.grade, 4), (d.grade_pair, 4)):
        assert np.array_equal(np.unique(index), np.arange(size))
    # Each pair holds one treated and one control classroom of the pair's grade.
    np.testing.assert_array_equal(np.bincount(d.pair, weights=d.treatment), 1.0)
    np.testing.assert_array_equal(d.grade_pair[d.pair], d.grade)


def test_eight_schools_file_equals_in_code_numbers(data_dir):
    from_file = data.load_eight_schools(data_dir)
    in_code = data.eight_schools_data()
    np.testing.assert_array_equal(from_file.y, in_code.y)
    np.testing.assert_array_equal(from_file.sigma, in_code.sigma)
    np.testing.assert_array_equal(in_code.y, [28, 8, -3, 7, -1, 1, 18, 12])
    np.testing.assert_array_equal(in_code.sigma, [15, 10, 16, 11, 9, 11, 10, 18])
