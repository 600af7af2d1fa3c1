"""A Ray address nobody answers is an error at once, not minutes of Ray's retries (ray_address.py)."""

import socket

import pytest

from autoreparam.errors import ArgumentError
from autoreparam.ray_address import check_reachable


def test_a_dead_address_is_refused_at_once_and_a_live_one_passes():
    with pytest.raises(ArgumentError, match="no Ray cluster answers at 127.0.0.1:1"):
        check_reachable("127.0.0.1:1", timeout=2.0)
    with pytest.raises(ArgumentError, match="must be host:port"):
        check_reachable("localhost")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        check_reachable(f"127.0.0.1:{server.getsockname()[1]}")
    for left_to_ray in (None, "auto", "ray://head:10001"):
        check_reachable(left_to_ray)


def test_ipv6_and_ray_keywords():
    for left_to_ray in ("local",):
        check_reachable(left_to_ray)
    with pytest.raises(ArgumentError, match=r"no Ray cluster answers at \[::1\]:1"):
        check_reachable("[::1]:1", timeout=2.0)
