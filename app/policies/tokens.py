"""Policy request tokens, derived from the request's ID with the deployment's secret.

The token is the person's page address (``/p/<token>``). Only its hash is stored, so a leaked
database leaks no pages; deriving it with ``SECRET_KEY`` lets the service rebuild the address
when it must send a browser back to the page (the wallet's same-device redirect).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid

TOKEN_PREFIX = "vp_"


def policy_token(secret: str, policy_id: uuid.UUID) -> str:
    mac = hmac.new(secret.encode(), b"policy-request:" + policy_id.bytes, hashlib.sha256).digest()
    return TOKEN_PREFIX + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
