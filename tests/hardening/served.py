"""The service as ``make run`` serves it (gunicorn, two workers), on a database of the test's.

Nothing here imports the application: the server is a separate process group, its log a file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
# Settings of the developer's environment that would change the deployment under test.
SCRUBBED = (
    "RATELIMIT_STORAGE_URI",
    "VOUCHER_EXCHANGE_LIMIT",
    "ISSUER_NONCE_LIMIT",
    "TRUSTED_PROXY_COUNT",
    "FLASK_APP",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Served:
    base: str
    env: dict[str, str]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def url(self, path: str) -> str:
        return self.base + path


def service_env(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(DATABASE_URL=database_url, REQUEST_LOG="1", PYTHONUNBUFFERED="1", **extra)
    return env


def flask(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"flask {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def prepare(env: dict[str, str]) -> None:
    """What ``make run`` does before serving: migrations and the shipped public schemas."""
    flask(env, "db", "upgrade")
    flask(env, "schemas", "seed")


@contextlib.contextmanager
def served(
    env: dict[str, str],
    log_path: Path,
    workers: int = 2,
    public_host: str | None = "127.0.0.1",
    gunicorn_args: Sequence[str] = (),
) -> Iterator[Served]:
    """Serve on a free loopback port; ``PUBLIC_URL`` names it by ``public_host`` (``localhost``
    for a certificate naming it), or (``None``) as ``make run`` sets it, the address served.
    ``gunicorn_args`` adds options (``--access-logfile -`` puts the access log in the log)."""
    port = free_port()
    base = f"http://{public_host or '127.0.0.1'}:{port}"
    env = {**env, "PUBLIC_URL": base}
    with open(log_path, "wb") as log_file:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{port}",
                *gunicorn_args,
                "wsgi:app",
            ],
            cwd=ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    handle = Served(base, env, log_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, f"gunicorn exited:\n{handle.log()}"
            with contextlib.suppress(requests.RequestException):
                if requests.get(base + "/healthz", timeout=5).status_code == 200:
                    break
            assert time.monotonic() < deadline, f"no /healthz:\n{handle.log()}"
            time.sleep(0.1)
        yield handle
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=5)
