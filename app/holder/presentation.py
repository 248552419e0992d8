"""Presenting a credential: OpenID4VP 1.0 with a DCQL query, SD-JWT VC, ``direct_post`` or
``direct_post.jwt``.

The Authorization Request arrives as an ``openid4vp://`` link: by reference (``request_uri``,
§5.7 and RFC 9101), by value as a Request Object (``request``), or as plain parameters. The
holder matches each DCQL credential query (§6) to a stored credential of the requested
``vct``, discloses only the requested claims, binds the presentation to the verifier with a
key binding JWT (RFC 9901 §4.3: ``aud`` the client ID, ``nonce``, ``iat``, ``sd_hash``), and
posts the ``vp_token`` keyed by credential query id (§8.1), encrypted to the verifier's key when
the request asks for ``direct_post.jwt`` (§8.3).

Signed Request Objects (``x509_san_dns:``, ``x509_hash:``) have their signature checked with
the leaf certificate of ``x5c`` and the client ID checked against its DNS names or its hash; the
chain is not checked against trust anchors, which a production wallet would hold. With
``request_uri_method=post`` (§5.10) the holder posts its metadata and a fresh ``wallet_nonce``,
which the signed Request Object must carry back. Left out: ``credential_sets`` alternatives
beyond answering every query it can, ``transaction_data`` and the DC API.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from app.holder import sdjwt
from app.holder.jose import (
    JoseError,
    decode_segment,
    encrypt_ecdh_es,
    sha256_b64url,
    sign_es256,
    verify_es256,
)
from app.holder.store import Wallet
from app.holder.transport import HolderError, Http, check_url

FORMAT = "dc+sd-jwt"
KB_JWT_TYPE = "kb+jwt"
RESPONSE_MODES = ("direct_post", "direct_post.jwt")


@dataclass(frozen=True)
class Request:
    client_id: str
    nonce: str
    state: str | None
    response_uri: str
    response_mode: str
    dcql_query: dict[str, Any]
    client_metadata: dict[str, Any]


def read_request(link: str, http: Http) -> Request:
    query = {name: values[0] for name, values in parse_qs(urlsplit(link).query).items()}
    if "request_uri" in query:
        if query.get("request_uri_method", "get") == "post":
            claims = _posted_request_object(query["request_uri"], http)
        else:
            response = http.call("GET", query["request_uri"], "request object")
            claims = _request_object(response.text.strip())
    elif "request" in query:
        claims = _request_object(query["request"])
    else:
        claims = {
            name: _json_parameter(value) if name in ("dcql_query", "client_metadata") else value
            for name, value in query.items()
        }
    # §5.10.1: the client_id outside the Request Object must be the one inside it.
    if query.get("client_id") and claims.get("client_id") != query["client_id"]:
        raise HolderError("the link's client_id differs from the request's")
    return _validated(claims)


# §10: what the holder can do, sent with request_uri_method=post (§5.10).
WALLET_METADATA = {
    "vp_formats_supported": {FORMAT: {"kb-jwt_alg_values": ["ES256"]}},
    "client_id_prefixes_supported": ["redirect_uri", "x509_san_dns", "x509_hash"],
    "request_object_signing_alg_values_supported": ["ES256"],
    "response_modes_supported": list(RESPONSE_MODES),
    "authorization_encryption_alg_values_supported": ["ECDH-ES"],
    "authorization_encryption_enc_values_supported": ["A128GCM", "A256GCM"],
}


def _posted_request_object(request_uri: str, http: Http) -> dict[str, Any]:
    """§5.10: the wallet's metadata and a fresh nonce, form-encoded; the signed Request Object
    must carry the nonce back, or the holder stops."""
    nonce = secrets.token_urlsafe(16)
    response = http.call(
        "POST",
        request_uri,
        "request object",
        data={"wallet_metadata": json.dumps(WALLET_METADATA), "wallet_nonce": nonce},
        headers={"Accept": "application/oauth-authz-req+jwt"},
    )
    claims = _request_object(response.text.strip())
    if claims.get("wallet_nonce") != nonce:
        raise HolderError("the request object does not carry the wallet_nonce this holder sent")
    return claims


def _json_parameter(value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise HolderError("a request parameter that must be JSON is not") from None


def _request_object(token: str) -> dict[str, Any]:
    """Unsigned for ``redirect_uri:`` (§5.9.3); signed for ``x509_san_dns:``."""
    parts = token.split(".")
    if len(parts) != 3:
        raise HolderError("the request object is not a JWT")
    try:
        header, claims = decode_segment(parts[0]), decode_segment(parts[1])
    except JoseError as exc:
        raise HolderError(f"the request object cannot be read: {exc}") from None
    if not isinstance(claims, dict) or not isinstance(header, dict):
        raise HolderError("the request object is not made of JSON objects")
    client_id = str(claims.get("client_id", ""))
    if client_id.startswith("redirect_uri:"):
        if header.get("alg") != "none" or parts[2]:
            raise HolderError("a redirect_uri: request object must not be signed (§5.9.3)")
    elif client_id.startswith("x509_san_dns:"):
        _check_x509_san_dns(token, header, client_id.removeprefix("x509_san_dns:"), claims)
    elif client_id.startswith("x509_hash:"):
        _check_x509_hash(token, header, client_id.removeprefix("x509_hash:"))
    else:
        raise HolderError(f"client identifier prefix not supported: {client_id!r}")
    return claims


def _check_x509_san_dns(token: str, header: dict, name: str, claims: dict) -> None:
    """§5.9.3: signed by the leaf of ``x5c``, whose DNS names include the client ID's name,
    which is also the response URI's host."""
    leaf = _signing_leaf(token, header)
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound as exc:
        raise HolderError(f"the signed request object does not verify: {exc}") from None
    if name not in names.get_values_for_type(x509.DNSName):
        raise HolderError("the request object's certificate does not name its client ID")
    if urlsplit(str(claims.get("response_uri", ""))).hostname != name:
        raise HolderError("the response URI's host is not the client ID's name")


