"""Claim an idempotency key, keep the answer it gave, replay it, sweep the expired ones.

Nothing here knows of HTTP requests: the caller passes the fingerprint of what was asked and
the answer it gave (status code and body bytes).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from app import sealing
from app.errors import ApiError, InvalidRequest
from app.extensions import db
from app.idempotency.models import IdempotentRequest

# How long a key replays its first answer (the window clients retry in).
KEPT_FOR = timedelta(hours=24)
MAX_KEY_LENGTH = 255
_KEK_INFO = b"verity idempotent answers v1"
_AAD = b"verity idempotent answer"


class KeyReused(ApiError):
    """The key already answered a different request (another body or another endpoint)."""

    status = 422
    code = "IDEMPOTENCY_KEY_REUSED"


class KeyInUse(ApiError):
    """The key's first request has not answered yet (only seen if it is still running)."""

    status = 409
    code = "IDEMPOTENCY_KEY_IN_USE"


@dataclass(frozen=True)
class Replay:
    status_code: int
    body: bytes


def checked_key(key: str) -> str:
    """A key is 1 to 255 visible ASCII characters (a UUID is the usual choice)."""
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not all(33 <= ord(c) <= 126 for c in key):
        raise InvalidRequest(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} visible ASCII characters"
        )
    return key


def fingerprint(method: str, path: str, body: bytes) -> str:
    """What makes two requests "the same": method, path and the body's JSON value (so key
    order and whitespace do not count), or its bytes when it is not JSON."""
    try:
        canonical = json.dumps(json.loads(body or b"null"), sort_keys=True, separators=(",", ":"))
        shown = canonical.encode("utf-8")
    except ValueError:
        shown = body
    digest = hashlib.sha256()
    for part in (method.encode("ascii"), path.encode("utf-8"), shown):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def begin(
    scope: str, key: str, fingerprint: str, now: datetime, secret: str
) -> IdempotentRequest | Replay:
    """Claim ``key`` for this request (its row, to be finished), or the first answer to replay.

    The insert runs first: a concurrent twin waits on the unique constraint until this
    transaction ends, then finds the answer. A different fingerprint is a 422.
    """
    existing = _row(scope, key)
    if existing is not None and existing.expires_at <= now:
        db.session.delete(existing)
        db.session.flush()
        existing = None
    if existing is None:
        try:
            with db.session.begin_nested():
                claimed = IdempotentRequest(
                    scope=scope, key=key, fingerprint=fingerprint, expires_at=now + KEPT_FOR
                )
                db.session.add(claimed)
            return claimed
        except IntegrityError:
            existing = _row(scope, key)
            if existing is None:
                raise
    if existing.fingerprint != fingerprint:
        raise KeyReused(
            "This Idempotency-Key was used for another request; use a new key for a new request"
        )
    if existing.status_code is None or existing.sealed_body is None:
        raise KeyInUse("A request with this Idempotency-Key is still running; retry shortly")
    return Replay(existing.status_code, _open(existing.sealed_body, kek(secret)))


def finish(claimed: IdempotentRequest, status_code: int, body: bytes, secret: str) -> None:
    """Keep the answer with the claim, in the create's own transaction."""
    claimed.status_code = status_code
    claimed.sealed_body = _seal(body, kek(secret))
    db.session.flush()


def stored(scope: str, key: str) -> IdempotentRequest | None:
    """The claim of ``key``, finished or still running, if there is one."""
    return _row(scope, key)


def kept_answer(claimed: IdempotentRequest, secret: str) -> bytes | None:
    """The answer a finished claim keeps, unsealed; None while its request still runs."""
    if claimed.sealed_body is None:
        return None
    return _open(claimed.sealed_body, kek(secret))


def sweep(now: datetime) -> int:
    """Delete the rows past their window; the table holds at most a day of keys."""
    result = db.session.execute(
        delete(IdempotentRequest)
        .where(IdempotentRequest.expires_at <= now)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0


def _row(scope: str, key: str) -> IdempotentRequest | None:
    return db.session.scalar(
        select(IdempotentRequest)
        .where(IdempotentRequest.scope == scope, IdempotentRequest.key == key)
        .execution_options(populate_existing=True)
    )


def kek(secret: str) -> bytes:
    """The AES-256 key answers are sealed under, derived from the deployment's secret."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEK_INFO)
    return hkdf.derive(secret.encode("utf-8"))


def _seal(body: bytes, key: bytes) -> bytes:
    return sealing.seal(body, key, _AAD)


def _open(sealed: bytes, key: bytes) -> bytes:
    try:
        return sealing.open_sealed(sealed, key, _AAD)
    except sealing.SealBroken:
        raise KeyInUse(
            "The first answer to this Idempotency-Key cannot be read back; use a new key"
        ) from None
