"""What became of an offer email, decided in one place and said in the same words on every
page and in every file that reports it.

"Sent" means handed to the mail server. With ``MAIL_URL`` empty (development) the mail only
goes to the log, and a recipient without an address gets none: saying "sent" then would be
false, so each case has its own words.
"""

from __future__ import annotations

from collections.abc import Collection

from app import mail
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential

# The outcome (as a credential's page branches on it) and the words a table cell uses.
WORDS = {
    "sent": "sent",
    "failed": "not sent",
    "logged": "logged (no mail server configured)",
    "no-address": "no address",
}


def mail_outcome(credential: Credential, undelivered: Collection[str]) -> str:
    """``sent`` (handed to the mail server), ``failed`` (the relay refused or was
    unreachable), ``logged`` (no mail server configured) or ``no-address``; ``undelivered``
    holds the IDs of the credentials whose email failed."""
    if not credential.recipient.email:
        return "no-address"
    if str(credential.id) in undelivered:
        return "failed"
    return "sent" if mail.delivers() else "logged"


def in_words(outcome: str) -> str:
    """The outcome as the results table and its CSV file say it."""
    return WORDS[outcome]


def email_offer(credential: Credential, links: IssuerLinks) -> None:
    """Queue the email with the offer page's link; it leaves when the issuance commits."""
    recipient = credential.recipient
    if not recipient.email:
        return
    mail.send_offer(
        to=recipient.email,
        recipient_name=f"{recipient.first_name} {recipient.last_name}",
        organization=credential.organization.name,
        credential=credential.name,
        offer_page=links.offer_page(credential) or "",
        expires_at=credential.offer_expires_at,
        tx_code_required=credential.tx_code_hash is not None,
        reference=str(credential.id),
        invitation=links.offer_url(credential) if credential.protocol == "didcomm" else None,
    )
