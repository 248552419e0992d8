"""The documents a wallet or verifier fetches to talk to an issuer: pure builders.

- Credential Issuer Metadata (OpenID4VCI 1.0 §12.2), at the path-inserted
  ``/.well-known/openid-credential-issuer``;
- OAuth 2.0 Authorization Server Metadata (RFC 8414, OpenID4VCI 1.0 §12.3) for the
  authorization code and pre-authorized code grants: the issuer is its own authorization
  server;
- SD-JWT VC Issuer Metadata (draft-ietf-oauth-sd-jwt-vc §4) with the JWKS verifiers use;
- the Credential Offer (OpenID4VCI 1.0 §4.1.1).

Endpoint paths are relative to the issuer identifier, so one place decides them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from app.oid4vci.attestation import ATTESTATION_SIGNING_ALGS, POP_SIGNING_ALGS
from app.oid4vci.credential import SD_JWT_VC_TYP
from app.oid4vci.dpop import DPOP_SIGNING_ALGS
from app.oid4vci.proof import PROOF_SIGNING_ALGS

PRE_AUTHORIZED_GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"  # §3.5
AUTHORIZATION_CODE_GRANT = "authorization_code"  # §3.4, RFC 6749 §4.1
ATTEST_JWT_CLIENT_AUTH = "attest_jwt_client_auth"  # Attestation-Based Client Authentication
AUTHORIZATION_DETAILS_TYPE = "openid_credential"  # §5.1.1
CREDENTIAL_PATH = "/credential"
NONCE_PATH = "/nonce"
TOKEN_PATH = "/token"
PAR_PATH = "/par"
AUTHORIZE_PATH = "/authorize"
CREDENTIAL_SIGNING_ALGS = ("ES256",)
MSO_MDOC = "mso_mdoc"
JWT_VC_JSON = "jwt_vc_json"
# OpenID4VCI 1.0 Appendix A.2.2: an mso_mdoc configuration names its algorithms as COSE
# algorithm identifiers (RFC 9053: -7 is ES256).
COSE_SIGNING_ALGS = (-7,)
# The most proofs one Credential Request may carry unless the issuer says otherwise (§12.2.4
# ``batch_size``, at least 2).
DEFAULT_BATCH_SIZE = 10


class ClaimMetadata(NamedTuple):
    """One claim of a credential: its name in the credential, its label, its value type."""

    name: str
    display_name: str
    value_type: str = "string"
    namespace: str | None = None  # an mdoc element's namespace


@dataclass(frozen=True)
class CredentialConfiguration:
    """One credential an issuer offers (one per published schema)."""

    id: str
    vct: str
    display_name: str
    claims: Sequence[ClaimMetadata | tuple[str, str, str]] = field(default_factory=tuple)
    description: str | None = None
    # Appendix D: key proofs must come with a wallet provider's key attestation.
    key_attestations_required: bool = False
    format: str = SD_JWT_VC_TYP
    doctype: str = ""  # mso_mdoc
    types: Sequence[str] = ()  # jwt_vc_json: the VC type list
    # Appendix B.2 display members beyond the name: background_color, text_color and
    # logo {uri, alt_text}, as the schema gives them.
    rendering: dict[str, Any] = field(default_factory=dict)
    locale: str | None = None


@dataclass(frozen=True)
class IssuerDisplay:
    """§12.2.4 ``display`` of the issuer: who wallets say issued the credential."""

    name: str
    logo_uri: str | None = None
    locale: str | None = None


def _endpoint(issuer: str, path: str) -> str:
    return issuer.rstrip("/") + path


def credential_endpoint(issuer: str) -> str:
    return _endpoint(issuer, CREDENTIAL_PATH)


def nonce_endpoint(issuer: str) -> str:
    return _endpoint(issuer, NONCE_PATH)


def token_endpoint(issuer: str) -> str:
    return _endpoint(issuer, TOKEN_PATH)


def par_endpoint(issuer: str) -> str:
    return _endpoint(issuer, PAR_PATH)


def authorization_endpoint(issuer: str) -> str:
    return _endpoint(issuer, AUTHORIZE_PATH)


def scope_of(configuration_id: str) -> str:
    """The OAuth scope that asks for one credential configuration (§5.1.2): its ID, which is
    unique within the issuer and holds no character a scope token may not (RFC 6749 §3.3)."""
    return configuration_id


def credential_issuer_metadata(
    issuer: str,
    configurations: Iterable[CredentialConfiguration],
    display: IssuerDisplay | str,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> dict[str, Any]:
    """OpenID4VCI 1.0 §12.2.4. ``authorization_servers`` is omitted: the issuer acts as its
    own authorization server (§12.2.4, "If this parameter is omitted..."). ``batch_size``
    is the most proofs (so credentials) one Credential Request may carry."""
    if batch_size < 2:
        raise ValueError("batch_size is at least 2 (OpenID4VCI 1.0 §12.2.4)")
    if isinstance(display, str):
        display = IssuerDisplay(display)
    shown: dict[str, Any] = {"name": display.name}
    if display.locale:
        shown["locale"] = display.locale
    if display.logo_uri:
        shown["logo"] = {"uri": display.logo_uri, "alt_text": display.name}
    return {
        "credential_issuer": issuer,
        "credential_endpoint": credential_endpoint(issuer),
        "nonce_endpoint": nonce_endpoint(issuer),
        "batch_credential_issuance": {"batch_size": batch_size},
        "display": [shown],
        "credential_configurations_supported": {
            configuration.id: _configuration(configuration) for configuration in configurations
        },
    }


def _configuration(configuration: CredentialConfiguration) -> dict[str, Any]:
    """§12.2.4 ``credential_configurations_supported`` entry in the configuration's format
    (Appendix A: ``vct`` for SD-JWT VC, ``doctype`` for mdoc, ``credential_definition`` for
    VC-JWT) and 1.0's ``credential_metadata`` for display and claims; its ``scope`` names it
    in an Authorization Request (§5.1.2)."""
    display: dict[str, Any] = {"name": configuration.display_name}
    if configuration.locale:
        display["locale"] = configuration.locale
    if configuration.description:
        display["description"] = configuration.description
    display.update(configuration.rendering)
    claims = [ClaimMetadata(*claim) for claim in configuration.claims]
    entry: dict[str, Any] = {"format": configuration.format, "scope": scope_of(configuration.id)}
    if configuration.format == MSO_MDOC:
        # Appendix A.2.2: the doctype, COSE algorithms, the device key as a COSE_Key.
        entry["doctype"] = configuration.doctype
        entry["cryptographic_binding_methods_supported"] = ["cose_key"]
        entry["credential_signing_alg_values_supported"] = list(COSE_SIGNING_ALGS)
    elif configuration.format == JWT_VC_JSON:
        # Appendix A.1.1.2: the credential_definition with the VC types; the holder is a DID.
        entry["credential_definition"] = {"type": list(configuration.types)}
        entry["cryptographic_binding_methods_supported"] = ["did:jwk"]
        entry["credential_signing_alg_values_supported"] = list(CREDENTIAL_SIGNING_ALGS)
    else:
        entry["vct"] = configuration.vct
        entry["cryptographic_binding_methods_supported"] = ["jwk"]
        entry["credential_signing_alg_values_supported"] = list(CREDENTIAL_SIGNING_ALGS)
    entry["proof_types_supported"] = _proof_types(configuration)
    entry["credential_metadata"] = {
        "display": [display],
        "claims": [_claim(claim, configuration.format, configuration.locale) for claim in claims],
    }
    return entry


def _proof_types(configuration: CredentialConfiguration) -> dict[str, Any]:
    """§12.2.4 ``proof_types_supported``. When key attestations are required, each proof type
    says so with ``key_attestations_required`` (an empty object: no particular key storage
    or user authentication level is asked, Appendix D.2), and the ``attestation`` proof type
    (Appendix F.3, HAIP 1.0 §4.5) is offered beside ``jwt``."""
    jwt: dict[str, Any] = {"proof_signing_alg_values_supported": list(PROOF_SIGNING_ALGS)}
    if not configuration.key_attestations_required:
        return {"jwt": jwt}
    return {
        "jwt": {**jwt, "key_attestations_required": {}},
        "attestation": {
            "proof_signing_alg_values_supported": list(ATTESTATION_SIGNING_ALGS),
            "key_attestations_required": {},
        },
    }


def _claim(
    claim: ClaimMetadata, credential_format: str = SD_JWT_VC_TYP, locale: str | None = None
) -> dict[str, Any]:
    """Appendix B.2 claims description: a ``path`` to the claim and its display name. A
    dotted attribute name is a path into nested objects, as the JSON credentials nest it; an
    mdoc element's path is its namespace and its identifier (B.2, A.2.2)."""
    if credential_format == MSO_MDOC:
        path = [claim.namespace or "", claim.name]
    elif credential_format == JWT_VC_JSON:
        path = ["credentialSubject", *claim.name.split(".")]
    else:
        path = claim.name.split(".")
    display: dict[str, Any] = {"name": claim.display_name}
    if locale:
        display["locale"] = locale
    return {"path": path, "display": [display]}


