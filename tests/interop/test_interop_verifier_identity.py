"""Two organizations on one deployment, each with its own access certificate, answered by the
OpenWallet Foundation's OpenID4VP client (``owf_wallet.mjs``).

The deployment has no certificate of its own (``make run`` with only ``PUBLIC_URL``). Each
organization makes its CSR through the staff API, a registrar of its own (a test CA) signs it,
and the chain is uploaded; the client then follows each organization's link, checks the
Request Object's ``x5c`` chain against that registrar's root only, presents, and the
authenticated lookup must say VERIFIED.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from hardening.served import prepare, served, service_env
from interop_support import (
    HOST,
    PAYMENT,
    SCRUBBED,
    Deployment,
    Pki,
    answer_link,
    interop_database,
    make_organization,
    payment_individual,
)
from verifier_identity.identity_support import Registrar, RegistrationRegistrar


@dataclass
class Tenant:
    name: str
    deployment: Deployment
    registrar: Registrar
    client_id: str
    registration: str | None = None

    @property
    def trust(self) -> Pki:
        """What the wallet trusts for this organization: its registrar's root, nothing else."""
        return Pki(self.registrar.anchor_pem, {}, "")


def own_identity(deployment: Deployment, registrar: Registrar, **csr: object) -> str:
    """CSR through the staff API, the registrar's chain uploaded; the client ID it gives."""
    staff = deployment.organization.staff
    made = deployment.call(
        "POST", "/verifier-identity/signing-request", json={"country": "DE", **csr}, headers=staff
    )
    assert made.status_code == 201, made.text
    leaf = registrar.issue(made.json()["csr_pem"])
    uploaded = deployment.call(
        "PUT",
        "/verifier-identity/certificate",
        json={"chain_pem": registrar.chain_pem(leaf)},
        headers=staff,
    )
    assert uploaded.status_code == 200, uploaded.text
    return uploaded.json()["certificate"]["client_id"]


def register(tenant: Tenant) -> str:
    """A registrar the organization trusts signs a registration certificate for its access
    certificate (ETSI TS 119 475); uploaded, and its verification made under it."""
    deployment, staff = tenant.deployment, tenant.deployment.organization.staff
    registrar = RegistrationRegistrar(f"{tenant.name} WRPRC Provider")
    trusted = deployment.call(
        "POST",
        "/trust/sources",
        json={"name": "Registrar", "kind": "REGISTRARS", "certificates": registrar.anchor_pem},
        headers=staff,
    )
    assert trusted.status_code == 201, trusted.text
    identity = deployment.call("GET", "/verifier-identity", headers=staff).json()
    leaf = x509.load_pem_x509_certificate(identity["certificate"]["chain_pem"].encode())
    token = registrar.certificate(leaf, name=tenant.name)
    uploaded = deployment.call(
        "POST",
        "/verifier-identity/registration-certificates",
        json={"registration_certificate": token},
        headers=staff,
    )
    assert uploaded.status_code == 201, uploaded.text
    made_under = deployment.call(
        "PATCH",
        f"/verifications/{deployment.organization.verification_id}",
        json={"registration_certificate_id": uploaded.json()["id"]},
        headers=staff,
    )
    assert made_under.status_code == 200, made_under.text
    return token


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Tenant]]:
    directory: Path = tmp_path_factory.mktemp("identity")
    with interop_database(directory) as database_url:
        env = {k: v for k, v in service_env(database_url).items() if k not in SCRUBBED}
        prepare(env)
        with served(env, directory / "server.log", workers=2, public_host=HOST) as server:
            future: Future = Future()
            future.set_result(server)
            made = {}
            for name, owner, csr in (
                ("Acme Bank", "owner@acme.test", {"name_host": True}),
                ("Beta Shop", "owner@beta.test", {}),
            ):
                deployment = Deployment(server, make_organization(env, future, name, owner))
                registrar = Registrar(f"{name} Registrar")
                made[name] = Tenant(
                    name, deployment, registrar, own_identity(deployment, registrar, **csr)
                )
            beta = made["Beta Shop"]
            beta.registration = register(beta)
            yield made


def test_each_organizations_signed_request_is_accepted_and_verifies(tenants):
    acme, beta = tenants["Acme Bank"], tenants["Beta Shop"]
    assert acme.client_id == f"x509_san_dns:{HOST}"
    assert beta.client_id.startswith("x509_hash:")

    for tenant in (acme, beta):
        deployment = tenant.deployment
        individual_id, customer_id = deployment.open_individual()
        link = deployment.connect_link(individual_id)

        answer = answer_link(link, tenant.trust)

        assert answer.status == 200, answer.body
        resolved = answer.request
        assert resolved["signed"] is True
        assert resolved["send_by"] == "reference"
        assert resolved["client_id"] == tenant.client_id
        assert resolved["client_name"] == tenant.name
        if tenant.registration:
            # OpenID4VP 1.0 §5.1, the format ETSI TS 119 472-2 names, bound to the query.
            assert resolved["verifier_info"] == [
                {
                    "format": "registration_cert",
                    "data": tenant.registration,
                    "credential_ids": ["credential"],
                }
            ]
        else:
            assert resolved.get("verifier_info") is None
        assert deployment.individual_status(customer_id) == "VERIFIED"


def test_one_organizations_registrar_does_not_vouch_for_the_other(tenants):
    """The wallet trusting only Acme's registrar refuses Beta's request: the chains differ."""
    acme, beta = tenants["Acme Bank"], tenants["Beta Shop"]
    individual_id, customer_id = beta.deployment.open_individual()
    link = beta.deployment.connect_link(individual_id)
    with pytest.raises(AssertionError, match="does not lead to the trust anchor"):
        answer_link(link, acme.trust)
    assert beta.deployment.individual_status(customer_id) == "REQUESTED"


@pytest.mark.parametrize("confirmation", ["confirm", "wrong"])
def test_a_payment_under_a_registration_certificate_verifies_only_when_confirmed(
    tenants, confirmation
):
    """One request carries both: the registration certificate in ``verifier_info`` and the
    payment in ``transaction_data``; the client reads both, and only its key binding's right
    ``transaction_data_hashes`` make the answer VERIFIED."""
    beta = tenants["Beta Shop"]
    deployment = beta.deployment
    customer_id = payment_individual(deployment)
    vid = deployment.organization.verification_id
    found = deployment.backend("GET", f"/verifications/{vid}/individuals/{customer_id}").json()
    link = deployment.connect_link(found["id"])

    answer = answer_link(link, beta.trust, transaction_data=confirmation)

    assert answer.status == 200, answer.body
    assert answer.request["verifier_info"][0]["data"] == beta.registration
    (parsed,) = answer.request["transaction_data"]
    assert parsed["type"] == PAYMENT["type"] and parsed["payload"] == PAYMENT["payload"]
    found = deployment.backend("GET", f"/verifications/{vid}/individuals/{customer_id}").json()
    if confirmation == "confirm":
        assert found["status"] == "VERIFIED", found["validation_error"]
        assert found["transaction_data"] == [parsed]
    else:
        assert found["status"] == "FAILED"
        assert "was not confirmed by the wallet" in found["validation_error"]
