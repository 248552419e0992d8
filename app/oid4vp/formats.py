"""The credential formats a verification can ask for, and how each one is asked for.

OpenID4VP 1.0 Appendix B names a format per credential family and the DCQL ``meta`` and
claims paths that select one: an SD-JWT VC by its ``vct`` (B.3), an ISO mdoc by its doctype
with claims addressed as ``[namespace, element]`` (B.2), a W3C VC signed as a JWT by its
``type`` list with claims under ``credentialSubject`` (B.1). Everything a format changes about
a request lives here, so the request, the wallet-metadata check and the decision never
disagree about which format is meant. No database here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SD_JWT_VC = "dc+sd-jwt"
MSO_MDOC = "mso_mdoc"
JWT_VC_JSON = "jwt_vc_json"
FORMATS = (SD_JWT_VC, MSO_MDOC, JWT_VC_JSON)
# An mdoc answered by a zero-knowledge proof (Longfellow): no OpenID4VP text defines it yet, so
# the query is Google's (``google/longfellow-zk`` docs "Using ZK in Identity Protocols"): an
# ``mso_mdoc`` query under this format with ``meta.zk_system_type``, the circuits offered.
MSO_MDOC_ZK = "mso_mdoc_zk"
# The circuits check ES256 signatures only (issuer and device keys on P-256).
ZK_COSE_ALGS = (-7, -9)

# JOSE algorithms for the JWT formats; asymmetric only.
JOSE_ALGS = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256")
# COSE algorithm identifiers an mdoc may be signed with: ES256 (-7, or -9 as RFC 9864's
# fully-specified ESP256, which HAIP 1.0 names beside it), ES384, ES512 (RFC 9053).
COSE_ALGS = (-7, -9, -35, -36)


@dataclass(frozen=True)
class CredentialType:
    """What a verification asks for: a format and the identifier of the type within it.

    ``vct`` for ``dc+sd-jwt``; ``doctype`` and ``namespace`` for ``mso_mdoc`` (an attribute
    outside the schema's namespace names its own, kept in ``element_namespaces``); ``types``
    for ``jwt_vc_json`` (the VC's ``type`` list must contain them all).
    """

    format: str = SD_JWT_VC
    vct: str = ""
    doctype: str = ""
    namespace: str = ""
    types: tuple[str, ...] = ()
    element_namespaces: tuple[tuple[str, str], ...] = ()
    # An mso_mdoc type asked as a zero-knowledge proof (``mso_mdoc_zk``), offering these
    # ``zk_system_type`` entries (``app.zk.circuits``).
    zk_system_types: tuple[dict[str, Any], ...] = ()

    @property
    def zk(self) -> bool:
        return self.format == MSO_MDOC and bool(self.zk_system_types)

    @property
    def query_format(self) -> str:
        """The DCQL ``format`` of the query: ``mso_mdoc_zk`` for a proof, else the format."""
        return MSO_MDOC_ZK if self.zk else self.format

    @property
    def identifier(self) -> str:
        """The type as messages name it: the vct, the doctype, or the VC types."""
        if self.format == MSO_MDOC:
            return self.doctype
        if self.format == JWT_VC_JSON:
            return ", ".join(self.types)
        return self.vct

    def namespace_of(self, name: str) -> str:
        """The mdoc namespace an attribute's element lives in."""
        return dict(self.element_namespaces).get(name, self.namespace)

    def claim_path(self, name: str) -> list[str]:
        """The DCQL claims path pointer of a schema attribute (``address.country`` and the like).

        mdoc elements are flat and named by namespace and identifier (B.2.1); a VC's claims
        sit in its ``credentialSubject`` (B.1); SD-JWT VC claims are the JSON paths themselves.
        """
        if self.format == MSO_MDOC:
            return [self.namespace_of(name), name]
        if self.format == JWT_VC_JSON:
            return ["credentialSubject", *name.split(".")]
        return name.split(".")

    def credential_query(self, query_id: str, claims: Sequence[str]) -> dict[str, Any]:
        """One DCQL Credential Query (§6.1) for this type, disclosing exactly ``claims``."""
        query: dict[str, Any] = {"id": query_id, "format": self.query_format, "meta": self.meta()}
        if claims:
            query["claims"] = [self._claim_query(name) for name in claims]
        return query

    def meta(self) -> dict[str, Any]:
        if self.zk:
            return {
                "doctype_value": self.doctype,
                "zk_system_type": [dict(entry) for entry in self.zk_system_types],
            }
        if self.format == MSO_MDOC:
            return {"doctype_value": self.doctype}
        if self.format == JWT_VC_JSON:
            # B.1.1: a list of type lists, any of which the credential's types must contain.
            return {"type_values": [list(self.types)]}
        return {"vct_values": [self.vct]}

    def _claim_query(self, name: str) -> dict[str, Any]:
        claim: dict[str, Any] = {"path": self.claim_path(name)}
        if self.format == MSO_MDOC:
            # B.2.4: the verifier keeps nothing beyond the decision's requested claims.
            claim["intent_to_retain"] = False
        return claim

    def formats_supported(
        self, jose_algs: Sequence[str] = JOSE_ALGS, kb_jwt_algs: Sequence[str] = JOSE_ALGS
    ) -> dict[str, Any]:
        """``client_metadata.vp_formats_supported`` (§11.1) for the format asked for."""
        if self.zk:
            return {
                MSO_MDOC_ZK: {
                    "issuerauth_alg_values": list(ZK_COSE_ALGS),
                    "deviceauth_alg_values": list(ZK_COSE_ALGS),
                }
            }
        if self.format == MSO_MDOC:
            return {
                MSO_MDOC: {
                    "issuerauth_alg_values": list(COSE_ALGS),
                    "deviceauth_alg_values": list(COSE_ALGS),
                }
            }
        if self.format == JWT_VC_JSON:
            return {JWT_VC_JSON: {"alg_values": list(jose_algs)}}
        return {
            SD_JWT_VC: {
                "sd-jwt_alg_values": list(jose_algs),
                "kb-jwt_alg_values": list(kb_jwt_algs),
            }
        }
