"""Receiving a credential: OpenID4VCI 1.0, pre-authorized code flow, SD-JWT VC (``dc+sd-jwt``).

The steps, in the order §3.5 draws them: the Credential Offer (§4.1, by value or by reference),
the Credential Issuer Metadata (§12.2.2, path-inserted well-known), the Authorization Server
Metadata (RFC 8414 §3), the Token Request with the pre-authorized code (§6.1), a ``c_nonce``
from the Nonce Endpoint (§7), a key proof (Appendix F.1), the Credential Request (§8.2).

Before storing, the holder checks what it got the way a wallet would: the issuer's signature
with a key from its SD-JWT VC Issuer Metadata, ``iss``, ``vct``, that ``cnf.jwk`` is its own
key, and that every disclosure is committed to by a digest.

Left out: the authorization code flow, deferred issuance (§9), batch issuance, proof types
other than ``jwt``, DPoP-bound access tokens, and credential response encryption.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from app.holder import sdjwt
from app.holder.jose import JoseError, public_key_from_jwk, sign_es256, verify_es256
from app.holder.store import Wallet
from app.holder.transport import TIMEOUT, HolderError, Http, check_url

OFFER_SCHEME = "openid-credential-offer"
PRE_AUTHORIZED_GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"
FORMAT = "dc+sd-jwt"
PROOF_TYPE = "openid4vci-proof+jwt"
SD_JWT_VC_TYPES = ("dc+sd-jwt", "vc+sd-jwt")


def well_known(identifier: str, name: str) -> str:
    """RFC 8414 §3 / OpenID4VCI 1.0 §12.2.2: ``/.well-known/<name>`` goes between the host and
    the identifier's path (its trailing slash removed)."""
    parts = urlsplit(identifier)
    return f"{parts.scheme}://{parts.netloc}/.well-known/{name}{parts.path.rstrip('/')}"


@dataclass(frozen=True)
class Offer:
    issuer: str
    configuration_ids: list[str]
    pre_authorized_code: str
    tx_code: dict[str, Any] | None
    authorization_server: str | None


def read_offer(link: str, http: Http) -> Offer:
    """§4.1: ``credential_offer`` by value or ``credential_offer_uri`` by reference (§4.1.3)."""
    query = parse_qs(urlsplit(link).query)
    if "credential_offer_uri" in query:
        document = http.json("GET", query["credential_offer_uri"][0], "credential offer")
    elif "credential_offer" in query:
        try:
            document = json.loads(query["credential_offer"][0])
        except json.JSONDecodeError:
            raise HolderError("credential_offer is not JSON") from None
    else:
        raise HolderError("the link has neither credential_offer nor credential_offer_uri")
    issuer = document.get("credential_issuer")
    ids = document.get("credential_configuration_ids")
    grant = (document.get("grants") or {}).get(PRE_AUTHORIZED_GRANT)
    if not isinstance(issuer, str) or not isinstance(ids, list) or not ids:
        raise HolderError("the credential offer lacks credential_issuer or configuration ids")
    if not isinstance(grant, dict) or not isinstance(grant.get("pre-authorized_code"), str):
        # An issuer may offer only the authorization code flow, as ours does for a schema
        # that mails the recipient a code: holding the link is then not enough.
        raise HolderError(
            "the credential offer has no pre-authorized code grant (only the authorization "
            "code flow, which this holder does not run, can take it)"
        )
    return Offer(
        issuer=issuer,
        configuration_ids=[str(value) for value in ids],
        pre_authorized_code=grant["pre-authorized_code"],
        tx_code=grant.get("tx_code") if isinstance(grant.get("tx_code"), dict) else None,
        authorization_server=grant.get("authorization_server"),
    )


def issuer_metadata(issuer: str, http: Http) -> dict[str, Any]:
    metadata = http.json("GET", well_known(issuer, "openid-credential-issuer"), "issuer metadata")
    # §12.2.3: the metadata must name the identifier it was fetched for.
    if metadata.get("credential_issuer") != issuer:
        raise HolderError("the issuer metadata names another credential_issuer")
    return metadata


