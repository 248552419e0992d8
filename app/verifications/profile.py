"""The deployment's verifier profile, as the verification domain reads it.

``VERIFIER_PROFILE=haip`` promises wallets HAIP 1.0, which covers SD-JWT VC and mdoc only. The
format is a schema's, chosen per verification while the service runs, so a start-up check
cannot see it: every place that makes something a presentation request will be made for (a
verification saved, a policy request, an individual opened, a new link) asks here first and is
refused before it writes anything. The application says where the running profile is read
(``provide``), as the issuing settings are read, so this module knows nothing of Flask.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from sqlalchemy import bindparam, select

from app.database import read_row
from app.errors import InvalidRequest
from app.extensions import db
from app.oid4vp.formats import SD_JWT_VC
from app.oid4vp.profile import FORMAT_NOT_IN_PROFILE, format_problem
from app.schemas.models import Schema
from app.verifications.models import Verification

_profile_provider: list[Callable[[], str]] = []


def provide(provider: Callable[[], str]) -> None:
    """Where the running application's ``VERIFIER_PROFILE`` is read."""
    _profile_provider[:] = [provider]


def current_profile() -> str:
    """The running profile; none when nothing was provided."""
    return _profile_provider[0]() if _profile_provider else ""


def require_format_allowed(schema: Schema) -> None:
    """400 ``FORMAT_NOT_IN_PROFILE`` when the profile does not allow the schema's format."""
    _refuse(schema.format or SD_JWT_VC)


def require_verification_format(verification: Verification) -> None:
    """The same for a saved verification; its schema is read only under a narrowing profile
    (a new link must not cost a read on deployments without one)."""
    if current_profile():
        require_format_allowed(verification.schema)


def _refuse(credential_format: str) -> None:
    problem = format_problem(current_profile(), credential_format)
    if problem is not None:
        raise InvalidRequest(problem, code=FORMAT_NOT_IN_PROFILE)


def require_verification_allowed(verification_id: uuid.UUID) -> None:
    """The same for a verification by ID, read only under a profile that narrows formats (an
    unknown ID passes here and is refused as unknown by the caller)."""
    if not current_profile():
        return
    # A read of its own, outside the ORM session: the opening's locking is left as it was.
    row = read_row(db.engine, _FORMAT_OF_VERIFICATION, {"verification_id": verification_id})
    if row is not None:
        _refuse(row.format or SD_JWT_VC)


_FORMAT_OF_VERIFICATION = (
    select(Schema.__table__.c.format)
    .join(Verification.__table__, Verification.__table__.c.schema_id == Schema.__table__.c.id)
    .where(Verification.__table__.c.id == bindparam("verification_id"))
)
