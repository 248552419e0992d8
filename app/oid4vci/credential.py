"""Sign an SD-JWT VC (draft-ietf-oauth-sd-jwt-vc, RFC 9901) bound to the holder's key.

Every claim of the credential is selectively disclosable, so the holder chooses what each
verifier sees; the claims a verifier needs to trust the credential at all (``iss``, ``vct``,
``cnf``, ``status``, validity) stay in the clear, as the SD-JWT VC draft §2.2.2.3 requires.

Schema attribute names may be dotted paths into nested claims (``address.country``), as
verifications ask for them: such names become nested objects, and every member of every object
is a disclosure of its own (RFC 9901 §4.2.6 recursive disclosures), so a holder can show
``address.country`` without ``address.locality``.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import secrets
from collections.abc import Iterator, Mapping
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from app.oid4vci.jose import URLSAFE, b64url, escape_string, json_text, sign_es256_jwt
from app.sdjwt.presentation import NEVER_DISCLOSED

SD_JWT_VC_TYP = "dc+sd-jwt"  # draft-ietf-oauth-sd-jwt-vc §2.2.1
SD_ALG = "sha-256"  # RFC 9901 §4.1.1, the IANA hash name
SALT_BYTES = 16  # RFC 9901 §9.3: 128 bits of salt from a cryptographically secure source
_SD_SYNTAX = frozenset({"_sd", "_sd_alg", "..."})  # RFC 9901 §4.1, §4.1.1, §4.2.4.2

# Names that are the credential's own plain claims or SD-JWT syntax (RFC 9901 §4.2.1:
# a disclosure must not carry "_sd", "..." or a permanently disclosed claim's name), the claims
# SD-JWT VC §2.2.2.3 forbids disclosing (as the verifier reads them), and "aud", which would
# make verifiers read the credential as meant for one audience (RFC 7519 §4.1.3).
RESERVED_CLAIMS = NEVER_DISCLOSED | frozenset(
    {
        "iss",
        "aud",
        "iat",
        "exp",
        "nbf",
        "vct",
        "vct#integrity",
        "cnf",
        "status",
        "_sd",
        "_sd_alg",
        "...",
    }
)
# RFC 7518 §6.2.2 / §6.3.2 / RFC 8037 §2: members only a private key has.
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


def sign_sd_jwt_vc(
    *,
    private_key: ec.EllipticCurvePrivateKey,
    kid: str,
    issuer: str,
    vct: str,
    claims: Mapping[str, Any],
    holder_jwk: dict[str, Any],
    status_uri: str,
    status_idx: int,
    issued_at: int,
    expires_at: int | None = None,
    decoys: int = 0,
    x5c: tuple[str, ...] = (),
    vct_integrity: str | None = None,
) -> str:
    """The compact SD-JWT VC ``<issuer-signed JWT>~<disclosure>~...~`` with no key binding.

    ``decoys`` adds that many random digests (RFC 9901 §4.2.5) so the number of claims is not
    given away; the digests are sorted, so their order reveals nothing of the claims' order.
    ``x5c`` is the issuer's certificate chain for the header (HAIP 1.0 §6.1.1);
    ``vct_integrity`` the SRI hash of the type metadata at ``vct`` (SD-JWT VC §6.5).
    Raises ``ValueError`` for what no verifier should accept: claim names ``claim_problems``
    lists, values that are not JSON, a holder key with private members, non-integer times.
    """
    claims = nest_claims(claims)
    _check_arguments(claims, holder_jwk, status_idx)
    disclosures: list[bytes] = []
    digests = _disclosures(claims, disclosures, _salts(_members(claims)))
    if decoys:
        digests += [_digest(secrets.token_bytes(32)) for _ in range(decoys)]
    payload = _payload_json(
        issuer, issued_at, expires_at, vct, holder_jwk, status_idx, status_uri, sorted(digests)
    )
    if vct_integrity is not None:
        if not isinstance(vct_integrity, str):
            raise ValueError("vct#integrity is a string")
        vct_text = f'"vct":{escape_string(vct)},'
        payload = payload.replace(
            vct_text, f'{vct_text}"vct#integrity":{escape_string(vct_integrity)},', 1
        )
    issuer_jwt = sign_es256_jwt(
        typ=SD_JWT_VC_TYP, kid=kid, payload=payload, private_key=private_key, x5c=x5c
    )
    if not disclosures:
        return f"{issuer_jwt}~"
    return f"{issuer_jwt}~{b'~'.join(disclosures).decode('ascii')}~"


def _check_arguments(
    claims: Mapping[str, Any], holder_jwk: dict[str, Any], status_idx: int
) -> None:
    """Refuse what would make a credential no verifier should accept: a claim hiding a
    registered one, a holder key with its private half, a negative status index."""
    clash = RESERVED_CLAIMS.intersection(claims)
    if clash:
        raise ValueError(f"Claim names reserved by SD-JWT VC: {sorted(clash)}")
    if not isinstance(holder_jwk, dict) or not isinstance(holder_jwk.get("kty"), str):
        raise ValueError("The holder key is not a JWK")
    if _PRIVATE_MEMBERS.intersection(holder_jwk):
        raise ValueError("The holder key contains private key material")
    if isinstance(status_idx, bool) or not isinstance(status_idx, int) or status_idx < 0:
        raise ValueError("The status index is not a non-negative integer")


def claim_problems(claims: Mapping[str, Any]) -> list[str]:
    """Why ``sign_sd_jwt_vc`` would refuse these claims, one sentence per problem, for the
    domain to refuse an issuance (or a schema) up front instead of failing at the credential
    endpoint: a name SD-JWT VC keeps for itself (``iss``, ``status``, ...), SD-JWT syntax in a
    path, or dotted names that collide (``address`` and ``address.country``)."""
    problems = []
    for name in claims:
        segments = name.split(".") if isinstance(name, str) else [""]
        if segments[0] in RESERVED_CLAIMS:
            problems.append(f"Claim {segments[0]} is reserved by SD-JWT VC and cannot be issued")
        elif not _SD_SYNTAX.isdisjoint(segments) or not all(segments):
            problems.append(f"Claim name {name} is not a usable claim path")
    if not problems:
        try:
            nested = nest_claims(claims)
            for value in nested.values():
                if type(value) is list:
                    _refuse_sd_syntax(value)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def nest_claims(claims: Mapping[str, Any]) -> dict[str, Any]:
    """Claims with dotted names (``address.country``) as nested objects (``{"address":
    {"country": ...}}``); each segment is an object member name, digits included
    (``age_equal_or_over.18``), as DCQL claim paths read them. A name that is both a value and
    a parent of others is refused rather than guessed at; the caller's objects are never
    written into."""
    try:
        names = "".join(claims)
    except TypeError:
        raise ValueError("Claim names are non-empty strings") from None
    if "." not in names and "" not in claims:
        return dict(claims)  # nothing to nest: the common case, kept cheap
    nested: dict[str, Any] = {}
    made: set[int] = set()  # the objects made here for dotted names: only they are extended
    for name, value in claims.items():
        if not isinstance(name, str) or not name:
            raise ValueError("Claim names are non-empty strings")
        *parents, leaf = name.split(".") if "." in name else (name,)
        if not leaf or not all(parents):
            raise ValueError(f"Claim name {name!r} has an empty path segment")
        node = nested
        for parent in parents:
            child = node.get(parent)
            if child is None:
                child = node[parent] = {}
                made.add(id(child))
            elif id(child) not in made:
                raise ValueError(f"Claim {parent!r} is both a value and an object in {name!r}")
            node = child
        if leaf in node:
            raise ValueError(f"Claim {name!r} is given twice, or is also a parent of others")
        node[leaf] = value
    return nested


def _payload_json(
    issuer: str,
    issued_at: int,
    expires_at: int | None,
    vct: str,
    holder_jwk: dict[str, Any],
    status_idx: int,
    status_uri: str,
    digests: list[str],
) -> str:
    """The Issuer-signed JWT's claims as JSON text: ``iss``, ``iat``, ``exp`` (when set),
    ``vct``, ``cnf.jwk``, ``status.status_list``, ``_sd``, ``_sd_alg``.

    Written around the values rather than handed to the encoder as nested objects, which costs
    as much again: strings through the JSON string escaper, the key through the encoder, the
    digests as they are (base64url needs no escaping), the numbers checked to be integers.
    """
    if not (
        type(issued_at) is int
        and type(status_idx) is int
        and (expires_at is None or type(expires_at) is int)
    ):
        raise ValueError("iat, exp and the status index are integers")
    if not (type(issuer) is str and type(vct) is str and type(status_uri) is str):
        raise ValueError("iss, vct and the status list uri are strings")
    escape = escape_string
    exp = "" if expires_at is None else f',"exp":{expires_at}'
    sd = '["' + '","'.join(digests) + '"]' if digests else "[]"
    return (
        f'{{"iss":{escape(issuer)},"iat":{issued_at}{exp},"vct":{escape(vct)},'
        f'"cnf":{{"jwk":{json_text(holder_jwk)}}},'
        f'"status":{{"status_list":{{"idx":{status_idx},"uri":{escape(status_uri)}}}}},'
        f'"_sd":{sd},"_sd_alg":"{SD_ALG}"}}'
    )


def _members(claims: Mapping[str, Any]) -> int:
    """How many disclosures ``claims`` make: its members and those of every object value."""
    count = len(claims)
    for value in claims.values():
        if type(value) is dict:
            count += _members(value)
    return count


def _salts(count: int) -> Iterator[str]:
    """``count`` salts of 128 bits from one read of the system CSPRNG (RFC 9901 §9.3), each
    base64url as 22 characters, all encoded in one call: each 16 random bytes are followed by
    two zero bytes, so every salt starts a 24-character group and ends in the zero bits a
    canonical encoding of 16 bytes has."""
    block = bytearray(os.urandom(18 * count))
    block[16::18] = bytes(count)
    block[17::18] = bytes(count)
    text = binascii.b2a_base64(block, newline=False).translate(URLSAFE).decode("ascii")
    return iter([text[start : start + 22] for start in range(0, 24 * count, 24)])


def _disclosures(claims: Mapping[str, Any], out: list[bytes], salts: Iterator[str]) -> list[str]:
    """RFC 9901 §4.2.1 and §4.2.3: per claim, the base64url of the JSON array [salt, name,
    value] (appended to ``out``, ASCII), and the SHA-256 digest of that base64url text
    (returned). An object value is disclosed as ``{"_sd": [...]}`` over its own members'
    disclosures (§4.2.6).

    One loop with the C helpers bound locally and the digests translated to base64url in one
    call: this is most of an issuance's Python time. Salts and digests are base64url text,
    which needs no JSON escaping, so the arrays and ``_sd`` lists are written around them.
    """
    to_base64, sha256, escape, urlsafe = binascii.b2a_base64, hashlib.sha256, escape_string, URLSAFE
    digests = []
    for name, value in claims.items():
        if not isinstance(name, str) or name in _SD_SYNTAX:
            raise ValueError("Claim names are strings other than _sd, _sd_alg and ...")
        if isinstance(value, str):
            text = escape(value)
        elif isinstance(value, dict):
            inner = sorted(_disclosures(value, out, salts))
            text = '{"_sd":["' + '","'.join(inner) + '"]}' if inner else "{}"
        else:
            if type(value) is list:
                _refuse_sd_syntax(value)
            text = json_text(value)
        array = f'["{next(salts)}",{escape(name)},{text}]'
        encoded = to_base64(array.encode(), newline=False).rstrip(b"=").translate(urlsafe)
        out.append(encoded)
        # A SHA-256 digest is 43 base64 characters and one "=".
        digests.append(to_base64(sha256(encoded).digest(), newline=False)[:43])
    return b",".join(digests).translate(urlsafe).decode("ascii").split(",") if digests else []


def _refuse_sd_syntax(value: Any) -> None:
    """Objects inside arrays are disclosed as they are, so none may hold ``_sd`` or be
    ``{"...": ...}``: a verifier would read them as digests (RFC 9901 §4.2.4.2, §7.1)."""
    if isinstance(value, list):
        for item in value:
            _refuse_sd_syntax(item)
    elif isinstance(value, dict):
        if not _SD_SYNTAX.isdisjoint(value):
            raise ValueError("Claim values may not hold the SD-JWT members _sd, _sd_alg or ...")
        for item in value.values():
            _refuse_sd_syntax(item)


def _digest(raw: bytes) -> str:
    """A decoy digest (RFC 9901 §4.2.5): SHA-256 of random bytes, like a real one to look at."""
    return b64url(hashlib.sha256(raw).digest())
