"""Identifiers and addresses as every surface reads them from a request."""

from __future__ import annotations

import uuid

from flask import current_app

from app.errors import NotFound


def parse_id(value: str | None) -> uuid.UUID:
    """A path or body identifier; one that is not a UUID cannot exist (400 NOT_FOUND)."""
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        raise NotFound() from None


def base_url() -> str:
    """Where this deployment is reached: ``PUBLIC_URL`` (set in every configuration, see
    ``app.config.settle_public_url``), never the request's Host header, which whoever sends
    the request chooses: issuers, audiences, status lists and certificates follow this."""
    return current_app.config["PUBLIC_URL"]
