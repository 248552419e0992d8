"""The documents a wallet reads before it asks for anything (OpenID4VCI 1.0 §12 issuer and
authorization server metadata, SD-JWT VC issuer metadata, the offer by reference of §4.1.3),
and the organization an ``/issuers/<org_id>`` path names."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app.extensions import db
from app.issuance import keys, prism_issuer, settings
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential, CredentialStatus
from app.issuance.operations import issuer_state, pre_authorized_code
from app.oid4vci.metadata import (
    ATTEST_JWT_CLIENT_AUTH,
    ClaimMetadata,
    CredentialConfiguration,
    IssuerDisplay,
    authorization_server_metadata,
    credential_issuer_metadata,
    credential_offer,
    jwt_vc_issuer_metadata,
    scope_of,
)
from app.oid4vp.formats import SD_JWT_VC
from app.organizations.models import Organization, WalletAttestation
from app.schemas import type_metadata
from app.schemas.models import Schema

VALUE_TYPES = {"NUMBER": "number", "BOOLEAN": "boolean"}
# The issuer metadata member naming the did:prism its DIDComm credentials are issued under.
PRISM_ISSUER_MEMBER = "verity_did_prism"


def issuer_organization(organization_id: str) -> Organization | None:
    """The organization an ``/issuers/<org_id>`` path names, if any."""
    try:
        return db.session.get(Organization, uuid.UUID(organization_id))
    except ValueError:
        return None


def configurations(organization: Organization) -> list[CredentialConfiguration]:
    """One credential configuration per published schema the organization can issue: its own
    and the public ones; the configuration ID is the schema's ID."""
    rows = db.session.scalars(
        select(Schema)
        .where(
            Schema.published.is_(True),
            (Schema.organization_id == organization.id) | Schema.public.is_(True),
        )
        .order_by(Schema.created_at, Schema.id)
    )
    return [
        CredentialConfiguration(
            id=str(schema.id),
            vct=schema.vct,
            display_name=schema.name,
            description=schema.description or None,
            key_attestations_required=bool(schema.key_attestations_required),
            rendering=type_metadata.rendering(schema),
            locale=type_metadata.DISPLAY_LOCALE,
            claims=[
                ClaimMetadata(
                    a["name"],
                    a.get("description") or a["name"],
                    VALUE_TYPES.get(a["type"], "string"),
                    a.get("namespace") or schema.namespace,
                )
                for a in schema.attributes
            ],
            format=schema.format or SD_JWT_VC,
            doctype=schema.doctype or "",
            types=list(schema.types or ()),
        )
        for schema in rows
    ]


def issuer_metadata(
    organization: Organization, links: IssuerLinks, logo_uri: str | None = None
) -> dict[str, Any]:
    """The issuer is shown by the organization's name and ``logo_uri``."""
    display = IssuerDisplay(organization.name, logo_uri, type_metadata.DISPLAY_LOCALE)
    metadata = credential_issuer_metadata(
        links.issuer(organization.id),
        configurations(organization),
        display,
        settings.current().batch_size,
    )
    # The DID its DIDComm credentials are issued under, once made (read only, like the
    # keys): an extension member (§12.2.4 lets an issuer add its own), named for this service
    # so no wallet takes it for a parameter of the specification.
    did = prism_issuer.existing_prism_issuer(organization.id)
    if did is not None:
        metadata[PRISM_ISSUER_MEMBER] = {
            "did": did.did,
            "short_form": did.short_form,
            "did_document": did.document(),
        }
    return metadata


def oauth_metadata(organization: Organization, links: IssuerLinks) -> dict[str, Any]:
    return authorization_server_metadata(
        links.issuer(organization.id),
        [scope_of(configuration.id) for configuration in configurations(organization)],
        client_auth_methods(organization),
    )


def client_auth_methods(organization: Organization) -> list[str]:
    """``token_endpoint_auth_methods_supported`` as the organization's wallet attestation
    setting reads: ``none`` unless required, ``attest_jwt_client_auth`` unless off."""
    setting = organization.wallet_attestation
    methods = [] if setting is WalletAttestation.REQUIRED else ["none"]
    if setting is not WalletAttestation.OFF:
        methods.append(ATTEST_JWT_CLIENT_AUTH)
    return methods


def sd_jwt_vc_metadata(organization: Organization, links: IssuerLinks) -> dict[str, Any]:
    return jwt_vc_issuer_metadata(
        links.issuer(organization.id), keys.published_keys(organization.id)
    )


def offer_document(
    organization: Organization, token: str, links: IssuerLinks
) -> dict[str, Any] | None:
    """The Credential Offer (§4.1.1) while it can be taken; None otherwise."""
    credential = db.session.scalar(
        select(Credential).where(
            Credential.offer_token == token, Credential.organization_id == organization.id
        )
    )
    if credential is None or credential.status is not CredentialStatus.OFFERED:
        return None
    if credential.code_used_at is not None or credential.pre_authorized_code_hash is None:
        return None
    state = issuer_state(token) if credential.issuer_state_hash is not None else None
    pre_authorized = pre_authorized_grant_allowed(credential)
    if state is None and not pre_authorized:
        return None
    return credential_offer(
        links.issuer(organization.id),
        [credential.configuration_id],
        pre_authorized_code(token) if pre_authorized else None,
        credential.tx_code_length,
        state,
    )


def pre_authorized_grant_allowed(credential: Credential) -> bool:
    """Whether the offer may name, and the token endpoint redeem, its pre-authorized code.

    A schema's ``authorization_code_by_mail`` promises that holding the link is not enough;
    the pre-authorized code travels in the link, so such an offer is taken only through the
    authorization code flow (and the code mailed to the recipient), or with a ``tx_code``
    staff hand over by another channel."""
    return not credential.schema.authorization_code_by_mail or credential.tx_code_hash is not None
