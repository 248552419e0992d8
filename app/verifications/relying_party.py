"""Which relying party an intermediary's verification is for, as the verification domain
checks it.

The access certificates an intermediary holds per relying party belong to the verifier
identity domain, which sits above this one (it reads the issuing settings, which reach back
here), so the application says how a name is checked (``provide``), as it says where the
verifier profile is read.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

_checker: list[Callable[[uuid.UUID, str | None], str | None]] = []


def provide(checker: Callable[[uuid.UUID, str | None], str | None]) -> None:
    """How the running application checks a verification's ``relying_party``."""
    _checker[:] = [checker]


def checked(organization_id: uuid.UUID, relying_party: str | None) -> str | None:
    """The name as the checker takes it (it refuses an unknown one); None is the
    organization itself."""
    if relying_party is None or not _checker:
        return relying_party
    return _checker[0](organization_id, relying_party)
