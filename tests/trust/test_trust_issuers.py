"""Issuer key resolution: did:jwk, did:web, JWT VC Issuer Metadata and x5c chains, each bound
to the identifier the credential names, against real local servers."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from trust_support import (
    NOW,
    TLS_HOST,
    Issued,
    LocalServer,
    PrivateKey,
    did_jwk,
    ec_key,
    ed_key,
    make_cert,
    public_jwk,
    sign,
    x5c,
)

from app.sdjwt import verify_jws
from app.sdjwt.encoding import b64url_encode
from app.trust.errors import TrustError
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer, resolve_issuer_key


def _raw(key: Any) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def same_key(resolved: ResolvedIssuer, private: PrivateKey) -> bool:
    return _raw(resolved.key) == _raw(private.public_key())


def resolve(
    header: dict, payload: dict, fetcher: Fetcher | None = None, anchors: list | None = None
) -> ResolvedIssuer:
    return resolve_issuer_key(
        header, payload, fetcher=fetcher or Fetcher(), anchors=anchors or [], now=NOW
    )


# No issuer at all


def test_a_credential_without_iss_or_x5c_has_no_issuer() -> None:
    with pytest.raises(TrustError, match="carries no issuer"):
        resolve({"alg": "ES256"}, {"vct": "x"})


@pytest.mark.parametrize("iss", ["urn:example:issuer", "http://issuer.example", "did:key:z6Mk"])
def test_unsupported_issuer_identifiers_are_refused(iss: str) -> None:
    with pytest.raises(
        TrustError, match="neither an HTTPS URL nor a did:jwk, did:web or did:prism"
    ):
        resolve({"alg": "ES256"}, {"iss": iss})


# did:jwk


def test_did_jwk_resolves_to_the_key_it_encodes() -> None:
    key = ec_key()
    did = did_jwk(key)
    resolved = resolve({"alg": "ES256"}, {"iss": did})
    assert (resolved.identifier, resolved.method) == (did, "did:jwk")
    assert same_key(resolved, key)
    assert verify_jws(sign({"iss": did}, key), resolved.key)[1] == {"iss": did}


@pytest.mark.parametrize("kid", ["#0", "{did}#0"])
def test_did_jwk_accepts_a_kid_naming_its_one_key(kid: str) -> None:
    key = ed_key()
    did = did_jwk(key)
    assert same_key(resolve({"kid": kid.format(did=did)}, {"iss": did}), key)


def test_did_jwk_refuses_a_kid_naming_another_key() -> None:
    did = did_jwk(ec_key())
    with pytest.raises(TrustError, match="does not name the did:jwk key"):
        resolve({"kid": "#1"}, {"iss": did})


def test_did_jwk_holding_a_private_key_is_refused() -> None:
    jwk = public_jwk(ec_key(), d="c2VjcmV0")
    did = "did:jwk:" + b64url_encode(json.dumps(jwk).encode())
    with pytest.raises(TrustError, match="private key material"):
        resolve({}, {"iss": did})


@pytest.mark.parametrize("suffix", ["not-base64!", b64url_encode(b"[1]"), b64url_encode(b"nope")])
def test_did_jwk_that_holds_no_jwk_is_refused(suffix: str) -> None:
    with pytest.raises(TrustError, match="did:jwk"):
        resolve({}, {"iss": f"did:jwk:{suffix}"})


def test_a_did_url_is_not_an_issuer() -> None:
    did = did_jwk(ec_key())
    with pytest.raises(TrustError, match="is a DID URL"):
        resolve({}, {"iss": f"{did}#0"})


# did:web


def did_document(did: str, keys: dict[str, PrivateKey], assertion: list[str] | None = None) -> dict:
    methods = [
        {"id": f"{did}#{name}", "type": "JsonWebKey2020", "controller": did,
         "publicKeyJwk": public_jwk(key)}
        for name, key in keys.items()
    ]  # fmt: skip
    refs = assertion if assertion is not None else [f"#{name}" for name in keys]
    return {"id": did, "verificationMethod": methods, "assertionMethod": refs}


@pytest.fixture
def web_did(tls_server: LocalServer) -> str:
    return f"did:web:{TLS_HOST}%3A{tls_server.port}"


@pytest.mark.parametrize("kid", ["#key-2", "{did}#key-2", "key-2"])
def test_did_web_resolves_the_key_named_by_kid(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str, kid: str
) -> None:
    keys = {"key-1": ec_key(), "key-2": ec_key()}
    tls_server.add("/.well-known/did.json", did_document(web_did, keys))
    resolved = resolve({"kid": kid.format(did=web_did)}, {"iss": web_did}, tls_fetcher)
    assert (resolved.identifier, resolved.method) == (web_did, "did:web")
    assert same_key(resolved, keys["key-2"])


def test_did_web_with_a_path_reads_did_json_under_that_path(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    did = f"{web_did}:tenants:acme"
    key = ed_key()
    tls_server.add("/tenants/acme/did.json", did_document(did, {"k": key}))
    assert same_key(resolve({"kid": "#k"}, {"iss": did}, tls_fetcher), key)
    assert tls_server.hits["/tenants/acme/did.json"] == 1


def test_did_web_without_kid_takes_the_only_assertion_key(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    key = ec_key()
    tls_server.add("/.well-known/did.json", did_document(web_did, {"only": key}))
    assert same_key(resolve({}, {"iss": web_did}, tls_fetcher), key)


def test_did_web_without_kid_and_several_keys_is_refused(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    tls_server.add("/.well-known/did.json", did_document(web_did, {"a": ec_key(), "b": ec_key()}))
    with pytest.raises(TrustError, match="does not list exactly one assertion key"):
        resolve({}, {"iss": web_did}, tls_fetcher)


def test_did_web_refuses_an_unknown_kid(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    tls_server.add("/.well-known/did.json", did_document(web_did, {"a": ec_key()}))
    with pytest.raises(TrustError, match="has no key"):
        resolve({"kid": "#z"}, {"iss": web_did}, tls_fetcher)


def test_did_web_refuses_a_key_not_listed_for_assertions(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    document = did_document(web_did, {"auth": ec_key(), "sign": ec_key()}, assertion=["#sign"])
    tls_server.add("/.well-known/did.json", document)
    with pytest.raises(TrustError, match=r"not listed for issuing \(assertionMethod\)"):
        resolve({"kid": "#auth"}, {"iss": web_did}, tls_fetcher)


def test_did_web_refuses_a_kid_of_another_did(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    tls_server.add("/.well-known/did.json", did_document(web_did, {"a": ec_key()}))
    with pytest.raises(TrustError, match="does not belong to"):
        resolve({"kid": "did:web:elsewhere.example#a"}, {"iss": web_did}, tls_fetcher)


def test_did_web_refuses_a_document_for_another_did(
    tls_server: LocalServer, tls_fetcher: Fetcher, web_did: str
) -> None:
    document = did_document("did:web:elsewhere.example", {"a": ec_key()})
    tls_server.add("/.well-known/did.json", document)
    with pytest.raises(TrustError, match="is not the document of"):
        resolve({"kid": "#a"}, {"iss": web_did}, tls_fetcher)


def test_did_web_is_fetched_over_https_only(server: LocalServer, dev_fetcher: Fetcher) -> None:
    did = f"did:web:127.0.0.1%3A{server.port}"  # a plain HTTP server: https fails
    with pytest.raises(TrustError, match="Could not fetch the DID document"):
        resolve({}, {"iss": did}, dev_fetcher)


def test_did_web_pointing_at_a_private_address_is_refused(connections: list[str]) -> None:
    with pytest.raises(TrustError, match=r"169.254.169.254 is a link-local address"):
        resolve({}, {"iss": "did:web:169.254.169.254"})
    assert connections == []


@pytest.mark.parametrize("did", ["did:web:", "did:web:host:..:x", "did:web:host:a%2Fb"])
def test_did_web_with_an_invalid_host_or_path_is_refused(did: str) -> None:
    with pytest.raises(TrustError, match=r"does not name a host|invalid path"):
        resolve({}, {"iss": did})


# JWT VC Issuer Metadata


def test_metadata_is_read_from_the_well_known_path_before_the_issuer_path(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    key = ec_key()
    iss = server.url("/tenant/1")
    metadata = {"issuer": iss, "jwks": {"keys": [public_jwk(key, kid="k1")]}}
    server.add("/.well-known/jwt-vc-issuer/tenant/1", metadata)
    resolved = resolve({"kid": "k1"}, {"iss": iss}, dev_fetcher)
    assert (resolved.identifier, resolved.method) == (iss, "jwt-vc-issuer")
    assert same_key(resolved, key)


def test_metadata_over_https(tls_server: LocalServer, tls_fetcher: Fetcher) -> None:
    key = ed_key()
    iss = tls_server.url("", host=TLS_HOST)
    tls_server.add(
        "/.well-known/jwt-vc-issuer", {"issuer": iss, "jwks": {"keys": [public_jwk(key)]}}
    )
    assert same_key(resolve({}, {"iss": iss}, tls_fetcher), key)


def test_a_terminating_slash_is_removed_before_inserting_the_well_known_segment(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    key = ec_key()
    iss = server.url("/tenant/")
    server.add(
        "/.well-known/jwt-vc-issuer/tenant", {"issuer": iss, "jwks": {"keys": [public_jwk(key)]}}
    )
    assert same_key(resolve({}, {"iss": iss}, dev_fetcher), key)


def test_metadata_naming_another_issuer_is_refused(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    iss = server.url("/tenant/1")
    metadata = {"issuer": server.url("/tenant/2"), "jwks": {"keys": [public_jwk(ec_key())]}}
    server.add("/.well-known/jwt-vc-issuer/tenant/1", metadata)
    with pytest.raises(TrustError, match="Issuer metadata names another issuer"):
        resolve({}, {"iss": iss}, dev_fetcher)


def test_the_kid_selects_among_several_keys(server: LocalServer, dev_fetcher: Fetcher) -> None:
    old, new = ec_key(), ec_key()
    iss = server.url("")
    keys = [public_jwk(old, kid="2024"), public_jwk(new, kid="2025")]
    server.add("/.well-known/jwt-vc-issuer", {"issuer": iss, "jwks": {"keys": keys}})
    assert same_key(resolve({"kid": "2025"}, {"iss": iss}, dev_fetcher), new)
    assert same_key(resolve({"kid": "2024"}, {"iss": iss}, dev_fetcher), old)
    assert server.hits["/.well-known/jwt-vc-issuer"] == 1  # the second came from the cache


@pytest.mark.parametrize(
    ("header", "keys", "reason"),
    [
        ({"kid": "nope"}, ["a", "b"], "no signing key with kid 'nope'"),
        ({}, ["a", "b"], "no kid and the issuer publishes several keys"),
        ({}, [], "holds no signing key"),
        ({"kid": "a"}, ["a", "a"], "several keys with kid 'a'"),
    ],
)
def test_key_selection_failures(
    server: LocalServer, dev_fetcher: Fetcher, header: dict, keys: list[str], reason: str
) -> None:
    iss = server.url("")
    jwks = {"keys": [public_jwk(ec_key(), kid=kid) for kid in keys]}
    server.add("/.well-known/jwt-vc-issuer", {"issuer": iss, "jwks": jwks})
    with pytest.raises(TrustError, match=reason):
        resolve(header, {"iss": iss}, dev_fetcher)


def test_an_unusable_metadata_key_is_a_trust_error(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    # The JOSE code's own refusal (SdJwtError) reaches callers of this package as TrustError.
    iss = server.url("")
    keys = [public_jwk(ec_key(), d="c2VjcmV0")]
    server.add("/.well-known/jwt-vc-issuer", {"issuer": iss, "jwks": {"keys": keys}})
    with pytest.raises(
        TrustError, match="Issuer key is unusable: Key contains private key material"
    ):
        resolve({}, {"iss": iss}, dev_fetcher)


def test_encryption_keys_are_not_used_for_signatures(
    server: LocalServer, dev_fetcher: Fetcher
) -> None:
    signing = ec_key()
    iss = server.url("")
    keys = [public_jwk(ec_key(), use="enc"), public_jwk(signing, use="sig")]
    server.add("/.well-known/jwt-vc-issuer", {"issuer": iss, "jwks": {"keys": keys}})
    assert same_key(resolve({}, {"iss": iss}, dev_fetcher), signing)


def test_keys_can_come_from_jwks_uri(server: LocalServer, dev_fetcher: Fetcher) -> None:
    key = ec_key()
    iss = server.url("")
    server.add("/.well-known/jwt-vc-issuer", {"issuer": iss, "jwks_uri": server.url("/keys.json")})
    server.add("/keys.json", {"keys": [public_jwk(key, kid="k")]})
    assert same_key(resolve({"kid": "k"}, {"iss": iss}, dev_fetcher), key)


def test_jwks_uri_goes_through_the_same_ssrf_rules(connections: list[str]) -> None:
    strict = Fetcher()
    iss = "https://issuer.example"
    metadata = {"issuer": iss, "jwks_uri": "https://169.254.169.254/keys"}
    # Metadata for a public name cannot be served locally to a strict Fetcher, so it is
    # placed in the Fetcher's cache, as if fetched a moment ago.
    key = ("bytes", f"{iss}/.well-known/jwt-vc-issuer", "application/json")
    strict.cache.set(key, json.dumps(metadata).encode(), ttl=60)
    with pytest.raises(TrustError, match=r"169.254.169.254 is a link-local address"):
        resolve({}, {"iss": iss}, strict)
    assert connections == []


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ({"jwks": {"keys": []}, "jwks_uri": "https://x"}, "exactly one of jwks and jwks_uri"),
        ({}, "exactly one of jwks and jwks_uri"),
        ({"jwks": {"no": "keys"}}, "not a JWK Set"),
        ({"jwks_uri": 7}, "jwks_uri is not a URL"),
    ],
)
def test_malformed_metadata_is_refused(
    server: LocalServer, dev_fetcher: Fetcher, metadata: dict, reason: str
) -> None:
    iss = server.url("")
    server.add("/.well-known/jwt-vc-issuer", {"issuer": iss, **metadata})
    with pytest.raises(TrustError, match=reason):
        resolve({}, {"iss": iss}, dev_fetcher)


def test_missing_metadata_is_reported(server: LocalServer, dev_fetcher: Fetcher) -> None:
    with pytest.raises(TrustError, match=r"Could not fetch issuer metadata: .* answered HTTP 404"):
        resolve({}, {"iss": server.url("/nobody")}, dev_fetcher)


@pytest.mark.parametrize("iss", ["https://issuer.example/?q=1", "https://issuer.example/#f"])
def test_an_issuer_url_with_query_or_fragment_is_refused(iss: str) -> None:
    with pytest.raises(TrustError, match="without query or fragment"):
        resolve({}, {"iss": iss})


# x5c


@pytest.fixture
def pki() -> dict[str, Issued]:
    root = make_cert("Root CA", ca=True)
    intermediate = make_cert("Issuing CA", issuer=root, ca=True, path_length=0)
    leaf = make_cert(
        "PID Provider",
        issuer=intermediate,
        dns=["issuer.example"],
        uris=["https://issuer.example/pid"],
    )
    return {"root": root, "intermediate": intermediate, "leaf": leaf}


def test_a_chain_to_a_trust_anchor_yields_the_leaf_key(pki: dict[str, Issued]) -> None:
    leaf, intermediate, root = pki["leaf"], pki["intermediate"], pki["root"]
    header = {"alg": "ES256", "x5c": x5c(leaf, intermediate)}
    resolved = resolve(header, {"iss": "https://issuer.example/pid"}, anchors=[root.cert])
    assert (resolved.identifier, resolved.method) == ("https://issuer.example/pid", "x5c")
    assert same_key(resolved, leaf.key)
    assert resolved.certificates == (leaf.cert, intermediate.cert, root.cert)


def test_a_chain_that_includes_the_anchor_is_accepted(pki: dict[str, Issued]) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"], pki["root"])}
    resolved = resolve(header, {"iss": "https://issuer.example/pid"}, anchors=[pki["root"].cert])
    assert resolved.certificates[-1] == pki["root"].cert


def test_an_iss_whose_host_is_a_dns_name_of_the_leaf_is_bound(pki: dict[str, Issued]) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"])}
    resolved = resolve(header, {"iss": "https://issuer.example/other"}, anchors=[pki["root"].cert])
    assert resolved.identifier == "https://issuer.example/other"


def test_without_iss_the_issuer_is_the_leaf_identity(pki: dict[str, Issued]) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"])}
    resolved = resolve(header, {}, anchors=[pki["root"].cert])
    assert resolved.identifier == "https://issuer.example/pid"


def test_an_iss_the_leaf_does_not_name_is_refused(pki: dict[str, Issued]) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"])}
    with pytest.raises(
        TrustError, match=r"does not name https://attacker.example in its subjectAltName"
    ):
        resolve(header, {"iss": "https://attacker.example"}, anchors=[pki["root"].cert])


def test_a_did_iss_the_leaf_does_not_name_is_refused(pki: dict[str, Issued]) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"])}
    with pytest.raises(TrustError, match="subjectAltName"):
        resolve(header, {"iss": did_jwk(ec_key())}, anchors=[pki["root"].cert])


def test_an_expired_leaf_is_refused(pki: dict[str, Issued]) -> None:
    expired = make_cert(
        "Old Provider", issuer=pki["intermediate"], dns=["issuer.example"],
        not_before=NOW - timedelta(days=30), not_after=NOW - timedelta(days=1),
    )  # fmt: skip
    header = {"x5c": x5c(expired, pki["intermediate"])}
    with pytest.raises(TrustError, match="Issuer certificate has expired"):
        resolve(header, {"iss": "https://issuer.example"}, anchors=[pki["root"].cert])


def test_a_leaf_not_valid_yet_is_refused(pki: dict[str, Issued]) -> None:
    future = make_cert(
        "Future Provider", issuer=pki["intermediate"], dns=["issuer.example"],
        not_before=NOW + timedelta(days=1),
    )  # fmt: skip
    header = {"x5c": x5c(future, pki["intermediate"])}
    with pytest.raises(TrustError, match="Issuer certificate is not valid yet"):
        resolve(header, {"iss": "https://issuer.example"}, anchors=[pki["root"].cert])


def test_a_chain_to_another_anchor_is_refused(pki: dict[str, Issued]) -> None:
    other_root = make_cert("Other Root", ca=True)
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"])}
    with pytest.raises(TrustError, match="Certificate chain does not lead to a trusted anchor"):
        resolve(header, {"iss": "https://issuer.example"}, anchors=[other_root.cert])


def test_a_chain_is_refused_when_no_anchors_are_configured(pki: dict[str, Issued]) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"], pki["root"])}
    with pytest.raises(TrustError, match="No trust anchors are configured"):
        resolve(header, {"iss": "https://issuer.example"}, anchors=[])


def test_a_self_signed_leaf_is_refused(pki: dict[str, Issued]) -> None:
    impostor = make_cert("PID Provider", dns=["issuer.example"])
    with pytest.raises(TrustError, match="does not lead to a trusted anchor"):
        resolve(
            {"x5c": x5c(impostor)}, {"iss": "https://issuer.example"}, anchors=[pki["root"].cert]
        )


def test_an_intermediate_that_is_not_a_ca_is_refused(pki: dict[str, Issued]) -> None:
    not_ca = make_cert("Not a CA", issuer=pki["root"], ca=False)
    leaf = make_cert("Provider", issuer=not_ca, dns=["issuer.example"])
    with pytest.raises(TrustError, match="Certificate 2 in the chain is not a CA certificate"):
        resolve(
            {"x5c": x5c(leaf, not_ca)},
            {"iss": "https://issuer.example"},
            anchors=[pki["root"].cert],
        )


def test_an_intermediate_without_basic_constraints_is_refused(pki: dict[str, Issued]) -> None:
    bare = make_cert("Bare", issuer=pki["root"], basic_constraints=False)
    leaf = make_cert("Provider", issuer=bare, dns=["issuer.example"])
    with pytest.raises(TrustError, match="is not a CA certificate"):
        resolve(
            {"x5c": x5c(leaf, bare)}, {"iss": "https://issuer.example"}, anchors=[pki["root"].cert]
        )


def test_the_path_length_constraint_is_enforced(pki: dict[str, Issued]) -> None:
    sub = make_cert("Sub CA", issuer=pki["intermediate"], ca=True)  # pathLen 0 forbids this
    leaf = make_cert("Provider", issuer=sub, dns=["issuer.example"])
    header = {"x5c": x5c(leaf, sub, pki["intermediate"])}
    with pytest.raises(TrustError, match="exceeds its path length constraint"):
        resolve(header, {"iss": "https://issuer.example"}, anchors=[pki["root"].cert])


def test_certificates_out_of_order_are_refused(pki: dict[str, Issued]) -> None:
    stranger = make_cert("Stranger CA", ca=True)
    header = {"x5c": x5c(pki["leaf"], stranger, pki["intermediate"])}
    with pytest.raises(
        TrustError, match="Issuer certificate is not signed by the next certificate"
    ):
        resolve(header, {"iss": "https://issuer.example"}, anchors=[pki["root"].cert])


@pytest.mark.parametrize("value", ["MIIB", [], ["not base64!"], ["AAAA"], [1]])
def test_an_unreadable_x5c_is_refused(value: object) -> None:
    with pytest.raises(TrustError, match="x5c"):
        resolve(
            {"x5c": value},
            {"iss": "https://issuer.example"},
            anchors=[make_cert("R", ca=True).cert],
        )


def test_x5c_takes_precedence_over_iss_resolution(
    pki: dict[str, Issued], connections: list[str]
) -> None:
    header = {"x5c": x5c(pki["leaf"], pki["intermediate"])}
    resolve(header, {"iss": "https://issuer.example/pid"}, anchors=[pki["root"].cert])
    assert connections == []  # no metadata fetch for an x5c credential
