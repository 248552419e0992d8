"""This deployment's own credential issuers: their keys and status lists are read, not fetched.

An organization of this deployment issues as ``<base URL>/issuers/<organization id>``
(``app.issuance.links``), and its status lists are ``<issuer>/status-lists/<n>``. Fetching
those would make the service call itself: on a local run the fetcher's address rules refuse
loopback and plain http (so the service could not verify what it issued), and a revocation
would wait for the cached list's ``ttl``. A credential naming one of these issuers is checked
against what the database says now instead: the keys the issuer's jwt-vc-issuer metadata would
list, and the entries its status list would carry. Any other issuer is resolved as before.

Protocol code: the two readers are injected by the application (``app.issuance.own``), so
nothing here knows the database.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cryptography import x509

from app.sdjwt import PublicKey
from app.trust.errors import TrustError
from app.trust.metadata import select_key

ISSUERS_PATH = "/issuers/"
STATUS_LISTS_PATH = "/status-lists/"
# The same lists as StatusList2021 credentials signed by the organization's did:prism.
CREDENTIAL_STATUS_PATH = "/credential-status/"
_LIST_NUMBER = re.compile(r"^(0|[1-9][0-9]{0,8})$")

# An organization's published issuer keys (JWKs: the current key and each retired one a
# credential still needs), or None when there is no such organization.
KeyReader = Callable[[uuid.UUID], Sequence[dict[str, Any]] | None]
# The status of entry ``idx`` of an organization's status list ``number``, or None when that
# list was never started or has no such entry.
StatusReader = Callable[[uuid.UUID, int, int], int | None]
# The DER of an organization's mdoc document signer certificate, or None before its first mdoc.
SignerReader = Callable[[uuid.UUID], bytes | None]
# The organization's issuer root certificates (current and replaced): the anchors its own
# credentials' x5c chains lead to.
RootReader = Callable[[uuid.UUID], Sequence[x509.Certificate]]
# The organization's did:prism issuer (long form), or None before it was made.
PrismDidReader = Callable[[uuid.UUID], str | None]


def _no_roots(organization: uuid.UUID) -> Sequence[x509.Certificate]:
    return ()


@dataclass(frozen=True)
class OwnIssuers:
    """The issuers under ``base_url`` (no trailing slash; empty names none) and how to read
    their keys and status lists."""

    base_url: str
    read_keys: KeyReader
    read_status: StatusReader
    read_mdoc_signer: SignerReader | None = None
    read_roots: RootReader = _no_roots
    read_prism_did: PrismDidReader | None = None

    def names(self, url: str) -> bool:
        """Whether ``url`` lies under this deployment's issuers path (an issuer identifier or
        anything below one). Compared as strings, like every issuer identifier (RFC 3986
        6.2.1): another spelling of the host is another issuer."""
        return bool(self.base_url) and url.startswith(self.base_url + ISSUERS_PATH)

    def organization(self, iss: str) -> uuid.UUID:
        """The organization an issuer identifier of this deployment names. Only the exact
        form the deployment issues under is one: anything else under the path names none."""
        rest = iss[len(self.base_url + ISSUERS_PATH) :] if self.names(iss) else ""
        try:
            organization = uuid.UUID(rest)
        except ValueError:
            organization = None
        if organization is None or str(organization) != rest:
            raise TrustError(f"Issuer {iss} is not an organization of this deployment")
        return organization

    def key(self, iss: str, kid: Any) -> PublicKey:
        """The key ``kid`` names among the organization's published keys."""
        keys = self.read_keys(self.organization(iss))
        if keys is None:
            raise TrustError(f"Issuer {iss} is not an organization of this deployment")
        return select_key({"keys": list(keys)}, kid)

    def roots(self, iss: str) -> Sequence[x509.Certificate]:
        """The roots an x5c chain of issuer ``iss`` must lead to: its organization's own,
        read from the database, so no other anchor can vouch for this deployment's issuer."""
        return self.read_roots(self.organization(iss))

    def list_number(self, iss: str, uri: str, path: str = STATUS_LISTS_PATH) -> int | None:
        """The number of ``uri`` as one of issuer ``iss``'s own status lists; None when
        ``uri`` is not under that issuer's status lists ``path``."""
        prefix = iss + path
        if not uri.startswith(prefix):
            return None
        number = uri[len(prefix) :]
        return int(number) if _LIST_NUMBER.match(number) else None

    def at(self, base_url: str) -> OwnIssuers:
        """The same readers for issuers under another base URL."""
        return replace(self, base_url=base_url)


def base_of(iss: str) -> str:
    """The base URL of an issuer identifier of the form ``<base>/issuers/<id>``; empty for
    any other."""
    base, found, _ = iss.rpartition(ISSUERS_PATH)
    return base if found else ""
