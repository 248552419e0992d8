"""The deployment's own credentials verify on a plain ``make run``: no network, no setting.

One gunicorn server as ``make run`` starts it: ``PUBLIC_URL`` the address it serves (the
issuer is ``http://127.0.0.1:<port>/issuers/<org_id>``) and no
``TRUST_ALLOW_PRIVATE``, so the verifier's outbound fetcher refuses that loopback http address:
had the verifier fetched the issuer's metadata or status list, the presentation would fail.
Staff of two organizations act over the JSON API; the project's holder takes the credential
through OpenID4VCI and presents it through OpenID4VP, over HTTP.
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from config_for_tests import TEST_CONFIG
from hardening.served import Served, flask, prepare, served, service_env
from interop.interop_support import interop_database

from app import clock, create_app
from app.extensions import db
from app.holder.issuance import receive
from app.holder.jose import private_jwk
from app.holder.presentation import present
from app.holder.store import Wallet
from app.retention import jobs as retention_jobs

SCHEMA = {
    "name": "Membership",
    "vct": "urn:example:own-issuer:membership:1",
    "attributes": [
        {"name": "given_name", "type": "TEXT"},
        {"name": "member_number", "type": "NUMBER"},
    ],
}
CLAIMS = {"given_name": "Erika", "member_number": 1042}
REVOKED = "Credential has been revoked by its issuer"
# What the verifier would fetch of an issuer: its metadata and its status lists.
ISSUER_FETCHES = re.compile(
    r'"path": "(/\.well-known/jwt-vc-issuer/[^"]*|/issuers/[^"]*/status-lists/[^"]*)"'
)


@dataclass
class Organization:
    """One organization of the deployment, acting as its staff and its backend would."""

    served: Served
    id: str
    token: str
    apikey: str = ""

    def staff(self, method: str, path: str, expect: int, body: Any = None) -> Any:
        return self._call(method, path, expect, body, {"Authorization": f"Bearer {self.token}"})

    def backend(self, method: str, path: str, expect: int, body: Any = None) -> Any:
        return self._call(method, path, expect, body, {"apikey": self.apikey})

    def _call(self, method: str, path: str, expect: int, body: Any, headers: dict) -> Any:
        response = requests.request(
            method, self.served.url(path), json=body, headers=headers, timeout=30
        )
        assert response.status_code == expect, f"{method} {path}: {response.text}"
        return response.json()

    @property
    def issuer(self) -> str:
        return self.served.url(f"/issuers/{self.id}")

    def verification(self) -> str:
        """A verification of the membership credential, accepting any issuer."""
        schema = self.staff("POST", "/schemas", 201, SCHEMA)
        body = {
            "name": "Members",
            "schema_id": schema["id"],
            "claims": list(CLAIMS),
            "trusted_issuers": [],  # any issuer: left out, it would be pinned to its own
        }
        return self.staff("POST", "/verifications", 201, body)["id"]

    def present(self, verification_id: str, wallet: Wallet) -> dict[str, Any]:
        """A new individual of the verification answered by the holder; the lookup."""
        customer = f"member-{uuid.uuid4().hex[:8]}"
        opened = {"customer_id": customer, "verification_id": verification_id}
        individual = self.backend("POST", "/verifications/individuals", 201, opened)
        link = self.backend("GET", f"/verifications/{individual['id']}/connect", 200)
        present(link["connection_url"], wallet)
        return self.backend("GET", f"/verifications/{verification_id}/individuals/{customer}", 200)


@dataclass
class Deployment:
    served: Served
    database_url: str
    issuing: Organization
    other: Organization


def operator(env: dict[str, str], served: Served, email: str, name: str) -> Organization:
    flask(env, "users", "create", "--email", email)
    org = json.loads(
        flask(env, "orgs", "create", "--name", name, "--owner-email", email, "--plan", "PRO")
    )
    token = json.loads(flask(env, "tokens", "create", "--email", email))["token"]
    organization = Organization(served, org["id"], token)
    organization.apikey = organization.staff("POST", "/integrations", 201, {"name": "b"})["key"]
    return organization


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    directory = tmp_path_factory.mktemp("own-issuers")
    with interop_database(directory) as database_url:
        env = service_env(database_url)
        for name in ("PUBLIC_URL", "TRUST_ALLOW_PRIVATE", "TRUST_ANCHORS_FILE"):
            env.pop(name, None)
        prepare(env)
        with served(env, directory / "server.log", public_host=None) as service:
            yield Deployment(
                service,
                database_url,
                operator(env, service, "issuer@example.test", "Issuing Org"),
                operator(env, service, "verifier@example.test", "Other Org"),
            )


def issue(org: Organization, wallet: Wallet) -> dict[str, Any]:
    """Staff issue the membership credential to a recipient; the holder takes the offer."""
    schema = org.staff("POST", "/schemas", 201, SCHEMA)
    org.staff("POST", f"/schemas/{schema['id']}/publish", 200)
    person = {"first_name": "Erika", "last_name": "M", "email": "erika@example.test"}
    recipient = org.backend("POST", "/recipients", 201, person)
    credential = org.staff(
        "POST",
        "/credentials",
        201,
        {
            "name": "Membership",
            "schema_id": schema["id"],
            "recipient_id": recipient["id"],
            "claims": [{"name": name, "value": value} for name, value in CLAIMS.items()],
        },
    )
    receive(credential["offer_url"], wallet)
    return credential


def issuer_fetches(served: Served, since: int) -> list[str]:
    return ISSUER_FETCHES.findall(served.log()[since:])


def check_revocations_later(database_url: str) -> int:
    """The periodic re-check, run a day later by a worker started without ``PUBLIC_URL``
    (so on the development default, another address), on the same database."""
    app = create_app(
        {
            **TEST_CONFIG,
            "SQLALCHEMY_DATABASE_URI": database_url,
            "PUBLIC_URL": "",
            "TRUST_ALLOW_PRIVATE": False,
        }
    )
    a_day_later = datetime.now(UTC) + timedelta(hours=25)
    clock.set_source(lambda: a_day_later)
    try:
        with app.app_context():
            try:
                return retention_jobs.check_revocations()
            finally:
                db.session.remove()
                db.engine.dispose()
    finally:
        clock.set_source(None)


def test_issue_present_verified_revoke_present_failed_at_once(deployment, tmp_path):
    issuing, other = deployment.issuing, deployment.other
    wallet = Wallet.open(tmp_path / "wallet.json")
    credential = issue(issuing, wallet)
    assert credential["issuer"] == issuing.issuer
    assert issuing.issuer.startswith("http://127.0.0.1:")
    at_home, elsewhere = issuing.verification(), other.verification()
    since = len(deployment.served.log())

    verified = [issuing.present(at_home, wallet), other.present(elsewhere, wallet)]

    assert [v["status"] for v in verified] == ["VERIFIED", "VERIFIED"], verified
    assert {v["issuer"] for v in verified} == {issuing.issuer}
    assert verified[1]["claims"] == CLAIMS

    revoked = issuing.staff("POST", f"/credentials/{credential['id']}/revoke", 200)
    assert revoked["status"] == "REVOKED"
    # At once: no list cached for its ttl stands between the revocation and the verifier.
    failed = [issuing.present(at_home, wallet), other.present(elsewhere, wallet)]

    assert [f["status"] for f in failed] == ["FAILED", "FAILED"], failed
    assert [f["validation_error"] for f in failed] == [REVOKED, REVOKED]
    # The holder fetched the issuer's metadata while receiving (so the log shows such fetches);
    # the verifier fetched nothing of the issuer's.
    assert issuer_fetches(deployment.served, 0)
    assert issuer_fetches(deployment.served, since) == []

    # The decisions made before the revocation are checked again by the periodic job.
    assert check_revocations_later(deployment.database_url) == 2
    for was in verified:
        path = f"/verifications/{was['verification_id']}/individuals/{was['customer_id']}"
        org = issuing if was["verification_id"] == at_home else other
        again = org.backend("GET", path, 200)
        assert again["status"] == "VERIFIED" and again["revoked_at"] is not None, again
    assert issuer_fetches(deployment.served, since) == []


def forged(wallet: Wallet, iss: str, kid: str | None) -> None:
    """A membership credential naming ``iss``, signed by PyPI sd-jwt with a key of its own
    and bound to the wallet's key; stored in the wallet as if received."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwcrypto import jwk
    from sd_jwt.common import SDObj
    from sd_jwt.issuer import SDJWTIssuer

    now = int(time.time())
    payload: dict[Any, Any] = {"iss": iss, "vct": SCHEMA["vct"], "iat": now - 60}
    payload.update({SDObj(name): value for name, value in CLAIMS.items()})
    header = {"typ": "dc+sd-jwt", **({"kid": kid} if kid else {})}
    issued = SDJWTIssuer(
        payload,
        jwk.JWK.from_json(json.dumps(private_jwk(ec.generate_private_key(ec.SECP256R1())))),
        jwk.JWK.from_json(json.dumps(private_jwk(wallet.key))),
        sign_alg="ES256",
        extra_header_parameters=header,
    )
    wallet.add(
        {
            "format": "dc+sd-jwt",
            "issuer": iss,
            "vct": SCHEMA["vct"],
            "configuration_id": None,
            "credential": issued.sd_jwt_issuance,
        }
    )


