"""A person page offering OpenID4VP and DIDComm says, beside each code and wallet button,
which wallets it is for, in each of the nine languages; and the browser's Digital Credentials
API button is offered with the OpenID4VP code wherever that code is (it used to be drawn only
when OpenID4VP came first, so a DIDComm-first page lost it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from factories import make_staff, make_verification

from app.web.language import LANGUAGES
from didcomm.test_didcomm_verifier import identity_schema

ROOT_DIR = Path(__file__).resolve().parents[2]

SOCIOUS = "For the Socious Wallet and other Identus wallets"
OPENID4VP = "For EU Digital Identity Wallets and other OpenID4VP wallets"


@pytest.fixture
def served(make_app):
    return make_app()


def person_page_id(app, client, protocols: list[str]) -> str:
    staff = make_staff(app)
    verification = make_verification(
        client,
        staff,
        schema_id=identity_schema(client, staff),
        claims=["given_name"],
        attributes=[],
        wallet_protocols=protocols,
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    return individual["id"]


def translated(language: str, message: str) -> str:
    if language == "en":
        return message
    with (ROOT_DIR / f"app/translations/{language}/LC_MESSAGES/messages.po").open("rb") as po:
        return read_po(po, locale=language)[message].string


def sections(page: str) -> tuple[str, str]:
    """The page's first protocol's part (this device and its code) and the other kind's."""
    connect = page[page.index('id="connect"') :]
    first, _, other = connect.partition('id="other-kind-')
    return first, other


@pytest.mark.parametrize("order", [["didcomm", "openid4vp"], ["openid4vp", "didcomm"]])
def test_each_code_and_button_names_its_wallets_and_the_browser_button_stays(served, order):
    client = served.test_client()
    individual = person_page_id(served, client, order)
    for language in LANGUAGES:
        page = client.get(f"/i/{individual}", headers={"Accept-Language": language}).get_data(
            as_text=True
        )
        first, other = sections(page)
        words = {
            "didcomm": translated(language, SOCIOUS),
            "openid4vp": translated(language, OPENID4VP),
        }
        first_kind, other_kind = order
        # Under the button, in the code's caption and in the code's own description.
        assert first.count(words[first_kind]) == 3, (language, first)
        assert words[other_kind] not in first
        assert other.count(words[other_kind]) == 3, (language, other)
        openid4vp_part = first if first_kind == "openid4vp" else other
        assert openid4vp_part.count('id="dc-api"') == 1
        assert page.count('id="dc-api"') == 1


def test_a_page_with_one_protocol_names_no_wallets(served):
    client = served.test_client()
    individual = person_page_id(served, client, ["didcomm"])
    page = client.get(f"/i/{individual}").get_data(as_text=True)
    assert SOCIOUS not in page and 'class="wallet-kind"' not in page
    assert not re.search(r'id="dc-api"', page)  # DIDComm alone: no OpenID4VP request to share
