"""SD-JWT VC presentations for the benchmark, and the two figures that need them.

* ``Credential`` / ``issue`` / ``present``: an issuer (``did:jwk``, ES256) and a holder (ES256)
  written on ``cryptography`` alone, not on ``app.sdjwt``, so the verifier is measured on
  tokens it did not make. ``tests/test_bench_support.py`` checks that the service accepts them
  and that an independent implementation (PyPI sd-jwt) does too.
* ``in_process_rounds``: strict SD-JWT+KB verifications per second with ``app.sdjwt`` against
  the floor, two raw ES256 verifications, interleaved.
* ``load``: client processes that drive the running server over HTTP, either ``GET /healthz``
  or whole presentations (connect link, request object, key binding JWT, ``direct_post``).
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import secrets
import signal
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

PID_VCT = "urn:eudi:pid:1"  # the vct of the public PID schema the bench's verification uses
PERSON = {
    "given_name": "Erika",
    "family_name": "Mustermann",
    "birthdate": "1984-01-26",
    "address": {"country": "DE", "locality": "Berlin"},
}
# What the holder shows: four disclosures (one of them nested in address) of the six issued.
SHOWN = ("given_name", "family_name", "birthdate", "address.country")
CREDENTIAL_QUERY_ID = "credential"  # the DCQL credential query id the service asks for
HTTP_TIMEOUT = 10  # seconds for one request of the load


# -- encoding and signing (RFC 7515, RFC 7518 §3.4) -----------------------------------------


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64json(value: Any) -> str:
    return b64(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def digest(text: str) -> str:
    """RFC 9901 §4.2.3: SHA-256 over the ASCII characters, base64url."""
    return b64(hashlib.sha256(text.encode("ascii")).digest())


def public_jwk(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) -> dict[str, str]:
    public = key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key
    numbers = public.public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": b64(numbers.x.to_bytes(32, "big")),
        "y": b64(numbers.y.to_bytes(32, "big")),
    }


def es256(key: ec.EllipticCurvePrivateKey, signing_input: str) -> str:
    """A compact JWS with ``signing_input`` signed ES256: the signature as R || S."""
    r, s = decode_dss_signature(key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def sign_jwt(
    key: ec.EllipticCurvePrivateKey, header: dict[str, Any], payload: dict[str, Any]
) -> str:
    return es256(key, f"{b64json(header)}.{b64json(payload)}")


# -- issuing and presenting -----------------------------------------------------------------


@dataclass(frozen=True)
class Credential:
    """An issued SD-JWT VC as its holder keeps it: the SD-JWT to show, and the holder key.

    ``sd_jwt`` is the Issuer-signed JWT followed by the disclosures in ``SHOWN``, each ending
    with "~": everything but the key binding JWT, which needs the verifier's nonce.
    """

    issuer: str  # did:jwk
    issuer_public_jwk: dict[str, str]
    holder_pem: bytes  # PKCS#8, so a Credential can travel to the load's client processes
    sd_jwt: str

    def holder_key(self) -> ec.EllipticCurvePrivateKey:
        return _holder_key(self.holder_pem)


_HOLDER_KEYS: dict[bytes, ec.EllipticCurvePrivateKey] = {}


def _holder_key(pem: bytes) -> ec.EllipticCurvePrivateKey:
    key = _HOLDER_KEYS.get(pem)
    if key is None:
        loaded = serialization.load_pem_private_key(pem, password=None)
        assert isinstance(loaded, ec.EllipticCurvePrivateKey)
        key = _HOLDER_KEYS[pem] = loaded
    return key


def _disclosure(name: str, value: Any) -> str:
    return b64json([secrets.token_urlsafe(16), name, value])


def issue(*, vct: str = PID_VCT, now: int | None = None, lifetime: int = 24 * 3600) -> Credential:
    """A PID-like SD-JWT VC from a fresh ``did:jwk`` issuer, bound to a fresh holder key.

    given_name, family_name, birthdate and address.country/locality are selectively
    disclosable, and the issuer adds a decoy digest (RFC 9901 §4.2.5).
    """
    now = int(time.time()) if now is None else now
    issuer_key = ec.generate_private_key(ec.SECP256R1())
    holder_key = ec.generate_private_key(ec.SECP256R1())
    issuer_jwk = public_jwk(issuer_key)
    did = "did:jwk:" + b64json(issuer_jwk)
    top = {
        name: _disclosure(name, PERSON[name]) for name in ("given_name", "family_name", "birthdate")
    }
    address = {name: _disclosure(name, value) for name, value in PERSON["address"].items()}
    payload = {
        "iss": did,
        "vct": vct,
        "iat": now - 60,
        "exp": now + lifetime,
        "cnf": {"jwk": public_jwk(holder_key)},
        "_sd_alg": "sha-256",
        "_sd": sorted([*(digest(d) for d in top.values()), digest(secrets.token_urlsafe(16))]),
        "address": {"_sd": sorted(digest(d) for d in address.values())},
    }
    issuer_jwt = sign_jwt(issuer_key, {"alg": "ES256", "typ": "dc+sd-jwt"}, payload)
    shown = {**top, **{f"address.{name}": text for name, text in address.items()}}
    sd_jwt = "".join(f"{part}~" for part in [issuer_jwt, *(shown[name] for name in SHOWN)])
    holder_pem = holder_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return Credential(did, issuer_jwk, holder_pem, sd_jwt)


def present(credential: Credential, audience: str, nonce: str, iat: int | None = None) -> str:
    """The SD-JWT+KB for one request (RFC 9901 §4.3): one ES256 signature by the holder."""
    kb_payload = {
        "aud": audience,
        "nonce": nonce,
        "iat": int(time.time()) if iat is None else iat,
        "sd_hash": digest(credential.sd_jwt),
    }
    header = {"alg": "ES256", "typ": "kb+jwt"}
    return credential.sd_jwt + sign_jwt(credential.holder_key(), header, kb_payload)


# -- the wallet's side of OpenID4VP (direct_post) -------------------------------------------


def request_path(connection_url: str) -> str:
    """The path of the ``request_uri`` an ``openid4vp://`` link passes the request by."""
    return urlsplit(parse_qs(urlsplit(connection_url).query)["request_uri"][0]).path


