"""The hand-written reference tables agree with the code they describe.

The error codes page names every code the service (and the nginx in front of it) can answer,
and nothing else; the endpoint behaviour table names only paths the service serves.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from app.settings_reference import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "reference"
CODE = re.compile(r"^[A-Z][A-Z0-9_]+$")
NGINX_CODE = re.compile(r'\\?"code\\?": \\?"([A-Z][A-Z0-9_]+)\\?"')


def _string(node: ast.AST, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def codes_the_code_answers() -> dict[str, str]:
    """``code`` class attributes, ``code=`` arguments, ``"code": ...`` bodies, ``HTTP_CODES``."""
    trees = {path: ast.parse(path.read_text()) for path in sorted((ROOT / "app").rglob("*.py"))}
    constants = {
        target.id: node.value.value
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: dict[str, str] = {}

    def note(value: str | None, path: Path, line: int) -> None:
        if value and CODE.match(value):
            found.setdefault(value, f"{path.relative_to(ROOT)}:{line}")

    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "code" for t in item.targets
                    ):
                        note(_string(item.value, constants), path, item.lineno)
            elif isinstance(node, ast.keyword) and node.arg == "code":
                note(_string(node.value, constants), path, node.value.lineno)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if key is not None and _string(key, constants) == "code":
                        note(_string(value, constants), path, value.lineno)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "HTTP_CODES" for t in node.targets
            ):
                for value in node.value.values:
                    note(_string(value, constants), path, value.lineno)
    for conf in sorted((ROOT / "deploy" / "nginx").glob("*.conf")):
        for code in NGINX_CODE.findall(conf.read_text()):
            found.setdefault(code, str(conf.relative_to(ROOT)))
    return found


def codes_in_the_errors_table() -> set[str]:
    settings = {name for setting in SETTINGS for name in setting.names}
    codes: set[str] = set()
    for line in (DOCS / "errors.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.split(" | ")]
        if line.startswith("| ") and cells[0].lstrip("| ").isdigit():
            codes |= set(re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[2])) - settings
    return codes


def test_the_collector_finds_the_codes_it_should():
    found = codes_the_code_answers()
    # One of each way of answering a code: a class, an argument, a body, nginx, HTTP_CODES.
    for code in ("UPGRADE_REQUIRED", "FORMAT_NOT_IN_PROFILE", "CONFLICT", "SERVICE_UNAVAILABLE"):
        assert code in found
    assert "METHOD_NOT_ALLOWED" in found


def test_every_error_code_the_service_answers_is_in_the_reference():
    missing = {
        code: where
        for code, where in codes_the_code_answers().items()
        if code not in codes_in_the_errors_table()
    }
    assert missing == {}, f"answered but not in docs/reference/errors.md: {missing}"


def test_the_reference_names_no_error_code_nothing_answers():
    assert codes_in_the_errors_table() - set(codes_the_code_answers()) == set()


def _shape(path: str) -> str:
    return re.sub(r"<[^>]+>|\{[^}]+\}", "{}", path)


def test_every_path_in_the_endpoint_behaviour_table_is_served(app):
    served = {_shape(rule.rule) for rule in app.url_map.iter_rules()}
    named = set()
    for line in (DOCS / "api-behaviour.md").read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| method"):
            cells = line.split(" | ")
            if len(cells) > 2:
                named |= set(re.findall(r"`(/[^`]*)`", cells[1]))
    assert len(named) > 40
    unserved = {path for path in named if _shape(path.split("?")[0]) not in served}
    assert unserved == set()


def test_the_person_pages_say_when_to_pass_requests_by_reference():
    """The dense by-value QR code is explained where the person's page is, with the two ways
    to a small one; the settings reference points there, and the default it names holds."""
    from app.config import from_environment

    page = (DOCS / "person-pages.md").read_text()
    section = page.split("## The QR code: by value or by reference (`REQUEST_BY_REFERENCE`)")[1]
    assert "by value** by default" in section
    assert "`REQUEST_BY_REFERENCE=1`" in section and "REQUEST_SIGNING_CERT_FILE" in section
    [setting] = [s for s in SETTINGS if s.names == ("REQUEST_BY_REFERENCE",)]
    assert "person-pages.md#the-qr-code-by-value-or-by-reference" in setting.meaning
    if "REQUEST_BY_REFERENCE" not in os.environ:
        assert from_environment()["REQUEST_BY_REFERENCE"] is False
