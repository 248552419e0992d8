"""Test wallets for end-to-end presentations: real SD-JWT VCs from implementations we did not
write (npm @sd-jwt/sd-jwt-vc through tests/wallet, and PyPI sd-jwt), answering the request
objects the service hands out.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwe
from joserfc.jwk import ECKey
from sdjwt.sdjwt_forge import private_jwk, public_jwk
from wallet.node_wallet import present

PID_VCT = "urn:eudi:pid:1"
PERSON = {
    "given_name": "Erika",
    "family_name": "Mustermann",
    "birthdate": "1984-01-26",
    "address": {"country": "DE", "locality": "Berlin"},
    "nationalities": ["DE"],
}
FRAME = {
    "_sd": ["given_name", "family_name", "birthdate", "nationalities"],
    "address": {"_sd": ["country", "locality"]},
}


def b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


@dataclass
class Issuer:
    """An issuer identified by ``did:jwk`` (its key travels in its identifier: no fetch)."""

    key: Any = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    @property
    def did(self) -> str:
        return "did:jwk:" + b64(public_jwk(self.key))


@dataclass(frozen=True)
class WalletRequest:
    """What a wallet reads from the request object it fetched by reference."""

    request_id: str
    client_id: str
    nonce: str
    state: str
    response_uri: str
    claims: dict
    # The Request Object as served, and its JOSE header (``typ``, ``alg``, ``x5c`` if signed).
    token: str = ""
    header: dict = field(default_factory=dict)


def _segment(value: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))


def read_request(client, connection_url: str) -> WalletRequest:
    """Follow an ``openid4vp://`` link like a wallet: read the request it carries (by value),
    or fetch the request object it points at (by reference).

    The claims are read without checking a signature; tests of signed requests verify
    ``token`` themselves.
    """
    query = link_parameters(connection_url)
    if "request_uri" not in query:
        claims = {
            name: json.loads(value)
            if name in ("dcql_query", "client_metadata", "transaction_data")
            else value
            for name, value in query.items()
        }
        return WalletRequest(
            request_id=urlsplit(claims["response_uri"]).path.rsplit("/", 1)[1],
            client_id=claims["client_id"],
            nonce=claims["nonce"],
            state=claims["state"],
            response_uri=claims["response_uri"],
            claims=claims,
        )
    request_uri = query["request_uri"]
    response = client.get(urlsplit(request_uri).path)
    assert response.status_code == 200, response.get_data(as_text=True)
    token = response.get_data(as_text=True)
    header, payload = token.split(".")[:2]
    claims = _segment(payload)
    return WalletRequest(
        request_id=urlsplit(request_uri).path.rsplit("/", 1)[1],
        client_id=claims["client_id"],
        nonce=claims["nonce"],
        state=claims["state"],
        response_uri=claims["response_uri"],
        claims=claims,
        token=token,
        header=_segment(header),
    )


def link_parameters(connection_url: str) -> dict[str, str]:
    """The query parameters of an ``openid4vp://`` link, each given once."""
    parsed = parse_qs(urlsplit(connection_url).query, strict_parsing=True)
    assert all(len(values) == 1 for values in parsed.values()), parsed
    return {name: values[0] for name, values in parsed.items()}


def request_id_of(connection_url: str) -> str:
    """The presentation request a link is for, whether it carries the request or points at it."""
    query = link_parameters(connection_url)
    uri = query.get("request_uri") or query["response_uri"]
    return urlsplit(uri).path.rsplit("/", 1)[1]


