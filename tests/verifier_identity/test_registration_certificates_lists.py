"""Registration certificates whose registrar is listed, not pasted, and whose status is named:
a List of Trusted Entities (ETSI TS 119 602, signed with joserfc) of registration certificate
providers, and the registrar's Token Status List, both served on loopback."""

from __future__ import annotations

import base64
import json
import time
import zlib
from collections.abc import Iterator

import pytest
from factories import make_staff
from identity_support import Registrar, RegistrationRegistrar
from joserfc import jws
from joserfc.jwk import ECKey
from test_verifier_identity import own_certificate
from trust.trust_support import LocalServer
from trust_sources.flows import add_source, run_jobs
from trust_sources.sources_support import lote_jws, make_party

WRPRC_ISSUANCE = "http://uri.etsi.org/19602/SvcType/WRPRC/Issuance"
PID_ISSUANCE = "http://uri.etsi.org/19602/SvcType/PID/Issuance"
LOTE_SIGNER = make_party("Registrar list signer")


@pytest.fixture
def publisher() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.stop()


def status_list(registrar: RegistrationRegistrar, uri: str, statuses: list[int]) -> str:
    """A Token Status List (1 bit per entry) signed by the registrar's certificate key."""
    packed = bytearray((len(statuses) + 7) // 8)
    for index, status in enumerate(statuses):
        packed[index // 8] |= status << (index % 8)
    lst = base64.urlsafe_b64encode(zlib.compress(bytes(packed))).rstrip(b"=").decode()
    payload = {"sub": uri, "iat": int(time.time()) - 10, "status_list": {"bits": 1, "lst": lst}}
    key = ECKey.import_key(registrar.private_pem())
    return jws.serialize_compact(
        {"alg": "ES256", "typ": "statuslist+jwt"}, json.dumps(payload).encode(), key
    )


def test_a_listed_registrar_and_its_status_list_decide_an_upload(make_app, publisher):
    app = make_app(TRUST_ALLOW_PRIVATE=True)
    client = app.test_client()
    staff = make_staff(app, "alice@acme.test", org_name="Acme Bank")
    leaf = own_certificate(client, staff, Registrar())
    registrars = RegistrationRegistrar()
    pid_provider = RegistrationRegistrar("PID")
    publisher.add(
        "/registrars.jws",
        lote_jws(
            LOTE_SIGNER,
            [
                ("Registrar", WRPRC_ISSUANCE, registrars.root),
                ("PID provider", PID_ISSUANCE, pid_provider.root),
            ],
        ),
    )
    add_source(
        client,
        staff,
        {
            "name": "EU registrars",
            "kind": "LIST_OF_TRUSTED_ENTITIES",
            "url": publisher.url("/registrars.jws"),
            "signer_certificates": LOTE_SIGNER.pem,
        },
    )
    run_jobs(app)
    uri = publisher.url("/status/1")
    publisher.add(
        "/status/1",
        status_list(registrars, uri, [0, 1]),
        headers={"Content-Type": "application/statuslist+jwt"},
    )

    def upload(token: str):
        return client.post(
            "/verifier-identity/registration-certificates",
            json={"registration_certificate": token},
            headers=staff.headers(),
        )

    valid = upload(registrars.certificate(leaf, status={"status_list": {"idx": 0, "uri": uri}}))
    assert valid.status_code == 201, valid.get_json()
    assert valid.get_json()["status"] == {"status_list": {"idx": 0, "uri": uri}}
    assert publisher.hits["/status/1"] == 1

    revoked = upload(
        registrars.certificate(
            leaf, intended_use_id="two", status={"status_list": {"idx": 1, "uri": uri}}
        )
    )
    assert revoked.status_code == 400
    assert "revoked or suspended" in revoked.get_json()["error"]

    # A service of another type in the same list does not vouch for registrars.
    other = upload(pid_provider.certificate(leaf))
    assert other.status_code == 400
    assert "does not trust" in other.get_json()["error"]
