"""Each organization's credential issuer: its metadata documents, its signing keys (sealed at
rest, rotated, kept while needed), its status lists, and the settings it refuses to run
without."""

from __future__ import annotations

import base64
import json
import uuid
import zlib
from datetime import timedelta

import pytest
from issuance.issuance_support import Wallet, issue, make_org, receive

from app import clock, create_app
from app.extensions import db
from app.issuance.models import Credential, IssuerKey
from app.organizations.models import Organization


def segment(token: str, index: int) -> dict:
    part = token.split("~")[0].split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def bit(status_list: dict, index: int) -> int:
    data = zlib.decompress(base64.urlsafe_b64decode(status_list["lst"] + "=="))
    return (data[index // 8] >> (index % 8)) & 1


def test_issuer_metadata_lists_one_configuration_per_published_schema(app, client) -> None:
    org = make_org(app)
    draft = client.post(
        "/schemas",
        json={"name": "Draft", "vct": "urn:example:draft", "attributes": [{"name": "n"}]},
        headers=org.headers,
    ).get_json()
    response = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}")
    assert response.status_code == 200
    metadata = response.get_json()
    assert metadata["credential_issuer"] == org.issuer
    assert metadata["credential_endpoint"] == f"{org.issuer}/credential"
    assert metadata["nonce_endpoint"] == f"{org.issuer}/nonce"
    assert metadata["display"] == [{"name": "Acme", "locale": "en"}]
    configurations = metadata["credential_configurations_supported"]
    assert draft["id"] not in configurations
    diploma = configurations[org.schema_id]
    assert diploma["format"] == "dc+sd-jwt"
    assert diploma["vct"] == "https://credentials.example.test/diploma"
    assert diploma["cryptographic_binding_methods_supported"] == ["jwk"]
    assert diploma["proof_types_supported"] == {
        "jwt": {"proof_signing_alg_values_supported": ["ES256"]}
    }
    claims = diploma["credential_metadata"]["claims"]
    assert {
        "path": ["address", "country"],
        "display": [{"name": "Country", "locale": "en"}],
    } in claims


def test_another_organizations_schemas_are_not_in_the_metadata(app, client) -> None:
    org = make_org(app)
    other = make_org(app, "other@example.test", name="Globex")
    metadata = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()
    assert other.schema_id not in metadata["credential_configurations_supported"]


def test_authorization_server_metadata_offers_both_grants(app, client) -> None:
    org = make_org(app)
    metadata = client.get(f"/.well-known/oauth-authorization-server/issuers/{org.id}").get_json()
    assert metadata["issuer"] == org.issuer
    assert metadata["token_endpoint"] == f"{org.issuer}/token"
    assert metadata["grant_types_supported"] == [
        "authorization_code",
        "urn:ietf:params:oauth:grant-type:pre-authorized_code",
    ]
    assert metadata["pushed_authorization_request_endpoint"] == f"{org.issuer}/par"
    assert metadata["require_pushed_authorization_requests"] is True
    assert org.schema_id in metadata["scopes_supported"]
    issuer = client.get(f"/.well-known/openid-credential-issuer/issuers/{org.id}").get_json()
    assert issuer["credential_configurations_supported"][org.schema_id]["scope"] == org.schema_id
    assert metadata["pre-authorized_grant_anonymous_access_supported"] is True


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/openid-credential-issuer/issuers/{id}",
        "/.well-known/oauth-authorization-server/issuers/{id}",
        "/.well-known/jwt-vc-issuer/issuers/{id}",
        "/issuers/{id}/status-lists/0",
        "/issuers/{id}/offers/nothing",
    ],
)
def test_an_unknown_issuer_is_404_in_the_protocols_shape(client, path) -> None:
    for unknown in (str(uuid.uuid4()), "not-a-uuid"):
        response = client.get(path.format(id=unknown))
        assert response.status_code == 404
        assert response.get_json()["error"] == "not_found"
        assert "error_description" in response.get_json()


