"""Operator commands: ``flask --app wsgi <group> <command>``.

Each prints JSON on stdout for scripts and exits non-zero with a message on bad input.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

import click
from flask import Flask
from flask.cli import AppGroup

from app.api import render
from app.errors import ApiError
from app.extensions import db
from app.identity.operations import create_user, find_user_by_email, issue_session_token
from app.organizations.models import Organization, Plan
from app.organizations.operations import create_organization, set_plan
from app.schemas.operations import make_public
from app.schemas.public import seed_public_schemas
from app.vouchers.operations import mint_vouchers

PLANS = click.Choice([p.value for p in Plan])


def emit(value: Any) -> None:
    click.echo(json.dumps(value, indent=2))


def transactional(command: Callable[..., Any]) -> Callable[..., Any]:
    """Commit when the command succeeds; on a domain error roll back and exit 1 with its message."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = command(*args, **kwargs)
            db.session.commit()
            return result
        except ApiError as exc:
            db.session.rollback()
            click.echo(f"Error: {exc.message}", err=True)
            sys.exit(1)

    return wrapper


def user_json(user) -> dict[str, Any]:
    return {
        "id": str(user.id),
        "email": user.email,
        "name": user.name,
        "created_at": user.created_at.isoformat(),
    }


def require_user(email: str):
    user = find_user_by_email(email)
    if user is None:
        raise ApiError(f"No user with email {email}; create one with 'users create'")
    return user


def require_organization(org_id: str) -> Organization:
    try:
        organization = db.session.get(Organization, uuid.UUID(org_id))
    except ValueError:
        organization = None
    if organization is None:
        raise ApiError(f"No organization with ID {org_id}")
    return organization


users = AppGroup("users", help="Dashboard users.")
tokens = AppGroup("tokens", help="Session tokens for headless administration.")
orgs = AppGroup("orgs", help="Organizations and their plans.")
vouchers = AppGroup("vouchers", help="Plan vouchers.")
schemas = AppGroup("schemas", help="Credential schemas.")
issuers = AppGroup("issuers", help="Each organization's credential issuer.")
keys_group = AppGroup("keys", help="What is sealed under ISSUER_KEY_SECRET.")


@users.command("create")
@click.option("--email", required=True)
@click.option("--name", default="")
@transactional
def users_create(email: str, name: str) -> None:
    emit(user_json(create_user(email, name)))


@tokens.command("create")
@click.option("--email", required=True)
@click.option("--hours", default=12, show_default=True, type=int)
@transactional
def tokens_create(email: str, hours: int) -> None:
    value, token = issue_session_token(require_user(email), hours)
    emit({"token": value, "expires_at": token.expires_at.isoformat()})


@orgs.command("create")
@click.option("--name", required=True)
@click.option("--owner-email", required=True)
@click.option("--plan", type=PLANS, default="FREE", show_default=True)
@transactional
def orgs_create(name: str, owner_email: str, plan: str) -> None:
    emit(render.organization(create_organization(require_user(owner_email), name, Plan(plan))))


@orgs.command("set-plan")
@click.argument("org_id")
@click.argument("plan", type=PLANS)
@transactional
def orgs_set_plan(org_id: str, plan: str) -> None:
    emit(render.organization(set_plan(require_organization(org_id), Plan(plan))))


@vouchers.command("mint")
@click.option("--plan", type=PLANS, required=True)
@click.option("--days", type=int, required=True)
@click.option("--count", type=int, default=1, show_default=True)
@transactional
def vouchers_mint(plan: str, days: int, count: int) -> None:
    emit({"codes": mint_vouchers(Plan(plan), days, count)})


@schemas.command("seed")
@transactional
def schemas_seed() -> None:
    """Add the public schemas that ship with the service (idempotent)."""
    emit({"added": seed_public_schemas()})


@schemas.command("publish-public")
@click.argument("schema_id")
@transactional
def schemas_publish_public(schema_id: str) -> None:
    """Publish an organization's schema to every organization (tenants cannot make a schema
    public themselves). Its format, type, attributes and settings are frozen from then on."""
    try:
        parsed = uuid.UUID(schema_id)
    except ValueError:
        raise ApiError(f"No schema with ID {schema_id}") from None
    emit(render.schema(make_public(parsed)))


@issuers.command("rotate-key")
@click.argument("org_id")
@transactional
def issuers_rotate_key(org_id: str) -> None:
    """Sign with a new key from now on. The old public key stays in the issuer's JWKS while a
    credential it signed is unexpired; the private key is never printed."""
    from app.issuance import keys

    organization = require_organization(org_id)
    key = keys.rotate_key(organization)
    emit(
        {
            "organization_id": str(organization.id),
            "kid": key.kid,
            "created_at": key.created_at.isoformat(),
            "published_kids": [jwk["kid"] for jwk in keys.published_keys(organization.id)],
        }
    )


@keys_group.command("reseal")
@click.option(
    "--previous-secret-env",
    default="PREVIOUS_ISSUER_KEY_SECRET",
    show_default=True,
    help="The environment variable holding the secret the values are sealed under now.",
)
@transactional
def keys_reseal(previous_secret_env: str) -> None:
    """Re-seal issuing keys (issuer, root, mdoc IACA and document signer), verifier identity
    keys and webhook secrets under the configured ISSUER_KEY_SECRET.

    The previous secret is read from the environment, never from the command line, so it
    stays out of the process list and the shell history."""
    import os

    from app.resealing import ResealError, reseal

    try:
        report = reseal(os.environ.get(previous_secret_env, ""))
    except ResealError as exc:
        raise ApiError(f"{exc} (the previous secret is read from {previous_secret_env})") from None
    emit(report.as_dict())


def register(app: Flask) -> None:
    for group in (users, tokens, orgs, vouchers, schemas, issuers, keys_group):
        app.cli.add_command(group)