def _check_x509_hash(token: str, header: dict, digest: str) -> None:
    """§5.9.3: signed by the leaf of ``x5c``, whose DER's SHA-256 (base64url) is the name."""
    leaf = _signing_leaf(token, header)
    expected = base64.urlsafe_b64encode(leaf.fingerprint(hashes.SHA256())).rstrip(b"=")
    if expected.decode("ascii") != digest:
        raise HolderError("the request object's certificate is not the one its client ID hashes")


def _signing_leaf(token: str, header: dict) -> x509.Certificate:
    """The leaf certificate of ``x5c``, once the request object's signature checks with it."""
    chain = header.get("x5c")
    if not isinstance(chain, list) or not chain:
        raise HolderError("the signed request object carries no x5c chain")
    try:
        leaf = x509.load_der_x509_certificate(base64.b64decode(chain[0]))
        key = leaf.public_key()
        if not isinstance(key, ec.EllipticCurvePublicKey):
            raise HolderError("the request object's certificate has no EC key")
        verify_es256(token, key)
    except (ValueError, JoseError) as exc:
        raise HolderError(f"the signed request object does not verify: {exc}") from None
    return leaf


def _validated(claims: dict[str, Any]) -> Request:
    if claims.get("response_type") != "vp_token":
        raise HolderError("the request does not ask for a vp_token")
    mode = claims.get("response_mode")
    if mode not in RESPONSE_MODES:
        raise HolderError(f"response_mode {mode!r} is not one this holder speaks")
    response_uri = claims.get("response_uri")
    client_id = claims.get("client_id")
    if not isinstance(response_uri, str) or not isinstance(client_id, str):
        raise HolderError("the request lacks response_uri or client_id")
    # §5.9.3: with direct_post the redirect_uri: client ID is the response URI itself.
    if client_id.startswith("redirect_uri:") and client_id.removeprefix("redirect_uri:") != (
        response_uri
    ):
        raise HolderError("the redirect_uri: client ID is not the response URI")
    if not isinstance(claims.get("nonce"), str) or not claims["nonce"]:
        raise HolderError("the request has no nonce")
    if not isinstance(claims.get("dcql_query"), dict):
        raise HolderError("the request has no DCQL query")
    check_url(response_uri, "response URI")
    return Request(
        client_id=client_id,
        nonce=claims["nonce"],
        state=claims.get("state"),
        response_uri=response_uri,
        response_mode=mode,
        dcql_query=claims["dcql_query"],
        client_metadata=claims.get("client_metadata") or {},
    )


@dataclass(frozen=True)
class Match:
    query_id: str
    stored: dict[str, Any]
    disclosures: list[sdjwt.Disclosure]
    credential: sdjwt.SdJwt


def match(query: dict[str, Any], wallet: Wallet) -> list[Match]:
    """One stored credential per DCQL credential query; every query must be answered."""
    credentials = query.get("credentials")
    if not isinstance(credentials, list) or not credentials:
        raise HolderError("the DCQL query names no credentials")
    return [_match_one(item, wallet) for item in credentials]