def test_the_credential_is_signed_by_the_key_the_jwks_publishes(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    sd_jwt = receive(client, org, wallet, issue(client, org))
    header, payload = segment(sd_jwt, 0), segment(sd_jwt, 1)
    jwks = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()
    assert jwks["issuer"] == org.issuer == payload["iss"]
    (key,) = jwks["jwks"]["keys"]
    # The issuing certificate travels too (HAIP 1.0 §6.1.1), the root does not.
    assert {**header, "x5c": len(header["x5c"])} == {
        "alg": "ES256",
        "typ": "dc+sd-jwt",
        "kid": key["kid"],
        "x5c": 1,
    }
    assert set(key) == {"kty", "crv", "x", "y", "kid", "alg", "use"}  # no private member
    assert payload["cnf"]["jwk"]["x"] == wallet.public["x"]
    assert payload["_sd_alg"] == "sha-256"
    assert "given_name" not in payload  # every claim is a disclosure
    assert len(sd_jwt.rstrip("~").split("~")) - 1 == 8  # 6 claims, address and its country


def test_the_private_key_is_stored_sealed(app, client) -> None:
    org = make_org(app)
    receive(client, org, Wallet(), issue(client, org))
    with app.app_context():
        key = db.session.query(IssuerKey).one()
        sealed = key.sealed_private_key
        db.session.remove()
    assert b"PRIVATE" not in sealed and len(sealed) > 12 + 16
    from app.oid4vci.keys import SealedKeyError, key_encryption_key, open_private_key

    with pytest.raises(SealedKeyError):
        open_private_key(sealed, key_encryption_key("another secret"))
    opened = open_private_key(sealed, key_encryption_key("test-issuer-key-secret"))
    assert opened.public_key().public_numbers().x > 0


def test_rotating_keeps_the_old_key_while_a_credential_needs_it(app, client) -> None:
    org = make_org(app)
    first = issue(client, org)
    receive(client, org, Wallet(), first)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["issuers", "rotate-key", org.id])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["organization_id"] == org.id and len(printed["published_kids"]) == 2
    assert printed["published_kids"][0] == printed["kid"]
    assert "d" not in result.output.replace('"', " ").split()  # no private member printed
    jwks = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()["jwks"]
    assert [k["kid"] for k in jwks["keys"]] == printed["published_kids"]

    # Once every credential the old key signed has expired, the key leaves the JWKS.
    with app.app_context():
        for row in db.session.query(Credential):
            row.expires_at = clock.now() - timedelta(seconds=1)
        db.session.commit()
        db.session.remove()
    jwks = client.get(f"/.well-known/jwt-vc-issuer/issuers/{org.id}").get_json()["jwks"]
    assert [k["kid"] for k in jwks["keys"]] == [printed["kid"]]


def test_rotate_key_refuses_an_unknown_organization(app) -> None:
    for unknown in (str(uuid.uuid4()), "nope"):
        result = app.test_cli_runner().invoke(args=["issuers", "rotate-key", unknown])
        assert result.exit_code == 1
        assert "No organization" in result.output


def test_the_status_list_is_signed_with_ttl_and_exp_and_flips_on_revocation(app, client) -> None:
    org = make_org(app)
    credential = issue(client, org)
    sd_jwt = receive(client, org, Wallet(), credential)
    reference = segment(sd_jwt, 1)["status"]["status_list"]
    assert reference["uri"] == f"{org.issuer}/status-lists/0"
    assert 0 <= reference["idx"] < 131_072

    def fetch() -> dict:
        response = client.get(f"/issuers/{org.id}/status-lists/0")
        assert response.status_code == 200
        assert response.content_type == "application/statuslist+jwt"
        assert response.headers["Cache-Control"] == "no-cache"
        token = response.get_data(as_text=True)
        assert segment(token, 0)["typ"] == "statuslist+jwt"
        return segment(token, 1)

    before = fetch()
    assert before["sub"] == reference["uri"]
    assert before["ttl"] == 300 and before["exp"] > before["iat"]
    assert before["status_list"]["bits"] == 1
    size = len(zlib.decompress(base64.urlsafe_b64decode(before["status_list"]["lst"] + "==")))
    assert size * 8 >= 131_072
    assert bit(before["status_list"], reference["idx"]) == 0
    client.post(f"/credentials/{credential['id']}/revoke", headers=org.headers)
    assert bit(fetch()["status_list"], reference["idx"]) == 1


def test_a_status_list_never_started_is_404(app, client) -> None:
    org = make_org(app)
    # Before the first credential is signed there is no key and nothing to check.
    assert client.get(f"/issuers/{org.id}/status-lists/0").status_code == 404
    receive(client, org, Wallet(), issue(client, org))
    assert client.get(f"/issuers/{org.id}/status-lists/0").status_code == 200
    assert client.get(f"/issuers/{org.id}/status-lists/1").status_code == 404


def test_nonces_are_single_use_and_not_cached(app, client) -> None:
    org = make_org(app)
    first, second = client.post(org.path("/nonce")), client.post(org.path("/nonce"))
    assert first.headers["Cache-Control"] == "no-store"
    assert first.get_json()["c_nonce"] != second.get_json()["c_nonce"]


