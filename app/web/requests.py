"""Identifiers and addresses as every surface reads them from a request."""

from __future__ import annotations

import uuid

from flask import current_app, request

from app.errors import NotFound


def parse_id(value: str | None) -> uuid.UUID:
    """A path or body identifier; one that is not a UUID cannot exist (400 NOT_FOUND)."""
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        raise NotFound() from None


def base_url() -> str:
    """Where this deployment is reached: ``PUBLIC_URL``, else the address the request used."""
    return current_app.config["PUBLIC_URL"] or request.host_url.rstrip("/")
