"""Where an organization's credential issuer and its offers are reached.

The issuer identifier is ``<PUBLIC_URL>/issuers/<org_id>`` (OpenID4VCI 1.0 §12.2.1): every
endpoint, the credentials' ``iss`` and the status lists hang below it, so the path-inserted
well-known documents of each organization are distinct.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from app.issuance.invitation import invitation_url

if TYPE_CHECKING:
    from app.issuance.models import Credential

OFFER_SCHEME = "openid-credential-offer://"  # OpenID4VCI 1.0 §4.1.3


@dataclass(frozen=True)
class IssuerLinks:
    """Links of this deployment as wallets, verifiers and people see them."""

    base_url: str

    def issuer(self, organization_id: uuid.UUID) -> str:
        return f"{self.base_url}/issuers/{organization_id}"

    def status_list_uri(self, organization_id: uuid.UUID, number: int) -> str:
        return f"{self.issuer(organization_id)}/status-lists/{number}"

    def credential_status_uri(self, organization_id: uuid.UUID, number: int) -> str:
        """List ``number`` as a StatusList2021 credential signed by the organization's
        did:prism, for credentials issued over DIDComm (``app.issuance.prism_issuer``)."""
        return f"{self.issuer(organization_id)}/credential-status/{number}"

    def offer_uri(self, credential: Credential) -> str | None:
        """The Credential Offer by reference (§4.1.3 ``credential_offer_uri``)."""
        if credential.offer_token is None:
            return None
        return f"{self.issuer(credential.organization_id)}/offers/{credential.offer_token}"

    def offer_url(self, credential: Credential) -> str | None:
        """What the QR code and the same-device button carry: the ``openid-credential-offer``
        link, or for a DIDComm offer its out-of-band invitation."""
        if credential.protocol == "didcomm":
            return invitation_url(credential)
        uri = self.offer_uri(credential)
        if uri is None:
            return None
        return OFFER_SCHEME + "?" + urlencode({"credential_offer_uri": uri})

    def offer_page(self, credential: Credential) -> str | None:
        """The person's page for the offer: ``/o/<token>``."""
        if credential.offer_token is None:
            return None
        return f"{self.base_url}/o/{credential.offer_token}"
