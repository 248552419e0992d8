"""Reference pages rendered at build time from the service's own code.

``{verity-endpoints}`` and ``{verity-schemas}`` render the OpenAPI document the service serves at
``/openapi.json`` (its operations, by who calls them, and its bodies), ``{verity-settings}`` the settings table in ``app/settings_reference.py`` and ``{verity-cli}``
the operator commands' click definitions. Each writes Markdown that MyST parses in place, so
the pages are never written twice and cannot fall behind the code.
"""

from __future__ import annotations

import atexit
import inspect
import json
import logging
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import click
from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

PAGE_ERROR = "See error"

# Importing the application (``app.settings_reference`` as much as ``create_app``) imports
# Flask-Migrate, hence alembic, which logs each plugin it sets up at INFO; ``make docs -q``
# prints only the build's own warnings, so alembic speaks from WARNING up from the start.
logging.getLogger("alembic").setLevel(logging.WARNING)


@cache
def _app() -> Any:
    from app import create_app

    # The app logs at INFO when nothing else configured logging; the build's output is for
    # its own warnings.
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    workdir = tempfile.mkdtemp(prefix="verity-docs-")
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    database = Path(workdir) / "docs.sqlite3"
    return create_app(
        {"SQLALCHEMY_DATABASE_URI": f"sqlite:///{database}", "TESTING": True, "REQUEST_LOG": False}
    )


def openapi_document() -> dict[str, Any]:
    """The document ``GET /openapi.json`` answers, asked of the service itself."""
    with _app().test_client() as client:
        return client.get("/openapi.json").get_json()


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _schema_name(schema: dict[str, Any] | None) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        return _schema_link(schema["$ref"])
    if schema.get("type") == "array" and "items" in schema:
        return f"list of {_schema_name(schema['items'])}"
    return f"`{schema.get('type', 'object')}`"


def _schema_link(ref: str) -> str:
    """A link to the schema's own heading on the Schemas page (its GitHub-style anchor)."""
    name = ref.rsplit("/", 1)[-1]
    return f"[`{name}`](schemas.md#{re.sub(r'[^a-z0-9_-]', '', name.lower())})"


def _caller(description: str) -> str:
    """Who calls a tag's operations: the words before its description's colon."""
    return description.partition(":")[0] if ":" in description else "Other"


def endpoints_markdown() -> list[str]:
    """The operations in the document's tag order (who calls: the backend first), under one
    heading per caller, then per tag; the schemas are a page of their own."""
    document = openapi_document()
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            tag = (operation.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((path, method, operation))
    described = {t["name"]: t.get("description", "") for t in document.get("tags", [])}
    order = list(described) + sorted(set(by_tag) - set(described))
    out: list[str] = []
    caller = None
    for tag in order:
        if tag not in by_tag:
            continue
        description = described.get(tag, "")
        if _caller(description) != caller:
            caller = _caller(description)
            out += [f"## {caller}", ""]
        out += [f"### {tag}", ""]
        if description:
            out += [_cell(description.partition(":")[2].strip() or description), ""]
        for path, method, operation in by_tag[tag]:
            auth = ", ".join(next(iter(s)) for s in operation.get("security", [])) or "none"
            out += [f"#### `{method.upper()} {path}`", "", operation.get("summary", ""), ""]
            out += [f"Authentication: {auth}.", ""]
            parameters = operation.get("parameters", [])
            if parameters:
                out += ["| parameter | in | required | description |", "|---|---|---|---|"]
                for p in parameters:
                    out.append(
                        f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} "
                        f"| {_cell(p.get('description', ''))} |"
                    )
                out.append("")
            body = operation.get("requestBody")
            if body:
                schema = body["content"]["application/json"]["schema"]
                out += [f"Request body: {_schema_name(schema)} (JSON).", ""]
            out += ["| status | meaning | body |", "|---|---|---|"]
            for status, response in operation["responses"].items():
                schema = (response.get("content") or {}).get("application/json", {}).get("schema")
                out.append(
                    f"| {status} | {_cell(response.get('description', ''))} "
                    f"| {_schema_name(schema)} |"
                )
            out.append("")
    return out


