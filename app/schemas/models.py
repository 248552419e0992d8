"""Credential schemas: the credential types an organization asks for or issues."""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models_base import IdMixin, TimestampMixin
from app.oid4vp.formats import JWT_VC_JSON, MSO_MDOC, SD_JWT_VC, CredentialType

FORMAT_LABELS = {
    SD_JWT_VC: "SD-JWT VC",
    MSO_MDOC: "ISO mdoc",
    JWT_VC_JSON: "W3C VC-JWT",
}


class Schema(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "schemas"

    # None for the public schemas that ship with the service.
    organization_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # The credential format wallets present it in, and the type identifier of that format:
    # ``vct`` for dc+sd-jwt ("" otherwise), ``doctype`` and ``namespace`` for mso_mdoc, the VC
    # ``types`` for jwt_vc_json.
    format: Mapped[str] = mapped_column(String(20), default=SD_JWT_VC)
    vct: Mapped[str] = mapped_column(String(500), default="")
    doctype: Mapped[str | None] = mapped_column(String(200))
    namespace: Mapped[str | None] = mapped_column(String(200))
    types: Mapped[list[str] | None] = mapped_column(JSON)
    public: Mapped[bool] = mapped_column(default=False)
    premium_plus: Mapped[bool] = mapped_column(default=False)
    published: Mapped[bool] = mapped_column(default=False)
    # [{"name", "description", "type", "namespace"?}]; names may be dotted paths into nested
    # claims; an mdoc attribute outside the schema's namespace names its own.
    attributes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # How long a credential issued with this schema stays valid (its ``exp``); None: no ``exp``.
    validity_days: Mapped[int | None]
    # In the authorization code flow, the person also types a one-time code mailed to the
    # recipient before the wallet gets its authorization code.
    authorization_code_by_mail: Mapped[bool] = mapped_column(default=False)
    # OpenID4VCI 1.0 Appendix D: the key proof must come with a wallet provider's key
    # attestation (HAIP 1.0 §4.5).
    key_attestations_required: Mapped[bool] = mapped_column(default=False)
    # How wallets show the credential (SD-JWT VC Type Metadata ``display.rendering.simple``,
    # OpenID4VCI 1.0 Appendix B.2): RGB colours "#RRGGBB" and an https logo; None: not said.
    background_color: Mapped[str | None] = mapped_column(String(7))
    text_color: Mapped[str | None] = mapped_column(String(7))
    logo_uri: Mapped[str | None] = mapped_column(String(2000))
    logo_alt_text: Mapped[str | None] = mapped_column(String(200))

    def credential_type(self) -> CredentialType:
        """What a verification of this schema asks wallets for."""
        return CredentialType(
            format=self.format or SD_JWT_VC,
            vct=self.vct,
            doctype=self.doctype or "",
            namespace=self.namespace or "",
            types=tuple(self.types or ()),
            element_namespaces=tuple(
                (a["name"], a["namespace"])
                for a in self.attributes
                if a.get("namespace") and a["namespace"] != self.namespace
            ),
        )

    @property
    def format_label(self) -> str:
        """The format as staff and people read it."""
        return FORMAT_LABELS.get(self.format, self.format)

    @property
    def type_identifier(self) -> str:
        """The type within the format: the vct, the doctype, or the VC types."""
        return self.credential_type().identifier

    @property
    def document_name(self) -> str:
        """What the person is asked to present, from the schema's name: a note of the format
        at its end ("Mobile driving licence (mdoc)") is for staff, not for the person."""
        return re.sub(r"\s*\((mdoc|SD-JWT VC|W3C VC(-JWT)?)\)$", "", self.name).strip() or self.name

    def attribute_names(self) -> list[str]:
        return [a["name"] for a in self.attributes]

    def display_name(self, name: str, language: str | None = None) -> str | None:
        """What people read for the attribute ``name``: its description in ``language``
        where staff wrote one, else its description (``Date of birth`` for ``birthdate``);
        None when the schema gives neither."""
        for attribute in self.attributes:
            if attribute.get("name") != name:
                continue
            translated = (attribute.get("description_translations") or {}).get(language or "")
            if isinstance(translated, str) and translated.strip():
                return translated.strip()
            if (attribute.get("description") or "").strip():
                return str(attribute["description"]).strip()
        return None

    def shown_to_person(self, name: str, language: str | None = None) -> str:
        """The display name, else the attribute's name in words (``member_number`` reads
        "member number", ``address.country`` "address: country"), never its raw key."""
        return self.display_name(name, language) or name.replace("_", " ").replace(".", ": ")

    def labelled(self, name: str) -> str:
        """The display name with the key beside it, for staff who also write the key in code."""
        shown = self.display_name(name)
        return f"{shown} ({name})" if shown else name
