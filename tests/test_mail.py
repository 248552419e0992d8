"""The mail adapter against a real SMTP server (PyPI aiosmtpd on loopback): plain SMTP with
AUTH, STARTTLS, implicit TLS, certificate checks, and the rule that mail leaves only once the
issuance it announces is committed, and that a relay failure never undoes it."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from urllib.parse import quote

import pytest
from factories import make_staff
from support.smtp import PASSWORD, USER, make_certificate, smtp_server

from app import mail
from app.extensions import db
from app.mail.offer import OfferMail, offer_message, offer_text
from app.mail.transport import (
    ConsoleMailer,
    MailError,
    SmtpSettings,
    UnconfiguredMailer,
    mailer_from_config,
)
from app.organizations.models import Organization
from app.recipients.models import Recipient
from app.recipients.operations import create_recipient

SENDER = "Acme credentials <credentials@acme.test>"
OFFER = OfferMail(
    to="ada@example.test",
    recipient_name="Ada Lovelace",
    organization="Acme",
    credential="Nurse licence",
    offer_page="https://verity.test/o/tok-123",
    expires_at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
    tx_code_required=True,
    reference="cred-1",
)


def url(inbox, scheme: str = "smtp", query: str = "") -> str:
    return f"{scheme}://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{inbox.port}{query}"


def send(config: dict, message=None) -> None:
    mailer_from_config({"ENV": "production", **config}).send(
        message or offer_message(OFFER, SENDER)
    )


# -- the message ------------------------------------------------------------------------------


def test_the_offer_email_names_the_organization_and_credential_and_links_to_the_offer_page():
    message = offer_message(OFFER, SENDER)
    assert message["Subject"] == "Acme offers you a credential: Nurse licence"
    assert message["From"] == SENDER
    assert message["To"] == "Ada Lovelace <ada@example.test>"
    text = message.get_content()
    assert "Acme has issued you a credential: Nurse licence." in text
    assert "\nhttps://verity.test/o/tok-123\n" in text
    assert "until 2026-11-30 09:00 UTC" in text
    assert "it is not in this email" in text


def test_without_a_tx_code_the_email_does_not_mention_one():
    text = offer_text(OfferMail(**{**OFFER.__dict__, "tx_code_required": False}))
    assert "code" not in text


def test_a_line_break_in_a_name_never_reaches_a_header():
    hostile = OfferMail(**{**OFFER.__dict__, "organization": "Acme\r\nBcc: all@evil.test"})
    message = offer_message(hostile, SENDER)
    assert message["Bcc"] is None
    assert message["Subject"] == "Acme Bcc: all@evil.test offers you a credential: Nurse licence"
    assert "\r\nBcc:" not in message.as_string()


# -- MAIL_URL ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "security", "port"),
    [
        ("smtp://relay.test", "plain", 25),
        ("smtp://relay.test?starttls=true", "starttls", 587),
        ("smtps://relay.test", "implicit", 465),
        ("smtp://relay.test:2525?starttls=1", "starttls", 2525),
    ],
)
def test_mail_url_forms(value, security, port):
    settings = SmtpSettings.from_url(value, 5)
    assert (settings.host, settings.security, settings.port) == ("relay.test", security, port)
    assert settings.username is None


def test_user_and_password_are_percent_decoded_and_never_shown():
    settings = SmtpSettings.from_url("smtp://me%40acme.test:s%3Acret%40@relay.test:25", 5)
    assert (settings.username, settings.password) == ("me@acme.test", "s:cret@")
    assert "s:cret" not in repr(settings)
    assert "me@acme.test@relay.test:25" in repr(settings)


@pytest.mark.parametrize("value", ["http://relay.test", "smtp://", "relay.test:25"])
def test_a_malformed_mail_url_refuses_to_start(make_app, value):
    with pytest.raises(ValueError, match="MAIL_URL must look like"):
        make_app(MAIL_URL=value)


def test_without_mail_url_development_logs_and_production_sends_nothing():
    assert isinstance(mailer_from_config({"ENV": "development"}), ConsoleMailer)
    silent = mailer_from_config({"ENV": "production"})
    assert isinstance(silent, UnconfiguredMailer)
    with pytest.raises(MailError, match="MAIL_URL is not set"):
        silent.send(offer_message(OFFER, SENDER))


def test_the_console_mailer_logs_the_message_the_person_would_read(caplog):
    caplog.set_level(logging.INFO, logger="app.mail")
    ConsoleMailer().send(offer_message(OFFER, SENDER))
    logged = caplog.text
    assert "To: Ada Lovelace <ada@example.test>" in logged
    assert "Subject: Acme offers you a credential: Nurse licence" in logged
    assert "https://verity.test/o/tok-123" in logged


# -- SMTP against a real server -----------------------------------------------------------------


def test_plain_smtp_with_auth_delivers_the_message():
    with smtp_server() as inbox:
        send({"MAIL_URL": url(inbox)})
    [received] = inbox.messages
    assert received.authenticated_as == USER
    assert received.sender == "credentials@acme.test"
    assert received.recipients == ["ada@example.test"]
    assert received.message["Subject"] == "Acme offers you a credential: Nurse licence"
    assert "https://verity.test/o/tok-123" in received.message.get_content()
    assert received.tls is False


def test_a_wrong_password_is_a_mail_error():
    with smtp_server() as inbox, pytest.raises(MailError, match="refused"):
        send({"MAIL_URL": f"smtp://{USER}:wrong@127.0.0.1:{inbox.port}"})
    assert inbox.messages == []


def test_starttls_upgrades_before_auth_and_checks_the_certificate(tmp_path):
    certificate = make_certificate(tmp_path)
    with smtp_server(certificate=certificate, require_starttls=True) as inbox:
        send({"MAIL_URL": url(inbox, query="?starttls=true"), "MAIL_CA_FILE": certificate.path})
    [received] = inbox.messages
    assert received.tls is True
    assert received.authenticated_as == USER


def test_starttls_refuses_a_certificate_it_cannot_trust(tmp_path):
    certificate = make_certificate(tmp_path)
    with (
        smtp_server(certificate=certificate, require_starttls=True) as inbox,
        pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        send({"MAIL_URL": url(inbox, query="?starttls=true")})
    assert inbox.messages == []


def test_starttls_asked_for_but_not_offered_sends_nothing():
    with smtp_server() as inbox, pytest.raises(MailError, match="does not offer STARTTLS"):
        send({"MAIL_URL": url(inbox, query="?starttls=true")})
    assert inbox.messages == []


def test_smtps_speaks_tls_from_the_first_byte(tmp_path):
    certificate = make_certificate(tmp_path)
    with smtp_server(certificate=certificate, implicit_tls=True) as inbox:
        send({"MAIL_URL": url(inbox, "smtps"), "MAIL_CA_FILE": certificate.path})
    [received] = inbox.messages
    assert received.tls is True
    assert received.authenticated_as == USER


# -- sent after commit ------------------------------------------------------------------------


def queue_offer_with_a_record(app, reference: str = "cred-1") -> None:
    """Store a row (standing in for the issuance) and queue its email in the same transaction."""
    staff = make_staff(app)
    organization = db.session.get(Organization, __import__("uuid").UUID(staff.organization_id))
    create_recipient(
        organization, {"first_name": "Ada", "last_name": "Lovelace", "email": OFFER.to}
    )
    mail.send_offer(**{**OFFER.__dict__, "reference": reference})


def recipients_stored() -> int:
    return db.session.query(Recipient).count()


def test_mail_leaves_only_when_the_transaction_commits(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=url(inbox), MAIL_FROM=SENDER)
        with app.app_context():
            queue_offer_with_a_record(app)
            assert inbox.messages == []
            db.session.commit()
            assert len(inbox.messages) == 1
            assert mail.undelivered() == []
            db.session.commit()
    assert len(inbox.messages) == 1, "a later commit does not send it again"


def test_a_rolled_back_transaction_mails_nothing(make_app):
    with smtp_server() as inbox:
        app = make_app(MAIL_URL=url(inbox), MAIL_FROM=SENDER)
        with app.app_context():
            queue_offer_with_a_record(app)
            db.session.rollback()
            db.session.commit()
            assert recipients_stored() == 0
    assert inbox.messages == []


def test_a_relay_that_is_down_does_not_undo_the_commit_and_is_reported(make_app, caplog):
    with smtp_server() as inbox:
        down = url(inbox)
    app = make_app(MAIL_URL=down, MAIL_FROM=SENDER, MAIL_TIMEOUT=2)
    caplog.set_level(logging.ERROR, logger="app.mail")
    with app.app_context():
        queue_offer_with_a_record(app, reference="cred-42")
        db.session.commit()
        assert mail.undelivered() == ["cred-42"]
        assert mail.undelivered() == [], "reading the failures clears them"
        db.session.remove()
        assert recipients_stored() == 1
    assert "offer email for credential cred-42 not sent" in caplog.text
    assert PASSWORD not in caplog.text
    assert "tok-123" not in caplog.text


# -- the person's language --------------------------------------------------------------------


def test_mails_are_in_the_language_of_the_request_that_sends_them(make_app):
    """An offer mail follows the issuing request's Accept-Language, the authorization code
    mail the pushed request's; English where none is asked for."""
    from issuance.authcode_support import AuthCodeWallet
    from issuance.issuance_support import DIPLOMA, issue, make_org

    with smtp_server() as inbox:
        mailing = make_app(MAIL_URL=url(inbox))
        client = mailing.test_client()
        org = make_org(mailing)
        schema = client.post(
            "/schemas",
            json={**DIPLOMA, "vct": "urn:example:mailed", "authorization_code_by_mail": True},
            headers=org.headers,
        ).get_json()
        client.post(f"/schemas/{schema['id']}/publish", headers=org.headers)

        issue(client, org, schema_id=schema["id"])
        english = inbox.messages[-1].message
        assert english["Subject"].startswith("Acme offers you a credential")
        assert english.get_content().startswith("Hello Ada")

        client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "de-DE, en;q=0.5"
        credential = issue(client, org, schema_id=schema["id"])
        offer = inbox.messages[-1].message
        assert offer["Subject"] == "Acme bietet Ihnen einen Nachweis an: Diploma of Ada"
        assert offer.get_content().startswith("Hallo Ada")

        pushed = AuthCodeWallet().par(client, org, credential, scope=schema["id"])
        assert pushed.status_code == 201, pushed.get_json()
        code = inbox.messages[-1].message
        assert code["Subject"] == "Ihr Code für Diploma of Ada"
        assert code.get_content().startswith("Hallo Ada")
        assert "Ihr Code: " in code.get_content()
