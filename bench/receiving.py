"""Whole issuances over HTTP for the benchmark: the wallet's three requests of the OpenID4VCI
1.0 pre-authorized code flow once it holds an offer, each in a client process of its own; the
six of the authorization code flow with DPoP (``authorize_once``); and the pre-authorized
flow whose credential request is a batch of ``BATCH_PROOFS`` proofs (``issue_batch_once``).

One issuance is the Token Request with the pre-authorized code (§6.1), a ``c_nonce`` from the
Nonce Endpoint (§7.2), and the Credential Request (§8.2) with a fresh ``jwt`` key proof signed
by the client (Appendix F.1). Offers are made ahead of a run and not measured (staff issuing
credentials through ``POST /credentials``, and the wallet reading the offer by reference):
a pre-authorized code is single-use, so each issuance needs one of its own.

The client is written on ``cryptography`` and ``http.client`` (with ``presenting.py``'s
helpers), not on ``app.holder`` or ``app.oid4vci``, so the issuer is measured on requests it
did not make.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

try:  # run as bench/run.py, beside it
    import presenting
except ModuleNotFoundError:  # imported by the tests as bench.receiving
    from bench import presenting

PRE_AUTHORIZED_GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"
AUTHORIZATION_CODE_GRANT = "authorization_code"
REDIRECT_URI = "https://wallet.bench.example/callback"
CLIENT_ID = "bench-wallet"
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}
# The schema the bench's credentials are issued under (published by the set-up).
ISSUANCE_SCHEMA = {
    "name": "Bench membership",
    "vct": "urn:example:bench:membership:1",
    "attributes": [
        {"name": "given_name", "type": "TEXT"},
        {"name": "family_name", "type": "TEXT"},
        {"name": "birthdate", "type": "DATETIME"},
    ],
}


@dataclass(frozen=True)
class Issuer:
    """Where a wallet sends its three requests, read once from the issuer's metadata."""

    identifier: str
    token_path: str
    nonce_path: str
    credential_path: str
    configuration_id: str
    par_path: str = ""
    authorize_path: str = ""
    scope: str = ""


@dataclass(frozen=True)
class Job:
    """What one client process does: ``kind`` "healthz", "issue", "authcode" or "batch", from
    ``start_at`` (``time.monotonic``, shared by the processes on Linux) for ``seconds``."""

    kind: str
    host: str
    port: int
    start_at: float
    seconds: float
    codes: tuple[str, ...] = ()
    issuer: Issuer | None = None


def _path(url: str) -> str:
    return urlsplit(url).path


def discover(host: str, port: int, offer_url: str) -> tuple[Issuer, str]:
    """The issuer's endpoints, as a wallet finds them from one offer, and that offer's code."""
    connection = http.client.HTTPConnection(host, port, timeout=presenting.HTTP_TIMEOUT)
    try:
        offer = _offer(connection, offer_url)
        identifier = offer["credential_issuer"]
        suffix = _path(identifier)
        metadata = _get_json(connection, f"/.well-known/openid-credential-issuer{suffix}")
        server = _get_json(connection, f"/.well-known/oauth-authorization-server{suffix}")
    finally:
        connection.close()
    configuration_id = offer["credential_configuration_ids"][0]
    issuer = Issuer(
        identifier,
        _path(server["token_endpoint"]),
        _path(metadata["nonce_endpoint"]),
        _path(metadata["credential_endpoint"]),
        configuration_id,
        _path(server["pushed_authorization_request_endpoint"]),
        _path(server["authorization_endpoint"]),
        metadata["credential_configurations_supported"][configuration_id]["scope"],
    )
    return issuer, offer["grants"][PRE_AUTHORIZED_GRANT]["pre-authorized_code"]


def _get_json(connection: http.client.HTTPConnection, path: str) -> dict:
    return json.loads(presenting._exchange(connection, "GET", path))


def _offer(connection: http.client.HTTPConnection, offer_url: str) -> dict:
    """§4.1.3: the offer by reference, at ``credential_offer_uri``."""
    uri = parse_qs(urlsplit(offer_url).query)["credential_offer_uri"][0]
    return _get_json(connection, _path(uri))


