"""``make run`` installs what the service needs to run; ``make test`` adds the test extra."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def planned(target: str, tmp_path: Path) -> str:
    """What ``make`` would run for ``target`` on a machine with no virtualenv yet (dry run)."""
    proc = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_installs_the_runtime_dependencies_only(tmp_path):
    plan = planned("run", tmp_path)
    assert "pip install --quiet -e ." in plan
    assert "[test]" not in plan
    assert "gunicorn --config gunicorn.conf.py --workers" in plan
    assert "jobs worker" in plan


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_installs_the_test_and_docs_extras(tmp_path):
    plan = planned("test", tmp_path)
    assert "pip install --quiet -e '.[test,docs,zk]'" in plan
    assert "pytest" in plan