def test_the_offer_is_served_by_reference_without_the_tx_code(app, client) -> None:
    org = make_org(app)
    credential = issue(client, org, tx_code=True)
    from issuance.issuance_support import local, offer_uri

    response = client.get(local(offer_uri(credential)))
    assert response.headers["Cache-Control"] == "no-store"
    offer = response.get_json()
    assert offer["credential_issuer"] == org.issuer
    assert offer["credential_configuration_ids"] == [org.schema_id]
    assert credential["tx_code"] not in json.dumps(offer)


def test_production_refuses_to_start_without_an_issuer_key_secret() -> None:
    settings = {
        "SQLALCHEMY_DATABASE_URI": "sqlite://",
        "ENV": "production",
        "SECRET_KEY": "a-real-secret",
        "PUBLIC_URL": "https://verity.example",
        "ISSUER_KEY_SECRET": "",
    }
    with pytest.raises(RuntimeError, match="ISSUER_KEY_SECRET"):
        create_app(settings)
    create_app({**settings, "ISSUER_KEY_SECRET": "sealing-secret"})


def test_development_derives_the_sealing_secret_from_the_secret_key(make_app) -> None:
    from app.issuance import settings

    derived = make_app(ISSUER_KEY_SECRET="", SECRET_KEY="one")
    other = make_app(ISSUER_KEY_SECRET="", SECRET_KEY="two")
    with derived.app_context():
        one = settings.current().kek
    with other.app_context():
        two = settings.current().kek
    assert one != two and len(one) == 32


def test_an_organization_gets_one_key_however_many_first_uses(app, client) -> None:
    import threading

    org = make_org(app)
    credentials = [issue(client, org) for _ in range(4)]
    received: list[str] = []

    def take(credential: dict) -> None:
        received.append(receive(app.test_client(), org, Wallet(), credential))

    threads = [threading.Thread(target=take, args=(c,)) for c in credentials]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(received) == 4
    assert len({segment(sd_jwt, 0)["kid"] for sd_jwt in received}) == 1
    with app.app_context():
        organization = db.session.get(Organization, uuid.UUID(org.id))
        assert db.session.query(IssuerKey).filter_by(organization_id=organization.id).count() == 1
        db.session.remove()


def published_schema(client, org, **fields) -> dict:
    from issuance.issuance_support import DIPLOMA

    body = {**DIPLOMA, "vct": "urn:example:diploma:dated", **fields}
    created = client.post("/schemas", json=body, headers=org.headers)
    assert created.status_code == 201, created.get_json()
    schema = created.get_json()
    assert client.post(f"/schemas/{schema['id']}/publish", headers=org.headers).status_code == 200
    return schema


def test_a_schema_with_a_validity_gives_its_credentials_an_exp(app, client) -> None:
    org, wallet = make_org(app), Wallet()
    schema = published_schema(client, org, validity_days=30)
    assert schema["validity_days"] == 30
    credential = issue(client, org, schema_id=schema["id"])
    assert credential["expires_at"] is None  # counted from the signature, not the offer
    payload = segment(receive(client, org, wallet, credential), 1)
    assert payload["exp"] - payload["iat"] == 30 * 24 * 3600
    stored = client.get(f"/credentials/{credential['id']}", headers=org.headers).get_json()
    assert stored["expires_at"] is not None


def test_a_schema_without_a_validity_issues_credentials_without_exp(app, client) -> None:
    org = make_org(app)
    payload = segment(receive(client, org, Wallet(), issue(client, org)), 1)
    assert "exp" not in payload


@pytest.mark.parametrize("days", [0, -1, 3651, "soon", 1.5, True])
def test_a_validity_that_is_not_a_number_of_days_is_refused(app, client, days) -> None:
    from issuance.issuance_support import DIPLOMA

    org = make_org(app)
    response = client.post("/schemas", json={**DIPLOMA, "validity_days": days}, headers=org.headers)
    assert response.status_code == 400
    assert response.get_json()["code"] == "INVALID_REQUEST"


def test_a_draft_validity_is_changed_and_cleared_with_put(app, client) -> None:
    from issuance.issuance_support import DIPLOMA

    org = make_org(app)
    draft = client.post("/schemas", json={**DIPLOMA, "validity_days": 7}, headers=org.headers)
    path = f"/schemas/{draft.get_json()['id']}"
    assert (
        client.put(path, json={"name": "Renamed"}, headers=org.headers).get_json()["validity_days"]
        == 7
    )
    cleared = client.put(path, json={"validity_days": None}, headers=org.headers).get_json()
    assert cleared["validity_days"] is None