def node_presentation(
    request: WalletRequest,
    issuer: Issuer,
    *,
    claims: dict | None = None,
    reveal: dict | None = None,
    iss: str | None = "",
    vct: str = PID_VCT,
    status: dict | None = None,
    holder: Any = None,
    aud: str | None = None,
    nonce: str | None = None,
    exp_in: int = 3600,
    frame: dict | None = None,
    kb_extra: dict | None = None,
) -> str:
    """An SD-JWT VC from the npm library, presented with a key binding JWT for ``request``
    (with ``kb_extra``'s claims too: transaction_data_hashes, for one)."""
    now = int(time.time())
    holder = holder or ec.generate_private_key(ec.SECP256R1())
    job: dict[str, Any] = {
        "issuer_jwk": private_jwk(issuer.key),
        "holder_jwk": private_jwk(holder),
        "vct": vct,
        "iat": now - 60,
        "exp": now + exp_in,
        "claims": claims if claims is not None else PERSON,
        "frame": frame if frame is not None else FRAME,
        "present": reveal
        if reveal is not None
        else {
            "given_name": True,
            "family_name": True,
            "birthdate": True,
            "address": {"country": True},
        },
        "aud": aud or request.client_id,
        "nonce": nonce or request.nonce,
        "kb_iat": now,
    }
    if iss is not None:
        job["iss"] = iss or issuer.did
    if status is not None:
        job["status"] = status
    if kb_extra is not None:
        job["kb_extra"] = kb_extra
    return present(job)


def post_response(client, request: WalletRequest, presentation: str, state: str | None = None):
    """``direct_post``: form-encoded ``vp_token`` (keyed by DCQL query id) and ``state``."""
    return client.post(
        urlsplit(request.response_uri).path,
        data={
            "vp_token": json.dumps({"credential": [presentation]}),
            "state": state or request.state,
        },
    )


def dc_api_openid4vp_request(client, request_id: str) -> tuple[str, dict]:
    """The OpenID4VP request the person's page hands the browser: its protocol and parameters
    (a signed one's claims, read without checking the signature)."""
    body = client.get(f"/oid4vp/dc-requests/{request_id}").get_json()
    for entry in body["requests"]:
        if entry["protocol"].startswith("openid4vp-v1-"):
            data = entry["data"]
            if "request" in data:
                payload = data["request"].split(".")[1]
                data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            return entry["protocol"], data
    raise AssertionError(f"no OpenID4VP request offered: {body}")


def dc_api_key(client, request_id: str) -> dict | None:
    """The key a ``dc_api.jwt`` request offers (OpenID4VP 1.0 §8.3), None for plain ``dc_api``."""
    _, data = dc_api_openid4vp_request(client, request_id)
    keys = data["client_metadata"].get("jwks", {}).get("keys", [])
    return keys[0] if keys else None


def jwk_thumbprint(jwk: dict) -> bytes:
    """RFC 7638 SHA-256 thumbprint of a public EC key, as the mdoc handovers carry it."""
    required = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    return hashlib.sha256(
        json.dumps(required, separators=(",", ":"), sort_keys=True).encode()
    ).digest()


def encrypt_to(jwk: dict, payload: dict, enc: str = "A128GCM") -> str:
    """A wallet's ECDH-ES JWE (joserfc, not our code) of ``payload`` to ``jwk``."""
    protected = {"alg": "ECDH-ES", "enc": enc, "kid": jwk["kid"]}
    return jwe.encrypt_compact(protected, json.dumps(payload), ECKey.import_key(jwk))


def dc_api_post(client, request: WalletRequest, presentation: str, origin: str):
    """What the person's page posts back from the browser's Digital Credentials API: the
    DigitalCredential, its ``vp_token`` encrypted to the request's key when it offers one
    (``dc_api.jwt``), plain otherwise."""
    protocol, data = dc_api_openid4vp_request(client, request.request_id)
    vp_token = {"credential": [presentation]}
    keys = data["client_metadata"].get("jwks", {}).get("keys", [])
    answer = (
        {"response": encrypt_to(keys[0], {"vp_token": vp_token})}
        if keys
        else {"vp_token": vp_token}
    )
    return client.post(
        f"/oid4vp/dc-responses/{request.request_id}",
        json={"protocol": protocol, "data": answer},
        headers={"Origin": origin},
    )