def token_endpoint(offer: Offer, metadata: dict[str, Any], http: Http) -> str:
    """The authorization server the grant names, else the first listed, else the issuer
    itself (§12.2.4 ``authorization_servers``)."""
    servers = metadata.get("authorization_servers") or [offer.issuer]
    server = offer.authorization_server or servers[0]
    document = http.json(
        "GET", well_known(server, "oauth-authorization-server"), "authorization server metadata"
    )
    if document.get("issuer") != server:
        raise HolderError("the authorization server metadata names another issuer")
    endpoint = document.get("token_endpoint")
    if not isinstance(endpoint, str):
        raise HolderError("the authorization server metadata has no token_endpoint")
    return endpoint


def request_token(endpoint: str, offer: Offer, tx_code: str | None, http: Http) -> str:
    """§6.1: the pre-authorized code, and the transaction code when the offer asks for one."""
    form = {"grant_type": PRE_AUTHORIZED_GRANT, "pre-authorized_code": offer.pre_authorized_code}
    if offer.tx_code is not None:
        if not tx_code:
            length = offer.tx_code.get("length")
            raise HolderError(
                f"this offer needs a transaction code ({length or 'some'} characters, "
                "sent to you another way): pass --tx-code"
            )
        form["tx_code"] = tx_code
    answer = http.json("POST", endpoint, "token request", data=form)
    if str(answer.get("token_type", "")).lower() != "bearer" or not answer.get("access_token"):
        raise HolderError("the token response has no Bearer access_token")
    return answer["access_token"]


def fresh_nonce(metadata: dict[str, Any], http: Http) -> str | None:
    """§7.2: a POST with no body; no nonce endpoint means the issuer wants no nonce."""
    endpoint = metadata.get("nonce_endpoint")
    if not endpoint:
        return None
    answer = http.json("POST", endpoint, "nonce request")
    if not isinstance(answer.get("c_nonce"), str):
        raise HolderError("the nonce response has no c_nonce")
    return answer["c_nonce"]


def key_proof(wallet: Wallet, issuer: str, nonce: str | None) -> str:
    """Appendix F.1: the wallet's public key in the header, the issuer as audience. No ``iss``:
    the pre-authorized code was used without client authentication."""
    claims: dict[str, Any] = {"aud": issuer, "iat": int(time.time())}
    if nonce is not None:
        claims["nonce"] = nonce
    return sign_es256(wallet.key, {"typ": PROOF_TYPE, "jwk": wallet.jwk}, claims)


def check_configuration(metadata: dict[str, Any], configuration_id: str) -> dict[str, Any]:
    configuration = (metadata.get("credential_configurations_supported") or {}).get(
        configuration_id
    )
    if not isinstance(configuration, dict):
        raise HolderError(f"the issuer does not describe configuration {configuration_id!r}")
    if configuration.get("format") != FORMAT:
        raise HolderError(f"configuration {configuration_id!r} is not {FORMAT}")
    proof = (configuration.get("proof_types_supported") or {}).get("jwt") or {}
    if "ES256" not in proof.get("proof_signing_alg_values_supported", []):
        raise HolderError(f"configuration {configuration_id!r} takes no ES256 jwt proof")
    return configuration


def request_credential(
    metadata: dict[str, Any],
    configuration_id: str,
    access_token: str,
    wallet: Wallet,
    http: Http,
) -> str:
    """§8.2 (1.0 final): ``credential_configuration_id`` and ``proofs.jwt``. One retry with a
    fresh nonce when the issuer answers ``invalid_nonce`` (§8.3.1.2)."""
    issuer = metadata["credential_issuer"]
    for attempt in (1, 2):
        body = {
            "credential_configuration_id": configuration_id,
            "proofs": {"jwt": [key_proof(wallet, issuer, fresh_nonce(metadata, http))]},
        }
        response = http.session.post(
            check_url(metadata.get("credential_endpoint", ""), "credential endpoint"),
            json=body,
            headers={"Authorization": f"Bearer {access_token}"},
            timeout=TIMEOUT,
            allow_redirects=False,
        )
        if response.status_code == 400 and attempt == 1 and _error(response) == "invalid_nonce":
            continue
        break
    if response.status_code == 202 or (response.ok and "transaction_id" in _body(response)):
        raise HolderError("the issuer deferred issuance (§9), which this holder does not do")
    if response.status_code != 200:
        raise HolderError(
            f"credential request answered {response.status_code} ({_error(response)}: "
            f"{_body(response).get('error_description', '')})"
        )
    credentials = _body(response).get("credentials")
    if not isinstance(credentials, list) or len(credentials) != 1:
        raise HolderError("the credential response does not hold exactly one credential")
    credential = credentials[0].get("credential") if isinstance(credentials[0], dict) else None
    if not isinstance(credential, str):
        raise HolderError("the credential response's credential is not a string")
    return credential


