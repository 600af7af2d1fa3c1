"""A labels folder records its corpus and label settings, and refuses others."""

from __future__ import annotations

import json

import pytest

from autoreparam.errors import ArgumentError
from autoreparam.meta.labels import LABEL_CONFIG, check_manifest


def _corpus(folder, seed):
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"n": 10, "seed": seed, "seconds": 0.1}))
    return folder


def test_labels_folder_refuses_another_corpus_or_settings(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 0)
    out = tmp_path / "labels"
    check_manifest(corpus, out, LABEL_CONFIG, "prior")
    check_manifest(corpus, out, LABEL_CONFIG, "prior")  # same settings: resumes
    with pytest.raises(ArgumentError, match="labels.*probes"):
        check_manifest(corpus, out, LABEL_CONFIG, "fit")
    with pytest.raises(ArgumentError, match="config"):
        check_manifest(corpus, out, None, "prior")
    with pytest.raises(ArgumentError, match="corpus.*another labels folder"):
        check_manifest(_corpus(tmp_path / "other", 1), out, LABEL_CONFIG, "prior")
