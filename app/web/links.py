"""Where this deployment is reached and who it is, as wallets and people see it.

Addresses are built with ``url_for`` from the routes themselves, on the deployment's public
base URL; the verifier identity is the one the factory settled at start-up.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import singledispatch
from urllib.parse import urlencode

from flask import current_app, url_for

from app import clock
from app.deployment import VERIFIER_EXTENSION
from app.oid4vp.request import AuthorizationRequest, reference_link
from app.oid4vp.verifier import Verifier
from app.policies.models import PolicyRequest
from app.policies.tokens import policy_token
from app.presentations.didcomm import invitation_url
from app.presentations.operations import verification_of
from app.recently_used import RecentlyUsed
from app.verifications.models import (
    DIDCOMM,
    OPENID4VP,
    Individual,
    PresentationRequest,
    PresentationSubject,
    Verification,
)
from app.verifier_identity.operations import client_id_of, organization_client
from app.verifier_identity.registration import verifier_info_of
from app.web.requests import base_url
from app.web.trusted_authorities import authorities_of


@dataclass(frozen=True)
class Links:
    base_url: str
    verifier: Verifier

    def request_uri(self, request_id: uuid.UUID) -> str:
        return self.base_url + url_for("public.request_object", request_id=request_id)

    def response_uri(self, request_id: uuid.UUID) -> str:
        return self.base_url + url_for("wallet.direct_post", request_id=request_id)

    def client_id(self, request: PresentationRequest) -> str:
        """The client ID of a request: in its link, its Request Object, and the KB-JWT ``aud``.

        The organization's own when the request was made under its key, else the deployment's.
        """
        if request.verifier_key_id is not None:
            own = client_id_of(request.verifier_key_id)
            if own is not None:
                return own
        return self.verifier.client_id(self.response_uri(request.id))

    def individual_page(self, individual_id: uuid.UUID) -> str:
        """The person's page ``/i/{individual_id}``, where the organization sends the person."""
        return self.base_url + url_for("pages.individual_page", individual_id=individual_id)

    def connection_url(self, request_id: uuid.UUID) -> str:
        """The link of the verification's first wallet protocol: a DIDComm out-of-band
        invitation (``/didcomm/invitation?_oob=``) or an OpenID4VP one."""
        return self.connection_urls(request_id)[0][1]

    def connection_urls(self, request_id: uuid.UUID) -> list[tuple[str, str]]:
        """Each wallet protocol the verification offers, first one first, with its link."""
        kept = kept_links()
        key = ("protocols", self.base_url, request_id)
        found = kept.get(key)
        if found is None:
            request, verification = verification_of(request_id)
            found = []
            for protocol in verification.protocols():
                if protocol == DIDCOMM:
                    url = invitation_url(request, verification)
                    if url is not None:
                        found.append((DIDCOMM, url))
                else:
                    found.append((OPENID4VP, self.openid4vp_url(request_id)))
            if not found:
                found.append((OPENID4VP, self.openid4vp_url(request_id)))
            kept.put(key, found)
        return found

    def openid4vp_url(self, request_id: uuid.UUID) -> str:
        """The ``openid4vp://`` link for a presentation request: by reference when signed (by
        the organization's key or the deployment's, or when the deployment asks for it), else
        carrying the request itself.

        A request's link never changes within its life (its client ID follows the key it was
        made under, not the one in use now), so it is built once per worker and kept.
        """
        kept = kept_links()
        key = (self.base_url, request_id)
        link = kept.get(key)
        if link is None:
            request, verification = verification_of(request_id)
            if request.verifier_key_id is not None or self.verifier.passes_by_reference:
                link = reference_link(
                    self.client_id(request),
                    self.request_uri(request_id),
                    self.verifier.request_uri_method,
                )
            else:
                link = self.authorization_request(request, verification).link()
            kept.put(key, link)
        return link

    def person_page(self, subject: PresentationSubject, **query: str) -> str:
        """The person's page of a subject (``/i/<id>`` or ``/p/<token>``)."""
        address = self.base_url + page_path(subject)
        return f"{address}?{urlencode(query)}" if query else address

    def authorization_request(
        self, request: PresentationRequest, verification: Verification
    ) -> AuthorizationRequest:
        """The OpenID4VP request a wallet fetches by reference for one presentation request.

        Client identifier and response encryption key are this verifier's, the identity that
        made the request's link and that will read its response; the client identifier and
        signing key are the organization's own when the request was made under them.
        """
        own = (
            organization_client(request.verifier_key_id)
            if request.verifier_key_id is not None
            else None
        )
        return AuthorizationRequest(
            client=own.client if own else self.verifier.client,
            logo_uri=(own.logo_uri or "") if own else "",
            verifier_info=verifier_info_of(registration_of(request, verification)) if own else (),
            encryption_jwk=self.verifier.response_jwk(str(request.id)),
            response_uri=self.response_uri(request.id),
            request_uri=self.request_uri(request.id),
            nonce=request.nonce,
            state=request.state,
            credential=verification.credential_type(),
            claims=verification.requested_claims(),
            issued_at=int(clock.now().timestamp()),
            expires_at=int(request.expires_at.timestamp()),
            client_name=verification.organization.name,
            trusted_authorities=tuple(authorities_of(verification)),
            transaction_data=tuple(request.subject.transaction_data or ()),
        )


def registration_of(request: PresentationRequest, verification: Verification) -> uuid.UUID | None:
    """The registration certificate a request is made under: its policy request's own, else
    its verification's."""
    policy = request.policy_request if request.policy_request_id is not None else None
    own = getattr(policy, "registration_certificate_id", None)
    return own or verification.registration_certificate_id


@singledispatch
def page_path(subject: PresentationSubject) -> str:
    raise TypeError(f"no person's page for {type(subject).__name__}")


@page_path.register
def _(subject: Individual) -> str:
    return url_for("pages.individual_page", individual_id=subject.id)


@page_path.register
def _(subject: PolicyRequest) -> str:
    # The token is derived, not stored (only its hash is): rebuilt with the deployment's secret.
    token = policy_token(current_app.config["SECRET_KEY"], subject.id)
    return url_for("pages.policy_page", token=token)


def kept_links() -> RecentlyUsed[tuple[str, uuid.UUID], str]:
    """Links already built, by base URL and presentation request: the last 4096.

    A link that carries its request needs the request, its verification, schema and
    organization: three reads on every status poll, for a text that never changes within the
    request's life (its nonce, state and claims are fixed when it is minted; ``iat`` is not in
    it). A link by reference needs the key the request was made under. Keeping it per worker
    takes the poll back to one read.
    """
    return current_app.extensions.setdefault("verity.kept_links", RecentlyUsed(size=4096))


def links() -> Links:
    """This deployment's links, for the request being answered."""
    return Links(base_url(), current_app.extensions[VERIFIER_EXTENSION])
