"""The email that tells a person a credential waits for them.

It names the organization and the credential and links to the offer page, which carries the QR
code and the wallet button. It never carries the transaction code: OpenID4VCI 1.0 §3.5 asks
for that code to travel by another channel than the offer, or it protects nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import formataddr, make_msgid

from flask_babel import gettext as _
from flask_babel import ngettext

WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class OfferMail:
    to: str
    recipient_name: str
    organization: str
    credential: str
    offer_page: str
    expires_at: datetime | None = None
    tx_code_required: bool = False
    # A DIDComm offer's invitation, for a wallet that reads it from the email itself.
    invitation: str | None = None
    # For the log when sending fails (a credential ID): never the address or the link.
    reference: str = ""


def one_line(text: str) -> str:
    """Names come from staff input: no line break may reach a header (header injection)."""
    return WHITESPACE.sub(" ", text).strip()


def offer_text(mail: OfferMail) -> str:
    lines = [
        _("Hello %(name)s,", name=one_line(mail.recipient_name)),
        "",
        _(
            "%(organization)s has issued you a credential: %(credential)s.",
            organization=one_line(mail.organization),
            credential=one_line(mail.credential),
        ),
        "",
        _("Open this page to add it to your digital identity wallet:"),
        mail.offer_page,
        "",
    ]
    if mail.invitation:
        lines += [
            _("Or open this invitation in your Socious Wallet or another Identus wallet:"),
            mail.invitation,
            "",
        ]
    if mail.expires_at is not None:
        when = mail.expires_at.strftime("%Y-%m-%d %H:%M UTC")
        lines += [_("The offer can be taken once, until %(moment)s.", moment=when), ""]
    if mail.tx_code_required:
        lines += [
            _(
                "Your wallet will ask for a code. %(organization)s gives it to you separately; "
                "it is not in this email.",
                organization=one_line(mail.organization),
            ),
            "",
        ]
    lines += [_("If you were not expecting this, you can ignore this email.")]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class AuthorizationCodeMail:
    """The one-time code the authorization page asks for (a schema's
    ``authorization_code_by_mail``): it proves the person reads the recipient's mail, not
    only that they hold the offer's link."""

    to: str
    recipient_name: str
    organization: str
    credential: str
    code: str
    minutes: int
    reference: str = ""


def authorization_code_text(mail: AuthorizationCodeMail) -> str:
    return (
        "\n".join(
            [
                _("Hello %(name)s,", name=one_line(mail.recipient_name)),
                "",
                _(
                    "Your wallet asked %(organization)s for your credential: %(credential)s.",
                    organization=one_line(mail.organization),
                    credential=one_line(mail.credential),
                ),
                "",
                _("Your code: %(code)s", code=mail.code),
                "",
                ngettext(
                    "Type it on the page your wallet opened. It works for %(num)d minute.",
                    "Type it on the page your wallet opened. It works for %(num)d minutes.",
                    mail.minutes,
                ),
                "",
                _(
                    "If you did not ask for it, ignore this email: without the code nothing is issued."
                ),
            ]
        )
        + "\n"
    )


def authorization_code_message(mail: AuthorizationCodeMail, sender: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = formataddr((one_line(mail.recipient_name), mail.to))
    message["Subject"] = _("Your code for %(credential)s", credential=one_line(mail.credential))
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].strip(">") or None)
    message.set_content(authorization_code_text(mail))
    return message


def offer_message(mail: OfferMail, sender: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = formataddr((one_line(mail.recipient_name), mail.to))
    message["Subject"] = _(
        "%(organization)s offers you a credential: %(credential)s",
        organization=one_line(mail.organization),
        credential=one_line(mail.credential),
    )
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].strip(">") or None)
    message.set_content(offer_text(mail))
    return message
