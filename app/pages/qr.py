"""QR codes as inline SVG: no image request, nothing for the CSP to block.

Drawing one costs about 20 ms (measured), while a person's link stays the same for its whole
window and the page is loaded again, and redrawn by every poll that brings a change, within
it. So each drawing is kept: in this process for the last ``QR_CACHE_SIZE`` links, and with
``CACHE_REDIS_URL`` set also in Redis for ``QR_CACHE_SECONDS``, where every worker and every
instance behind the same load balancer finds the one drawing. Redis is only a cache here: when
it cannot be reached the code is drawn, and the page is served all the same.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import segno
from markupsafe import Markup, escape

from app.recently_used import RecentlyUsed

log = logging.getLogger(__name__)

QR_CACHE_SIZE = 1024
# Longer than a link's window (CONNECT_LINK_SECONDS, two minutes by default) and short enough
# that drawings of links nobody opens any more leave Redis on their own.
QR_CACHE_SECONDS = 15 * 60
KEY_PREFIX = "verity:qr:"


def qr_svg(data: str, label: str) -> Markup:
    """The QR code for ``data`` as SVG markup named ``label`` for assistive technology.

    segno writes presentation attributes (``fill``, ``stroke``), never ``style``, so a strict
    ``style-src`` does not touch it. A viewBox instead of a fixed size lets CSS scale it to the
    screen; the light background is explicit so the code still scans in dark mode.
    """
    code = segno.make_qr(data, error="l")
    svg = code.svg_inline(
        omitsize=True, svgclass="qr", lineclass=None, dark="#000", light="#fff", border=4
    )
    return Markup(svg.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1))


class QrCache:
    """Drawings by link: a bounded map in this process, then Redis when one is configured."""

    def __init__(self, redis_url: str = "", size: int = QR_CACHE_SIZE) -> None:
        self.local: RecentlyUsed[str, str] = RecentlyUsed(size)
        self.redis: Any = None
        if redis_url:
            import redis

            self.redis = redis.Redis.from_url(
                redis_url, socket_timeout=0.2, socket_connect_timeout=0.2
            )
        self.redis_failing = False

    def svg(self, data: str, label: str) -> Markup:
        key = KEY_PREFIX + hashlib.sha256(f"{label}\0{data}".encode()).hexdigest()
        found = self.local.get(key)
        if found is None:
            found = self._shared(key)
            if found is None:
                found = str(qr_svg(data, label))
                self._share(key, found)
            self.local.put(key, found)
        return Markup(found)

    def _shared(self, key: str) -> str | None:
        if self.redis is None:
            return None
        try:
            value = self.redis.get(key)
        except Exception as exc:  # a cache: whatever went wrong, draw instead
            self._failed(exc)
            return None
        self.redis_failing = False
        return value.decode() if value is not None else None

    def _share(self, key: str, svg: str) -> None:
        if self.redis is None:
            return
        try:
            self.redis.set(key, svg.encode(), ex=QR_CACHE_SECONDS)
        except Exception as exc:
            self._failed(exc)

    def close(self) -> None:
        """Let go of the Redis connections (an application built and dropped)."""
        if self.redis is not None:
            self.redis.connection_pool.disconnect()

    def _failed(self, exc: Exception) -> None:
        if not self.redis_failing:  # one line per outage, not one per page
            log.warning("QR cache: Redis unavailable, drawing instead: %s", type(exc).__name__)
        self.redis_failing = True