def schemas_markdown() -> list[str]:
    """Every request and response body of the document, one heading each."""
    document = openapi_document()
    out: list[str] = []
    for name, schema in document["components"]["schemas"].items():
        out += [f"## `{name}`", ""]
        if schema.get("description"):
            out += [_cell(schema["description"]), ""]
        properties = schema.get("properties")
        if not properties:
            out += ["```json", json.dumps(schema, indent=2), "```", ""]
            continue
        required = set(schema.get("required", []))
        out += ["| field | type | required | description |", "|---|---|---|---|"]
        for field, spec in properties.items():
            out.append(
                f"| `{field}` | {_type(spec)} | {'yes' if field in required else 'no'} "
                f"| {_cell(spec.get('description', ''))} |"
            )
        out.append("")
    return out


def _type(spec: dict[str, Any]) -> str:
    """A property's type in a few words: ``string``, ``list of Claim``, ``integer or null``."""
    if "$ref" in spec:
        return _schema_link(spec["$ref"])
    if "enum" in spec:
        return " \\| ".join(f"`{value}`" for value in spec["enum"])
    if "const" in spec:
        return f"`{spec['const']}`"
    for key in ("anyOf", "oneOf", "allOf"):
        if key in spec:
            return " or ".join(_type(option) for option in spec[key])
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if isinstance(kind, list):
        return " or ".join(f"`{k}`" for k in kind)
    if spec.get("format"):
        return f"`{kind}` ({spec['format']})"
    return f"`{kind}`"


def settings_markdown() -> list[str]:
    from app.settings_reference import SETTINGS

    out: list[str] = []
    for setting in SETTINGS:
        names = ", ".join(f"`{name}`" for name in setting.names)
        meaning = setting.meaning[0].upper() + setting.meaning[1:]
        out += [f"## {names}", "", f"Default: {setting.default}.", "", f"{meaning}.", ""]
    return out


# Flask's and Flask-Migrate's own commands are documented by them; ``db`` is named only.
FOREIGN_COMMANDS = {"run", "shell", "routes"}


def cli_markdown() -> list[str]:
    app = _app()
    context = click.Context(app.cli, info_name="flask --app wsgi", obj=None)
    out: list[str] = []
    for name in sorted(app.cli.list_commands(context)):
        if name in FOREIGN_COMMANDS:
            continue
        command = app.cli.get_command(context, name)
        if name == "db":
            out += [
                "### `db`",
                "",
                "Flask-Migrate's commands; `flask --app wsgi db upgrade` "
                "applies the migrations (`make migrate`).",
                "",
            ]
            continue
        out += _command_markdown(command, f"flask --app wsgi {name}", context)
    return out


def _command_markdown(command: click.Command, line: str, parent: click.Context) -> list[str]:
    context = click.Context(command, info_name=line.rsplit(" ", 1)[-1], parent=parent)
    level = "###" if line.count(" ") == 3 else "####"
    out = [f"{level} `{line.removeprefix('flask --app wsgi ')}`", ""]
    if command.help:
        out += [inspect.cleandoc(command.help), ""]
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(context)):
            out += _command_markdown(command.get_command(context, name), f"{line} {name}", context)
        return out
    usage = " ".join(command.collect_usage_pieces(context))
    out += ["```text", f"{line} {usage}".rstrip(), "```", ""]
    options = [p for p in command.params if isinstance(p, click.Option)]
    if options:
        out += ["| option | default | help |", "|---|---|---|"]
        for option in options:
            flags = ", ".join(f"`{o}`" for o in option.opts)
            default = "" if option.default is None else f"`{option.default}`"
            required = " (required)" if option.required else ""
            out.append(f"| {flags} | {default} | {_cell(option.help or '')}{required} |")
        out.append("")
    return out


class _Generated(Directive):
    has_content = False
    render: Any = None

    def run(self) -> list[Any]:
        lines = type(self).render()
        holder = nodes.section()
        holder.document = self.state.document
        self.state.nested_parse(StringList(lines), 0, holder, match_titles=True)
        return list(holder.children)


class Endpoints(_Generated):
    render = staticmethod(endpoints_markdown)


class Schemas(_Generated):
    render = staticmethod(schemas_markdown)


class Settings(_Generated):
    render = staticmethod(settings_markdown)


class Cli(_Generated):
    render = staticmethod(cli_markdown)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("verity-endpoints", Endpoints)
    app.add_directive("verity-schemas", Schemas)
    app.add_directive("verity-settings", Settings)
    app.add_directive("verity-cli", Cli)
    return {"parallel_read_safe": True, "version": "1"}
