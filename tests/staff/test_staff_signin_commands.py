"""The sign-in page's token commands work as shown, from the folder a clone runs in."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

from config_for_tests import TEST_CONFIG

from app import create_app

ROOT = Path(__file__).resolve().parents[2]


def shown_commands(page: str) -> list[list[str]]:
    block = re.search(r'<code data-testid="token-commands">(.*?)</code>', page, re.S)
    assert block, "the sign-in page shows no token commands"
    return [shlex.split(line) for line in html.unescape(block.group(1)).splitlines() if line]


def run_from_clone(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_commands_the_sign_in_page_shows_make_a_token_that_signs_in(client, tmp_path):
    commands = shown_commands(client.get("/dashboard/login").get_data(as_text=True))
    database = f"sqlite:///{tmp_path / 'verity.sqlite3'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "VERITY_"))}
    env.update(DATABASE_URL=database, VERITY_ENV="development")
    # What `make run` has done before anyone reads the page: the database is migrated.
    migrated = run_from_clone([".venv/bin/flask", "db", "upgrade"], env)
    assert migrated.returncode == 0, migrated.stderr[-2000:]

    outputs = []
    for command in commands:
        done = run_from_clone(command, env)
        assert done.returncode == 0, f"{shlex.join(command)}: {done.stderr[-2000:]}"
        outputs.append(done.stdout)

    token = json.loads(outputs[-1])["token"]
    served = create_app({**TEST_CONFIG, "SQLALCHEMY_DATABASE_URI": database})
    me = served.test_client().get("/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert len(me.get_json()["memberships"]) == 1
    # The organization they make can follow the tutorials: an integration key is not a 402.
    key = served.test_client().post(
        "/integrations", json={"name": "backend"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert key.status_code == 201, key.get_json()
    with served.app_context():
        served.extensions["sqlalchemy"].engine.dispose()
