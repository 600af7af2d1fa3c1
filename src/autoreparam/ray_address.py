"""A Ray cluster's address, checked before ``ray.init`` joins it: Ray retries an address that nobody
answers for minutes, logging timeouts, so a mistyped ``--address`` looked like a hang."""

from __future__ import annotations

import socket

from autoreparam.errors import ArgumentError


def check_reachable(address: str | None, timeout: float = 5.0) -> None:
    """Raise `ArgumentError` unless something listens at ``host:port`` (IPv6 as ``[host]:port``); None,
    "auto", "local" and URLs (``ray://``) are left to Ray."""
    if address is None or address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [::1]:6379
    if not host or not port.isdigit():
        raise ArgumentError(f"--address must be host:port of a Ray cluster's head (or 'auto'), got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as error:
        raise ArgumentError(f"no Ray cluster answers at {address} ({error.strerror or error}); start one there with "
                            "`ray start --head`, or leave --address out for a local cluster") from None
