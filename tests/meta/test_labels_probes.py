"""Labels record where their graphs' probes were read, and training refuses a mix (one network reads one kind)."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.errors import ArgumentError, DataError
from autoreparam.meta.dataset import load_items, probes_of
from autoreparam.meta.labels import make_labels
from autoreparam.meta.synthetic import write_synthetic


def test_fit_probed_labels_are_recorded_and_a_mix_is_refused(tmp_path):
    corpus = write_synthetic(tmp_path / "corpus", 2, 0)
    for probes in ("prior", "fit"):
        make_labels(corpus, tmp_path / probes, graphs_only=True, serial=True, progress=False, probes=probes)
    prior, fit = load_items(tmp_path / "prior"), load_items(tmp_path / "fit")
    assert len(prior) == len(fit) == 2
    assert probes_of(prior) == "prior" and probes_of(fit) == "fit"
    # The same programs, read at other points: the curvature features differ, the graph's structure does not.
    assert np.array_equal(prior[0].graph.edge_index, fit[0].graph.edge_index)
    with pytest.raises(DataError, match="mix graphs probed at fit and prior points"):
        probes_of(prior + fit)
    with pytest.raises(ArgumentError, match="probes must be one of"):
        make_labels(corpus, tmp_path / "bad", graphs_only=True, serial=True, progress=False, probes="mode")