def _body(response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _error(response) -> str:
    return str(_body(response).get("error", ""))


def check_credential(
    credential: str, issuer: str, configuration: dict[str, Any], wallet: Wallet, http: Http
) -> sdjwt.SdJwt:
    """What a wallet checks before keeping a credential (SD-JWT VC §3, RFC 9901 §7.1)."""
    try:
        parsed = sdjwt.parse(credential)
    except JoseError as exc:
        raise HolderError(f"the credential cannot be read: {exc}") from None
    if parsed.header.get("typ") not in SD_JWT_VC_TYPES:
        raise HolderError("the credential's typ is not dc+sd-jwt")
    payload = parsed.payload
    if payload.get("iss") != issuer:
        raise HolderError("the credential's iss is not the issuer that offered it")
    if payload.get("vct") != configuration.get("vct"):
        raise HolderError("the credential's vct is not the configuration's")
    if (payload.get("cnf") or {}).get("jwk") != wallet.jwk:
        raise HolderError("the credential is not bound to this wallet's key")
    # RFC 9901 §7.1: each disclosure's digest is in the payload or in another disclosure.
    committed = _digests(payload).union(*(_digests(d.value) for d in parsed.disclosures))
    if any(disclosure.digest not in committed for disclosure in parsed.disclosures):
        raise HolderError("a disclosure of the credential has no digest in it")
    _check_signature(parsed, issuer, http)
    return parsed


def _digests(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        found.update(d for d in value.get("_sd", []) if isinstance(d, str))
        for item in value.values():
            found |= _digests(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("..."), str):
                found.add(item["..."])
            found |= _digests(item)
    return found


def _check_signature(parsed: sdjwt.SdJwt, issuer: str, http: Http) -> None:
    """SD-JWT VC §4: the key named by ``kid`` in the issuer's ``jwt-vc-issuer`` metadata."""
    document = http.json("GET", well_known(issuer, "jwt-vc-issuer"), "SD-JWT VC issuer metadata")
    if document.get("issuer") != issuer:
        raise HolderError("the SD-JWT VC issuer metadata names another issuer")
    keys = (document.get("jwks") or {}).get("keys") or []
    if "jwks_uri" in document and not keys:
        keys = http.json("GET", document["jwks_uri"], "issuer JWKS").get("keys") or []
    kid = parsed.header.get("kid")
    candidates = [key for key in keys if kid is None or key.get("kid") == kid]
    for jwk in candidates:
        try:
            verify_es256(parsed.issuer_jwt, public_key_from_jwk(jwk))
            return
        except JoseError:
            continue
    raise HolderError("the credential's signature does not verify with the issuer's keys")


def receive(
    link: str, wallet: Wallet, *, tx_code: str | None = None, http: Http | None = None
) -> dict[str, Any]:
    """Run the whole flow for every credential the offer names; store them; say what came."""
    http = http or Http()
    offer = read_offer(link, http)
    metadata = issuer_metadata(offer.issuer, http)
    configurations = {cid: check_configuration(metadata, cid) for cid in offer.configuration_ids}
    access_token = request_token(token_endpoint(offer, metadata, http), offer, tx_code, http)
    received = []
    for configuration_id, configuration in configurations.items():
        credential = request_credential(metadata, configuration_id, access_token, wallet, http)
        parsed = check_credential(credential, offer.issuer, configuration, wallet, http)
        entry = wallet.add(
            {
                "format": FORMAT,
                "issuer": offer.issuer,
                "vct": parsed.payload["vct"],
                "configuration_id": configuration_id,
                "credential": credential,
            }
        )
        received.append(
            {
                "id": entry["id"],
                "issuer": offer.issuer,
                "vct": entry["vct"],
                "configuration_id": configuration_id,
                "claims": _shown_claims(parsed),
            }
        )
    return {"received": received, "wallet": str(wallet.path)}


def _shown_claims(parsed: sdjwt.SdJwt) -> dict[str, Any]:
    """The person's claims, without the credential's own bookkeeping."""
    bookkeeping = {"iss", "vct", "iat", "exp", "nbf", "cnf", "status", "vct#integrity"}
    return {name: value for name, value in parsed.claims().items() if name not in bookkeeping}
