"""SD-JWT VC Type Metadata (draft-ietf-oauth-sd-jwt-vc §6) of a schema: what a wallet fetches
from the credential's ``vct`` URL to show it (name, description, colours, logo, claim labels).

A schema made here gets ``vct`` = ``<PUBLIC_URL>/types/<schema id>``, where this document is
served; the credential carries ``vct#integrity`` (§6.5, W3C SRI: ``sha256-`` and the base64
of the SHA-256 of the exact bytes served), so a wallet can tell the document it fetched is the
one the issuer meant. The document is always written the same way (compact JSON, members in a
fixed order), so the same schema always gives the same bytes and the same hash.

One locale (``DISPLAY_LOCALE``): a schema holds its texts in one language.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from app.oid4vci.jose import compact_json
from app.oid4vp.formats import SD_JWT_VC
from app.schemas.models import Schema

TYPES_PATH = "/types/"
DISPLAY_LOCALE = "en"
# SD-JWT VC §6.4.3 "sd": every claim this deployment issues is selectively disclosable.
ALWAYS_DISCLOSABLE = "always"


def type_url(base_url: str, name: str) -> str:
    """Where the type metadata named ``name`` (a schema's ID by default) is served."""
    return f"{base_url}{TYPES_PATH}{name}"


def served_here(schema: Schema, base_url: str) -> bool:
    """Whether the schema's ``vct`` is an address of this deployment's type metadata."""
    return (
        schema.format == SD_JWT_VC
        and schema.vct.startswith(base_url + TYPES_PATH)
        and len(schema.vct) > len(base_url + TYPES_PATH)
    )


def rendering(schema: Schema) -> dict[str, Any]:
    """§6.3.1 ``rendering.simple``: colours and logo, only what the schema says."""
    simple: dict[str, Any] = {}
    if schema.logo_uri:
        logo: dict[str, Any] = {"uri": schema.logo_uri}
        if schema.logo_alt_text:
            logo["alt_text"] = schema.logo_alt_text
        simple["logo"] = logo
    if schema.background_color:
        simple["background_color"] = schema.background_color
    if schema.text_color:
        simple["text_color"] = schema.text_color
    return simple


def document(schema: Schema) -> dict[str, Any]:
    """§6.2: ``vct``, ``name``, ``description``, ``display`` (§6.3) and ``claims`` (§6.4)."""
    display: dict[str, Any] = {"locale": DISPLAY_LOCALE, "name": schema.document_name}
    if schema.description:
        display["description"] = schema.description
    simple = rendering(schema)
    if simple:
        display["rendering"] = {"simple": simple}
    metadata: dict[str, Any] = {"vct": schema.vct, "name": schema.document_name}
    if schema.description:
        metadata["description"] = schema.description
    metadata["display"] = [display]
    metadata["claims"] = [_claim(attribute) for attribute in schema.attributes]
    return metadata


def _claim(attribute: dict[str, Any]) -> dict[str, Any]:
    """§6.4.1: the claim's path (a dotted name is a path into nested objects, as the
    credential nests it), its label (the attribute's description, else its name)."""
    label = (attribute.get("description") or "").strip() or attribute["name"]
    return {
        "path": attribute["name"].split("."),
        "display": [{"locale": DISPLAY_LOCALE, "label": label}],
        "sd": ALWAYS_DISCLOSABLE,
    }


def document_bytes(schema: Schema) -> bytes:
    return compact_json(document(schema))


def integrity(raw: bytes) -> str:
    """W3C Subresource Integrity metadata of ``raw``: ``sha256-<base64>`` (SD-JWT VC §6.5)."""
    return "sha256-" + base64.b64encode(hashlib.sha256(raw).digest()).decode("ascii")