def published_key(request: WalletRequest) -> dict:
    """The one encryption key a ``direct_post.jwt`` request publishes (OpenID4VP 1.0 §8.3)."""
    keys = request.claims["client_metadata"]["jwks"]["keys"]
    assert len(keys) == 1
    return keys[0]


def encrypt_response(
    request: WalletRequest,
    payload: dict,
    *,
    enc: str = "A128GCM",
    to: dict | None = None,
    **header: Any,
) -> str:
    """What a wallet does for ``direct_post.jwt``: a JWE (joserfc, not our code) to the
    published key, naming it by its kid. ``to`` encrypts to another key under the same kid;
    a header value of None removes that member."""
    protected = {"alg": "ECDH-ES", "enc": enc, "kid": published_key(request)["kid"], **header}
    protected = {name: value for name, value in protected.items() if value is not None}
    algorithms = [protected["alg"], enc, *(["DEF"] if "zip" in protected else [])]
    key = ECKey.import_key(to or published_key(request))
    return jwe.encrypt_compact(protected, json.dumps(payload), key, algorithms=algorithms)


def post_encrypted_response(client, request: WalletRequest, compact: str):
    """``direct_post.jwt``: the JWE alone, form-encoded as ``response`` (§8.3.1)."""
    return client.post(urlsplit(request.response_uri).path, data={"response": compact})


def _selectively_disclosable(claims: dict) -> dict:
    """Every member an ``SDObj`` (PyPI sd-jwt's marker), nested objects member by member: the
    same shape ``FRAME`` gives the npm wallet."""
    from sd_jwt.common import SDObj

    return {
        (name if isinstance(value, dict) else SDObj(name)): (
            _selectively_disclosable(value) if isinstance(value, dict) else value
        )
        for name, value in claims.items()
    }


def python_presentation(
    request: WalletRequest,
    issuer: Issuer,
    *,
    claims: dict | None = None,
    reveal: dict | None = None,
    iss: str | None = "",
    vct: str = PID_VCT,
    aud: str | None = None,
    nonce: str | None = None,
    exp_in: int = 3600,
    x5c: list[str] | None = None,
) -> str:
    """The same credential from a second implementation we did not write (PyPI sd-jwt).

    Every claim is selectively disclosable; ``reveal`` picks what the holder shows (the
    npm wallet's default when left out), ``iss=None`` leaves the issuer out, ``x5c`` puts a
    certificate chain (base64 DER, leaf first) in the credential's header.
    """
    from jwcrypto import jwk
    from sd_jwt.holder import SDJWTHolder
    from sd_jwt.issuer import SDJWTIssuer

    now = int(time.time())
    issuer_key = jwk.JWK.from_json(json.dumps(private_jwk(issuer.key)))
    holder_key = jwk.JWK.generate(kty="EC", crv="P-256")
    payload: dict[Any, Any] = {"vct": vct, "iat": now - 60, "exp": now + exp_in}
    if iss is not None:
        payload["iss"] = iss or issuer.did
    person = (
        claims
        if claims is not None
        else {name: value for name, value in PERSON.items() if name != "nationalities"}
    )
    payload.update(_selectively_disclosable(person))
    issued = SDJWTIssuer(
        payload,
        issuer_key,
        holder_key,
        sign_alg="ES256",
        add_decoy_claims=True,
        extra_header_parameters={"typ": "dc+sd-jwt", **({"x5c": x5c} if x5c else {})},
    )
    holder = SDJWTHolder(issued.sd_jwt_issuance)
    shown = (
        reveal
        if reveal is not None
        else {
            "given_name": True,
            "family_name": True,
            "birthdate": True,
            "address": {"country": True},
        }
    )
    holder.create_presentation(
        shown, nonce or request.nonce, aud or request.client_id, holder_key, "ES256"
    )
    return holder.sd_jwt_presentation
