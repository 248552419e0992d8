"""The person's offer page ``/o/<token>``: a credential waiting to be added to their wallet.

It looks and behaves like the verification page: the organization and the credential's name, a
QR code and a same-device button carrying the ``openid-credential-offer://`` link (OpenID4VCI
1.0 §4.1, offer by reference), and a status region htmx polls until the wallet has taken the
credential. Without JavaScript the "Check again" link reloads the page. The transaction code is
never on this page, only that one will be asked for (OpenID4VCI 1.0 §3.5: it travels apart
from the offer). The token is the only key to the page: no sign-in, no cookie.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from flask import request
from flask.typing import ResponseReturnValue

from app import clock
from app.errors import NotFound
from app.issuance import operations as issuing
from app.issuance.links import IssuerLinks
from app.pages.state import WAIT_SECONDS
from app.pages.views import bp, render
from app.web.requests import base_url

FINAL = frozenset({"ISSUED", "REVOKED", "EXPIRED"})


@dataclass(frozen=True)
class OfferPage:
    """What the page shows of one offer, read once per request."""

    token: str
    organization: str
    credential: str
    description: str
    status: str
    # The wallet link, only while the offer can still be taken.
    offer_url: str | None
    tx_code_length: int | None
    expires_at: datetime | None
    # Names the wallet apps "No wallet yet?" suggests.
    credential_format: str = ""

    @property
    def path(self) -> str:
        return f"/o/{self.token}"

    @property
    def final(self) -> bool:
        return self.status in FINAL

    def status_url(self, since: int) -> str:
        """The fragment's address says what the page shows, so an unchanged poll is a 204."""
        return f"{self.path}/status?{urlencode({'shown': self.status, 'since': since})}"


def of_token(token: str) -> OfferPage:
    """The offer behind a token; an unknown or replaced token is a 404 page."""
    credential = issuing.offer_by_token(token)
    if credential is None:
        raise NotFound("No offer has this token")
    status = credential.status.value
    links = IssuerLinks(base_url())
    return OfferPage(
        token=token,
        organization=credential.organization.name,
        credential=credential.name,
        description=credential.description or "",
        status=status,
        offer_url=links.offer_url(credential) if status == "OFFERED" else None,
        tx_code_length=credential.tx_code_length if status == "OFFERED" else None,
        expires_at=credential.offer_expires_at,
        credential_format=credential.schema.format,
    )


@bp.get("/o/<token>")
def offer_page(token: str) -> ResponseReturnValue:
    """The offer page; it polls only while the offer is open."""
    page = of_token(token)
    return render(
        "person/offer.html",
        page=page,
        poll=not page.final,
        since=int(clock.now().timestamp()),
        idle=False,
    )


@bp.get("/o/<token>/status")
def offer_status(token: str) -> ResponseReturnValue:
    """204 while what the page shows still holds; otherwise the status region (without the
    polling trigger once final or left open too long) and, out of band, the wallet section
    emptied, since nothing is left to scan."""
    page = of_token(token)
    now = int(clock.now().timestamp())
    since = request.args.get("since", now, type=int)
    idle = not page.final and now - since > WAIT_SECONDS
    if page.status == request.args.get("shown") and not idle:
        return "", 204
    return render(
        "person/_offer_update.html",
        page=page,
        poll=not (page.final or idle),
        since=since,
        idle=idle,
        oob=True,
    )