def _match_one(item: dict[str, Any], wallet: Wallet) -> Match:
    query_id = item.get("id")
    if item.get("format") != FORMAT:
        raise HolderError(f"query {query_id!r} asks for format {item.get('format')!r}")
    vct_values = (item.get("meta") or {}).get("vct_values") or []
    reasons = []
    for stored in reversed(wallet.credentials):  # the newest first
        if stored.get("format") != FORMAT or (vct_values and stored.get("vct") not in vct_values):
            continue
        try:
            parsed = sdjwt.parse(stored["credential"])
        except JoseError:
            continue  # a damaged entry answers nothing
        chosen = _claims_for(item, parsed)
        if chosen is not None:
            return Match(str(query_id), stored, chosen, parsed)
        reasons.append(stored["id"])
    if reasons:
        raise HolderError(f"no stored credential has every claim query {query_id!r} asks for")
    raise HolderError(f"no stored credential of type {vct_values} answers query {query_id!r}")


def _claims_for(item: dict[str, Any], parsed: sdjwt.SdJwt) -> list[sdjwt.Disclosure] | None:
    """DCQL §6.4.1: no ``claims`` means none of the selectively disclosable ones; with
    ``claim_sets`` the first set the credential satisfies, else all ``claims``."""
    claims = item.get("claims")
    if not claims:
        return []
    by_id = {claim.get("id"): claim for claim in claims if isinstance(claim, dict)}
    options = [
        [by_id[claim_id] for claim_id in claim_set if claim_id in by_id]
        for claim_set in item.get("claim_sets") or []
    ] or [claims]
    for option in options:
        disclosures, missing = sdjwt.select(parsed, [claim.get("path", []) for claim in option])
        values_ok = all(_value_matches(parsed, claim) for claim in option)
        if not missing and values_ok:
            return disclosures
    return None


def _value_matches(parsed: sdjwt.SdJwt, claim: dict[str, Any]) -> bool:
    """DCQL §6.3 ``values``: the claim's value must be one of them, when they are given."""
    if "values" not in claim:
        return True
    node: Any = parsed.claims()
    for step in claim.get("path", []):
        if isinstance(node, dict) and step in node:
            node = node[step]
        else:
            return False
    return node in claim["values"]


def presentation(found: Match, request: Request, wallet: Wallet) -> str:
    """The chosen disclosures and a key binding JWT over them (RFC 9901 §4.3)."""
    shown = found.credential.presentation(found.disclosures)
    kb_claims = {
        "iat": int(time.time()),
        "aud": request.client_id,
        "nonce": request.nonce,
        "sd_hash": sha256_b64url(shown),
    }
    return shown + sign_es256(wallet.key, {"typ": KB_JWT_TYPE}, kb_claims)


def respond(request: Request, vp_token: dict[str, list[str]], http: Http) -> dict[str, Any]:
    """§8.2 ``direct_post`` form, or §8.3.1 ``direct_post.jwt`` with the parameters in a JWE."""
    if request.response_mode == "direct_post.jwt":
        form = {"response": _encrypted(request, vp_token)}
    else:
        form = {"vp_token": json.dumps(vp_token)}
        if request.state is not None:
            form["state"] = request.state
    response = http.call("POST", request.response_uri, "authorization response", data=form)
    try:
        body = response.json()
    except ValueError:
        body = {}
    return body if isinstance(body, dict) else {}


def _encrypted(request: Request, vp_token: dict[str, list[str]]) -> str:
    keys = (request.client_metadata.get("jwks") or {}).get("keys") or []
    usable = [key for key in keys if key.get("kty") == "EC" and key.get("crv") == "P-256"]
    if not usable:
        raise HolderError("direct_post.jwt asked for, but no P-256 encryption key is published")
    offered = request.client_metadata.get("encrypted_response_enc_values_supported") or ["A128GCM"]
    enc = next((value for value in ("A128GCM", "A256GCM") if value in offered), None)
    if enc is None:
        raise HolderError(f"none of the verifier's content encryptions is supported: {offered}")
    payload: dict[str, Any] = {"vp_token": vp_token}
    if request.state is not None:
        payload["state"] = request.state
    return encrypt_ecdh_es(json.dumps(payload).encode("utf-8"), usable[0], enc)


def present(link: str, wallet: Wallet, *, http: Http | None = None) -> dict[str, Any]:
    http = http or Http()
    request = read_request(link, http)
    matches = match(request.dcql_query, wallet)
    vp_token = {found.query_id: [presentation(found, request, wallet)] for found in matches}
    answer = respond(request, vp_token, http)
    return {
        "verifier": request.client_id,
        "response_mode": request.response_mode,
        "presented": [
            {
                "query": found.query_id,
                "credential": found.stored["id"],
                "vct": found.stored.get("vct"),
                "disclosed": [d.name for d in found.disclosures if d.name is not None],
            }
            for found in matches
        ],
        "response": answer,
    }
