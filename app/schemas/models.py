"""Credential schemas: the credential types an organization asks for or issues."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models_base import IdMixin, TimestampMixin
from app.oid4vp.formats import CredentialType


class Schema(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "schemas"

    # None for the public schemas that ship with the service.
    organization_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    vct: Mapped[str] = mapped_column(String(500))
    public: Mapped[bool] = mapped_column(default=False)
    premium_plus: Mapped[bool] = mapped_column(default=False)
    published: Mapped[bool] = mapped_column(default=False)
    # [{"name", "description", "type"}]; names may be dotted paths into nested claims.
    attributes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # How long a credential issued with this schema stays valid (its ``exp``); None: no ``exp``.
    validity_days: Mapped[int | None]

    def credential_type(self) -> CredentialType:
        """What a verification of this schema asks wallets for."""
        return CredentialType(vct=self.vct)

    def attribute_names(self) -> list[str]:
        return [a["name"] for a in self.attributes]

    def display_name(self, name: str) -> str | None:
        """What people read for the attribute ``name``: its description, where the schema
        gives one (``Date of birth`` for ``birthdate``); None otherwise."""
        for attribute in self.attributes:
            if attribute.get("name") == name and (attribute.get("description") or "").strip():
                return str(attribute["description"]).strip()
        return None

    def labelled(self, name: str) -> str:
        """The display name with the key beside it, for staff who also write the key in code."""
        shown = self.display_name(name)
        return f"{shown} ({name})" if shown else name
