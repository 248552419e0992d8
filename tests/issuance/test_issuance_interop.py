"""Wallets and verifiers we did not write, against the issuer on a real loopback server.

npm ``@openid4vc/openid4vci`` 0.4 (the OpenWallet Foundation library Credo builds on) drives
the whole pre-authorized code flow from the ``openid-credential-offer://`` link the staff API
hands out; npm ``@sd-jwt/sd-jwt-vc`` 0.19.0 verifies the credential with the key it finds
through the issuer's jwt-vc-issuer metadata, and reads its entry in the status list with
``@sd-jwt/jwt-status-list``, before and after the credential is revoked.
"""

from __future__ import annotations

from issuance.issuance_support import Org, issue, make_org
from issuance.node_client import run


def served_org(serve) -> tuple[object, Org]:
    served = serve()
    return served, make_org(served.app)


def test_an_independent_wallet_receives_a_credential_that_verifies(serve) -> None:
    served, org = served_org(serve)
    client = served.app.test_client()
    credential = issue(client, org, tx_code=True)
    result = run(
        {
            "action": "receive",
            "offer_url": credential["offer_url"],
            "tx_code": credential["tx_code"],
        }
    )

    assert result["header"]["typ"] == "dc+sd-jwt" and result["header"]["alg"] == "ES256"
    payload = result["payload"]
    assert payload["iss"] == credential["issuer"] == f"{served.base}/issuers/{org.id}"
    assert payload["vct"] == "https://credentials.example.test/diploma"
    assert payload["cnf"]["jwk"]["x"] == result["holder_jwk"]["x"]
    assert payload["cnf"]["jwk"]["y"] == result["holder_jwk"]["y"]
    assert payload["status"]["status_list"]["uri"] == f"{credential['issuer']}/status-lists/0"
    assert result["claims"]["given_name"] == "Ada"
    assert result["claims"]["grade"] == 17.5 and result["claims"]["honours"] is True
    assert result["claims"]["address"] == {"country": "FR"}
    assert result["status"] == 0
    assert result["status_list_typ"] == "statuslist+jwt"
    stored = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert stored["status"] == "ISSUED"


def test_revoking_flips_the_bit_the_independent_verifier_reads(serve) -> None:
    served, org = served_org(serve)
    client = served.app.test_client()
    credential = issue(client, org)
    received = run({"action": "receive", "offer_url": credential["offer_url"]})
    assert received["status"] == 0

    revoked = client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert revoked.status_code == 200

    again = run({"action": "verify", "credential": received["credential"]})
    assert again["status"] == 1


def test_the_keys_of_a_rotated_issuer_still_verify_earlier_credentials(serve) -> None:
    served, org = served_org(serve)
    client = served.app.test_client()
    before = run({"action": "receive", "offer_url": issue(client, org)["offer_url"]})
    rotated = served.app.test_cli_runner().invoke(args=["issuers", "rotate-key", org.id])
    assert rotated.exit_code == 0, rotated.output
    after = run({"action": "receive", "offer_url": issue(client, org)["offer_url"]})
    assert after["issuer_kid"] != before["issuer_kid"]
    # The earlier credential still verifies: its key stays published while it is unexpired.
    assert run({"action": "verify", "credential": before["credential"]})["status"] == 0
