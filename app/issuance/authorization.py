"""The authorization code flow of an organization's issuer (OpenID4VCI 1.0 §5, HAIP 1.0 §4).

The wallet pushes its authorization request (RFC 9126) naming the offer's ``issuer_state``;
the person, sent by the wallet to the authorization endpoint, sees what is being issued and
by whom and continues; the wallet receives ``code``, ``state`` and ``iss`` (RFC 9207) at its
``redirect_uri`` and redeems the code with its PKCE verifier (RFC 7636) and, when it used
DPoP at the pushed request, a proof with the same key (RFC 9449 §10).

The person is identified by the offer they hold: whoever holds the offer's link (and so its
``issuer_state``) may take the credential, as with the pre-authorized code. Codes and request
URIs are stored hashed, and single use is decided by conditional updates.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sqlalchemy import delete, select, update

from app import clock
from app.extensions import db
from app.issuance import attestation, settings
from app.issuance.links import IssuerLinks
from app.issuance.models import AccessToken, AuthorizationRequest, Credential, CredentialStatus
from app.oid4vci.authorization import (
    REQUEST_URI_PREFIX,
    parse_pushed_request,
    pkce_holds,
    text,
)
from app.oid4vci.errors import TokenError
from app.oid4vci.metadata import AUTHORIZATION_DETAILS_TYPE, scope_of
from app.oid4vci.request import AuthorizationCodeRequest
from app.organizations.models import Organization
from app.schemas.models import Schema
from app.tokens import hash_secret, same

MAX_CLIENT_ID_CHARS = 255
MAIL_CODE_LENGTH = 6
MAX_MAIL_CODE_FAILURES = 5


class AuthorizationUnavailable(Exception):
    """The authorization page cannot go on: the request is unknown, expired, for another
    client, or its offer can no longer be taken. Shown to the person, never redirected (the
    redirect_uri of an unknown request is not to be trusted)."""


class WrongMailCode(Exception):
    """The code the person typed is not the one mailed to the recipient; ``left`` more tries
    before the request stops working."""

    def __init__(self, left: int) -> None:
        super().__init__(f"wrong code, {left} tries left")
        self.left = left


@dataclass(frozen=True)
class Pushed:
    """The answer to a pushed request (RFC 9126 §2.2) and, when the schema asks for one, the
    one-time code to mail to the recipient (the caller mails it: this module sends nothing)."""

    request_uri: str
    expires_in: int
    mail_code: str | None = None
    credential: Credential | None = None


def authenticate_client(
    organization: Organization,
    form: Mapping[str, Any],
    headers: Mapping[str, Any],
    audience: str,
    *,
    client_id_required: bool = True,
) -> str | None:
    """The client making a request at the PAR or token endpoint, as its ``client_id``.

    With a wallet attestation (``attest_jwt_client_auth``), the client is the attestation's
    ``sub``, and a ``client_id`` sent beside it must be that one (HAIP 1.0 §4.3, §4.4.1);
    without one (``none``, unless the organization requires attestations) the ``client_id``
    is taken as sent. ``audience`` is this authorization server's issuer identifier, which
    the attestation's PoP must name. The pre-authorized code needs no ``client_id``
    (OpenID4VCI 1.0 §6.1), but an attestation, when sent or required, is checked there too.
    """
    attested = attestation.client_attestation(organization, headers, audience)
    client_id = text(form, "client_id")
    if attested is not None:
        if client_id is not None and client_id != attested.client_id:
            raise TokenError("invalid_client", "client_id is not the sub of the wallet attestation")
        client_id = attested.client_id
    if client_id is None:
        if client_id_required:
            raise TokenError("invalid_request", "client_id is missing")
        return None
    if len(client_id) > MAX_CLIENT_ID_CHARS:
        raise TokenError("invalid_client", "client_id is too long")
    return client_id


# -- pushed authorization request -------------------------------------------------------------


def push(
    organization: Organization,
    form: Mapping[str, Any],
    links: IssuerLinks,
    dpop_jkt: str | None,
    headers: Mapping[str, Any] | None = None,
) -> Pushed:
    """RFC 9126 §2: validate the whole request now (so the authorization endpoint trusts
    what it reads) and hand back a single-use ``request_uri``."""
    issuer = links.issuer(organization.id)
    client_id = authenticate_client(organization, form, headers or {}, issuer) or ""
    pushed = parse_pushed_request(form)
    if pushed.resource is not None and pushed.resource != issuer:
        raise TokenError("invalid_target", "resource is not this credential issuer")
    credential = _offered(organization, pushed.issuer_state)
    configuration_id = credential.configuration_id
    others = [
        scope
        for scope in pushed.scopes
        if scope != scope_of(configuration_id) and _names_a_configuration(organization, scope)
    ]
    if others:
        raise TokenError("invalid_scope", "scope names a credential this offer does not hold")
    if any(detail != configuration_id for detail in pushed.detailed_configurations):
        raise TokenError(
            "invalid_authorization_details",
            "authorization_details names a credential this offer does not hold",
        )
    now = clock.now()
    db.session.execute(
        delete(AuthorizationRequest).where(
            AuthorizationRequest.expires_at <= now, AuthorizationRequest.approved_at.is_(None)
        )
    )
    request_uri = REQUEST_URI_PREFIX + secrets.token_urlsafe(32)
    seconds = settings.current().par_seconds
    mail_code = None
    if credential.schema.authorization_code_by_mail:
        if not credential.recipient.email:
            raise TokenError(
                "invalid_request", "This offer needs a code by email and its recipient has none"
            )
        mail_code = "".join(secrets.choice("0123456789") for _ in range(MAIL_CODE_LENGTH))
    db.session.add(
        AuthorizationRequest(
            credential_id=credential.id,
            request_uri_hash=hash_secret(request_uri),
            client_id=client_id,
            redirect_uri=pushed.redirect_uri,
            code_challenge=pushed.code_challenge,
            state=pushed.state,
            by_authorization_details=bool(pushed.detailed_configurations),
            dpop_jkt=dpop_jkt,
            mail_code_hash=_mail_code_hash(request_uri, mail_code) if mail_code else None,
            expires_at=now + timedelta(seconds=seconds),
        )
    )
    db.session.flush()
    return Pushed(request_uri, seconds, mail_code, credential)


def _names_a_configuration(organization: Organization, scope: str) -> bool:
    """Whether a scope value is that of a credential configuration this issuer offers (a
    published schema of its own or a public one).

    Other values (``openid``, which OpenID Connect-minded clients such as
    @sphereon/oid4vci-client send by default) are ignored, as RFC 6749 §3.3 lets the server do:
    the ``issuer_state`` has already named the credential. A value naming another configuration
    is a request for a credential this offer does not hold, and is refused."""
    try:
        schema_id = uuid.UUID(scope)
    except ValueError:
        return False
    if scope_of(str(schema_id)) != scope:
        return False
    found = db.session.scalar(
        select(Schema.id).where(
            Schema.id == schema_id,
            Schema.published.is_(True),
            (Schema.organization_id == organization.id) | Schema.public.is_(True),
        )
    )
    return found is not None


def _mail_code_hash(request_uri: str, code: str) -> str:
    """Keyed, as six digits hashed plainly would fall to a table of a million entries."""
    message = f"mail_code:{request_uri}:{code}".encode()
    return hmac.new(settings.current().code_key, message, hashlib.sha256).hexdigest()


def _offered(organization: Organization, issuer_state: str) -> Credential:
    credential = db.session.scalar(
        select(Credential).where(
            Credential.issuer_state_hash == hash_secret(issuer_state),
            Credential.organization_id == organization.id,
        )
    )
    if credential is None:
        raise TokenError("invalid_request", "issuer_state is not one of this issuer's offers")
    if credential.status is not CredentialStatus.OFFERED or credential.code_used_at is not None:
        raise TokenError("invalid_request", "The offer was taken, withdrawn or has expired")
    return credential


# -- authorization endpoint -------------------------------------------------------------------


def pending(organization: Organization, client_id: str | None, request_uri: str | None):
    """The pushed request the authorization page shows, while it can still be approved."""
    if not client_id or not request_uri or len(request_uri) > 200:
        raise AuthorizationUnavailable("client_id and request_uri are required")
    request = db.session.scalar(
        select(AuthorizationRequest).where(
            AuthorizationRequest.request_uri_hash == hash_secret(request_uri)
        )
    )
    if request is None or request.credential.organization_id != organization.id:
        raise AuthorizationUnavailable("This authorization request is not known")
    if request.client_id != client_id:
        raise AuthorizationUnavailable("This authorization request is for another wallet")
    if request.approved_at is not None or request.expires_at <= clock.now():
        raise AuthorizationUnavailable("This authorization request has expired or was used")
    if request.credential.status is not CredentialStatus.OFFERED:
        raise AuthorizationUnavailable("The offer was taken, withdrawn or has expired")
    return request


def approve(
    organization: Organization,
    client_id: str | None,
    request_uri: str | None,
    links: IssuerLinks,
    mail_code: str | None = None,
) -> str:
    """The person continues: a single-use authorization code, and the wallet's redirect
    with ``code``, ``state`` and ``iss`` (RFC 6749 §4.1.2, RFC 9207 §2). When a code was
    mailed, it must be the one typed; the fifth wrong one ends the request. The caller
    commits even when this raises, so that wrong codes are counted."""
    request = pending(organization, client_id, request_uri)
    if request.mail_code_hash is not None:
        _check_mail_code(request, request_uri or "", mail_code)
    now = clock.now()
    code = "ac_" + secrets.token_urlsafe(32)
    taken = db.session.execute(
        update(AuthorizationRequest)
        .where(AuthorizationRequest.id == request.id, AuthorizationRequest.approved_at.is_(None))
        .values(
            approved_at=now,
            code_hash=hash_secret(code),
            code_expires_at=now + timedelta(seconds=settings.current().authorization_code_seconds),
        )
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:
        raise AuthorizationUnavailable("This authorization request was already used")
    return _redirect(request, links.issuer(organization.id), code=code)


def _check_mail_code(request: AuthorizationRequest, request_uri: str, typed: str | None) -> None:
    typed = (typed or "").strip()
    if typed and same(_mail_code_hash(request_uri, typed), request.mail_code_hash or ""):
        return
    db.session.execute(
        update(AuthorizationRequest)
        .where(AuthorizationRequest.id == request.id)
        .values(mail_code_failures=AuthorizationRequest.mail_code_failures + 1)
        .execution_options(synchronize_session=False)
    )
    db.session.refresh(request)
    left = MAX_MAIL_CODE_FAILURES - request.mail_code_failures
    if left <= 0:
        request.expires_at = clock.now()
        db.session.flush()
        raise AuthorizationUnavailable("Wrong code too many times: start again from your wallet")
    raise WrongMailCode(left)


def decline(
    organization: Organization, client_id: str | None, request_uri: str | None, links: IssuerLinks
) -> str:
    """The person declines: ``access_denied`` to the wallet (RFC 6749 §4.1.2.1)."""
    request = pending(organization, client_id, request_uri)
    request.approved_at = clock.now()
    db.session.flush()
    return _redirect(request, links.issuer(organization.id), error="access_denied")


def _redirect(request: AuthorizationRequest, issuer: str, **answer: str) -> str:
    """The redirect_uri with the answer added to its query (RFC 6749 §3.1.2: its own query
    parameters are kept)."""
    parts = urlsplit(request.redirect_uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += list(answer.items())
    if request.state is not None:
        query.append(("state", request.state))
    query.append(("iss", issuer))
    return urlunsplit(parts._replace(query=urlencode(query)))


# -- token endpoint ---------------------------------------------------------------------------


def redeem(
    organization: Organization,
    form: Mapping[str, Any],
    token_request: AuthorizationCodeRequest,
    dpop_jkt: str | None,
    headers: Mapping[str, Any] | None = None,
    issuer: str = "",
) -> dict[str, Any]:
    """RFC 6749 §4.1.3 with PKCE: the code once, by the client it was issued to, with the
    same ``redirect_uri`` and, if the request was pushed with DPoP, the same DPoP key. A
    second use of a code withdraws the token the first one gave (RFC 6749 §4.1.2)."""
    client_id = authenticate_client(organization, form, headers or {}, issuer)
    request = db.session.scalar(
        select(AuthorizationRequest).where(
            AuthorizationRequest.code_hash == hash_secret(token_request.code)
        )
    )
    if request is None or request.credential.organization_id != organization.id:
        raise TokenError("invalid_grant", "The authorization code is not known")
    if request.code_used_at is not None:
        db.session.execute(
            delete(AccessToken).where(AccessToken.credential_id == request.credential_id)
        )
        raise TokenError("invalid_grant", "The authorization code was already used")
    if request.code_expires_at is None or request.code_expires_at <= clock.now():
        raise TokenError("invalid_grant", "The authorization code has expired")
    if request.client_id != client_id:
        raise TokenError("invalid_grant", "The authorization code was issued to another client")
    if token_request.redirect_uri != request.redirect_uri:
        raise TokenError("invalid_grant", "redirect_uri is not the one of the pushed request")
    if not pkce_holds(token_request.code_verifier, request.code_challenge):
        raise TokenError("invalid_grant", "code_verifier does not match the code_challenge")
    if request.dpop_jkt is not None and dpop_jkt != request.dpop_jkt:
        raise TokenError("invalid_dpop_proof", "Use the DPoP key of the pushed request")
    now = clock.now()
    used = db.session.execute(
        update(AuthorizationRequest)
        .where(AuthorizationRequest.id == request.id, AuthorizationRequest.code_used_at.is_(None))
        .values(code_used_at=now)
        .execution_options(synchronize_session=False)
    )
    if used.rowcount != 1:
        raise TokenError("invalid_grant", "The authorization code was already used")
    taken = db.session.execute(
        update(Credential)
        .where(
            Credential.id == request.credential_id,
            Credential.code_used_at.is_(None),
            Credential.recorded_status == CredentialStatus.OFFERED,
        )
        .values(code_used_at=now)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:
        raise TokenError("invalid_grant", "The offer was already taken or withdrawn")
    identifier = request.credential.configuration_id if request.by_authorization_details else None
    body = issue_access_token(request.credential_id, dpop_jkt, identifier)
    if identifier is not None:
        # OpenID4VCI 1.0 §6.2: the credential_identifiers the wallet then names.
        body["authorization_details"] = [
            {
                "type": AUTHORIZATION_DETAILS_TYPE,
                "credential_configuration_id": identifier,
                "credential_identifiers": [identifier],
            }
        ]
    return body


def issue_access_token(
    credential_id: Any, dpop_jkt: str | None, credential_identifier: str | None = None
) -> dict[str, Any]:
    """An access token for one credential, DPoP-bound when the request carried a proof
    (RFC 9449 §5: ``token_type`` DPoP), and the token response that carries it."""
    seconds = settings.current().access_token_seconds
    value = "at_" + secrets.token_urlsafe(32)
    db.session.add(
        AccessToken(
            credential_id=credential_id,
            token_hash=hash_secret(value),
            expires_at=clock.now() + timedelta(seconds=seconds),
            dpop_jkt=dpop_jkt,
            credential_identifier=credential_identifier,
        )
    )
    db.session.flush()
    return {
        "access_token": value,
        "token_type": "DPoP" if dpop_jkt else "Bearer",
        "expires_in": seconds,
    }
