"""The production guide's backup and tested restore, done: a PostgreSQL deployment is dumped
with ``pg_dump --format=custom``, restored with ``pg_restore`` into a new database, and the
restored copy, started with the same secrets, serves what the first one made.

The first tutorial runs against the original (an organization, a schema, an issued
credential, so issuer keys sealed under ``ISSUER_KEY_SECRET``); the second runs against the
restored copy: it verifies the credential issued before the backup (VERIFIED), and revoking
it fails the next presentation (FAILED); a new credential is then issued by the restored copy,
signed with the issuer key it unsealed from the dump under the same ``ISSUER_KEY_SECRET``.

Runs in the PostgreSQL pass of ``make test`` (``VERITY_TEST_DB=postgresql``), on two databases
of its own on that server, dropped afterwards.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url
from support.tutorials import TUTORIALS, script

from demo.run import environment, flask, free_port, gunicorn, wait_ready

pytestmark = pytest.mark.skipif(
    os.environ.get("VERITY_TEST_DB") != "postgresql" or not os.environ.get("TEST_DATABASE_URL"),
    reason="needs PostgreSQL: VERITY_TEST_DB=postgresql with TEST_DATABASE_URL, as make test does",
)

ROOT = Path(__file__).resolve().parents[2]
# What the first tutorial leaves in the shell for the second: its variables and helpers.
HANDOVER = "{ declare -p TOKEN KEY SCHEMA RECIPIENT CREDENTIAL; declare -f field staff backend; }"


# After the second tutorial, on the restored copy: a new credential, signed by the issuer key
# the restored database holds sealed, so only a copy whose keys unseal can issue it.
ISSUE_AGAIN = """
AGAIN=$(staff -d '{"name": "Membership", "schema_id": "'$SCHEMA'", "recipient_id": "'$RECIPIENT'",
  "claims": [{"name": "given_name", "value": "Erika"}, {"name": "member_number", "value": 1043}]}' \\
  $BASE/credentials | field id)
.venv/bin/python -m app.holder --wallet WALLET receive "$(staff $BASE/credentials/$AGAIN | field offer_url)" > /dev/null
echo "again $(staff $BASE/credentials/$AGAIN | field status)"
"""


@contextlib.contextmanager
def databases(*names: str) -> Iterator[list[str]]:
    """New databases on the test server, as libpq URLs; dropped on leaving."""
    server = make_url(os.environ["TEST_DATABASE_URL"]).set(drivername="postgresql")
    admin = server.set(database="postgres").render_as_string(hide_password=False)
    suffix = f"_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as connection:
        for name in names:
            connection.execute(f"DROP DATABASE IF EXISTS {name}{suffix}")
            connection.execute(f"CREATE DATABASE {name}{suffix}")
    try:
        yield [
            server.set(database=name + suffix).render_as_string(hide_password=False)
            for name in names
        ]
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            for name in names:
                connection.execute(f"DROP DATABASE IF EXISTS {name}{suffix} WITH (FORCE)")


def bash(script: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def test_a_dump_restored_into_a_new_database_serves_and_signs_with_the_restored_keys(tmp_path):
    wallet = tmp_path / "wallet.json"
    dump = tmp_path / "verity.dump"
    port = free_port()
    base = f"http://127.0.0.1:{port}"

    with databases("verity_backup", "verity_restored") as (original, restored):
        env = environment(tmp_path, port)
        env.pop("FLASK_APP", None)
        env["JOBS_QUEUE_URL"] = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
        env["DATABASE_URL"] = original.replace("postgresql://", "postgresql+psycopg://", 1)
        flask(env, "db", "upgrade")
        flask(env, "schemas", "seed")
        with gunicorn(env, port, tmp_path / "original.log") as process:
            wait_ready(process, base, tmp_path / "original.log")
            first = script(TUTORIALS[0], base, wallet)
            state = bash(f"{first}\n{HANDOVER} > {tmp_path / 'state.sh'}", env)
        assert "ISSUED" in state.splitlines()

        run("pg_dump", "--format=custom", f"--file={dump}", original)
        run("pg_restore", "--no-owner", f"--dbname={restored}", str(dump))

        # The same secrets and the same address (the credential names its issuer by it).
        env["DATABASE_URL"] = restored.replace("postgresql://", "postgresql+psycopg://", 1)
        with gunicorn(env, port, tmp_path / "restored.log") as process:
            wait_ready(process, base, tmp_path / "restored.log")
            second = script(TUTORIALS[1], base, wallet)
            out = bash(
                f"source {tmp_path / 'state.sh'}\nexport FLASK_APP=wsgi BASE={base}\n{second}\n"
                + ISSUE_AGAIN.replace("WALLET", str(wallet)),
                env,
            )

    lines = out.splitlines()
    assert "VERIFIED {'given_name': 'Erika', 'member_number': 1042}" in lines, out
    assert "REVOKED" in lines, out
    assert "FAILED Credential has been revoked by its issuer" in lines, out
    assert "again ISSUED" in lines, out
