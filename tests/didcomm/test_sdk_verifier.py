"""The Socious Wallet's agent (Identus SDK 7.0.0, unmodified, in Node) verified by Verity over
DIDComm, end to end: the backend opens an individual of a DIDComm verification and hands out
``connection_url``; the SDK accepts the invitation, Verity answers through the loopback
mediator, the SDK presents, and the page and the lookup read the outcome.

The holder's credential comes from an issuer built here in Identus's shape: a long-form
did:prism issuer signing a JWT VC (ES256K) to the holder's own did:prism, with a StatusList2021
entry whose list is signed as the Identus cloud agent signs it (statuslist2021_support) and
served on loopback. Each test runs a fresh wallet: the Socious Wallet presents the first of its
credentials of type ``verification``, whatever was asked. (A credential about someone else
cannot be tried this way: the SDK refuses to present it. ``test_didcomm_verifier.py`` sends
one with a holder of its own.)
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from factories import make_apikey, make_staff, make_verification
from statuslist.statuslist2021_support import entry, sign_secp256k1, unsigned_list
from trust.trust_support import LocalServer

from app.didcomm import prism
from didcomm.holder import Holder
from didcomm.mediator import Mediator

LIST_PATH = "/cloud-agent/credential-status/list-1"
KYC_TYPE = "VerifiableCredential"
TIMEOUT = 30


@pytest.fixture
def wallet(mediator: Mediator) -> Iterator[Holder]:
    with Holder(mediator.did) as running:
        yield running


@dataclass
class Issuer:
    """An Identus-shaped issuer: a long-form did:prism and a StatusList2021 list it signs."""

    server: LocalServer
    did: prism.NewPrismDid
    revoked: set[int]

    @property
    def list_url(self) -> str:
        return self.server.url(LIST_PATH)

    def publish(self) -> None:
        document = unsigned_list(self.list_url, self.did.did, revoked=self.revoked)
        key = self.did.keys["issuing-0"]
        self.server.add(
            LIST_PATH, sign_secp256k1(document, key, method=f"{self.did.did}#issuing-0")
        )

    def credential(self, subject: str, index: int = 3, **changes: Any) -> str:
        """The Socious KYC credential's shape (type verification), to the holder's DID."""
        now = int(time.time())
        payload = {
            "iss": self.did.did,
            "sub": subject,
            "nbf": now - 60,
            "vc": {
                "@context": ["https://www.w3.org/2018/credentials/v1"],
                "type": [KYC_TYPE],
                "credentialSubject": {
                    "id": subject,
                    "type": "verification",
                    "first_name": "Ada",
                    "last_name": "Lovelace",
                    "country": "GB",
                },
                "credentialStatus": entry(self.list_url, index),
            },
            **changes,
        }
        return prism.sign_es256k(payload, self.did.keys["issuing-0"], f"{self.did.did}#issuing-0")

    @property
    def short_form(self) -> str:
        return prism.parse(self.did.did).canonical


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    server = LocalServer()
    made = Issuer(server, prism.make(), set())
    made.publish()
    yield made
    server.stop()


def kyc_verification(
    client, staff, trusted: list[str], types: tuple[str, ...] = (KYC_TYPE,)
) -> dict[str, Any]:
    schema = client.post(
        "/schemas",
        json={
            "name": "Socious KYC",
            "description": "The identity check the Socious Wallet holds",
            "format": "jwt_vc_json",
            "types": list(types),
            "attributes": [
                {"name": "first_name", "description": "First name", "type": "TEXT"},
                {"name": "last_name", "description": "Last name", "type": "TEXT"},
                {"name": "country", "description": "Country", "type": "TEXT"},
            ],
        },
        headers=staff.headers(),
    ).get_json()
    assert client.post(f"/schemas/{schema['id']}/publish", headers=staff.headers()).status_code
    return make_verification(
        client,
        staff,
        schema_id=schema["id"],
        claims=["first_name", "last_name"],
        attributes=[{"name": "country", "operator": "EQUAL", "value": "GB"}],
        trusted_issuers=trusted,
        wallet_protocols=["didcomm"],
    )


def verify_with_the_sdk(
    served,
    wallet: Holder,
    credential: Callable[[str], str],
    trusted: list[str],
    types: tuple[str, ...] = (KYC_TYPE,),
) -> dict[str, Any]:
    """What an organization's backend does, with the SDK as the person's wallet: the lookup
    once the individual leaves REQUESTED."""
    client = served.app.test_client()
    staff = make_staff(served.app)
    verification = kyc_verification(client, staff, trusted, types)
    wallet.store_credential(credential(wallet.prism_did()))
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": verification["id"]},
    ).get_json()
    connected = client.get(f"/verifications/{individual['id']}/connect").get_json()
    assert connected["connection_url"].startswith(f"{served.base}/didcomm/invitation?_oob=")

    wallet.accept(connected["connection_url"])
    wallet.wait_for("presented", timeout=TIMEOUT)

    status = _settled(client, individual["id"])
    key = make_apikey(served.app, staff.organization_id)
    lookup = client.get(
        f"/verifications/{verification['id']}/individuals/crm-1", headers={"apikey": key}
    ).get_json()
    assert lookup["status"] == status
    lookup["page"] = client.get(f"/i/{individual['id']}").get_data(as_text=True)
    return lookup


def _settled(client, individual_id: str) -> str:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        status = client.get(f"/verifications/{individual_id}/verify").get_json()["status"]
        if status in ("VERIFIED", "FAILED"):
            return status
        time.sleep(0.1)
    raise AssertionError("the individual was not decided in time")


def test_a_socious_wallet_holder_is_verified_over_didcomm(served, wallet, issuer):
    lookup = verify_with_the_sdk(served, wallet, issuer.credential, [issuer.short_form])

    assert (lookup["status"], lookup["validation_error"]) == ("VERIFIED", None)
    assert lookup["claims"] == {"first_name": "Ada", "last_name": "Lovelace", "country": "GB"}
    assert lookup["issuer"] == issuer.short_form


def test_a_revoked_credential_fails_with_the_issuers_word(served, wallet, issuer):
    issuer.revoked.add(3)
    issuer.publish()

    lookup = verify_with_the_sdk(served, wallet, issuer.credential, [issuer.short_form])

    assert (lookup["status"], lookup["validation_error"]) == (
        "FAILED",
        "Credential has been revoked by its issuer",
    )


def test_a_credential_from_an_issuer_the_verification_does_not_trust_fails(served, wallet, issuer):
    other = prism.parse(prism.make().did).canonical

    lookup = verify_with_the_sdk(served, wallet, issuer.credential, [other])

    assert lookup["status"] == "FAILED"
    assert issuer.short_form in lookup["validation_error"]


def test_an_expired_credential_fails(served, wallet, issuer):
    def expired(subject: str) -> str:
        return issuer.credential(subject, exp=int(time.time()) - 3600)

    lookup = verify_with_the_sdk(served, wallet, expired, [issuer.short_form])

    assert (lookup["status"], lookup["validation_error"]) == ("FAILED", "Credential has expired")


def test_a_tampered_credential_fails(served, wallet, issuer):
    def tampered(subject: str) -> str:
        head, body, signature = issuer.credential(subject).split(".")
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        claims["vc"]["credentialSubject"]["country"] = "FR"
        changed = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        return f"{head}.{changed}.{signature}"

    lookup = verify_with_the_sdk(served, wallet, tampered, [issuer.short_form])

    assert (lookup["status"], lookup["validation_error"]) == (
        "FAILED",
        "Credential signature does not verify",
    )


def test_the_kyc_credential_presented_for_another_type_fails_saying_so(served, wallet, issuer):
    """The Socious Wallet presents its KYC credential whatever was asked (SDK 7): a
    verification of another type decides on what arrived, and says it is not what it asked."""
    lookup = verify_with_the_sdk(
        served, wallet, issuer.credential, [issuer.short_form], (KYC_TYPE, "NurseLicense")
    )

    assert (lookup["status"], lookup["validation_error"]) == (
        "FAILED",
        "Credential type VerifiableCredential is not the type this verification asks for",
    )
