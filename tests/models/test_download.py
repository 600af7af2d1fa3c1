"""The download helper, without network: a fake fetch function, or file:// URLs."""

from __future__ import annotations

import functools
import http.server
import threading
import urllib.error

import pytest

from autoreparam.errors import ArgumentError, DataError
from autoreparam.models import data
from autoreparam.models.data.integrity import sha256_of


def _serve_from(data_dir):
    """A fetch function answering each registered URL with the real file's bytes."""
    by_url = {url: data_dir / spec.relpath for spec in data.FILES.values() for url in spec.urls}
    calls = []

    def fetch(url):
        calls.append(url)
        return by_url[url].read_bytes()

    return fetch, calls


def test_download_dataset_into_cache_dir(data_dir, tmp_path):
    fetch, calls = _serve_from(data_dir)
    got = data.download("radon", tmp_path, fetch=fetch)
    assert got == [tmp_path / "radon" / "srrs2.dat", tmp_path / "radon" / "cty.dat"]
    assert calls == [data.FILES["radon_srrs2"].url, data.FILES["radon_cty"].url]
    assert all(sha256_of(p) == data.FILES[n].sha256 for p, n in zip(got, ("radon_srrs2", "radon_cty")))
    # The downloaded folder works as a data folder, and a second call fetches nothing.
    assert data.load_radon("MN", tmp_path).num_houses == 919
    data.download("radon", tmp_path, fetch=fetch)
    assert len(calls) == 2


def test_download_defaults_to_user_cache(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("AUTOREPARAM_DATA", raising=False)
    fetch, _ = _serve_from(data_dir)
    data.download("electric", fetch=fetch)
    assert data.load_electric().num_pairs == 96  # found without AUTOREPARAM_DATA


def test_download_all_covers_every_file(data_dir, tmp_path):
    fetch, _ = _serve_from(data_dir)
    got = data.download("all", tmp_path, fetch=fetch)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in got) == sorted(s.relpath for s in data.FILES.values())


@pytest.fixture
def http_server(data_dir):
    """A local HTTP server over the real data folder, so the default (pooch/requests) download runs."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(data_dir))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


def test_default_downloader_fetches_over_http(http_server, tmp_path, monkeypatch):
    spec = data.FILES["eight_schools"]
    monkeypatch.setitem(data.FILES, "eight_schools", data.FileSpec(spec.relpath, spec.sha256, (http_server + spec.relpath,)))
    (path,) = data.download("eight_schools", tmp_path / "dl")
    assert path == tmp_path / "dl" / spec.relpath and sha256_of(path) == spec.sha256
    # A corrupted copy in the cache is replaced by a fresh download, not kept.
    path.write_bytes(b"{}")
    (path,) = data.download("eight_schools", tmp_path / "dl")
    assert sha256_of(path) == spec.sha256


def test_unreachable_server_is_reported_as_offline(tmp_path, monkeypatch):
    spec = data.FILES["electric"]
    url = "http://127.0.0.1:9/electric.data.json"  # the discard port: nothing listens there
    monkeypatch.setitem(data.FILES, "electric", data.FileSpec(spec.relpath, spec.sha256, (url,)))
    with pytest.raises(DataError, match="offline") as info:
        data.download("electric", tmp_path)
    assert url in str(info.value)


def test_offline_raises_data_error(tmp_path):
    def offline(url):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    with pytest.raises(DataError, match="offline") as info:
        data.download("german_credit", tmp_path, fetch=offline)
    # Every URL was tried and is named.
    assert all(url in str(info.value) for url in data.FILES["german_credit"].urls)
    assert not (tmp_path / "german_credit" / "german.data").exists()


def test_wrong_bytes_are_rejected_and_not_written(tmp_path):
    with pytest.raises(DataError, match=data.FILES["electric"].sha256):
        data.download("electric", tmp_path, fetch=lambda url: b"<html>moved</html>")
    assert not any(tmp_path.rglob("*.json")) and not any(tmp_path.rglob("*.part"))


def test_mirror_is_tried_after_a_failing_url(data_dir, tmp_path):
    good = (data_dir / data.FILES["german_credit"].relpath).read_bytes()
    first = data.FILES["german_credit"].urls[0]

    def fetch(url):
        if url == first:
            raise urllib.error.URLError("down")
        return good

    (path,) = data.download("german_credit", tmp_path, fetch=fetch)
    assert path.read_bytes() == good


def test_unknown_name():
    with pytest.raises(ArgumentError, match="radon"):
        data.download("nope", fetch=lambda url: b"")
