"""The tutorials' ```bash blocks run as written against a live instance, so they cannot rot.

The service runs as ``make run`` runs it (gunicorn, ``make run``'s settings) on a free loopback
port with a SQLite database of its own; the blocks of both tutorials run in order in one bash
session, as a reader pastes them into one terminal, with the project's holder as the wallet.
Only the address (``127.0.0.1:8000``) and the holder's wallet file are swapped for the test's.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.tutorials import TUTORIALS, runnable_blocks, script

from demo.run import environment, flask, free_port, gunicorn, wait_ready

# The live instance has a SQLite database of its own and never touches the suite's, so the
# PostgreSQL pass of `make test` would only repeat the SQLite pass.
pytestmark = pytest.mark.skipif(
    os.environ.get("VERITY_TEST_DB") == "postgresql", reason="run once, in the SQLite pass"
)

ROOT = Path(__file__).resolve().parents[2]


def test_every_tutorial_has_runnable_blocks():
    for page in TUTORIALS:
        assert runnable_blocks(page), f"{page.name} has no ```bash block to run"


def test_the_tutorials_run_as_written_against_a_live_instance(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(tmp_path, port)
    env.pop("FLASK_APP", None)
    flask(env, "db", "upgrade")
    flask(env, "schemas", "seed")
    wallet = tmp_path / "wallet.json"
    both = "\n".join(script(page, base, wallet) for page in TUTORIALS)

    with gunicorn(env, port, tmp_path / "gunicorn.log") as process:
        wait_ready(process, base, tmp_path / "gunicorn.log")
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", both],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    lines = out.splitlines()
    assert "ISSUED" in lines, out
    assert "APIKEY_REQUIRED" in lines, out  # a refused verification takes only the key's open
    assert f"{base}/i/" in out, out
    assert "VERIFIED {'given_name': 'Erika', 'member_number': 1042}" in lines, out
    assert "REVOKED" in lines, out
    assert "FAILED Credential has been revoked by its issuer" in lines, out
    assert wallet.exists()
