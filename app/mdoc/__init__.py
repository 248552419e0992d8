"""ISO 18013-5 mdoc (OpenID4VP ``mso_mdoc``) verification. Protocol code: no database, no
Flask; the caller passes the trust anchors, the clock and the session transcript it built."""

from app.mdoc.device_response import VerifiedDocument, verify_device_response
from app.mdoc.errors import MdocError
from app.mdoc.transcript import dc_api_session_transcript, openid4vp_session_transcript

__all__ = [
    "MdocError",
    "VerifiedDocument",
    "dc_api_session_transcript",
    "openid4vp_session_transcript",
    "verify_device_response",
]
