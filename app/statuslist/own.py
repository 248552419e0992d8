"""The status of a credential of this deployment's own issuers, read without a fetch.

A credential whose issuer was resolved as one of this deployment's (``app.trust.own``) and
whose ``status.status_list.uri`` lies under this deployment's issuers path is answered from
the database as it is now, so a revocation counts at the very next check instead of after the
list's ``ttl``. The list must be one of that same issuer's: a credential of one organization
pointing at another's list is refused, as a fetched list signed by another issuer would be
(Token Status List 8.3 step 3). A list anywhere else is left to ``check_status``.
"""

from __future__ import annotations

from app.statuslist.errors import StatusError
from app.trust.errors import TrustError
from app.trust.issuers import ResolvedIssuer
from app.trust.own import OwnIssuers

# How a credential of this deployment's own issuers is resolved: by its iss, or by its x5c
# chain to the organization's own root (``app.trust.issuers``).
OWN_METHODS = ("jwt-vc-issuer", "x5c")


def own_entry(uri: str, idx: int, issuer: ResolvedIssuer, own: OwnIssuers) -> int | None:
    """The status at ``idx`` of this deployment's list ``uri``; None when either the issuer
    or the list is not this deployment's. StatusError when no statement can be made."""
    if issuer.method not in OWN_METHODS or not own.names(issuer.identifier):
        return None
    if not own.names(uri):
        return None
    number = own.list_number(issuer.identifier, uri)
    if number is None:
        raise StatusError(f"Status list {uri} is not a list of the credential's issuer")
    try:
        organization = own.organization(issuer.identifier)
    except TrustError as exc:
        raise StatusError(exc.reason) from exc
    status = own.read_status(organization, number, idx)
    if status is None:
        raise StatusError(f"Status list {uri} does not exist or has no entry {idx}")
    return status
