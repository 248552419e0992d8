"""Endpoints for the organization's backend, authenticated by integration key."""

from __future__ import annotations

from flask import Blueprint, current_app, request

from app.api import compat, render
from app.api.common import (
    PAGING_QUERY,
    base_url,
    documented,
    json_response,
    list_args,
    listing,
    parse_body,
    parse_id,
    refuse_unknown_args,
    register_any_text,
)
from app.database import read_only, scrub_erased
from app.errors import InvalidRequest
from app.extensions import db
from app.policies import operations as policies
from app.recipients import operations as recipients
from app.verifications import operations as individuals
from app.verifications.compatibility import SOCIOUS_VERIFY
from app.web.access import acting_organization, acting_organization_id, require_apikey
from app.web.idempotency import idempotent
from app.web.links import links
from app.web.payloads.individuals import IndividualLookupCompatOut
from app.web.payloads.policies import PolicyRequestIn, PolicyRequestOut, PolicyStatusOut
from app.web.payloads.recipients import (
    RecipientIn,
    RecipientList,
    RecipientOut,
    RecipientPatch,
    RecipientRef,
)

bp = Blueprint("backend", __name__)
bp.record_once(register_any_text)


@bp.get("/verifications/<verification_id>/individuals/<anytext:customer_id>", merge_slashes=False)
@read_only
@require_apikey
@documented(
    "Authenticated lookup of the individual for a customer: the final decision",
    responses={200: IndividualLookupCompatOut},
    tags=("individuals",),
)
def lookup_individual(verification_id: str, customer_id: str):
    """The only place a backend should take the decision from."""
    individual = individuals.lookup_individual_row(
        acting_organization_id(), parse_id(verification_id), customer_id
    )
    answer = render.individual_for_owner(individual, links())
    if individual.api_compatibility == SOCIOUS_VERIFY:
        answer = compat.with_socious_verify_fields(answer, individual, acting_organization_id())
    return json_response(answer)


@bp.delete(
    "/verifications/<verification_id>/individuals/<anytext:customer_id>", merge_slashes=False
)
@require_apikey
@documented(
    "Erase a person's record on request: the individual, its claims and its attempts",
    responses={204: None},
    tags=("individuals",),
)
def erase_individual(verification_id: str, customer_id: str):
    """Nothing of the person is kept; unknown is 400 like the lookup."""
    individuals.erase_individual(acting_organization(), parse_id(verification_id), customer_id)
    committed_and_scrubbed()
    return "", 204


def committed_and_scrubbed() -> None:
    """An erasure is committed here rather than at the request's end, so that the storage
    can then drop the erased bytes (``scrub_erased``) before the answer says they are gone."""
    db.session.commit()
    scrub_erased(db.engine)


@bp.post("/policy-requests")
@require_apikey
@idempotent()
@documented(
    "Create a policy request: a one-off presentation page for a person",
    body=PolicyRequestIn,
    responses={201: PolicyRequestOut},
    tags=("policy requests",),
)
def create_policy_request():
    """The token in the response is shown once; it is the person's page address."""
    body = parse_body(PolicyRequestIn)
    token, policy = policies.create_policy_request(
        acting_organization(),
        body.verification_id,
        body.recipient_id,
        body.expires_in,
        current_app.config["SECRET_KEY"],
        body.registration_certificate_id,
        body.transaction_data,
    )
    return json_response(
        {
            "id": str(policy.id),
            "token": token,
            "url": f"{base_url()}/p/{token}",
            "expires_at": policy.expires_at.isoformat(),
            "status": policy.status.value,
        },
        201,
    )


@bp.get("/policy-requests/<policy_id>/status")
@require_apikey
@documented(
    "Status of a policy request; 410 once its token expired without a result",
    responses={200: PolicyStatusOut},
    tags=("policy requests",),
)
def policy_request_status(policy_id: str):
    """410 EXPIRED when the token lapsed before the person presented anything."""
    return json_response(
        render.policy_status(policies.policy_status(acting_organization(), parse_id(policy_id)))
    )


