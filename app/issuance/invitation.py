"""The out-of-band invitation a DIDComm offer's link carries.

Kept apart from ``app.issuance.didcomm`` (the exchange that follows the invitation) so that
``app.issuance.links`` can build the link without importing the exchange, which itself builds
on the links (through ``app.issuance.prism_issuer``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.didcomm import invitation as oob
from app.didcomm_agent import settings as didcomm_settings
from app.didcomm_agent.identities import existing_identity

if TYPE_CHECKING:
    from app.issuance.models import Credential


def invitation_url(credential: Credential) -> str | None:
    """The offer's out-of-band invitation, as a link; None once it cannot be taken."""
    identity = existing_identity(credential.organization_id)
    if identity is None or credential.offer_token is None:
        return None
    invitation = oob.make(
        identity.did,
        invitation_id=credential.offer_token,
        goal_code="org.hyperledger.identus.connect",
        goal=credential.name,
        expires_time=int(credential.offer_expires_at.timestamp())
        if credential.offer_expires_at
        else None,
    )
    base = didcomm_settings.current().base_url
    return oob.oob_url(f"{base}/didcomm/invitation", invitation, max_length=oob.QR_CAPACITY)
