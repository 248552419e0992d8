"""The status of a credential of this deployment's own issuers, read without a fetch.

A credential whose issuer was resolved as one of this deployment's (``app.trust.own``) and
whose ``status.status_list.uri`` lies under this deployment's issuers path is answered from
the database as it is now, so a revocation counts at the very next check instead of after the
list's ``ttl``. The list must be one of that same issuer's: a credential of one organization
pointing at another's list is refused, as a fetched list signed by another issuer would be
(Token Status List 8.3 step 3). A list anywhere else is left to ``check_status``.

A credential issued over DIDComm names its organization's did:prism as issuer and a
StatusList2021 list ``<issuer>/credential-status/<n>`` (``own_prism_entry``): answered the
same way, when the DID is the very one that organization issues under.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from app.statuslist.errors import StatusError
from app.trust.did_prism import short_form
from app.trust.errors import TrustError
from app.trust.issuers import ResolvedIssuer
from app.trust.own import CREDENTIAL_STATUS_PATH, STATUS_LISTS_PATH, OwnIssuers

DER = Encoding.DER

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


def own_prism_entry(
    uri: str, idx: int, purpose: str, issuer: ResolvedIssuer, own: OwnIssuers
) -> int | None:
    """The status at ``idx`` of this deployment's StatusList2021 list ``uri`` for a
    credential whose issuer is a did:prism; None when either is not this deployment's (a
    did:prism of elsewhere, a list elsewhere). The list must be of the organization whose
    did:prism issued the credential, like a fetched list must be signed by it."""
    if own.read_prism_did is None or issuer.method != "did:prism" or not own.names(uri):
        return None
    iss, found, _ = uri.rpartition(CREDENTIAL_STATUS_PATH)
    if not found:
        return None
    try:
        organization = own.organization(iss)
    except TrustError as exc:
        raise StatusError(exc.reason) from exc
    did = own.read_prism_did(organization)
    if did is None or short_form(did) != short_form(issuer.identifier):
        raise StatusError(f"Status list {uri} is not a list of the credential's issuer")
    if purpose != "revocation":
        raise StatusError(f"Status list {uri} is a revocation list, not a {purpose} list")
    number = own.list_number(iss, uri, CREDENTIAL_STATUS_PATH)
    status = None if number is None else own.read_status(organization, number, idx)
    if status is None:
        raise StatusError(f"Status list {uri} does not exist or has no entry {idx}")
    return status


def own_mdoc_entry(uri: str, idx: int, issuer: ResolvedIssuer, own: OwnIssuers) -> int | None:
    """The status at ``idx`` of this deployment's list ``uri`` for an mdoc, whose issuer is a
    certificate chain rather than an identifier: the list is the signer's organization's only
    if that organization's document signer is the very certificate that signed the mdoc (as a
    fetched CWT list must be signed by the credential's own signer, §11.3). The signer is
    compared by its key, which only that organization holds: an IACA of its own certifies
    the same key anew, and mdocs signed under the earlier certificate keep their status. None
    when ``uri`` is not this deployment's."""
    if own.read_mdoc_signer is None or not own.names(uri) or not issuer.certificates:
        return None
    iss = uri.rpartition(STATUS_LISTS_PATH)[0]
    try:
        organization = own.organization(iss)
    except TrustError as exc:
        raise StatusError(exc.reason) from exc
    number = own.list_number(iss, uri)
    signer = own.read_mdoc_signer(organization)
    if number is None or signer is None or not _same_key(signer, issuer.certificates[0]):
        raise StatusError(f"Status list {uri} is not a list of the credential's issuer")
    status = own.read_status(organization, number, idx)
    if status is None:
        raise StatusError(f"Status list {uri} does not exist or has no entry {idx}")
    return status


def _same_key(signer_der: bytes, certificate: x509.Certificate) -> bool:
    """Whether the organization's document signer certificate and ``certificate`` certify
    the same public key."""
    signer = x509.load_der_x509_certificate(signer_der)
    return _spki(signer) == _spki(certificate)


def _spki(certificate: x509.Certificate) -> bytes:
    return certificate.public_key().public_bytes(DER, PublicFormat.SubjectPublicKeyInfo)
