"""Records to their JSON wire shapes."""

from __future__ import annotations

from typing import Any

from app.audit.models import AuditEvent
from app.integrations.models import Integration
from app.issuance.links import IssuerLinks
from app.issuance.models import Credential
from app.organizations.models import Membership, Organization
from app.policies.models import PolicyRequest
from app.presentations.issuers_seen import IssuerSeen
from app.recipients.models import Recipient
from app.schemas.models import Schema
from app.verifications import transaction_data
from app.verifications.conditions import echoed
from app.verifications.models import ALLOWED, ANONYMOUS, BACKEND, Individual, Verification
from app.web.links import Links
from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def _time(value) -> str | None:
    return value.isoformat() if value is not None else None


def individual(row: Individual, links: Links | None = None) -> dict[str, Any]:
    """The unauthenticated shape: status and reason, never disclosed claims."""
    url = None
    if links is not None and row.connection_request_id is not None:
        url = links.connection_url(row.connection_request_id)
    return {
        "id": str(row.id),
        "individual_id": str(row.id),
        "verification_id": str(row.verification_id),
        "customer_id": row.customer_id,
        "status": row.status.value,
        "validation_error": row.validation_error,
        "connection_url": url,
        "page_url": links.individual_page(row.id) if links is not None else None,
        "connection_at": _time(row.connection_at),
        "verified_at": _time(row.verified_at),
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
    }


def opened_by(row: Individual) -> dict[str, Any]:
    """How the individual was first opened: a backend's key (and which integration's), the
    no-code link, or no credential. Rows from before it was recorded read anonymous."""
    kind = row.opened_by or ANONYMOUS
    if kind == BACKEND:
        integration_id = row.opened_by_integration_id
        return {"kind": kind, "integration_id": str(integration_id) if integration_id else None}
    return {"kind": kind}


def opened_individual(row: Individual, links: Links | None = None) -> dict[str, Any]:
    """The open's answer: the unauthenticated shape and who first opened it, so a backend
    sees at once that a customer ID it opens was opened by someone else before."""
    return {**individual(row, links), "opened_by": opened_by(row)}


def individual_for_owner(row: Individual, links: Links | None = None) -> dict[str, Any]:
    """The authenticated lookup adds the requested claims, the issuer, every unmet
    condition (``validation_error`` names only the first) and who first opened it."""
    return {
        **individual(row, links),
        "opened_by": opened_by(row),
        "failed_conditions": list(row.failed_conditions or []),
        "claims": row.claims,
        "issuer": row.issuer,
        "revoked_at": _time(row.revoked_at),
        "transaction_data": transaction_data.confirmed(row.status, row.transaction_data),
    }


def verification(row: Verification) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "name": row.name,
        "description": row.description,
        "description_translations": dict(row.description_translations or {}),
        "schema_id": str(row.schema_id),
        "type": row.type,
        "claims": row.claims,
        "attributes": [echoed(condition) for condition in row.attributes],
        "trusted_issuers": row.trusted_issuers,
        "trust_sources": list(row.trust_sources or []),
        "trust": row.trust(),
        "registration_certificate_id": (
            str(row.registration_certificate_id) if row.registration_certificate_id else None
        ),
        "return_url": row.return_url,
        "relying_party": row.relying_party,
        "recommended_wallets": list(row.recommended_wallets or []),
        "wallet_protocols": row.protocols(),
        "retention_days": row.retention_days,
        "status_check_hours": row.status_check_hours,
        "anonymous_open": row.anonymous_open or ALLOWED,
        "zk": bool(row.zk),
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
    }


def verification_answer(row: Verification) -> dict[str, Any]:
    """A verification as a write answers it: with ``link_secret`` when this write minted one
    (turning ``signed`` on, or a rotation), the only time it is shown."""
    body = verification(row)
    if row.fresh_link_secret is not None:
        body["link_secret"] = row.fresh_link_secret
    return body


def issuer_seen(row: IssuerSeen) -> dict[str, Any]:
    return {
        "issuer": row.issuer,
        "presentations": row.presentations,
        "failed_untrusted": row.failed_untrusted,
        "last_seen_at": _time(row.last_seen_at),
        "trusted": row.trusted,
        "key_learnt": row.key_learnt,
    }


def schema(row: Schema) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "name": row.name,
        "description": row.description,
        "public": row.public,
        "format": row.format,
        "vct": row.vct,
        "doctype": row.doctype,
        "namespace": row.namespace,
        "types": row.types,
        "premium_plus": row.premium_plus,
        "published": row.published,
        "attributes": row.attributes,
        "validity_days": row.validity_days,
        "authorization_code_by_mail": bool(row.authorization_code_by_mail),
        "key_attestations_required": bool(row.key_attestations_required),
        "background_color": row.background_color,
        "text_color": row.text_color,
        "logo_uri": row.logo_uri,
        "logo_alt_text": row.logo_alt_text,
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
    }


