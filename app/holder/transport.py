"""HTTP for the holder: https only, except plain http to this machine (a development server).
Not named ``http``, which would hide the standard library's module when this directory is on
the path.

Every answer the holder acts on must come with the status the protocol names; anything
else becomes a ``HolderError`` quoting the peer's OAuth-style error when it sent one.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

import requests

TIMEOUT = 10.0
LOOPBACK_NAMES = {"localhost"}


class HolderError(Exception):
    """A step of receiving or presenting failed; the message says which and why."""


def check_url(url: str, what: str) -> str:
    """Refuse anything but https, and http to a loopback address (development)."""
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or not parts.hostname or parts.scheme not in ("https", "http"):
        raise HolderError(f"{what} is not an http(s) URL: {url!r}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise HolderError(f"{what} must use https (plain http only to this machine): {url}")
    return url


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Http:
    """A ``requests`` session that never follows redirects (a redirect names an unchecked URL)."""

    def __init__(self, session: requests.Session | None = None) -> None:
        self.session = session or requests.Session()

    def call(
        self, method: str, url: str, what: str, *, expect: int = 200, **kwargs: Any
    ) -> requests.Response:
        check_url(url, what)
        try:
            response = self.session.request(
                method, url, timeout=TIMEOUT, allow_redirects=False, **kwargs
            )
        except requests.RequestException as exc:
            raise HolderError(f"{what}: {method} {url} failed: {exc}") from None
        if response.status_code != expect:
            raise HolderError(
                f"{what}: {method} {url} answered {response.status_code}{_why(response)}"
            )
        return response

    def json(self, method: str, url: str, what: str, **kwargs: Any) -> dict[str, Any]:
        response = self.call(method, url, what, **kwargs)
        try:
            body = response.json()
        except ValueError:
            raise HolderError(f"{what}: {url} did not answer JSON") from None
        if not isinstance(body, dict):
            raise HolderError(f"{what}: {url} did not answer a JSON object")
        return body


def _why(response: requests.Response) -> str:
    """The peer's ``error`` and ``error_description`` (RFC 6749 §5.2 shape) or its ``code``."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    parts = [str(body[name]) for name in ("error", "code", "error_description") if body.get(name)]
    return f" ({': '.join(parts)})" if parts else ""
