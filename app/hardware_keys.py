"""Signing keys held in a PKCS#11 token: a hardware security module, or SoftHSM.

The private half is generated inside the token, marked sensitive and not extractable, and
every signature is made by the token; the database keeps only the key's label. A
``TokenSigningKey`` stands where a ``cryptography`` EC private key stands, so the JWS code
that signs credentials, status lists and request objects signs with either kind unchanged.

A PKCS#11 library is initialised once per process, and a process made by ``fork`` (gunicorn's
workers) must initialise it again (PKCS#11 v2.40 §6.7.7), so the open token remembers the
process it was opened in. A session is not to be used by two threads at once (§6.7.6):
calls are serialised by a lock.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import unquote

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    Prehashed,
    encode_dss_signature,
)

P256 = "secp256r1"
SECP256K1 = "secp256k1"


class TokenKeyError(RuntimeError):
    """The token cannot be used as configured, or a key is not in it."""


class CurveNotSupported(TokenKeyError):
    """The token does not make keys on the curve asked for (secp256k1 is optional in
    PKCS#11: many HSMs offer only the NIST curves)."""


@dataclass(frozen=True)
class TokenSettings:
    """Where the token is: the vendor's PKCS#11 module, the token's label and the user PIN."""

    module: str
    token_label: str
    # Never in a repr, so the PIN reaches no log line or traceback.
    pin: str = field(default="", repr=False)


def key_label_from_uri(uri: str, token_label: str) -> str:
    """The object label an RFC 7512 ``pkcs11:`` URI names (``pkcs11:object=<label>``).

    Only ``object`` and ``token`` are read: the token itself comes from the PKCS#11 settings,
    and a ``token`` attribute naming another one is refused rather than ignored.
    """
    if not uri.startswith("pkcs11:"):
        raise TokenKeyError(f"{uri!r} is not a pkcs11: URI")
    attributes: dict[str, str] = {}
    for part in uri.removeprefix("pkcs11:").split("?")[0].split(";"):
        name, _, value = part.partition("=")
        if name.strip():
            attributes[name.strip()] = unquote(value)
    if attributes.get("token", token_label) != token_label:
        raise TokenKeyError(
            f"{uri!r} names token {attributes['token']!r}, but PKCS11_TOKEN_LABEL is "
            f"{token_label!r}"
        )
    label = attributes.get("object")
    if not label:
        raise TokenKeyError("a pkcs11: key URI names its key with object=<label>")
    return label


class Token:
    """One process's open session to the token, made on first use and kept."""

    def __init__(self, settings: TokenSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._session: Any = None

    def generate_signing_key(self, label: str, curve: str = P256) -> TokenSigningKey:
        """A new EC key pair (P-256 unless ``curve`` names another) stored in the token under
        ``label``; the private half is sensitive and not extractable, so no call can read it
        back out. ``CurveNotSupported`` when the token refuses the curve."""
        from pkcs11 import Attribute, KeyType
        from pkcs11.exceptions import (
            DomainParamsInvalid,
            MechanismInvalid,
            MechanismParamInvalid,
            TemplateInconsistent,
        )
        from pkcs11.util.ec import encode_named_curve_parameters

        with self._lock:
            session = self._open()
            parameters = session.create_domain_parameters(
                KeyType.EC,
                {Attribute.EC_PARAMS: encode_named_curve_parameters(curve)},
                local=True,
            )
            identifier = label.encode("utf-8")
            try:
                parameters.generate_keypair(
                    store=True,
                    label=label,
                    id=identifier,
                    private_template={
                        Attribute.SENSITIVE: True,
                        Attribute.EXTRACTABLE: False,
                        Attribute.PRIVATE: True,
                    },
                )
            except (
                DomainParamsInvalid,
                MechanismInvalid,
                MechanismParamInvalid,
                TemplateInconsistent,
            ):
                raise CurveNotSupported(
                    f"token {self.settings.token_label!r} does not make {curve} keys"
                ) from None
        return self.signing_key(label)

    def destroy_key(self, label: str) -> None:
        """Remove the key pair stored under ``label`` (a key made and found unusable)."""
        from pkcs11 import ObjectClass

        with self._lock:
            session = self._open()
            for object_class in (ObjectClass.PRIVATE_KEY, ObjectClass.PUBLIC_KEY):
                session.get_key(object_class=object_class, label=label).destroy()

    def signing_key(self, label: str) -> TokenSigningKey:
        """The key stored under ``label``, with its public half read from the token."""
        from pkcs11 import ObjectClass
        from pkcs11.exceptions import MultipleObjectsReturned, NoSuchKey
        from pkcs11.util.ec import encode_ec_public_key

        with self._lock:
            session = self._open()
            try:
                public = session.get_key(object_class=ObjectClass.PUBLIC_KEY, label=label)
                session.get_key(object_class=ObjectClass.PRIVATE_KEY, label=label)
            except NoSuchKey:
                raise TokenKeyError(
                    f"no key pair labelled {label!r} in token {self.settings.token_label!r}"
                ) from None
            except MultipleObjectsReturned:
                raise TokenKeyError(
                    f"more than one key labelled {label!r} in token {self.settings.token_label!r}"
                ) from None
            der = encode_ec_public_key(public)
        public_key = serialization.load_der_public_key(der)
        if not isinstance(public_key, ec.EllipticCurvePublicKey):
            raise TokenKeyError(f"key {label!r} is not an EC key")
        return TokenSigningKey(self, label, public_key)

    def sign_digest(self, label: str, digest: bytes) -> bytes:
        """Raw ECDSA (``CKM_ECDSA``) over a digest made here: every token offers it, where
        the hashing mechanisms (``CKM_ECDSA_SHA256``) are optional and SoftHSM lacks them."""
        from pkcs11 import Mechanism, ObjectClass

        with self._lock:
            session = self._open()
            private = session.get_key(object_class=ObjectClass.PRIVATE_KEY, label=label)
            return private.sign(digest, mechanism=Mechanism.ECDSA)

    def _open(self) -> Any:
        if self._session is not None and self._pid == os.getpid():
            return self._session
        try:
            import pkcs11
        except ImportError:  # pragma: no cover - python-pkcs11 is a runtime dependency
            raise TokenKeyError("PKCS#11 keys need the python-pkcs11 package") from None
        try:
            library = pkcs11.lib(self.settings.module)
            if self._pid is not None:
                library.reinitialize()  # a forked process: PKCS#11 state is not inherited
            token = library.get_token(token_label=self.settings.token_label)
            self._session = token.open(user_pin=self.settings.pin, rw=True)
        except pkcs11.exceptions.PKCS11Error as exc:
            raise TokenKeyError(
                f"PKCS#11 token {self.settings.token_label!r} in {self.settings.module} cannot "
                f"be opened: {type(exc).__name__}"
            ) from None
        except RuntimeError as exc:  # the module file cannot be loaded
            raise TokenKeyError(
                f"PKCS#11 module {self.settings.module} cannot be loaded: {exc}"
            ) from None
        self._pid = os.getpid()
        return self._session


_tokens: dict[TokenSettings, Token] = {}
_tokens_lock = threading.Lock()


def open_token(settings: TokenSettings) -> Token:
    """The process's one ``Token`` for these settings (a session per token, not per call)."""
    with _tokens_lock:
        token = _tokens.get(settings)
        if token is None:
            token = _tokens[settings] = Token(settings)
        return token


class TokenSigningKey(ec.EllipticCurvePrivateKey):
    """An EC private key whose operations happen in the token. Only ``sign`` and the public
    half are offered: reading, exporting or deriving with the private value is refused."""

    def __init__(self, token: Token, label: str, public: ec.EllipticCurvePublicKey) -> None:
        self.token = token
        self.label = label
        self._public = public

    def sign(self, data: bytes, signature_algorithm: ec.EllipticCurveSignatureAlgorithm) -> bytes:
        """A DER ECDSA signature, as ``cryptography`` keys return, made by the token."""
        if not isinstance(signature_algorithm, ec.ECDSA):
            raise TokenKeyError("token keys sign with ECDSA only")
        algorithm = signature_algorithm.algorithm
        digest = data if isinstance(algorithm, Prehashed) else _digest(algorithm, data)
        raw = self.token.sign_digest(self.label, digest)
        size = len(raw) // 2
        return encode_dss_signature(
            int.from_bytes(raw[:size], "big"), int.from_bytes(raw[size:], "big")
        )

    def public_key(self) -> ec.EllipticCurvePublicKey:
        return self._public

    @property
    def curve(self) -> ec.EllipticCurve:
        return self._public.curve

    @property
    def key_size(self) -> int:
        return self._public.curve.key_size

    def exchange(self, algorithm: ec.ECDH, peer_public_key: ec.EllipticCurvePublicKey) -> NoReturn:
        raise TokenKeyError("token signing keys are not used for key agreement")

    def private_numbers(self) -> NoReturn:
        raise TokenKeyError("a token key's private value never leaves the token")

    def private_bytes(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TokenKeyError("a token key's private value never leaves the token")

    def __copy__(self) -> TokenSigningKey:
        return self

    def __deepcopy__(self, memo: dict) -> TokenSigningKey:
        return self

    def __repr__(self) -> str:
        return f"TokenSigningKey(label={self.label!r}, token={self.token.settings.token_label!r})"


def _digest(algorithm: hashes.HashAlgorithm, data: bytes) -> bytes:
    return hashlib.new(algorithm.name, data).digest()
