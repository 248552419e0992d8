"""Helpers for the trust and status list tests: keys, a JWS signer, certificates, and a real
HTTP(S) server on 127.0.0.1 whose routes and hits the tests control."""

from __future__ import annotations

import base64
import ipaddress
import json
import ssl
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from app.sdjwt.encoding import b64url_encode

PrivateKey = ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | rsa.RSAPrivateKey
NOW = datetime.now(UTC).replace(microsecond=0)
# The name the HTTPS test server answers to (resolved to 127.0.0.1 by the dns fixture).
TLS_HOST = "issuer.test"


def ec_key(curve: ec.EllipticCurve | None = None) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(curve or ec.SECP256R1())


def ed_key() -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


def rsa_key(bits: int = 2048) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def _int_b64(value: int, size: int | None = None) -> str:
    size = size or (value.bit_length() + 7) // 8
    return b64url_encode(value.to_bytes(size, "big"))


_CURVES = {"secp256r1": ("P-256", 32), "secp384r1": ("P-384", 48), "secp521r1": ("P-521", 66)}


def public_jwk(key: PrivateKey, **extra: Any) -> dict[str, Any]:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        crv, size = _CURVES[key.curve.name]
        numbers = key.public_key().public_numbers()
        jwk = {
            "kty": "EC",
            "crv": crv,
            "x": _int_b64(numbers.x, size),
            "y": _int_b64(numbers.y, size),
        }
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url_encode(raw)}
    else:
        numbers = key.public_key().public_numbers()
        jwk = {"kty": "RSA", "n": _int_b64(numbers.n), "e": _int_b64(numbers.e)}
    return {**jwk, **extra}


def did_jwk(key: PrivateKey) -> str:
    return "did:jwk:" + b64url_encode(json.dumps(public_jwk(key)).encode())


def default_alg(key: PrivateKey) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}[key.curve.name]
    return "EdDSA" if isinstance(key, ed25519.Ed25519PrivateKey) else "RS256"


def _signature(key: PrivateKey, alg: str, data: bytes) -> bytes:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        size = _CURVES[key.curve.name][1]
        digest = {32: hashes.SHA256(), 48: hashes.SHA384(), 66: hashes.SHA512()}[size]
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(digest)))
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(data)
    if alg == "PS256":
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        return key.sign(data, pss, hashes.SHA256())
    return key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def sign(payload: dict[str, Any], key: PrivateKey, **header: Any) -> str:
    """A compact JWS; header members as keywords (``alg`` defaults from the key)."""
    header = {"alg": default_alg(key), **header}
    signing_input = ".".join(b64url_encode(json.dumps(part).encode()) for part in (header, payload))
    signature = _signature(key, header["alg"], signing_input.encode())
    return f"{signing_input}.{b64url_encode(signature)}"


@dataclass
class Issued:
    cert: x509.Certificate
    key: PrivateKey

    @property
    def pem(self) -> str:
        return self.cert.public_bytes(serialization.Encoding.PEM).decode()


def make_cert(
    name: str,
    *,
    issuer: Issued | None = None,
    ca: bool = False,
    key: PrivateKey | None = None,
    not_before: datetime | None = None,
    not_after: datetime | None = None,
    dns: Iterable[str] = (),
    uris: Iterable[str] = (),
    ips: Iterable[str] = (),
    path_length: int | None = None,
    basic_constraints: bool = True,
) -> Issued:
    """A certificate for ``name``, self-signed unless ``issuer`` is given."""
    key = key or ec_key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.cert.subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or NOW - timedelta(days=1))
        .not_valid_after(not_after or NOW + timedelta(days=30))
    )
    if basic_constraints:
        constraints = x509.BasicConstraints(ca=ca, path_length=path_length if ca else None)
        builder = builder.add_extension(constraints, critical=True)
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.UniformResourceIdentifier(u) for u in uris]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    signer = issuer.key if issuer else key
    digest = None if isinstance(signer, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return Issued(builder.sign(signer, digest), key)


def x5c(*issued: Issued) -> list[str]:
    return [
        base64.b64encode(i.cert.public_bytes(serialization.Encoding.DER)).decode() for i in issued
    ]


Route = Callable[[Request], Response]


class LocalServer:
    """A threaded werkzeug server on 127.0.0.1 (HTTPS when given an SSL context)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.seen: list[dict[str, str]] = []
        self.release = threading.Event()  # ends stalls when the test is over
        self.scheme = "https" if ssl_context else "http"
        self._server = make_server(
            "127.0.0.1", 0, self._app, threaded=True, ssl_context=ssl_context
        )
        self.port = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def add(
        self,
        path: str,
        body: bytes | str | dict | Route,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> None:
        if callable(body):
            self.routes[path] = body
            return
        if isinstance(body, dict):
            content, mimetype = json.dumps(body), "application/json"
        else:
            content, mimetype = body, "application/octet-stream"
        self.routes[path] = lambda _request: Response(
            content, status=status, headers=headers, mimetype=mimetype
        )

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _app(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        request = Request(environ)
        self.hits[request.path] += 1
        self.seen.append({"path": request.path, **dict(request.headers)})
        route = self.routes.get(request.path)
        response = route(request) if route else Response("not found", status=404)
        return response(environ, start_response)


@dataclass
class FakeDns:
    """Names the tests make up, and what they resolve to."""

    table: dict[str, list[str] | Callable[[], list[str]]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def __setitem__(self, name: str, addresses: list[str] | Callable[[], list[str]]) -> None:
        self.table[name] = addresses
