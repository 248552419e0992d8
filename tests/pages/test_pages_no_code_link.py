"""The no-code link ``/connect/redirect/{verification_id}?customer=``: it opens the individual
(``opened_by`` link) and sends the person to their page, under the verification's
``anonymous_open``; a link refused is a page in the person's language, never JSON."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import uuid

from factories import make_apikey, make_staff, make_verification

from app.web.language import LANGUAGES

PAGE = re.compile(r"^/i/([0-9a-f-]{36})$")
NOT_VALID = {
    "en": "This link is not valid",
    "ar": "هذا الرابط غير صالح",
    "de": "Dieser Link ist nicht gültig",
    "es": "Este enlace no es válido",
    "fr": "Ce lien n'est pas valide",
    "it": "Questo link non è valido",
    "nl": "Deze link is niet geldig",
    "pl": "Ten link jest nieprawidłowy",
    "pt": "Este link não é válido",
}


def sig(secret: str, customer_id: str) -> str:
    mac = hmac.new(secret.encode(), customer_id.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def follow(client, verification_id: str, **query) -> str:
    """The individual ID the link redirected to."""
    answer = client.get(f"/connect/redirect/{verification_id}", query_string=query)
    assert answer.status_code == 303, answer.get_data(as_text=True)
    match = PAGE.match(answer.headers["Location"])
    assert match, answer.headers["Location"]
    return match.group(1)


def lookup(client, verification_id: str, customer_id: str, key: str) -> dict:
    answer = client.get(
        f"/verifications/{verification_id}/individuals/{customer_id}", headers={"apikey": key}
    )
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def test_the_link_opens_the_customer_s_individual_once_and_says_link(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)
    first = follow(client, verification, customer="crm-42")
    assert follow(client, verification, customer="crm-42") == first  # idempotent
    found = lookup(client, verification, "crm-42", key)
    assert found["id"] == first and found["opened_by"] == {"kind": "link"}
    assert client.get(f"/i/{first}").status_code == 200
    # The backend's later open finds the link's record, still saying link.
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-42", "verification_id": verification},
        headers={"apikey": key},
    )
    assert opened.status_code == 200 and opened.get_json()["opened_by"] == {"kind": "link"}


def test_the_link_finds_an_individual_the_backend_opened_without_replacing_the_opener(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    key = make_apikey(app, staff.organization_id)
    opened = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-7", "verification_id": verification},
        headers={"apikey": key},
    ).get_json()
    assert follow(client, verification, customer="crm-7") == opened["id"]
    assert lookup(client, verification, "crm-7", key)["opened_by"]["kind"] == "backend"


def test_without_customer_the_link_makes_a_new_unguessable_customer_id(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff)["id"]
    first, second = follow(client, verification), follow(client, verification)
    assert first != second
    listed = client.get(f"/verifications/{verification}/individuals", headers=staff.headers())
    customers = [row["customer_id"] for row in listed.get_json()["results"]]
    assert len(customers) == 2
    for customer in customers:
        assert customer.startswith("link_") and len(customer) >= 5 + 24


def test_a_signed_verification_s_link_needs_the_customer_sig(app, client):
    staff = make_staff(app)
    created = make_verification(client, staff, anonymous_open="signed")
    verification, secret = created["id"], created["link_secret"]
    good = follow(client, verification, customer="crm-42", customer_sig=sig(secret, "crm-42"))
    uuid.UUID(good)
    for query in (
        {"customer": "crm-42"},
        {"customer": "crm-42", "customer_sig": sig(secret, "crm-43")},
        {},  # nothing could have signed a customer ID the link would make
    ):
        refused = client.get(f"/connect/redirect/{verification}", query_string=query)
        assert refused.status_code == 403, query
        assert refused.mimetype == "text/html"
        assert "This link is not valid" in refused.get_data(as_text=True)


def test_a_refused_verification_s_link_is_a_page_in_the_person_s_language(app, client):
    staff = make_staff(app)
    verification = make_verification(client, staff, anonymous_open="refused")["id"]
    for language in LANGUAGES:
        refused = client.get(
            f"/connect/redirect/{verification}?customer=crm-42",
            headers={"Accept-Language": language},
        )
        assert refused.status_code == 403
        assert refused.mimetype == "text/html"
        assert NOT_VALID[language] in refused.get_data(as_text=True), language
    listed = client.get(f"/verifications/{verification}/individuals", headers=staff.headers())
    assert listed.get_json()["total"] == 0


def test_an_unknown_verification_s_link_is_a_not_found_page(app, client):
    missing = client.get(f"/connect/redirect/{uuid.uuid4()}?customer=crm-42")
    assert missing.status_code == 404 and missing.mimetype == "text/html"
    malformed = client.get("/connect/redirect/not-an-id")
    assert malformed.status_code == 404 and malformed.mimetype == "text/html"


def test_the_customer_sig_in_the_link_is_kept_out_of_the_request_log(app, client, caplog):
    staff = make_staff(app)
    created = make_verification(client, staff, anonymous_open="signed")
    signature = sig(created["link_secret"], "crm-42")
    with caplog.at_level("INFO", logger="verity.request"):
        follow(client, created["id"], customer="crm-42", customer_sig=signature)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "/connect/redirect/" in logged
    assert signature not in logged