def carried_request(connection_url: str) -> dict[str, Any] | None:
    """The request an unsigned link carries by value (objects as JSON); None when the link
    passes it by reference."""
    query = {name: values[0] for name, values in parse_qs(urlsplit(connection_url).query).items()}
    if "request_uri" in query:
        return None
    objects = ("dcql_query", "client_metadata")
    return {name: json.loads(value) if name in objects else value for name, value in query.items()}


def request_claims(request_object: str) -> dict[str, Any]:
    """The claims of the Request Object (an unsecured JWT; a wallet would check a signed one)."""
    return json.loads(unb64(request_object.split(".")[1]))


def response(credential: Credential, claims: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """Where to post and what: the ``direct_post`` form answering one Request Object."""
    presentation = present(credential, claims["client_id"], claims["nonce"])
    form = {
        "vp_token": json.dumps({CREDENTIAL_QUERY_ID: [presentation]}),
        "state": claims["state"],
    }
    return urlsplit(claims["response_uri"]).path, form


# -- figure: in-process verifications against the ES256 floor -------------------------------


@dataclass(frozen=True)
class Slice:
    ops_per_second: float
    ops: int


def timed(operation: Callable[[], object], seconds: float, batch: int = 25) -> Slice:
    """Run ``operation`` back to back for about ``seconds`` of this process's CPU time; its
    rate per CPU second. CPU time rather than wall time, so that other programs taking turns
    on the machine's cores move the figure less (the bench process has a single thread here).
    """
    count = 0
    start = time.process_time()
    end = start + seconds
    while True:
        for _ in range(batch):
            operation()
        count += batch
        now = time.process_time()
        if now >= end:
            return Slice(count / (now - start), count)


def _der_signature(compact: str) -> tuple[bytes, bytes]:
    """The signing input and the DER form of the R || S signature of a compact JWS."""
    signing_input, _, signature = compact.rpartition(".")
    raw = unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    return signing_input.encode("ascii"), der


def in_process_operations(
    credential: Credential | None = None,
) -> tuple[Callable[[], object], Callable[[], object]]:
    """``(floor, verify)``: two raw ES256 verifications, and one strict SD-JWT VC + key binding
    verification (``parse_presentation`` then ``verify_presentation``) of the same presentation.

    The floor checks the presentation's own two signatures, the Issuer-signed JWT's and the key
    binding JWT's, with ``cryptography`` and keys already loaded: what no verifier can skip.
    ``verify`` is given the issuer's key already loaded too, as the trust layer hands it over
    (for ``did:jwk``, decoding the DID); the holder key it reads from ``cnf.jwk`` itself.
    """
    from app.sdjwt import KeyBindingCheck, parse_presentation, verify_presentation

    credential = credential or issue()
    audience = "redirect_uri:http://127.0.0.1/oid4vp/responses/bench"
    nonce = secrets.token_urlsafe(24)
    presentation = present(credential, audience, nonce)
    issuer_jwt = presentation.split("~", 1)[0]
    kb_jwt = presentation.rsplit("~", 1)[1]
    issuer_public = ec.EllipticCurvePublicNumbers(
        int.from_bytes(unb64(credential.issuer_public_jwk["x"]), "big"),
        int.from_bytes(unb64(credential.issuer_public_jwk["y"]), "big"),
        ec.SECP256R1(),
    ).public_key()
    holder_public = credential.holder_key().public_key()
    issuer_signed, issuer_der = _der_signature(issuer_jwt)
    kb_signed, kb_der = _der_signature(kb_jwt)
    sha256 = ec.ECDSA(hashes.SHA256())

    def floor() -> None:
        issuer_public.verify(issuer_der, issuer_signed, sha256)
        holder_public.verify(kb_der, kb_signed, sha256)

    def verify() -> object:
        check = KeyBindingCheck(audience=audience, nonce=nonce, now=int(time.time()))
        return verify_presentation(parse_presentation(presentation), issuer_public, check)

    return floor, verify


@dataclass(frozen=True)
class InProcess:
    floor: list[Slice]  # rounds + 1 slices: before the first round and after every round
    verify: list[Slice]

    def ratios(self) -> list[float]:
        """Each verify slice over the mean of the floor slices just before and after it."""
        rates = [s.ops_per_second for s in self.floor]
        return [
            v.ops_per_second / statistics.fmean(rates[n : n + 2]) for n, v in enumerate(self.verify)
        ]


def in_process_rounds(
    rounds: int,
    seconds: float = 0.5,
    operations: tuple[Callable[[], object], Callable[[], object]] | None = None,
) -> InProcess:
    """``floor | verify | floor | verify | ... | floor``, each slice ``seconds`` long, after a
    warm-up slice of each; one Python thread, so the figure is the verifier's own cost.
    ``operations`` is another ``(floor, verify)`` pair (the mdoc verifier's); by default the
    SD-JWT VC one."""
    floor, verify = operations or in_process_operations()
    timed(floor, seconds)
    timed(verify, seconds)
    floors, verifies = [timed(floor, seconds)], []
    for _ in range(rounds):
        verifies.append(timed(verify, seconds))
        floors.append(timed(floor, seconds))
    return InProcess(floors, verifies)


# -- figure: presentations over HTTP, and healthz by the same client ------------------------


class LoadError(Exception):
    """A request of the load failed; the message says which and how."""


@dataclass(frozen=True)
class Job:
    """What one client process does: ``kind`` "healthz" or "present", from ``start_at``
    (``time.monotonic``, shared by the processes on Linux) for ``seconds``."""

    kind: str
    host: str
    port: int
    start_at: float
    seconds: float
    individuals: tuple[str, ...] = ()
    credential: Credential | None = None


@dataclass(frozen=True)
class Outcome:
    """One client process's share: what completed within the run, and what it used."""

    completed: int
    latencies_ms: list[float]
    used: int  # individuals taken from the job (presentations), finished in time or not
    exhausted: bool  # ran out of individuals before the end
    error: str | None = None


def _exchange(
    connection: http.client.HTTPConnection,
    method: str,
    path: str,
    body: str | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        raw = answer.read()
    except (OSError, http.client.HTTPException) as exc:
        connection.close()
        raise LoadError(f"{method} {path}: {exc!r}") from None
    if not 200 <= answer.status < 300:
        raise LoadError(f"{method} {path} answered {answer.status}: {raw[:300]!r}")
    return raw


FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}


def present_once(
    connection: http.client.HTTPConnection, individual_id: str, credential: Credential
) -> None:
    """One whole presentation, as a wallet makes it for a person who opened the page."""
    individual = json.loads(_exchange(connection, "GET", f"/verifications/{individual_id}/connect"))
    claims = carried_request(individual["connection_url"])
    if claims is None:
        request_object = _exchange(connection, "GET", request_path(individual["connection_url"]))
        claims = request_claims(request_object.decode("ascii"))
    path, form = response(credential, claims)
    _exchange(connection, "POST", path, urlencode(form), FORM)


def run_job(job: Job) -> Outcome:
    """A client process's loop: one connection, requests back to back until the end."""
    connection = http.client.HTTPConnection(job.host, job.port, timeout=HTTP_TIMEOUT)
    end = job.start_at + job.seconds
    latencies: list[float] = []
    used = 0
    time.sleep(max(0.0, job.start_at - time.monotonic()))
    try:
        while True:
            began = time.monotonic()
            if began >= end:
                break
            if job.kind == "healthz":
                _exchange(connection, "GET", "/healthz")
            else:
                if used == len(job.individuals):
                    return Outcome(len(latencies), latencies, used, exhausted=True)
                assert job.credential is not None
                used += 1
                present_once(connection, job.individuals[used - 1], job.credential)
            done = time.monotonic()
            if done <= end:  # the one in flight at the end finishes, but is not counted
                latencies.append((done - began) * 1000)
    except LoadError as exc:
        return Outcome(len(latencies), latencies, used, exhausted=False, error=str(exc))
    finally:
        connection.close()
    return Outcome(len(latencies), latencies, used, exhausted=False)


def open_individuals(
    host: str, port: int, verification_id: str, customer_ids: Sequence[str]
) -> list[str]:
    """Create an individual per customer id (201 each); their ids. Set-up, not measured."""
    connection = http.client.HTTPConnection(host, port, timeout=HTTP_TIMEOUT)
    ids = []
    try:
        for customer_id in customer_ids:
            body = json.dumps({"customer_id": customer_id, "verification_id": verification_id})
            raw = _exchange(connection, "POST", "/verifications/individuals", body, JSON)
            ids.append(json.loads(raw)["id"])
    finally:
        connection.close()
    return ids


def client_process_init() -> None:
    """The parent handles Ctrl-C and SIGTERM and ends the client processes itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
