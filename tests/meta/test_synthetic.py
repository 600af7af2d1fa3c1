"""The known-scale training programs: closed-form optima, the indexed layout, and its per-element targets."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.lang import compile_program
from autoreparam.meta.dataset import load_items
from autoreparam.meta.labels import make_labels
from autoreparam.meta.synthetic import _hierarchy_kl, generate, optimal_lambda, optimal_lambdas, write_synthetic
from autoreparam.reparam.sites import analyse_model


def test_per_element_optimum_reduces_to_the_tied_one_for_equal_groups():
    lam = optimal_lambdas(1.0, 2.0, np.full(4, 10), 3.0)
    np.testing.assert_allclose(lam, optimal_lambda(1.0, 2.0, 4, 10, 3.0), atol=2e-3)


def test_per_element_optimum_follows_the_data_of_each_group():
    sizes = np.array([0, 1, 5, 50, 200])
    kl = _hierarchy_kl(1.0, 2.0, sizes, 3.0)
    lam = optimal_lambdas(1.0, 2.0, sizes, 3.0)
    assert lam[0] < 0.01  # no data: the prior, exactly non-centred
    assert np.all(np.diff(lam) > 0)  # more data, more centring
    tied = optimal_lambda(1.0, 2.0, 5, 1, 3.0)
    assert kl(lam) <= kl(np.full(5, tied))
    rng = np.random.default_rng(0)
    for _ in range(20):  # no nearby point is better
        assert kl(np.clip(lam + rng.normal(0, 0.02, lam.size), 0, 1)) >= kl(lam) - 1e-9


def test_indexed_programs_compile_and_their_targets_follow_each_element(tmp_path):
    corpus = write_synthetic(tmp_path / "indexed", 2, 3, layout="indexed")
    index = [json.loads(line) for line in (corpus / "train" / "index.jsonl").read_text().splitlines()]
    text, data, params = generate(0, 3, "indexed")
    assert (corpus / "train" / "k00000.arp").read_text() == text and "mu[group[n]]" in text
    model, args, kwargs = compile_program(text, data)
    assert analyse_model(model, *args, **kwargs)["mu"].shape == (params["groups"],)
    assert json.loads((corpus / "manifest.json").read_text())["layout"] == "indexed"
    make_labels(corpus, tmp_path / "labels", graphs_only=True, serial=True, progress=False)
    items = load_items(tmp_path / "labels")
    for item, entry in zip(items, index):
        rows = item.graph.element_rows("mu")
        rows = rows[np.argsort(item.graph.element_index[rows], kind="stable")]
        optimum = np.asarray(entry["params"]["optimal_lambda"])
        assert np.ptp(optimum) > 0.05  # unequal groups: a tied target would not pass the next line
        np.testing.assert_allclose(item.target[rows], optimum, atol=1e-6)


def test_unknown_layout_is_refused(tmp_path):
    with pytest.raises(ArgumentError, match="layout must be one of balanced, indexed"):
        write_synthetic(tmp_path / "x", 1, 0, layout="flat")
