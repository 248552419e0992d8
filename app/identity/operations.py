"""Users and session tokens."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from app import clock
from app.errors import Conflict, Forbidden, InvalidRequest, Unauthorized
from app.extensions import db
from app.identity.models import SessionToken, User
from app.tokens import hash_secret, new_secret

SESSION_PREFIX = "vs_"


def normalize_email(email: str) -> str:
    email = email.strip()
    if "@" not in email or len(email) > 320 or email.startswith("@") or email.endswith("@"):
        raise InvalidRequest(f"Not an email address: {email!r}")
    local, domain = email.rsplit("@", 1)
    return f"{local}@{domain.lower()}"


def find_user_by_email(email: str) -> User | None:
    return db.session.scalar(select(User).where(User.email == normalize_email(email)))


def create_user(email: str, name: str = "") -> User:
    email = normalize_email(email)
    if find_user_by_email(email) is not None:
        raise InvalidRequest(f"A user with email {email} already exists")
    user = User(email=email, name=name or email.split("@")[0])
    db.session.add(user)
    db.session.flush()
    return user


def user_for_login(subject: str, email: str, name: str, email_verified: bool) -> User:
    """The user behind an identity provider login; the first login creates it.

    An account is bound to the provider's subject (``issuer|sub``), and a login reaches only
    the account bound to its subject. The email links a login to an account only once: an
    account an operator created (``users create``) and nobody signed in to yet is bound at its
    owner's first sign-in, when the provider asserts ``email_verified: true``. An account
    already bound to another subject is never re-bound, and an address the provider did not
    verify makes no account: anyone may type someone else's address at a provider that lets
    them sign up, and it would otherwise reach that person's account or hold their address.
    """
    user = db.session.scalar(select(User).where(User.oidc_subject == subject))
    if user is None:
        if not email_verified:
            raise Forbidden(
                f"The identity provider has not verified the email address {email}; verify it "
                "there, then sign in again",
                code="EMAIL_NOT_VERIFIED",
            )
        user = find_user_by_email(email)
        if user is None:
            user = User(email=normalize_email(email), name=name or email.split("@")[0])
            db.session.add(user)
        elif user.oidc_subject is not None:
            raise Conflict(
                f"The account of {user.email} signs in with another identity provider account; "
                "sign in with that one",
                code="ACCOUNT_BOUND_ELSEWHERE",
            )
        user.oidc_subject = subject
    if name and not user.name:
        user.name = name
    db.session.flush()
    return user


def issue_session_token(user: User, hours: int) -> tuple[str, SessionToken]:
    """A new opaque token for ``user``; the plain value is returned once and never stored."""
    if not 1 <= hours <= 24 * 366:
        raise InvalidRequest("Token lifetime must be between 1 hour and 366 days")
    value, digest = new_secret(SESSION_PREFIX)
    token = SessionToken(
        user_id=user.id, token_hash=digest, expires_at=clock.now() + timedelta(hours=hours)
    )
    db.session.add(token)
    db.session.flush()
    return value, token


def authenticate_session(value: str) -> SessionToken:
    token = db.session.scalar(
        select(SessionToken).where(SessionToken.token_hash == hash_secret(value))
    )
    if token is None or token.revoked_at is not None:
        raise Unauthorized("Invalid or revoked session token")
    if token.expires_at <= clock.now():
        raise Unauthorized("Session token has expired; sign in again")
    return token


def revoke_session_token(token: SessionToken) -> None:
    token.revoked_at = clock.now()
    db.session.flush()
