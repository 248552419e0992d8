"""SD-JWT VC presentation verification (RFC 9901, draft-ietf-oauth-sd-jwt-vc).

A protocol package: no database, no Flask. ``parse_presentation`` splits what a wallet sent,
``verify_presentation`` checks it completely or raises ``SdJwtError`` with a reason fit to show
the organization. ``verify_jws``, ``read_unverified`` and ``jwk_to_public_key`` are the one JOSE
implementation: issuer trust and status lists use them too, translating ``SdJwtError`` into
their own errors.
"""

from app.sdjwt.errors import SdJwtError
from app.sdjwt.jwk import PublicKey, jwk_to_public_key
from app.sdjwt.jws import DEFAULT_ALGS, read_unverified, verify_jws
from app.sdjwt.presentation import (
    KeyBindingCheck,
    Presentation,
    VerifiedCredential,
    parse_presentation,
    verify_presentation,
)

__all__ = [
    "DEFAULT_ALGS",
    "KeyBindingCheck",
    "Presentation",
    "PublicKey",
    "SdJwtError",
    "VerifiedCredential",
    "jwk_to_public_key",
    "parse_presentation",
    "read_unverified",
    "verify_jws",
    "verify_presentation",
]