def make_offers(
    host: str, port: int, token: str, bodies: Sequence[dict], grant: str = PRE_AUTHORIZED_GRANT
) -> list[str]:
    """Issue a credential per body through the staff API (201 each) and read each offer: the
    pre-authorized codes, or the issuer_states of the authorization code grant. Set-up, not
    measured."""
    connection = http.client.HTTPConnection(host, port, timeout=presenting.HTTP_TIMEOUT)
    headers = {**JSON, "Authorization": f"Bearer {token}"}
    codes = []
    try:
        for body in bodies:
            raw = presenting._exchange(
                connection, "POST", "/credentials", json.dumps(body), headers
            )
            offer = _offer(connection, json.loads(raw)["offer_url"])
            if grant == PRE_AUTHORIZED_GRANT:
                codes.append(offer["grants"][grant]["pre-authorized_code"])
            else:
                codes.append(offer["grants"][grant]["issuer_state"])
    finally:
        connection.close()
    return codes


_KEY: list[ec.EllipticCurvePrivateKey] = []


def _holder_key() -> ec.EllipticCurvePrivateKey:
    """One holder key per client process, made outside the measured loop on first use."""
    if not _KEY:
        _KEY.append(ec.generate_private_key(ec.SECP256R1()))
    return _KEY[0]


# Proofs in the credential request of a batch issuance, each with a key of its own (the
# issuer refuses two proofs of one key); within the default ISSUER_BATCH_SIZE (10).
BATCH_PROOFS = 3
_BATCH_KEYS: list[ec.EllipticCurvePrivateKey] = []


def _batch_keys() -> list[ec.EllipticCurvePrivateKey]:
    """``BATCH_PROOFS`` holder keys per client process, made outside the measured loop."""
    if not _BATCH_KEYS:
        _BATCH_KEYS.extend(ec.generate_private_key(ec.SECP256R1()) for _ in range(BATCH_PROOFS))
    return _BATCH_KEYS


def _proof(key: ec.EllipticCurvePrivateKey, issuer: Issuer, nonce: str) -> str:
    """A ``jwt`` key proof (Appendix F.1) for the issuer and ``c_nonce``."""
    return presenting.sign_jwt(
        key,
        {"alg": "ES256", "typ": "openid4vci-proof+jwt", "jwk": presenting.public_jwk(key)},
        {"aud": issuer.identifier, "iat": int(time.time()), "nonce": nonce},
    )


def _pre_authorized(
    connection: http.client.HTTPConnection,
    issuer: Issuer,
    code: str,
    keys: Sequence[ec.EllipticCurvePrivateKey],
) -> list[str]:
    """Token, nonce, and one credential request with a proof per key; the credentials."""
    form = urlencode({"grant_type": PRE_AUTHORIZED_GRANT, "pre-authorized_code": code})
    token = json.loads(presenting._exchange(connection, "POST", issuer.token_path, form, FORM))
    nonce = json.loads(presenting._exchange(connection, "POST", issuer.nonce_path))["c_nonce"]
    proofs = [_proof(key, issuer, nonce) for key in keys]
    body = json.dumps(
        {"credential_configuration_id": issuer.configuration_id, "proofs": {"jwt": proofs}}
    )
    headers = {**JSON, "Authorization": f"Bearer {token['access_token']}"}
    answer = presenting._exchange(connection, "POST", issuer.credential_path, body, headers)
    credentials = [item["credential"] for item in json.loads(answer)["credentials"]]
    if len(credentials) != len(keys):
        raise presenting.LoadError(
            f"{len(keys)} proofs got {len(credentials)} credentials, not one each"
        )
    return credentials


def issue_once(connection: http.client.HTTPConnection, issuer: Issuer, code: str) -> str:
    """Token, nonce, credential: one whole issuance as a wallet makes it; the SD-JWT VC."""
    return _pre_authorized(connection, issuer, code, [_holder_key()])[0]


