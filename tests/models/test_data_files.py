"""Locating, hash-checking and caching the data files (no network)."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from autoreparam.errors import DataError
from autoreparam.models import data
from autoreparam.models.data import cache, paths
from autoreparam.models.data.integrity import require_finite, sha256_of, verified_path


def _copy(data_dir, tmp_path, *names):
    for name in names:
        rel = data.FILES[name].relpath
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data_dir / rel, tmp_path / rel)
    return tmp_path


def test_registry_hashes_match_source_md(data_dir):
    # The hard-coded hashes are the ones each folder's SOURCE.md records.
    for name, spec in data.FILES.items():
        source_md = (data_dir / spec.relpath).parent / "SOURCE.md"
        row = [line for line in source_md.read_text().splitlines() if f"`{spec.relpath.split('/')[-1]}`" in line]
        assert row, f"{name}: no row for the file in {source_md}"
        assert spec.sha256 in row[0], name
        assert sha256_of(data_dir / spec.relpath) == spec.sha256, name


def test_every_url_is_public_https():
    for name, spec in data.FILES.items():
        assert spec.urls and all(u.startswith("https://") for u in spec.urls), name
    assert "4d6938c322ea975d7db71fd3f09950e5c905330e" in data.FILES["radon_srrs2"].url


def test_missing_file_names_path_env_var_and_download(tmp_path):
    with pytest.raises(DataError) as info:
        data.load_electric(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "electric" / "electric.data.json") in message
    assert "AUTOREPARAM_DATA" in message and "download('electric')" in message


def test_hash_mismatch_names_file_and_both_hashes(data_dir, tmp_path):
    _copy(data_dir, tmp_path, "electric")
    target = tmp_path / data.FILES["electric"].relpath
    target.write_bytes(target.read_bytes().replace(b"48.9", b"49.9", 1))
    with pytest.raises(DataError) as info:
        data.load_electric(tmp_path)
    message = str(info.value)
    assert "electric/electric.data.json" in message
    assert data.FILES["electric"].sha256 in message and sha256_of(target) in message


def test_hash_is_checked_even_after_the_file_was_parsed(data_dir, tmp_path):
    # The in-process cache must not hide a file that changed since it was parsed.
    _copy(data_dir, tmp_path, "eight_schools")
    data.load_eight_schools(tmp_path)
    target = tmp_path / data.FILES["eight_schools"].relpath
    target.write_bytes(target.read_bytes() + b"\n")
    with pytest.raises(DataError, match="expected sha256"):
        data.load_eight_schools(tmp_path)


def test_data_dir_resolution_order(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AUTOREPARAM_DATA", raising=False)
    assert paths.resolve_data_dir() == tmp_path / "xdg" / "autoreparam" / "data"
    monkeypatch.setenv("AUTOREPARAM_DATA", str(tmp_path / "env"))
    assert paths.resolve_data_dir() == tmp_path / "env"
    assert paths.resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"


def test_env_var_is_used_by_loaders(data_dir, monkeypatch):
    monkeypatch.setenv("AUTOREPARAM_DATA", str(data_dir))
    assert data.load_electric().num_pairs == 96


def test_require_finite_names_source_and_field():
    require_finite("some/file.dat", {"ok": np.ones(3), "ints": np.arange(3)})
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(DataError, match=r"some/file\.dat.*'x'"):
            require_finite("some/file.dat", {"x": np.array([1.0, bad])})


def _fake_file(monkeypatch, tmp_path, content: bytes):
    # A registered file whose hash is that of `content`, so that parsing (not hashing) is tested.
    path = tmp_path / "eight_schools" / "schools.data.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    spec = data.FILES["eight_schools"]
    monkeypatch.setitem(data.FILES, "eight_schools", data.FileSpec(spec.relpath, sha256_of(path), spec.urls))
    return path


def test_non_finite_values_in_a_file_are_rejected(monkeypatch, tmp_path):
    _fake_file(monkeypatch, tmp_path, b'{"y": [1, NaN], "sigma_y": [1, 2], "N": 2}')
    with pytest.raises(DataError, match=r"eight_schools/schools\.data\.json.*'y'"):
        data.load_eight_schools(tmp_path)


def test_disk_cache_is_written_keyed_by_hash_and_reused(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = _fake_file(monkeypatch, tmp_path, b'{"y": [1, 2], "sigma_y": [3, 4], "N": 2}')
    sha = sha256_of(path)
    calls = []

    def parser(p):
        calls.append(p)
        return {"y": np.array([1.0, 2.0])}

    first = cache.read_parsed("eight_schools", parser, tmp_path)
    written = list((tmp_path / "xdg" / "autoreparam" / "parsed").glob("*.npz"))
    assert [f.name for f in written] == [f"eight_schools-{sha}-p{cache.PARSER_VERSION}.npz"]
    assert not list(written[0].parent.glob("*.tmp")), "temporary file left behind"
    assert not first["y"].flags.writeable
    cache.clear_memory_cache()
    second = cache.read_parsed("eight_schools", parser, tmp_path)
    assert len(calls) == 1, "the disk cache should have been used"
    np.testing.assert_array_equal(first["y"], second["y"])


def test_corrupt_disk_cache_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = _fake_file(monkeypatch, tmp_path, b'{"y": [5, 6], "sigma_y": [3, 4], "N": 2}')
    target = tmp_path / "xdg" / "autoreparam" / "parsed" / f"eight_schools-{sha256_of(path)}-p{cache.PARSER_VERSION}.npz"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not a zip file")
    cache.clear_memory_cache()
    np.testing.assert_array_equal(data.load_eight_schools(tmp_path).y, [5.0, 6.0])


def test_unwritable_cache_folder_is_skipped(monkeypatch, tmp_path, data_dir):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    cache.clear_memory_cache()
    assert data.load_electric(data_dir).num_classrooms == 192
    assert blocker.read_text().startswith("a file")


def test_verified_path_returns_hash(data_dir):
    path, sha = verified_path("radon_cty", data_dir)
    assert path == data_dir / "radon" / "cty.dat" and re.fullmatch("[0-9a-f]{64}", sha)
