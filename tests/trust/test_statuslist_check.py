"""check_status against Status List Tokens served by a real local server: the entry at idx is
read from a list signed by the credential's own issuer, and anything else is refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import zlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from trust_support import (
    NOW,
    Issued,
    LocalServer,
    PrivateKey,
    did_jwk,
    ec_key,
    make_cert,
    public_jwk,
    sign,
    x5c,
)

from app.sdjwt.encoding import b64url_encode
from app.statuslist import INVALID, SUSPENDED, VALID, StatusError, check_status, encode_status_list
from app.trust.fetch import Fetcher, TTLCache
from app.trust.issuers import ResolvedIssuer, resolve_issuer_key

STAMP = int(NOW.timestamp())


@dataclass
class Issuer:
    key: PrivateKey
    iss: str
    resolved: ResolvedIssuer


def did_issuer(fetcher: Fetcher) -> Issuer:
    key = ec_key()
    did = did_jwk(key)
    resolved = resolve_issuer_key({}, {"iss": did}, fetcher=fetcher, anchors=[], now=NOW)
    return Issuer(key, did, resolved)


@pytest.fixture
def clock() -> list[float]:
    return [0.0]


@pytest.fixture
def fetcher(clock: list[float]) -> Fetcher:
    return Fetcher(allow_private=True, timeout=2.0, cache=TTLCache(clock=lambda: clock[0]))


@pytest.fixture
def issuer(fetcher: Fetcher) -> Issuer:
    return did_issuer(fetcher)


def list_claims(uri: str, iss: str | None, values: list[int], bits: int = 1, **claims: Any) -> dict:
    payload = {
        "iss": iss,
        "sub": uri,
        "iat": STAMP,
        "exp": STAMP + 3600,
        "ttl": 300,
        "status_list": encode_status_list(values, bits),
        **claims,
    }
    return {name: value for name, value in payload.items() if value is not None}


def publish(server: LocalServer, token: str, path: str = "/lists/1") -> str:
    server.add(path, token, headers={"Content-Type": "application/statuslist+jwt"})
    return server.url(path)


def check(idx: int, uri: str, issuer: ResolvedIssuer, fetcher: Fetcher, **kwargs: Any):
    claim = {"status_list": {"idx": idx, "uri": uri}}
    return check_status(
        claim,
        credential_issuer=issuer,
        fetcher=fetcher,
        anchors=kwargs.get("anchors", []),
        now=kwargs.get("now", NOW),
    )


def serve_list(
    server: LocalServer, issuer: Issuer, values: list[int], bits: int = 1, **claims: Any
) -> str:
    uri = server.url("/lists/1")
    token = sign(
        list_claims(uri, issuer.iss, values, bits, **claims), issuer.key, typ="statuslist+jwt"
    )
    return publish(server, token)


# Reading the entry


def test_a_valid_entry(server: LocalServer, issuer: Issuer, fetcher: Fetcher) -> None:
    uri = serve_list(server, issuer, [0, 1, 0])
    result = check(0, uri, issuer.resolved, fetcher)
    assert (result.status, result.revoked, result.valid, result.reason) == (
        VALID,
        False,
        True,
        None,
    )


def test_a_revoked_entry(server: LocalServer, issuer: Issuer, fetcher: Fetcher) -> None:
    uri = serve_list(server, issuer, [0, 1, 0])
    result = check(1, uri, issuer.resolved, fetcher)
    assert (result.status, result.revoked, result.valid) == (INVALID, True, False)
    assert result.reason == "Credential has been revoked by its issuer"


def test_a_suspended_entry_in_a_two_bit_list(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0, 1, 2, 3], bits=2)
    result = check(2, uri, issuer.resolved, fetcher)
    assert (result.status, result.suspended, result.revoked) == (SUSPENDED, True, True)
    assert result.reason == "Credential is suspended by its issuer"
    application_specific = check(3, uri, issuer.resolved, fetcher)
    assert application_specific.revoked
    assert application_specific.reason == "Credential status is 0x03, not VALID"


def test_the_request_asks_for_a_status_list_jwt(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0])
    check(0, uri, issuer.resolved, fetcher)
    assert server.seen[-1]["Accept"] == "application/statuslist+jwt"


def test_an_index_out_of_range_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0] * 8)
    with pytest.raises(StatusError, match="Status index 8 is outside the status list"):
        check(8, uri, issuer.resolved, fetcher)


# The token


@pytest.mark.parametrize("typ", ["statuslist+jwt", "application/statuslist+jwt", "STATUSLIST+JWT"])
def test_typ_spellings_of_the_media_type_are_accepted(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher, typ: str
) -> None:
    uri = server.url("/lists/1")
    publish(server, sign(list_claims(uri, issuer.iss, [0]), issuer.key, typ=typ))
    assert check(0, uri, issuer.resolved, fetcher).valid


@pytest.mark.parametrize("typ", ["JWT", "dc+sd-jwt", None])
def test_a_token_of_another_type_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher, typ: str | None
) -> None:
    uri = server.url("/lists/1")
    header = {"typ": typ} if typ else {}
    publish(server, sign(list_claims(uri, issuer.iss, [0]), issuer.key, **header))
    with pytest.raises(StatusError, match="not statuslist\\+jwt"):
        check(0, uri, issuer.resolved, fetcher)


def test_a_token_for_another_list_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = server.url("/lists/1")
    claims = list_claims(server.url("/lists/2"), issuer.iss, [0])
    publish(server, sign(claims, issuer.key, typ="statuslist+jwt"))
    with pytest.raises(StatusError, match="its sub is not the uri"):
        check(0, uri, issuer.resolved, fetcher)


def test_a_list_signed_by_another_issuer_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    stranger = did_issuer(fetcher)
    uri = serve_list(server, stranger, [0])
    with pytest.raises(StatusError, match="signed by another issuer than the credential"):
        check(0, uri, issuer.resolved, fetcher)


def test_a_list_naming_the_issuer_but_signed_with_another_key_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = server.url("/lists/1")
    publish(server, sign(list_claims(uri, issuer.iss, [0]), ec_key(), typ="statuslist+jwt"))
    with pytest.raises(StatusError, match="Status list token signature does not verify"):
        check(0, uri, issuer.resolved, fetcher)


def test_a_list_protected_by_hmac_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = server.url("/lists/1")
    parts = [
        b64url_encode(json.dumps(part).encode())
        for part in ({"alg": "HS256", "typ": "statuslist+jwt"}, list_claims(uri, issuer.iss, [0]))
    ]
    mac = hmac.new(b"shared", ".".join(parts).encode(), hashlib.sha256).digest()
    publish(server, ".".join([*parts, b64url_encode(mac)]))
    with pytest.raises(StatusError, match="uses an HMAC algorithm, which is never accepted"):
        check(0, uri, issuer.resolved, fetcher)


def test_an_expired_list_is_refused(server: LocalServer, issuer: Issuer, fetcher: Fetcher) -> None:
    uri = serve_list(server, issuer, [0], exp=STAMP - 1)
    with pytest.raises(StatusError, match="Status list token has expired"):
        check(0, uri, issuer.resolved, fetcher)


def test_a_list_not_valid_yet_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0], nbf=STAMP + 60)
    with pytest.raises(StatusError, match="not valid yet"):
        check(0, uri, issuer.resolved, fetcher)


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iat": None}, "has no iat"),
        ({"iat": "yesterday"}, "iat is not a number"),
        ({"ttl": 0}, "ttl is not a positive number"),
        ({"status_list": None}, "no status_list object"),
    ],
)
def test_invalid_claims_are_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher, claims: dict, reason: str
) -> None:
    uri = serve_list(server, issuer, [0], **claims)
    with pytest.raises(StatusError, match=reason):
        check(0, uri, issuer.resolved, fetcher)


def test_a_zip_bomb_is_refused(server: LocalServer, issuer: Issuer, fetcher: Fetcher) -> None:
    uri = server.url("/lists/1")
    bomb = {"bits": 1, "lst": b64url_encode(zlib.compress(bytes(64 * 1024 * 1024), 9))}
    claims = {**list_claims(uri, issuer.iss, [0]), "status_list": bomb}
    publish(server, sign(claims, issuer.key, typ="statuslist+jwt"))
    with pytest.raises(StatusError, match=r"larger than .* bytes once decompressed"):
        check(0, uri, issuer.resolved, fetcher)


def test_an_unreachable_list_is_reported(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    with pytest.raises(
        StatusError, match=r"Status list could not be fetched: .* answered HTTP 404"
    ):
        check(0, server.url("/nothing"), issuer.resolved, fetcher)


def test_a_list_at_a_private_address_is_refused_in_production(
    issuer: Issuer, connections: list[str]
) -> None:
    with pytest.raises(StatusError, match=r"10.0.0.7 is a private address"):
        check(0, "https://10.0.0.7/lists/1", issuer.resolved, Fetcher())
    assert connections == []


def test_an_answer_that_is_not_a_jwt_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = publish(server, "<html>hello</html>")
    with pytest.raises(StatusError, match="Status list token is not a compact JWS"):
        check(0, uri, issuer.resolved, fetcher)


@pytest.mark.parametrize(
    "claim",
    [
        None,
        {},
        {"status_list": {"uri": "https://x/lists/1"}},
        {"status_list": {"idx": -1, "uri": "https://x/lists/1"}},
        {"status_list": {"idx": True, "uri": "https://x/lists/1"}},
        {"status_list": {"idx": 0}},
    ],
)
def test_a_malformed_status_claim_is_refused(
    claim: object, issuer: Issuer, fetcher: Fetcher
) -> None:
    with pytest.raises(StatusError, match="Credential status"):
        check_status(claim, credential_issuer=issuer.resolved, fetcher=fetcher, anchors=[], now=NOW)


# Who may sign the list


def test_a_list_without_iss_speaks_for_the_credentials_issuer(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = server.url("/lists/1")
    publish(server, sign(list_claims(uri, None, [1]), issuer.key, typ="statuslist+jwt"))
    assert check(0, uri, issuer.resolved, fetcher).revoked


def test_a_list_without_iss_signed_by_another_key_is_refused(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = server.url("/lists/1")
    publish(server, sign(list_claims(uri, None, [1]), ec_key(), typ="statuslist+jwt"))
    with pytest.raises(StatusError, match="Status list token signature does not verify"):
        check(0, uri, issuer.resolved, fetcher)


def test_a_metadata_issuer_signs_its_list_with_a_key_from_its_metadata(
    server: LocalServer, fetcher: Fetcher
) -> None:
    credential_key, list_key = ec_key(), ec_key()
    iss = server.url("/issuer")
    keys = [public_jwk(credential_key, kid="vc"), public_jwk(list_key, kid="lists")]
    server.add("/.well-known/jwt-vc-issuer/issuer", {"issuer": iss, "jwks": {"keys": keys}})
    resolved = resolve_issuer_key({"kid": "vc"}, {"iss": iss}, fetcher=fetcher, anchors=[], now=NOW)
    uri = server.url("/lists/1")
    publish(
        server, sign(list_claims(uri, iss, [0, 1]), list_key, typ="statuslist+jwt", kid="lists")
    )
    assert check(1, uri, resolved, fetcher).revoked


@pytest.fixture
def pki() -> dict[str, Issued]:
    root = make_cert("Root CA", ca=True)
    leaf = make_cert("Provider", issuer=root, uris=["https://issuer.example/pid"])
    return {"root": root, "leaf": leaf}


def x5c_issuer(pki: dict[str, Issued]) -> ResolvedIssuer:
    header = {"x5c": x5c(pki["leaf"])}
    payload = {"iss": "https://issuer.example/pid"}
    return resolve_issuer_key(
        header, payload, fetcher=Fetcher(), anchors=[pki["root"].cert], now=NOW
    )


def test_an_x5c_issuer_may_sign_its_list_with_the_same_chain(
    server: LocalServer, fetcher: Fetcher, pki: dict[str, Issued]
) -> None:
    uri = server.url("/lists/1")
    claims = list_claims(uri, "https://issuer.example/pid", [0, 1])
    publish(server, sign(claims, pki["leaf"].key, typ="statuslist+jwt", x5c=x5c(pki["leaf"])))
    assert check(1, uri, x5c_issuer(pki), fetcher, anchors=[pki["root"].cert]).revoked


def test_an_x5c_issuer_may_sign_its_list_with_its_key_and_no_header_chain(
    server: LocalServer, fetcher: Fetcher, pki: dict[str, Issued]
) -> None:
    uri = server.url("/lists/1")
    publish(server, sign(list_claims(uri, None, [1]), pki["leaf"].key, typ="statuslist+jwt"))
    assert check(0, uri, x5c_issuer(pki), fetcher, anchors=[pki["root"].cert]).revoked


def test_a_list_chained_to_another_certificate_identity_is_refused(
    server: LocalServer, fetcher: Fetcher, pki: dict[str, Issued]
) -> None:
    other = make_cert("Other Provider", issuer=pki["root"], uris=["https://other.example"])
    uri = server.url("/lists/1")
    claims = list_claims(uri, "https://other.example", [0])
    publish(server, sign(claims, other.key, typ="statuslist+jwt", x5c=x5c(other)))
    with pytest.raises(StatusError, match="signed by another issuer"):
        check(0, uri, x5c_issuer(pki), fetcher, anchors=[pki["root"].cert])


# Caching


def test_a_verified_list_is_reused_for_its_ttl(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher, clock: list[float]
) -> None:
    uri = serve_list(server, issuer, [0, 1], ttl=120)
    assert check(0, uri, issuer.resolved, fetcher).valid
    assert check(1, uri, issuer.resolved, fetcher).revoked
    assert server.hits["/lists/1"] == 1
    clock[0] = 119.0
    check(0, uri, issuer.resolved, fetcher)
    assert server.hits["/lists/1"] == 1
    clock[0] = 121.0
    check(0, uri, issuer.resolved, fetcher)
    assert server.hits["/lists/1"] == 2


def test_the_cache_never_outlives_exp(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher, clock: list[float]
) -> None:
    uri = serve_list(server, issuer, [0], ttl=3600, exp=STAMP + 30)
    check(0, uri, issuer.resolved, fetcher)
    clock[0] = 31.0
    check(0, uri, issuer.resolved, fetcher)
    assert server.hits["/lists/1"] == 2


def test_a_cached_list_is_not_used_once_it_has_expired(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0], ttl=3600, exp=STAMP + 600)
    check(0, uri, issuer.resolved, fetcher)
    with pytest.raises(StatusError, match="Status list token has expired"):
        check(0, uri, issuer.resolved, fetcher, now=NOW + timedelta(seconds=601))
    assert server.hits["/lists/1"] == 2


def test_a_tiny_ttl_is_raised_to_the_floor(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher, clock: list[float]
) -> None:
    uri = serve_list(server, issuer, [0], ttl=1)
    check(0, uri, issuer.resolved, fetcher)
    clock[0] = 5.0
    check(0, uri, issuer.resolved, fetcher)
    assert server.hits["/lists/1"] == 1


def test_a_list_cached_for_one_issuer_is_not_used_for_another(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0])
    check(0, uri, issuer.resolved, fetcher)
    stranger = did_issuer(fetcher)
    with pytest.raises(StatusError, match="signed by another issuer"):
        check(0, uri, stranger.resolved, fetcher)
    assert server.hits["/lists/1"] == 2


def test_a_refused_list_is_not_cached(
    server: LocalServer, issuer: Issuer, fetcher: Fetcher
) -> None:
    uri = serve_list(server, issuer, [0], exp=STAMP - 1)
    for _ in range(2):
        with pytest.raises(StatusError):
            check(0, uri, issuer.resolved, fetcher)
    assert server.hits["/lists/1"] == 2