def authorization_server_metadata(
    issuer: str, scopes: Sequence[str] = (), auth_methods: Sequence[str] = ("none",)
) -> dict[str, Any]:
    """RFC 8414 §2 for both grants. The authorization code grant only through pushed requests
    (RFC 9126 §5), with PKCE S256 (RFC 7636, HAIP 1.0 §4.1), ``iss`` in the response (RFC 9207)
    and DPoP (RFC 9449 §5.1); public clients (``none``) and/or wallet attestations
    (``attest_jwt_client_auth``, as ``auth_methods`` says) and, for the pre-authorized code,
    no client at all (OpenID4VCI 1.0 §12.3)."""
    attested = ATTEST_JWT_CLIENT_AUTH in auth_methods
    return {
        "issuer": issuer,
        "authorization_endpoint": authorization_endpoint(issuer),
        "token_endpoint": token_endpoint(issuer),
        "pushed_authorization_request_endpoint": par_endpoint(issuer),
        "require_pushed_authorization_requests": True,
        "grant_types_supported": [AUTHORIZATION_CODE_GRANT, PRE_AUTHORIZED_GRANT],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "authorization_details_types_supported": [AUTHORIZATION_DETAILS_TYPE],
        "scopes_supported": list(scopes),
        "dpop_signing_alg_values_supported": list(DPOP_SIGNING_ALGS),
        "token_endpoint_auth_methods_supported": list(auth_methods),
        **(
            {
                "client_attestation_signing_alg_values_supported": list(ATTESTATION_SIGNING_ALGS),
                "client_attestation_pop_signing_alg_values_supported": list(POP_SIGNING_ALGS),
            }
            if attested
            else {}
        ),
        "pre-authorized_grant_anonymous_access_supported": True,
    }