@bp.delete("/policy-requests/<policy_id>")
@require_apikey
@documented(
    "Erase a policy request on request: the request, its claims and its attempts",
    responses={204: None},
    tags=("policy requests",),
)
def erase_policy_request(policy_id: str):
    """Nothing of it is kept; unknown (or another organization's) is 400 like the status."""
    policies.erase_policy_request(acting_organization(), parse_id(policy_id))
    committed_and_scrubbed()
    return "", 204


# -- recipients: on /recipients (id in body or query) and on /recipients/<id> ------------


def _recipient_id_from_request(body_id=None) -> str | None:
    return request.args.get("id") or (str(body_id) if body_id else None)


@bp.get("/recipients")
@require_apikey
@documented(
    "List recipients, or one with ?id=",
    responses={200: RecipientList},
    query={"id": "A recipient ID", **PAGING_QUERY},
    tags=("recipients",),
)
def list_recipients():
    """``?id=`` returns that recipient; otherwise a page of them."""
    organization = acting_organization()
    if "id" in request.args:
        refuse_unknown_args("id")
        return json_response(
            render.recipient(recipients.get_recipient(organization, parse_id(request.args["id"])))
        )
    rows, total = recipients.list_recipients(organization, *list_args("id"))
    return json_response(listing(rows, total, render.recipient))


@bp.post("/recipients")
@require_apikey
@idempotent()
@documented(
    "Create a recipient", body=RecipientIn, responses={201: RecipientOut}, tags=("recipients",)
)
def create_recipient():
    """A person the organization issues credentials to."""
    body = parse_body(RecipientIn)
    row = recipients.create_recipient(acting_organization(), body.model_dump())
    return json_response(render.recipient(row), 201)


@bp.put("/recipients")
@require_apikey
@documented(
    "Update a recipient named by id in the body or ?id=",
    body=RecipientPatch,
    responses={200: RecipientOut},
    query={"id": "A recipient ID"},
    tags=("recipients",),
)
def update_recipient_by_body():
    """The contract's path style: the recipient's id travels in the body or the query."""
    body = parse_body(RecipientPatch)
    recipient_id = _recipient_id_from_request(body.id)
    if recipient_id is None:
        raise InvalidRequest("Name the recipient with 'id' in the body or ?id=")
    fields = body.model_dump(exclude={"id"}, exclude_unset=True)
    row = recipients.update_recipient(acting_organization(), parse_id(recipient_id), fields)
    return json_response(render.recipient(row))


@bp.delete("/recipients")
@require_apikey
@documented(
    "Delete a recipient named by id in the body or ?id=",
    body=RecipientRef,
    responses={204: None},
    query={"id": "A recipient ID"},
    tags=("recipients",),
)
def delete_recipient_by_body():
    """The contract's path style: the recipient's id travels in the body or the query."""
    recipient_id = request.args.get("id")
    if recipient_id is None:
        recipient_id = str(parse_body(RecipientRef).id)
    recipients.delete_recipient(acting_organization(), parse_id(recipient_id))
    return "", 204


@bp.get("/recipients/<recipient_id>")
@require_apikey
@documented("One recipient", responses={200: RecipientOut}, tags=("recipients",))
def get_recipient(recipient_id: str):
    """A recipient of the key's organization."""
    return json_response(
        render.recipient(recipients.get_recipient(acting_organization(), parse_id(recipient_id)))
    )


@bp.put("/recipients/<recipient_id>")
@require_apikey
@documented(
    "Update a recipient",
    body=RecipientPatch,
    responses={200: RecipientOut},
    tags=("recipients",),
)
def update_recipient(recipient_id: str):
    """Fields left out keep their value."""
    body = parse_body(RecipientPatch)
    fields = body.model_dump(exclude={"id"}, exclude_unset=True)
    row = recipients.update_recipient(acting_organization(), parse_id(recipient_id), fields)
    return json_response(render.recipient(row))


@bp.delete("/recipients/<recipient_id>")
@require_apikey
@documented("Delete a recipient", responses={204: None}, tags=("recipients",))
def delete_recipient(recipient_id: str):
    """Gone for good; credentials already issued to them stay valid until revoked."""
    recipients.delete_recipient(acting_organization(), parse_id(recipient_id))
    return "", 204
