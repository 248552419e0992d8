"""GET /docs: the interactive API reference, drawn by Swagger UI from /openapi.json.

Swagger UI's files come from the PyPI package ``flask-swagger-ui`` (a runtime dependency, so
``make run`` needs nothing but pip); only its ``dist/`` files are used, served from this
service, because the package's own page starts Swagger UI with an inline script that the
strict Content Security Policy of every page here refuses. The page loads the bundle and one
script of ours under ``/static``; no CDN, no other host.
"""

from __future__ import annotations

from importlib.metadata import version
from importlib.resources import files
from pathlib import Path

from flask import Blueprint, Response, abort, render_template, send_from_directory
from flask.typing import ResponseReturnValue

from app.pages.headers import protect

bp = Blueprint("reference", __name__)

SWAGGER_UI = Path(str(files("flask_swagger_ui") / "dist"))
# The files the page loads, and nothing else of the package (its oauth2-redirect page, say).
ASSETS = frozenset({"swagger-ui.css", "swagger-ui-bundle.js"})
# A new package version changes every asset's address, so browsers may keep them a year.
ASSET_VERSION = version("flask-swagger-ui")
ASSET_MAX_AGE = 365 * 24 * 3600


@bp.get("/docs")
def api_reference() -> ResponseReturnValue:
    """Every operation of /openapi.json, with its parameters, bodies, answers and errors."""
    response = Response(render_template("reference/index.html", asset_version=ASSET_VERSION))
    return protect(response)


@bp.get("/docs/assets/<asset_version>/<name>")
def asset(asset_version: str, name: str) -> ResponseReturnValue:
    """Swagger UI's stylesheet and bundle, under the version that made them."""
    if name not in ASSETS or asset_version != ASSET_VERSION:
        abort(404)
    response = send_from_directory(SWAGGER_UI, name, max_age=ASSET_MAX_AGE)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
