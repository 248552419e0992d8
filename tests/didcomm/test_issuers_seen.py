"""Trusting the issuer people actually present: a verification lists the issuers its
presentations named (refused ones included), and trusting one adds it to ``trusted_issuers``
and pins the did:prism long form the presentation revealed, for the organization, so the next
credential naming the short form verifies with nothing configured.

The presentations come over DIDComm from the messaging-layer holder (``inbox_holder``); the
issuer is a long-form did:prism made with ``app.didcomm.prism.make``, signing ES256K.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from factories import make_apikey, make_staff, make_verification

from app.didcomm import invitation as oob
from app.didcomm import prism
from app.vcjwt.learned import issuer_long_form
from didcomm.inbox_holder import Holder
from didcomm.test_didcomm_verifier import (
    TYPE,
    V1,
    connect,
    identity_schema,
    options_of,
    present,
    presentation,
)

OTHER_ISSUER = "https://issuer.other.test"


@pytest.fixture
def holder():
    made = Holder.start()
    yield made
    made.server.stop()


@pytest.fixture
def served(make_app):
    return make_app(TRUST_ALLOW_PRIVATE=True)


@pytest.fixture
def issuer() -> prism.NewPrismDid:
    return prism.make()


def short(did: str) -> str:
    return did.rsplit(":", 1)[0] if did.count(":") == 3 else did


def prism_credential(issuer: prism.NewPrismDid, subject: str, *, iss: str, kid: str | None) -> str:
    now = int(time.time())
    payload = {
        "iss": iss,
        "sub": subject,
        "nbf": now - 60,
        "vc": {
            "@context": [V1],
            "type": ["VerifiableCredential", TYPE],
            "credentialSubject": {"id": subject, "given_name": "Erika", "country": "DE"},
        },
    }
    return prism.sign_es256k(payload, issuer.keys["issuing-0"], kid)  # type: ignore[arg-type]


class Flow:
    """One organization's DIDComm verification, and its people presenting to it."""

    def __init__(self, app, holder: Holder, trusted_issuers: list[str], org_name: str = "Acme"):
        self.app, self.holder = app, holder
        self.client = app.test_client()
        self.staff = make_staff(app, email=f"staff@{org_name.lower()}.test", org_name=org_name)
        self.verification = make_verification(
            self.client,
            self.staff,
            schema_id=identity_schema(self.client, self.staff),
            claims=["given_name"],
            attributes=[{"name": "country", "operator": "EQUAL", "value": "DE"}],
            wallet_protocols=["didcomm"],
            trusted_issuers=trusted_issuers,
        )
        self.key = make_apikey(app, self.staff.organization_id)
        self.people = 0

    def present(self, vc_for) -> dict[str, Any]:
        """A new person presents ``vc_for(holder_did)``; their lookup."""
        self.people += 1
        customer = f"crm-{self.people}"
        opened = self.client.post(
            "/verifications/individuals",
            json={"customer_id": customer, "verification_id": self.verification["id"]},
        ).get_json()
        individual = self.client.get(f"/verifications/{opened['id']}/connect")
        invitation = oob.parse_oob(individual.get_json()["connection_url"])
        self.holder.inbox.clear()
        asked = connect(self.app, self.client, self.holder, _Opened(invitation))
        options = options_of(asked)
        vp = presentation(
            self.holder, vc_for(self.holder.did), nonce=options["challenge"], aud=options["domain"]
        )
        present(self.app, self.client, self.holder, asked, vp)
        found = self.client.get(
            f"/verifications/{self.verification['id']}/individuals/{customer}",
            headers={"apikey": self.key},
        )
        return found.get_json()

    def seen(self, staff=None):
        return self.client.get(
            f"/verifications/{self.verification['id']}/issuers-seen",
            headers=(staff or self.staff).headers(),
        )

    def trust(self, issuer: str, staff=None):
        return self.client.post(
            f"/verifications/{self.verification['id']}/trusted-issuers",
            json={"issuer": issuer},
            headers=(staff or self.staff).headers(),
        )


class _Opened:
    def __init__(self, invitation: dict[str, Any]):
        self.invitation = invitation


def test_a_trusted_issuer_seen_is_pinned_and_its_short_form_credentials_then_verify(
    served, holder, issuer
):
    flow = Flow(served, holder, [OTHER_ISSUER])
    by_short_form = lambda did: prism_credential(  # noqa: E731
        issuer, did, iss=short(issuer.did), kid=f"{short(issuer.did)}#issuing-0"
    )
    # Before: a credential naming the short form cannot be checked (nobody published its
    # document), and one naming the long form is refused as untrusted.
    before = flow.present(by_short_form)
    assert before["status"] == "FAILED"
    first = flow.present(
        lambda did: prism_credential(issuer, did, iss=issuer.did, kid=f"{issuer.did}#issuing-0")
    )
    assert first["status"] == "FAILED"
    assert first["validation_error"] == (
        f"Credential issuer {short(issuer.did)} is not trusted by this verification"
    )

    seen = flow.seen()
    assert seen.status_code == 200
    (row,) = seen.get_json()["results"]
    assert row["issuer"] == short(issuer.did)
    assert (row["presentations"], row["failed_untrusted"]) == (2, 2)
    assert (row["trusted"], row["key_learnt"]) == (False, True)
    assert row["last_seen_at"]

    trusted = flow.trust(row["issuer"])
    assert trusted.status_code == 200, trusted.get_json()
    body = trusted.get_json()
    assert body["id"] == flow.verification["id"]
    assert body["trusted_issuers"] == [OTHER_ISSUER, short(issuer.did)]
    assert flow.trust(row["issuer"]).get_json()["trusted_issuers"] == body["trusted_issuers"]
    assert flow.seen().get_json()["results"][0]["trusted"] is True

    after = flow.present(by_short_form)
    assert (after["status"], after["validation_error"]) == ("VERIFIED", None)
    assert after["claims"] == {"given_name": "Erika", "country": "DE"}


