"""Where the person goes back to: the verification's ``return_url``, carrying who came back.

The person's page links to ``return_url`` once there is an outcome. For the organization's
site to know who is returning without asking again, the address may hold the placeholders
``{individual_id}`` and ``{customer_id}``; each is replaced, percent-encoded, by the
individual's ID and the ``customer_id`` the backend opened it with (for a policy request, the
policy request's ID and an empty ``customer_id``). Nothing else is added to the address: a
verification that names no placeholder returns the person to exactly the address it gave.

What arrives there is only a pointer, which anyone can type: the backend takes the decision
from the authenticated lookup of that individual, never from the address.
"""

from __future__ import annotations

import re
from typing import Protocol
from urllib.parse import quote, urlsplit

from app.errors import InvalidRequest

INDIVIDUAL_ID = "{individual_id}"
CUSTOMER_ID = "{customer_id}"
PLACEHOLDERS = (INDIVIDUAL_ID, CUSTOMER_ID)
_BRACED = re.compile(r"\{[^{}]*\}")


class Returning(Protocol):
    id: object


def check_return_url(url: str) -> str:
    """Refuse an address with a placeholder that would never be filled in, or one that only
    becomes an http(s) address once filled (the host must be fixed)."""
    unknown = [p for p in _BRACED.findall(url) if p not in PLACEHOLDERS]
    if unknown:
        raise InvalidRequest(
            f"return_url: unknown placeholder {unknown[0]} (known: {', '.join(PLACEHOLDERS)})"
        )
    try:
        host = urlsplit(url).netloc
    except ValueError:  # an unbalanced "[" or "]" in the host, which no address has
        raise InvalidRequest("return_url is not a valid address") from None
    if any(p in host for p in PLACEHOLDERS):
        raise InvalidRequest("return_url: placeholders belong in the path or query, not the host")
    return url


def return_address(url: str | None, subject: Returning) -> str | None:
    """``url`` with its placeholders filled in for ``subject``; None without an address."""
    if not url:
        return None
    customer_id = getattr(subject, "customer_id", None) or ""
    return url.replace(INDIVIDUAL_ID, quote(str(subject.id), safe="")).replace(
        CUSTOMER_ID, quote(customer_id, safe="")
    )