def jwt_vc_issuer_metadata(issuer: str, jwks: list[dict[str, Any]]) -> dict[str, Any]:
    """draft-ietf-oauth-sd-jwt-vc §4.2: ``issuer`` equal to the credentials' ``iss`` and the
    keys inline (``jwks``), so a verifier needs one fetch."""
    return {"issuer": issuer, "jwks": {"keys": list(jwks)}}


def credential_offer(
    issuer: str,
    configuration_ids: Sequence[str],
    pre_authorized_code: str | None,
    tx_code_length: int | None,
    issuer_state: str | None = None,
) -> dict[str, Any]:
    """§4.1.1 Credential Offer with the pre-authorized code grant (unless its code is None)
    and, given an ``issuer_state``, the authorization code grant (the wallet picks one);
    ``tx_code`` asks the wallet for a numeric code of that length, sent to the person another
    way."""
    grants: dict[str, Any] = {}
    if issuer_state is not None:
        grants[AUTHORIZATION_CODE_GRANT] = {"issuer_state": issuer_state}
    if pre_authorized_code is not None:
        grant: dict[str, Any] = {"pre-authorized_code": pre_authorized_code}
        if tx_code_length is not None:
            grant["tx_code"] = {
                "input_mode": "numeric",
                "length": tx_code_length,
                "description": "Enter the code you were given with this offer",
            }
        grants[PRE_AUTHORIZED_GRANT] = grant
    return {
        "credential_issuer": issuer,
        "credential_configuration_ids": list(configuration_ids),
        "grants": grants,
    }
