"""The benchmark's issuance client (bench/receiving.py) makes whole issuances the service
completes, against the app served on loopback: what ``make bench`` times is an issued,
verifiable credential, and each offer serves one issuance only. No timing here."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest
from holder_support import issuing_organization as seed

from app.holder.issuance import receive
from app.holder.store import Wallet
from bench import presenting, receiving


def test_the_bench_client_issues_a_credential_the_issuer_signed(serve):
    served = serve()
    staff, body = seed(served)
    token = staff.token
    port = urlsplit(served.base).port
    (code,) = receiving.make_offers("127.0.0.1", port, token, [body])
    offer = served.app.test_client().post(
        "/credentials", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    issuer, _ = receiving.discover("127.0.0.1", port, offer.get_json()["offer_url"])

    connection = http.client.HTTPConnection("127.0.0.1", port)
    try:
        credential = receiving.issue_once(connection, issuer, code)
        receiving.check_credential(connection, issuer, credential)
        with pytest.raises(presenting.LoadError, match="400"):
            receiving.issue_once(connection, issuer, code)  # a pre-authorized code is single-use
        issuer_jwt, _, rest = credential.partition("~")
        signed, _, signature = issuer_jwt.rpartition(".")
        forged = f"{signed}.{signature[::-1]}~{rest}"
        with pytest.raises(presenting.LoadError, match="does not verify"):
            receiving.check_credential(connection, issuer, forged)
    finally:
        connection.close()


def test_the_holder_and_the_bench_client_read_the_same_offer(serve, tmp_path):
    served = serve()
    staff, body = seed(served)
    token = staff.token
    offer = served.app.test_client().post(
        "/credentials", json=body, headers={"Authorization": f"Bearer {token}"}
    )

    result = receive(offer.get_json()["offer_url"], Wallet.open(tmp_path / "w.json"))

    assert result["received"][0]["claims"] == {"given_name": "Erika"}


def test_the_bench_client_issues_through_the_authorization_code_flow_with_dpop(serve):
    """The figure beside the pre-authorized one: PAR, the page, the code, DPoP-bound token and
    credential request make a credential the issuer signed; an issuer_state serves once."""
    served = serve(ISSUER_DPOP="required")
    staff, body = seed(served)
    port = urlsplit(served.base).port
    (state,) = receiving.make_offers(
        "127.0.0.1", port, staff.token, [body], receiving.AUTHORIZATION_CODE_GRANT
    )
    offer = served.app.test_client().post(
        "/credentials", json=body, headers={"Authorization": f"Bearer {staff.token}"}
    )
    issuer, _ = receiving.discover("127.0.0.1", port, offer.get_json()["offer_url"])

    connection = http.client.HTTPConnection("127.0.0.1", port)
    try:
        credential = receiving.authorize_once(connection, issuer, state)
        receiving.check_credential(connection, issuer, credential)
        with pytest.raises(presenting.LoadError, match="400"):
            receiving.authorize_once(connection, issuer, state)  # the offer was taken
    finally:
        connection.close()


def test_the_bench_client_takes_a_batch_each_credential_its_own_key(serve):
    """The batch figure: one credential request with ``BATCH_PROOFS`` proofs gets as many
    credentials the issuer signed, each bound to another of the client's keys."""
    import base64
    import json

    served = serve()
    staff, body = seed(served)
    port = urlsplit(served.base).port
    (code,) = receiving.make_offers("127.0.0.1", port, staff.token, [body])
    offer = served.app.test_client().post(
        "/credentials", json=body, headers={"Authorization": f"Bearer {staff.token}"}
    )
    issuer, _ = receiving.discover("127.0.0.1", port, offer.get_json()["offer_url"])

    connection = http.client.HTTPConnection("127.0.0.1", port)
    try:
        credentials = receiving.issue_batch_once(connection, issuer, code)
        for credential in credentials:
            receiving.check_credential(connection, issuer, credential)
    finally:
        connection.close()

    def bound_key(credential: str) -> str:
        part = credential.split("~")[0].split(".")[1]
        payload = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        return payload["cnf"]["jwk"]["x"]

    assert len(credentials) == receiving.BATCH_PROOFS >= 2
    assert len({bound_key(credential) for credential in credentials}) == receiving.BATCH_PROOFS
