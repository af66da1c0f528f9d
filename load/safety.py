"""Load and fault runs target loopback addresses only."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


class NotLoopbackError(ValueError):
    pass


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_loopback(url: str) -> str:
    """`url` unchanged if its host is a loopback address; NotLoopbackError otherwise."""
    host = urlsplit(url).hostname or ""
    if not is_loopback_host(host):
        raise NotLoopbackError(
            f"refusing to load {url!r}: load runs target loopback addresses only (127.0.0.1, ::1)"
        )
    return url
