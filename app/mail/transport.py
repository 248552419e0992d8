"""How a message leaves the service: an SMTP relay named by ``MAIL_URL``, or the log.

``MAIL_URL`` forms (user and password percent-encoded when they hold ``@`` or ``:``):

- ``smtp://user:pass@host:port``: plain SMTP (port 25 by default), AUTH only if a user is given;
- ``smtp://user:pass@host:587?starttls=true``: upgraded with STARTTLS before AUTH, and refused if
  the server does not offer it (port 587 by default);
- ``smtps://user:pass@host:465``: TLS from the first byte (RFC 8314 implicit TLS).

TLS always checks the server's certificate and name; ``MAIL_CA_FILE`` adds a private CA for an
internal relay. An empty ``MAIL_URL`` logs messages instead (development), or in production logs
only that nothing was sent, since an offer link in a production log is a credential anyone
reading the log could take.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger(__name__)

TRUE = frozenset({"1", "true", "yes", "required"})


class MailError(Exception):
    """The message could not be handed to the relay."""


class Mailer(Protocol):
    def send(self, message: EmailMessage) -> None:
        """Hand ``message`` over, or raise ``MailError`` (or an ``OSError``)."""


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    username: str | None
    password: str | None
    # "plain", "starttls" or "implicit".
    security: str
    timeout: float

    @classmethod
    def from_url(cls, url: str, timeout: float) -> SmtpSettings:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("MAIL_URL must look like smtp://user:pass@host:port or smtps://...")
        starttls = parse_qs(parts.query).get("starttls", ["false"])[-1].lower() in TRUE
        security = "implicit" if parts.scheme == "smtps" else "starttls" if starttls else "plain"
        default_port = {"implicit": 465, "starttls": 587, "plain": 25}[security]
        return cls(
            host=parts.hostname,
            port=parts.port or default_port,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            security=security,
            timeout=timeout,
        )

    def __repr__(self) -> str:
        """Never the password, should these settings end up in a log or a traceback."""
        user = f"{self.username}@" if self.username else ""
        return f"SmtpSettings({self.security} {user}{self.host}:{self.port})"


class SmtpMailer:
    """One connection per message: offers are rare next to verifications, and a pooled
    connection a relay dropped in between would fail the next send for nothing."""

    def __init__(self, settings: SmtpSettings, tls: ssl.SSLContext) -> None:
        self.settings = settings
        self.tls = tls

    def send(self, message: EmailMessage) -> None:
        s = self.settings
        try:
            with self._connect() as smtp:
                if s.security == "starttls":
                    self._starttls(smtp)
                if s.username:
                    smtp.login(s.username, s.password or "")
                smtp.send_message(message)
        except smtplib.SMTPException as exc:
            raise MailError(f"{s.host} refused the message: {exc}") from exc

    def _starttls(self, smtp: smtplib.SMTP) -> None:
        """Asked for STARTTLS, never fall back to the clear: the password would follow."""
        try:
            smtp.starttls(context=self.tls)
        except smtplib.SMTPNotSupportedError as exc:
            raise MailError(f"{self.settings.host} does not offer STARTTLS") from exc

    def _connect(self) -> smtplib.SMTP:
        s = self.settings
        if s.security == "implicit":
            return smtplib.SMTP_SSL(s.host, s.port, timeout=s.timeout, context=self.tls)
        return smtplib.SMTP(s.host, s.port, timeout=s.timeout)


class ConsoleMailer:
    """Development: the message goes to the log, so the offer page link can be followed from
    the terminal. The message holds nothing the person would not read (never a tx_code)."""

    # Pages say "written to the log", never "sent", for what this mailer handled.
    delivers = False

    def send(self, message: EmailMessage) -> None:
        body = message.get_body(("plain",))
        text = body.get_content() if body is not None else ""
        log.info(
            "mail (not sent, MAIL_URL is empty)\nTo: %s\nSubject: %s\n\n%s",
            message["To"],
            message["Subject"],
            text,
        )


class UnconfiguredMailer:
    """Production without ``MAIL_URL``: nothing is sent and nothing secret is logged."""

    def send(self, message: EmailMessage) -> None:
        raise MailError("MAIL_URL is not set, so no email is sent")


def mailer_from_config(config: dict[str, Any]) -> Mailer:
    """The mailer the settings ask for; a malformed ``MAIL_URL`` stops the start."""
    url = config.get("MAIL_URL") or ""
    if not url:
        return ConsoleMailer() if config.get("ENV") == "development" else UnconfiguredMailer()
    tls = ssl.create_default_context(cafile=config.get("MAIL_CA_FILE") or None)
    return SmtpMailer(SmtpSettings.from_url(url, float(config.get("MAIL_TIMEOUT", 10))), tls)
