"""Every model, imported in one place so that metadata (and Alembic) sees the whole schema."""

from app.audit.models import AuditEvent
from app.didcomm_agent.models import DidcommExchange, DidcommIdentity
from app.events.models import EventStream
from app.idempotency.models import IdempotentRequest
from app.identity.models import LoginAttempt, SessionToken, User
from app.integrations.models import Integration
from app.issuance.models import Credential, CredentialUpload
from app.organizations.models import Membership, Organization, OrganizationCode
from app.policies.models import PolicyRequest
from app.presentations.models import PinnedPrismDid, ZkCheck
from app.recipients.models import Recipient
from app.schemas.models import Schema
from app.trust_sources.models import TrustSource
from app.verifications.models import (
    Individual,
    PresentationAttempt,
    PresentationRequest,
    Verification,
)
from app.verifier_identity.models import RegistrationCertificate, VerifierKey, VerifierProfile
from app.vouchers.models import Voucher, VoucherRedemption
from app.webhooks.models import (
    EventCounter,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)

__all__ = [
    "AuditEvent",
    "Credential",
    "CredentialUpload",
    "DidcommExchange",
    "DidcommIdentity",
    "EventCounter",
    "EventStream",
    "IdempotentRequest",
    "Individual",
    "Integration",
    "LoginAttempt",
    "Membership",
    "Organization",
    "OrganizationCode",
    "PinnedPrismDid",
    "PolicyRequest",
    "PresentationAttempt",
    "PresentationRequest",
    "Recipient",
    "RegistrationCertificate",
    "Schema",
    "SessionToken",
    "TrustSource",
    "User",
    "Verification",
    "VerifierKey",
    "VerifierProfile",
    "Voucher",
    "VoucherRedemption",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "ZkCheck",
]
