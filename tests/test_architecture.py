"""The shape of the code: which parts may import which.

Read from the source (``ast``), so a lazy import inside a function counts like any other;
imports under ``if TYPE_CHECKING:`` do not, since they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# Domain and protocol code: what it does must not depend on being called over HTTP, so it
# imports nothing of Flask or Werkzeug (the database session comes from ``app.extensions``,
# errors from ``app.errors``).
DOMAIN = (
    "billing",
    "didcomm",
    "identity",
    "integrations",
    "issuance",
    "mdoc",
    "oid4vp",
    "organizations",
    "policies",
    "presentations",
    "recipients",
    "retention",
    "schemas",
    "sdjwt",
    "statuslist",
    "trust",
    "trust_sources",
    "vcjwt",
    "verifications",
    "verifier_identity",
    "vouchers",
    "webhooks",
    "zk",
)
# Protocol code knows no database either.
PROTOCOL = ("didcomm", "mdoc", "oid4vp", "sdjwt", "statuslist", "trust", "vcjwt", "zk")
WEB = ("flask", "flask_sqlalchemy", "flask_migrate", "flask_limiter", "werkzeug")


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(APP.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(
    module: str, path: Path, *, type_checking: bool = False
) -> Iterator[tuple[str, list[str]]]:
    """Each import of ``module`` as (absolute module, names taken from it); ``import a.b``
    takes no names. Imports under ``if TYPE_CHECKING:`` are left out unless asked for."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and type_checking_only(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, [alias.name for alias in node.names]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return iter(found)


def imports_of(module: str, path: Path) -> set[str]:
    """Every module ``module`` imports when it runs, as absolute dotted names."""
    found: set[str] = set()
    for base, names in imported_names(module, path):
        found.add(base)
        # ``from app import clock`` imports the module app.clock.
        found.update(f"{base}.{name}" for name in names)
    return found


def part_of(module: str) -> str | None:
    """The part of the application a module belongs to: ``app.api.public`` -> ``api``."""
    parts = module.split(".")
    if parts[0] != "app" or len(parts) < 2:
        return None
    return parts[1]


def part_graph() -> dict[str, set[str]]:
    """Which parts import which (the factory, ``app/__init__.py``, wires them all: left out)."""
    known = {part_of(name) for name, _ in modules()} - {None}
    graph: dict[str, set[str]] = {part: set() for part in known}
    for name, path in modules():
        source = part_of(name)
        if source is None:
            continue
        for imported in imports_of(name, path):
            target = part_of(imported)
            if target in known and target != source:
                graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one part (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def module_graph() -> dict[str, set[str]]:
    """Which modules of the application import which: lazy imports inside functions count,
    and so do imports under ``if TYPE_CHECKING:`` (a type named both ways is a circle in the
    design even when it never runs). ``from package import name`` points at the module
    ``package.name`` when there is one, else at the package, whose names are taken."""
    paths = dict(modules())
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        for base, names in imported_names(name, path, type_checking=True):
            targets = {f"{base}.{n}" for n in names if f"{base}.{n}" in paths}
            if len(targets) < len(names) or not names:
                targets.add(base)
            graph[name].update(t for t in targets if t in paths and t != name)
    return graph


def test_the_modules_of_the_application_import_each_other_without_cycles():
    # Each circle is named by its modules: break it by moving what both sides need into a
    # module below them (as app.issuance.invitation was, for links and didcomm).
    assert cycles(module_graph()) == []


def test_the_module_graph_sees_lazy_and_type_only_imports(tmp_path: Path):
    # The two circles this check was written against: a lazy import inside a method
    # (issuance.links -> issuance.didcomm) and an import under TYPE_CHECKING
    # (verifications.models -> policies.models). Both must be read as edges.
    lazy = tmp_path / "lazy.py"
    lazy.write_text("def f():\n    from app.issuance import didcomm\n")
    typed = tmp_path / "typed.py"
    typed.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from app.policies.models import PolicyRequest\n"
    )
    assert list(imported_names("app.x.lazy", lazy)) == [("app.issuance", ["didcomm"])]
    assert ("app.policies.models", ["PolicyRequest"]) in list(
        imported_names("app.x.typed", typed, type_checking=True)
    )
    assert ("app.policies.models", ["PolicyRequest"]) not in list(
        imported_names("app.x.typed", typed)
    )


def test_the_parts_of_the_application_import_each_other_without_cycles():
    assert cycles(part_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    # Without this the test above would pass against a check that finds nothing.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("part", DOMAIN)
def test_domain_and_protocol_code_imports_no_flask(part: str):
    offending = {
        name: sorted(i for i in imports_of(name, path) if i.split(".")[0] in WEB)
        for name, path in modules()
        if part_of(name) == part
    }
    assert {name: found for name, found in offending.items() if found} == {}


@pytest.mark.parametrize("part", PROTOCOL)
def test_protocol_code_imports_no_database(part: str):
    offending = {
        name: sorted(
            i
            for i in imports_of(name, path)
            if i.split(".")[0] == "sqlalchemy" or i in ("app.extensions", "app.database")
        )
        for name, path in modules()
        if part_of(name) == part
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_the_dashboard_does_not_import_the_json_api():
    assert "api" not in part_graph()["staff"]