def issue_batch_once(
    connection: http.client.HTTPConnection, issuer: Issuer, code: str
) -> list[str]:
    """The same three requests, the credential request a batch of ``BATCH_PROOFS`` proofs
    (OpenID4VCI 1.0 §8.2, ``batch_credential_issuance``): as many SD-JWT VCs."""
    return _pre_authorized(connection, issuer, code, _batch_keys())


_DPOP_KEY: list[ec.EllipticCurvePrivateKey] = []
_DPOP_NONCE: list[str] = []


def _dpop_key() -> ec.EllipticCurvePrivateKey:
    if not _DPOP_KEY:
        _DPOP_KEY.append(ec.generate_private_key(ec.SECP256R1()))
    return _DPOP_KEY[0]


def _dpop(issuer: Issuer, method: str, path: str, token: str = "") -> str:
    """A DPoP proof (RFC 9449 §4.2) for ``path`` of the issuer's origin, with the issuer's
    last nonce."""
    key = _dpop_key()
    origin = urlsplit(issuer.identifier)
    payload = {
        "jti": secrets.token_urlsafe(12),
        "htm": method,
        "htu": f"{origin.scheme}://{origin.netloc}{path}",
        "iat": int(time.time()),
        "nonce": _DPOP_NONCE[-1] if _DPOP_NONCE else "",
    }
    if token:
        payload["ath"] = presenting.b64(hashlib.sha256(token.encode()).digest())
    header = {"alg": "ES256", "typ": "dpop+jwt", "jwk": presenting.public_jwk(key)}
    return presenting.sign_jwt(key, header, payload)


def _exchange_with_headers(
    connection: http.client.HTTPConnection,
    method: str,
    path: str,
    body: str | None,
    headers: dict[str, str],
    expect: tuple[int, ...] = (200, 201),
) -> tuple[bytes, http.client.HTTPResponse]:
    """One request whose answer's headers matter (DPoP-Nonce, Set-Cookie, Location); the
    DPoP nonce it carries is kept for the next proof."""
    try:
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        raw = answer.read()
    except (OSError, http.client.HTTPException) as exc:
        connection.close()
        raise presenting.LoadError(f"{method} {path}: {exc!r}") from None
    nonce = answer.getheader("DPoP-Nonce")
    if nonce:
        _DPOP_NONCE[:] = [nonce]
    if answer.status not in expect:
        raise presenting.LoadError(f"{method} {path} answered {answer.status}: {raw[:300]!r}")
    return raw, answer


def authorize_once(connection: http.client.HTTPConnection, issuer: Issuer, state: str) -> str:
    """The authorization code flow as a wallet and its person make it, with DPoP: the pushed
    request (PKCE S256), the authorization page and its Continue, the token, a c_nonce, the
    credential; six requests. The SD-JWT VC."""
    if not _DPOP_NONCE:
        _exchange_with_headers(connection, "POST", issuer.nonce_path, None, {})
    verifier = secrets.token_urlsafe(48)
    challenge = presenting.b64(hashlib.sha256(verifier.encode()).digest())
    pushed_form = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": issuer.scope,
        "issuer_state": state,
    }
    raw, _ = _exchange_with_headers(
        connection,
        "POST",
        issuer.par_path,
        urlencode(pushed_form),
        {**FORM, "DPoP": _dpop(issuer, "POST", issuer.par_path)},
        (201,),
    )
    query = urlencode({"client_id": CLIENT_ID, "request_uri": json.loads(raw)["request_uri"]})
    page, answer = _exchange_with_headers(
        connection, "GET", f"{issuer.authorize_path}?{query}", None, {}
    )
    cookie = (answer.getheader("Set-Cookie") or "").split(";", 1)[0]
    fields = dict(HIDDEN_INPUT.findall(page.decode("utf-8")))
    _, answer = _exchange_with_headers(
        connection,
        "POST",
        issuer.authorize_path,
        urlencode({**fields, "decision": "continue"}),
        {**FORM, "Cookie": cookie},
        (303,),
    )
    code = parse_qs(urlsplit(answer.getheader("Location") or "").query)["code"][0]
    token_form = {
        "grant_type": AUTHORIZATION_CODE_GRANT,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": REDIRECT_URI,
        "client_id": CLIENT_ID,
    }
    raw, _ = _exchange_with_headers(
        connection,
        "POST",
        issuer.token_path,
        urlencode(token_form),
        {**FORM, "DPoP": _dpop(issuer, "POST", issuer.token_path)},
    )
    token = json.loads(raw)["access_token"]
    raw, _ = _exchange_with_headers(connection, "POST", issuer.nonce_path, None, {})
    key = _holder_key()
    proof = presenting.sign_jwt(
        key,
        {"alg": "ES256", "typ": "openid4vci-proof+jwt", "jwk": presenting.public_jwk(key)},
        {"aud": issuer.identifier, "iat": int(time.time()), "nonce": json.loads(raw)["c_nonce"]},
    )
    body = json.dumps(
        {"credential_configuration_id": issuer.configuration_id, "proofs": {"jwt": [proof]}}
    )
    headers = {
        **JSON,
        "Authorization": f"DPoP {token}",
        "DPoP": _dpop(issuer, "POST", issuer.credential_path, token),
    }
    raw, _ = _exchange_with_headers(connection, "POST", issuer.credential_path, body, headers)
    return json.loads(raw)["credentials"][0]["credential"]


