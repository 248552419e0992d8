"""Email to the people credentials are issued to: the offer email, sent once the issuance is
committed.

A message is queued on the database session and handed to the mailer only when that session's
transaction commits, so a rolled-back issuance never mails a link to nothing. Sending happens
after the commit, so a relay that is down cannot undo an issuance: the failure is logged
(``app.mail`` logger, ERROR, with the credential's ID) and kept for the caller to show, see
``undelivered``. The offer page and "resend" stay the way to reach the person.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from flask import Flask, current_app
from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db
from app.mail.offer import (
    AuthorizationCodeMail,
    OfferMail,
    authorization_code_message,
    offer_message,
)
from app.mail.transport import Mailer, MailError, mailer_from_config

log = logging.getLogger(__name__)

OUTBOX = "mail_outbox"
UNDELIVERED = "mail_undelivered"

__all__ = [
    "AuthorizationCodeMail",
    "MailError",
    "Mailer",
    "OfferMail",
    "delivers",
    "init_app",
    "send_authorization_code",
    "send_offer",
    "undelivered",
]


def init_app(app: Flask) -> None:
    """Build the mailer from the settings (a malformed ``MAIL_URL`` refuses to start) and hook
    the outbox to every session's commit and rollback."""
    app.extensions["mailer"] = mailer_from_config(app.config)
    if not event.contains(Session, "after_commit", _deliver):
        event.listen(Session, "after_commit", _deliver)
        event.listen(Session, "after_soft_rollback", _discard)


def send_offer(
    *,
    to: str,
    recipient_name: str,
    organization: str,
    credential: str,
    offer_page: str,
    expires_at: datetime | None = None,
    tx_code_required: bool = False,
    reference: str = "",
    invitation: str | None = None,
) -> None:
    """Email the person the link to their offer page once the current transaction commits
    (and a DIDComm offer's invitation)."""
    mail = OfferMail(
        to=to,
        recipient_name=recipient_name,
        organization=organization,
        credential=credential,
        offer_page=offer_page,
        expires_at=expires_at,
        tx_code_required=tx_code_required,
        reference=reference,
        invitation=invitation,
    )
    message = offer_message(mail, current_app.config["MAIL_FROM"])
    outbox = db.session.info.setdefault(OUTBOX, [])
    outbox.append((current_app.extensions["mailer"], message, mail.reference))


def send_authorization_code(mail: AuthorizationCodeMail) -> None:
    """Email the one-time code of an authorization request once the transaction commits."""
    message = authorization_code_message(mail, current_app.config["MAIL_FROM"])
    outbox = db.session.info.setdefault(OUTBOX, [])
    outbox.append((current_app.extensions["mailer"], message, mail.reference))


def delivers() -> bool:
    """Whether a message handed over leaves the service; False when ``MAIL_URL`` is empty in
    development and mail only goes to the log (so a page must not say "sent")."""
    return bool(getattr(current_app.extensions["mailer"], "delivers", True))


def undelivered() -> list[str]:
    """References (credential IDs) of offer emails the last commits failed to send; reading
    them clears them."""
    return db.session.info.pop(UNDELIVERED, [])


def _deliver(session: Session) -> None:
    """After commit: send what the committed transaction queued. Never raises, since the
    issuance it reports is already stored."""
    outbox: list[tuple[Mailer, Any, str]] = session.info.pop(OUTBOX, [])
    for mailer, message, reference in outbox:
        try:
            mailer.send(message)
        except Exception as exc:  # whatever the relay or the network did, the issuance stands
            log.error(
                "offer email for credential %s not sent: %s; the offer stands, resend it or "
                "share its offer page",
                reference or "(no reference)",
                exc,
            )
            session.info.setdefault(UNDELIVERED, []).append(reference)


def _discard(session: Session, previous_transaction: SessionTransaction) -> None:
    """A rolled-back transaction's mail is dropped (a savepoint's rollback keeps it: what was
    queued before the savepoint may still commit)."""
    if previous_transaction.parent is None:
        session.info.pop(OUTBOX, None)
