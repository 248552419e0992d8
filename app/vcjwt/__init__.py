"""W3C verifiable credentials and presentations secured as JWTs (VCDM 1.1 JWT and VCDM 2.0
with VC-JOSE-COSE), as OpenID4VP's ``jwt_vc_json`` format carries them.

A protocol package: no database, no Flask. ``verify_vp_jwt`` checks a presentation and its one
credential completely or raises ``VcJwtError`` with a reason fit to show the organization. The
JOSE work is ``app.sdjwt``'s (one implementation, asymmetric algorithms only) and the issuer's
key is found by ``app.trust`` as for SD-JWT VC. Status (``credentialStatus``) is returned, not
checked: ``app.statuslist.bitstring`` does that.
"""

from app.vcjwt.credential import NO_ISSUER, VerifiedCredential, verify_credential_jwt
from app.vcjwt.errors import IssuerUnresolved, VcJwtError
from app.vcjwt.presentation import VerifiedVc, verify_vp_jwt

__all__ = [
    "NO_ISSUER",
    "IssuerUnresolved",
    "VcJwtError",
    "VerifiedCredential",
    "VerifiedVc",
    "verify_credential_jwt",
    "verify_vp_jwt",
]