def check_credential(
    connection: http.client.HTTPConnection, issuer: Issuer, credential: str
) -> None:
    """The credential names the issuer and its signature verifies with the key of its ``kid``
    in the issuer's SD-JWT VC metadata; ``LoadError`` otherwise."""
    issuer_jwt = credential.split("~", 1)[0]
    header, payload = (json.loads(presenting.unb64(part)) for part in issuer_jwt.split(".")[:2])
    if payload.get("iss") != issuer.identifier:
        raise presenting.LoadError("the credential does not name the issuer")
    metadata = _get_json(connection, f"/.well-known/jwt-vc-issuer{_path(issuer.identifier)}")
    keys = [k for k in metadata["jwks"]["keys"] if k.get("kid") == header.get("kid")]
    if not keys:
        raise presenting.LoadError("the issuer publishes no key with the credential's kid")
    public = ec.EllipticCurvePublicNumbers(
        int.from_bytes(presenting.unb64(keys[0]["x"]), "big"),
        int.from_bytes(presenting.unb64(keys[0]["y"]), "big"),
        ec.SECP256R1(),
    ).public_key()
    signing_input, der = presenting._der_signature(issuer_jwt)
    try:
        public.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise presenting.LoadError("the credential's signature does not verify") from None


def run_job(job: Job) -> presenting.Outcome:
    """A client process's loop: one connection, requests back to back until the end."""
    if job.kind == "healthz":
        return presenting.run_job(
            presenting.Job("healthz", job.host, job.port, job.start_at, job.seconds)
        )
    assert job.issuer is not None
    _holder_key()
    _batch_keys()
    connection = http.client.HTTPConnection(job.host, job.port, timeout=presenting.HTTP_TIMEOUT)
    end = job.start_at + job.seconds
    latencies: list[float] = []
    used = 0
    time.sleep(max(0.0, job.start_at - time.monotonic()))
    try:
        while True:
            began = time.monotonic()
            if began >= end:
                break
            if used == len(job.codes):
                return presenting.Outcome(len(latencies), latencies, used, exhausted=True)
            used += 1
            if job.kind == "authcode":
                authorize_once(connection, job.issuer, job.codes[used - 1])
            elif job.kind == "batch":
                issue_batch_once(connection, job.issuer, job.codes[used - 1])
            else:
                issue_once(connection, job.issuer, job.codes[used - 1])
            done = time.monotonic()
            if done <= end:  # the one in flight at the end finishes, but is not counted
                latencies.append((done - began) * 1000)
    except presenting.LoadError as exc:
        return presenting.Outcome(len(latencies), latencies, used, exhausted=False, error=str(exc))
    finally:
        connection.close()
    return presenting.Outcome(len(latencies), latencies, used, exhausted=False)
