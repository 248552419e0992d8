"""The settings reference names every environment variable the code reads, and only those.

The reference page is rendered from ``app/settings_reference.py``; these tests hold that table
to the code: the settings ``from_environment()`` asks for when it runs, and every literal
``os.environ`` / ``os.getenv`` read anywhere in the service (``app/``, ``gunicorn.conf.py``,
``gunicorn.events.conf.py``).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from app import config
from app.settings_reference import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    *sorted((ROOT / "app").rglob("*.py")),
    ROOT / "gunicorn.conf.py",
    ROOT / "gunicorn.events.conf.py",
    ROOT / "wsgi.py",
]
# config.py's own helpers, which read the variable named by their first argument.
CONFIG_READERS = {"env", "_int"}
# Read by ``flask keys reseal`` under the name its --previous-secret-env option gives (the CLI
# reference documents it): an input of one command, not a setting of the service.
COMMAND_INPUTS = {"PREVIOUS_ISSUER_KEY_SECRET"}


def documented() -> set[str]:
    return {name for setting in SETTINGS for name in setting.names}


class Recording(dict):
    """The environment, noting every name asked for."""

    def __init__(self, values):
        super().__init__(values)
        self.asked: set[str] = set()

    def get(self, name, default=None):
        self.asked.add(name)
        return super().get(name, default)

    def __getitem__(self, name):
        self.asked.add(name)
        return super().__getitem__(name)


def string_constants(trees: list[ast.Module]) -> dict[str, str]:
    constants = {}
    for tree in trees:
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        constants[target.id] = node.value.value
    return constants


def is_os_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def names_read_in_source() -> dict[str, str]:
    """Every variable name a source file reads from the environment, with where it is read."""
    trees = {path: ast.parse(path.read_text(), str(path)) for path in SOURCES}
    constants = string_constants(list(trees.values()))
    found: dict[str, str] = {}

    def note(argument: ast.AST, path: Path, line: int) -> None:
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            name = argument.value
        elif isinstance(argument, ast.Name) and argument.id in constants:
            name = constants[argument.id]
        else:
            return
        found.setdefault(name, f"{path.relative_to(ROOT)}:{line}")

    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                function = node.func
                environ_get = (
                    isinstance(function, ast.Attribute)
                    and function.attr == "get"
                    and is_os_environ(function.value)
                )
                getenv = (
                    isinstance(function, ast.Attribute)
                    and function.attr == "getenv"
                    and isinstance(function.value, ast.Name)
                    and function.value.id == "os"
                )
                helper = (
                    path.name == "config.py"
                    and isinstance(function, ast.Name)
                    and function.id in CONFIG_READERS
                )
                if environ_get or getenv or helper:
                    note(node.args[0], path, node.lineno)
            elif isinstance(node, ast.Subscript) and is_os_environ(node.value):
                note(node.slice, path, node.lineno)
    return found


def test_every_setting_the_configuration_asks_for_is_in_the_reference(monkeypatch):
    recording = Recording(os.environ)
    monkeypatch.setattr(os, "environ", recording)

    config.from_environment()

    assert recording.asked, "from_environment() read no setting through os.environ"
    assert recording.asked - documented() == set()


def test_every_environment_read_in_the_code_is_in_the_reference():
    read = names_read_in_source()

    missing = {name: where for name, where in read.items() if name not in documented()}
    assert missing.keys() <= COMMAND_INPUTS, f"read but not in app/settings_reference.py: {missing}"


def test_the_reference_names_no_setting_the_code_does_not_read():
    assert documented() - set(names_read_in_source()) == set()


def test_each_setting_is_described_once():
    names = [name for setting in SETTINGS for name in setting.names]
    assert len(names) == len(set(names))
    for setting in SETTINGS:
        assert setting.default and setting.meaning, setting.names
