"""QR codes as inline SVG: no image request, nothing for the CSP to block."""

from __future__ import annotations

from functools import lru_cache

import segno
from markupsafe import Markup, escape

# Rendering one costs about 20 ms (measured) and a person's link stays the same for its whole
# window, while the page is reloaded and every poll that brings a change redraws it: each
# drawing is kept, per worker process, for the last links drawn.
QR_CACHE_SIZE = 1024


@lru_cache(maxsize=QR_CACHE_SIZE)
def qr_svg(data: str, label: str) -> Markup:
    """The QR code for ``data`` as SVG markup named ``label`` for assistive technology.

    segno writes presentation attributes (``fill``, ``stroke``), never ``style``, so a strict
    ``style-src`` does not touch it. A viewBox instead of a fixed size lets CSS scale it to the
    screen; the light background is explicit so the code still scans in dark mode.
    """
    code = segno.make_qr(data, error="m")
    svg = code.svg_inline(
        omitsize=True, svgclass="qr", lineclass=None, dark="#000", light="#fff", border=4
    )
    return Markup(svg.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1))