def published_kid(served: Served, org: Organization) -> str:
    metadata = requests.get(served.url(f"/.well-known/jwt-vc-issuer/issuers/{org.id}"), timeout=10)
    (key, *_) = metadata.json()["jwks"]["keys"]
    return key["kid"]


def test_a_credential_naming_an_own_issuer_but_signed_with_another_key_fails(deployment, tmp_path):
    issuing = deployment.issuing
    issue(issuing, Wallet.open(tmp_path / "genuine.json"))  # the organization has a key now
    real_kid = published_kid(deployment.served, issuing)
    verification = issuing.verification()
    reasons = []
    for kid in (real_kid, "the-forgers-key"):
        wallet = Wallet.open(tmp_path / f"{kid}.json")
        forged(wallet, issuing.issuer, kid)
        since = len(deployment.served.log())

        decision = issuing.present(verification, wallet)

        assert decision["status"] == "FAILED", decision
        reasons.append(decision["validation_error"])
        assert issuer_fetches(deployment.served, since) == []
    assert reasons == [
        "Credential signature does not verify",
        "Issuer key set has no signing key with kid 'the-forgers-key'",
    ]


@pytest.mark.parametrize("organization", [str(uuid.uuid4()), "not-an-organization"])
def test_an_own_issuer_naming_no_organization_fails_plainly(deployment, tmp_path, organization):
    issuing = deployment.issuing
    wallet = Wallet.open(tmp_path / "wallet.json")
    iss = deployment.served.url(f"/issuers/{organization}")
    forged(wallet, iss, None)

    decision = issuing.present(issuing.verification(), wallet)

    assert decision["status"] == "FAILED", decision
    assert decision["validation_error"] == f"Issuer {iss} is not an organization of this deployment"


