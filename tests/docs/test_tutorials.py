"""The tutorials' ```bash blocks run as written against a live instance, so they cannot rot.

The service runs as ``make run`` runs it (gunicorn, ``make run``'s settings) on a free loopback
port with a SQLite database of its own; the blocks of both tutorials run in order in one bash
session, as a reader pastes them into one terminal, with the project's holder as the wallet;
the verification tutorial also runs alone, as a newcomer who only verifies would run it.
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


def run_pages(pages: list[Path], tmp_path: Path) -> tuple[str, Path]:
    """The pages' blocks in one bash session against a fresh instance; stdout and wallet."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(tmp_path, port)
    env.pop("FLASK_APP", None)
    flask(env, "db", "upgrade")
    flask(env, "schemas", "seed")
    wallet = tmp_path / "wallet.json"
    blocks = "\n".join(script(page, base, wallet) for page in pages)

    with gunicorn(env, port, tmp_path / "gunicorn.log") as process:
        wait_ready(process, base, tmp_path / "gunicorn.log")
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", blocks],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{base}/i/" in done.stdout, done.stdout
    return done.stdout, wallet


def assert_verified_then_revoked(out: str) -> None:
    lines = out.splitlines()
    assert "APIKEY_REQUIRED" in lines, out  # a refused verification takes only the key's open
    assert "pinned" in lines, out  # the own schema's verification trusts its own issuer
    assert "VERIFIED {'given_name': 'Erika', 'member_number': 1042}" in lines, out
    assert "REVOKED" in lines, out
    assert "FAILED Credential has been revoked by its issuer" in lines, out


def test_the_tutorials_run_as_written_against_a_live_instance(tmp_path):
    out, wallet = run_pages(TUTORIALS, tmp_path)
    lines = out.splitlines()
    assert "ISSUED" in lines, out
    assert_verified_then_revoked(out)
    assert wallet.exists()


def test_the_verification_tutorial_runs_on_its_own_for_a_verifier_only_newcomer(tmp_path):
    """Without the issuing tutorial before it, its first block issues the credential."""
    out, wallet = run_pages([TUTORIALS[1]], tmp_path)
    assert_verified_then_revoked(out)
    assert wallet.exists()


def test_the_verification_tutorial_says_what_a_local_webhook_receiver_needs():
    """The development setting, spelled as the API's refusal spells it, and a receiver
    address that is not Verity's own port."""
    page = TUTORIALS[1].read_text()
    assert "TRUST_ALLOW_PRIVATE=1 make run" in page
    assert "=true" not in page
    assert "http://127.0.0.1:9000/hooks" in page
