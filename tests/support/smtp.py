"""A real SMTP server for the mail tests: PyPI ``aiosmtpd`` on loopback, in a thread.

It speaks plain SMTP, STARTTLS or implicit TLS with a certificate made for the run, checks
AUTH against one user, and keeps every message it accepted, as the relay of a deployment would.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

USER, PASSWORD = "mailer", "p@ss:word/1"


@dataclass
class Received:
    sender: str
    recipients: list[str]
    message: EmailMessage
    authenticated_as: str | None
    tls: bool


@dataclass
class Inbox:
    port: int
    messages: list[Received] = field(default_factory=list)

    async def handle_DATA(self, server, session, envelope) -> str:
        parsed = message_from_bytes(envelope.original_content, policy=policy.default)
        self.messages.append(
            Received(
                sender=envelope.mail_from,
                recipients=list(envelope.rcpt_tos),
                message=parsed,  # type: ignore[arg-type]
                authenticated_as=session.auth_data.login.decode() if session.auth_data else None,
                tls=server.transport.get_extra_info("ssl_object") is not None,
            )
        )
        return "250 Message accepted for delivery"


def check_login(server, session, envelope, mechanism, auth_data) -> AuthResult:
    good = (
        isinstance(auth_data, LoginPassword)
        and auth_data.login == USER.encode()
        and auth_data.password == PASSWORD.encode()
    )
    return AuthResult(success=good, handled=False, auth_data=auth_data if good else None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate for 127.0.0.1; ``path`` is what MAIL_CA_FILE names."""

    path: Path
    key_path: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.path, self.key_path)
        return context


def make_certificate(directory: Path) -> Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test mail relay")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "relay.pem", directory / "relay-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return Certificate(cert_path, key_path)


@contextmanager
def smtp_server(
    *,
    certificate: Certificate | None = None,
    implicit_tls: bool = False,
    require_starttls: bool = False,
) -> Iterator[Inbox]:
    """An SMTP relay on a loopback port: STARTTLS offered when a certificate is given, TLS from
    the first byte with ``implicit_tls``. AUTH (user ``USER``) is offered, and required with
    ``require_starttls`` (aiosmtpd rightly warns against requiring it in the clear)."""
    inbox = Inbox(port=free_port())
    context = certificate.server_context() if certificate else None
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=inbox.port,
        ssl_context=context if implicit_tls else None,
        tls_context=None if implicit_tls else context,
        require_starttls=require_starttls,
        authenticator=check_login,
        # aiosmtpd counts only STARTTLS as TLS for its AUTH rules, so over implicit TLS AUTH is
        # offered but not enforced; the tests check that the client logged in.
        auth_required=require_starttls,
        auth_require_tls=require_starttls,
    )
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()
