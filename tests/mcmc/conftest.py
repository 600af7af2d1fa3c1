"""Fixtures shared by the sampler tests."""

import pytest

from mcmc_helpers import gaussian_coordinates


@pytest.fixture(scope="module")
def gaussian_coords():
    return gaussian_coordinates()