def recipient(row: Recipient) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "first_name": row.first_name,
        "last_name": row.last_name,
        "email": row.email,
        "customer_id": row.customer_id,
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
    }


def policy_status(row: PolicyRequest) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "verification_id": str(row.verification_id),
        "recipient_id": str(row.recipient_id) if row.recipient_id else None,
        "status": row.status.value,
        "validation_error": row.validation_error,
        "claims": row.claims,
        "issuer": row.issuer,
        "expires_at": _time(row.expires_at),
        "verified_at": _time(row.verified_at),
        "created_at": _time(row.created_at),
        "transaction_data": transaction_data.confirmed(row.status, row.transaction_data),
    }


def organization(row: Organization) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "name": row.name,
        "plan": row.effective_plan().value,
        "plan_expires_at": _time(row.plan_expires_at),
        "wallet_attestation": row.wallet_attestation.value,
        "created_at": _time(row.created_at),
        "support_contact": row.support_contact,
        "api_compatibility": row.api_compatibility.value,
        "transaction_data_types": list(row.transaction_data_types or []),
    }


def membership(row: Membership) -> dict[str, Any]:
    return {
        "organization": organization(row.organization),
        "role": row.role.value,
        "joined_at": _time(row.created_at),
    }


def member(row: Membership) -> dict[str, Any]:
    return {
        "user_id": str(row.user_id),
        "email": row.user.email,
        "name": row.user.name,
        "role": row.role.value,
        "joined_at": _time(row.created_at),
    }


def audit_event(row: AuditEvent) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "created_at": _time(row.created_at),
        "actor": {"type": row.actor_type, "id": row.actor_id, "name": row.actor_name},
        "action": row.action,
        "record_type": row.record_type,
        "record_id": row.record_id,
        "client_ip": row.client_ip,
        "fields": row.fields,
        "changes": row.changes,
    }


def integration(row: Integration) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "name": row.name,
        "key_prefix": row.key_prefix,
        "created_at": _time(row.created_at),
        "last_used_at": _time(row.last_used_at),
    }


def credential(row: Credential, links: IssuerLinks, tx_code: str | None = None) -> dict[str, Any]:
    """A credential; ``tx_code`` only in the response that made it. The offer's
    links only while it can be taken."""
    status = row.status.value
    open_offer = status == "OFFERED"
    body: dict[str, Any] = {
        "id": str(row.id),
        "name": row.name,
        "description": row.description,
        "schema_id": str(row.schema_id),
        "recipient_id": str(row.recipient_id),
        "claims": row.claims,
        "status": status,
        "issuer": links.issuer(row.organization_id),
        "protocol": row.protocol,
        "offer_url": links.offer_url(row) if open_offer else None,
        "offer_page": links.offer_page(row),
        "offer_expires_at": _time(row.offer_expires_at),
        "tx_code_required": row.tx_code_hash is not None,
        "issued_at": _time(row.issued_at),
        "expires_at": _time(row.expires_at),
        "revoked_at": _time(row.revoked_at),
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
    }
    if tx_code is not None:
        body["tx_code"] = tx_code
    return body


def webhook_endpoint(row: WebhookEndpoint) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "url": row.url,
        "events": row.events,
        "description": row.description,
        "include_claims": row.include_claims,
        "enabled": row.enabled,
        "disabled_reason": row.disabled_reason,
        "created_at": _time(row.created_at),
    }


def webhook_delivery(row: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "event_id": str(row.event.id),
        "webhook_id": row.event.webhook_id,
        "type": row.event.type,
        "state": row.state.value,
        "attempts": row.attempt_count,
        "last_status_code": row.last_status_code,
        "last_error": row.last_error,
        "next_attempt_at": _time(row.next_attempt_at),
        "delivered_at": _time(row.delivered_at),
        "created_at": _time(row.created_at),
    }


def webhook_delivery_with_attempts(
    row: WebhookDelivery, attempts: list[WebhookAttempt]
) -> dict[str, Any]:
    """The delivery as listed, and each attempt's request and answer, oldest first."""
    return {**webhook_delivery(row), "attempt_log": [webhook_attempt(a) for a in attempts]}


def webhook_attempt(row: WebhookAttempt) -> dict[str, Any]:
    """``request`` and ``response`` are null where nothing was kept: attempts made before
    they were logged, and ``response`` when no answer came (``error`` says why)."""
    request = None
    if row.request_method is not None:
        request = {
            "method": row.request_method,
            "url": row.request_url,
            "headers": row.request_headers or {},
            "body": row.request_body,
            "body_cut": row.request_body_cut,
        }
    response = None
    if row.response_headers is not None:
        response = {
            "status_code": row.status_code,
            "headers": row.response_headers,
            "headers_cut": row.response_headers_cut,
            "body": row.response_body or "",
            "body_cut": row.response_body_cut,
        }
    return {
        "id": str(row.id),
        "started_at": _time(row.started_at),
        "duration_ms": row.duration_ms,
        "status_code": row.status_code,
        "error": row.error,
        "request": request,
        "response": response,
    }
