"""The Nonce Endpoint (OpenID4VCI 1.0 §7) is unauthenticated: it is throttled per client IP and
issuer, and it writes nothing, so no caller can grow a table with it.

Before, every call stored a row (300 calls: 300 rows) and nothing limited the calls.
"""

from __future__ import annotations

import uuid

import pytest
from issuance.issuance_support import Wallet, access_token, issue, make_org
from sqlalchemy import func, select, text

from app.extensions import db
from app.issuance.models import CNonce


def nonce_rows(app) -> int:
    with app.app_context():
        count = db.session.scalar(select(func.count()).select_from(CNonce))
        db.session.remove()
    return count


def limiter_rows(app) -> int:
    with app.app_context():
        count = db.session.scalar(text("SELECT count(*) FROM rate_limit_hits"))
        db.session.remove()
    return count


def post_nonce(client, org_id: str, address: str = "192.0.2.10"):
    return client.post(f"/issuers/{org_id}/nonce", environ_base={"REMOTE_ADDR": address})


def test_the_nonce_endpoint_answers_429_with_retry_after_past_its_budget(app, make_app) -> None:
    throttled = make_app(ISSUER_NONCE_LIMIT="3/minute")
    org = make_org(app)
    client = throttled.test_client()
    answers = [post_nonce(client, org.id) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    refused = answers[-1]
    assert refused.get_json()["error"] == "rate_limited"
    assert refused.get_json()["error_description"]
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["Cache-Control"] == "no-store"


def test_the_budget_is_per_client_ip_and_per_issuer(app, make_app) -> None:
    throttled = make_app(ISSUER_NONCE_LIMIT="2/minute")
    org, other = make_org(app), make_org(app, "o@example.test", name="Globex")
    client = throttled.test_client()
    assert [post_nonce(client, org.id).status_code for _ in range(3)] == [200, 200, 429]
    assert post_nonce(client, other.id).status_code == 200  # another issuer
    assert post_nonce(client, org.id, "192.0.2.11").status_code == 200  # another address
    # Another spelling of the same issuer ID is the same budget.
    assert post_nonce(client, org.id.upper()).status_code == 429


def test_unknown_issuers_are_404_and_not_counted(app, make_app) -> None:
    throttled = make_app(ISSUER_NONCE_LIMIT="2/minute", RATELIMIT_STORAGE_URI="database://")
    org = make_org(app)
    client = throttled.test_client()
    for _ in range(20):
        assert post_nonce(client, str(uuid.uuid4())).status_code == 404
        assert post_nonce(client, "not-an-issuer").status_code == 404
    assert limiter_rows(app) == 0
    assert [post_nonce(client, org.id).status_code for _ in range(3)] == [200, 200, 429]
    with throttled.app_context():
        throttled.extensions["rate_limiter"].reset()


def test_handing_out_nonces_writes_no_row(app, client) -> None:
    org = make_org(app)
    nonces = {Wallet().nonce(client, org) for _ in range(40)}
    assert len(nonces) == 40
    assert nonce_rows(app) == 0


def test_a_spent_nonce_is_kept_until_it_lapses_and_refused_again(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    nonce = wallet.nonce(client, org)
    first, second = issue(client, org), issue(client, org)
    for credential, expected in ((first, 200), (second, 400)):
        response = wallet.request(
            client,
            org,
            access_token(client, org, wallet, credential),
            {
                "credential_configuration_id": credential["schema_id"],
                "proofs": {"jwt": [wallet.proof(org.issuer, nonce)]},
            },
        )
        assert response.status_code == expected, response.get_json()
    assert response.get_json()["error"] == "invalid_nonce"
    assert nonce_rows(app) == 1


@pytest.mark.parametrize(
    "tamper",
    [
        lambda n: n[:-1] + ("A" if n[-1] != "A" else "B"),  # another MAC or spelling
        lambda n: n[:10] + ("A" if n[10] != "A" else "B") + n[11:],  # another expiry
        lambda n: n + "A",
        lambda n: n[:-1],
    ],
    ids=["last-character", "expiry", "longer", "shorter"],
)
def test_an_altered_nonce_is_invalid_nonce(app, client, tamper) -> None:
    org, wallet = make_org(app), Wallet()
    credential = issue(client, org)
    token = access_token(client, org, wallet, credential)
    nonce = tamper(wallet.nonce(client, org))
    response = wallet.request(
        client,
        org,
        token,
        {
            "credential_configuration_id": credential["schema_id"],
            "proofs": {"jwt": [wallet.proof(org.issuer, nonce)]},
        },
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "invalid_nonce"