def test_a_short_form_issuer_whose_key_id_is_a_long_form_teaches_that_long_form(
    served, holder, issuer
):
    flow = Flow(served, holder, [])
    first = flow.present(
        lambda did: prism_credential(
            issuer, did, iss=short(issuer.did), kid=f"{issuer.did}#issuing-0"
        )
    )
    assert first["status"] == "FAILED"  # the short form alone cannot be resolved
    (row,) = flow.seen().get_json()["results"]
    assert (row["failed_untrusted"], row["key_learnt"], row["trusted"]) == (0, True, False)
    assert flow.trust(row["issuer"]).status_code == 200
    second = flow.present(
        lambda did: prism_credential(
            issuer, did, iss=short(issuer.did), kid=f"{short(issuer.did)}#issuing-0"
        )
    )
    assert second["status"] == "VERIFIED", second["validation_error"]


def test_another_organization_neither_reads_nor_trusts_nor_gains_the_pin(served, holder, issuer):
    acme = Flow(served, holder, [OTHER_ISSUER])
    acme.present(
        lambda did: prism_credential(issuer, did, iss=issuer.did, kid=f"{issuer.did}#issuing-0")
    )
    issuer_seen = acme.seen().get_json()["results"][0]["issuer"]
    globex = Flow(served, holder, [short(issuer.did)], org_name="Globex")

    for answer in (acme.seen(globex.staff), acme.trust(issuer_seen, globex.staff)):
        assert answer.status_code == 400
        assert answer.get_json()["code"] == "NOT_FOUND"
    assert acme.trust(issuer_seen).status_code == 200
    # Globex trusts the short form itself, but never saw its key: Acme's pin is Acme's.
    theirs = globex.present(
        lambda did: prism_credential(
            issuer, did, iss=short(issuer.did), kid=f"{short(issuer.did)}#issuing-0"
        )
    )
    assert theirs["status"] == "FAILED"
    assert "only a PRISM node can resolve" in theirs["validation_error"]


def test_an_issuer_never_seen_or_a_bad_body_is_refused_with_a_code(served, holder):
    flow = Flow(served, holder, [])
    unseen = flow.trust("did:prism:" + "0" * 64)
    assert unseen.status_code == 400
    assert unseen.get_json()["code"] == "ISSUER_NOT_SEEN"
    for body in ({}, {"issuer": ""}, {"issuer": 7}, {"issuer": "x", "more": 1}):
        answer = flow.client.post(
            f"/verifications/{flow.verification['id']}/trusted-issuers",
            json=body,
            headers=flow.staff.headers(),
        )
        assert answer.status_code == 400, body
        assert answer.get_json()["code"]
    assert flow.seen().get_json() == {"results": []}


@pytest.mark.parametrize(
    ("iss", "kid", "learnt"),
    [
        ("long", "long#issuing-0", "long"),
        ("long", None, "long"),
        ("short", "long#issuing-0", "long"),
        ("short", "short#issuing-0", None),
        ("short", None, None),
        ("short", "other#issuing-0", None),
        ("short", "tampered#issuing-0", None),
    ],
)
def test_what_a_presentation_teaches_about_its_did_prism_issuer(issuer, iss, kid, learnt):
    other = prism.make()
    digest, operation = issuer.did.split(":")[2:]
    spelled = {
        "long": issuer.did,
        "short": short(issuer.did),
        "other": other.did,
        # Another operation under this DID's hash: not its creation operation.
        "tampered": f"did:prism:{digest}:{other.did.split(':')[3]}",
    }

    def spell(value: str | None) -> str | None:
        if value is None:
            return None
        did, _, fragment = value.partition("#")
        return spelled[did] + (f"#{fragment}" if fragment else "")

    # No kid: the header's kid is null, which names no key.
    vc = prism_credential(issuer, "did:example:holder", iss=spell(iss), kid=spell(kid))
    vp = prism.sign_es256k(
        {"iss": "did:example:holder", "vp": {"verifiableCredential": [vc]}},
        issuer.keys["issuing-0"],
        "did:example:holder#0",
    )
    assert issuer_long_form(vp) == (issuer.did if learnt else None)
    assert operation  # the long form carries its creation operation


def test_both_operations_are_in_the_openapi_document(served):
    paths = served.test_client().get("/openapi.json").get_json()["paths"]
    seen = paths["/verifications/{verification_id}/issuers-seen"]["get"]
    trust = paths["/verifications/{verification_id}/trusted-issuers"]["post"]
    assert "200" in seen["responses"] and "200" in trust["responses"]
    assert trust["requestBody"]["content"]["application/json"]["schema"]