def test_another_organization_pinning_the_issuers_root_verifies_its_x5c_credential(
    deployment, tmp_path
):
    """The credential carries the organization's chain (HAIP 1.0 §6.1.1); a verification that
    trusts only that organization's root certificate (PEM) accepts it, one that trusts another
    root refuses it, with nothing fetched."""
    issuing, other = deployment.issuing, deployment.other
    wallet = Wallet.open(tmp_path / "wallet.json")
    issue(issuing, wallet)
    (held,) = [c for c in wallet.credentials if c["issuer"] == issuing.issuer]
    header = json.loads(base64.urlsafe_b64decode(held["credential"].split(".")[0] + "=="))
    assert header["x5c"]
    root_pem = issuing.staff("GET", "/issuer/certificate", 200)["root_pem"]
    other_root = other.staff("GET", "/issuer/certificate", 200)["root_pem"]
    schema = other.staff("POST", "/schemas", 201, SCHEMA)
    since = len(deployment.served.log())

    decided = []
    for pinned in (root_pem, other_root):
        body = {
            "name": "Members of the issuing org",
            "schema_id": schema["id"],
            "claims": list(CLAIMS),
            "trusted_issuers": [pinned],
        }
        verification = other.staff("POST", "/verifications", 201, body)["id"]
        decided.append(other.present(verification, wallet))

    assert decided[0]["status"] == "VERIFIED", decided[0]
    assert decided[0]["issuer"] == issuing.issuer
    assert decided[1]["status"] == "FAILED"
    assert "is not trusted by this verification" in decided[1]["validation_error"]
    assert issuer_fetches(deployment.served, since) == []
