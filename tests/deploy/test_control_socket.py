"""Each gunicorn server has a control socket of its own (``gunicornc -s``), so stopping one
server leaves the others' in place and answering.

gunicorn's default path is one for every server a user runs: the second server takes it over
and stopping either removes it. Both ways of starting a server are checked: as
deploy/cluster.py starts an instance, and as ``make run`` starts one (gunicorn.conf.py).
The servers only need to start, so a SQLite file serves as their database and these run in
both passes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from deploy_support import free_port

from deploy import cluster

gunicorn_control = pytest.importorskip("gunicorn.ctl.client", reason="gunicorn 25.1+")
MAKE_RUN = (sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py")
SOCKET_TIMEOUT = 30  # seconds for a started server to open its socket (a guard, not a timing)


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k != "FLASK_APP"},
        "DATABASE_URL": f"sqlite:///{tmp_path / 'verity.sqlite3'}",
        "PYTHONUNBUFFERED": "1",
    }


def workers_seen_through(control_socket: Path) -> set[int]:
    """The worker pids the server behind this socket reports."""
    with gunicorn_control.ControlClient(str(control_socket), timeout=10) as client:
        return {worker["pid"] for worker in client.send_command("show workers")["workers"]}


def wait_for_socket(instance: cluster.Instance) -> None:
    deadline = time.monotonic() + SOCKET_TIMEOUT
    while not instance.control_socket.is_socket():
        assert instance.process.poll() is None, instance.log()
        assert time.monotonic() < deadline, instance.log()
        time.sleep(0.05)


def answers_for(instance: cluster.Instance) -> bool:
    """Its own socket is there and the server behind it is this instance."""
    workers = instance.workers()
    return (
        instance.control_socket.is_socket()
        and bool(workers)
        and workers_seen_through(instance.control_socket) == workers
    )


@pytest.fixture
def started() -> Iterator[list[cluster.Instance]]:
    """Instances to stop at the end, whatever happened."""
    instances: list[cluster.Instance] = []
    yield instances
    cluster.stop_all([instance.process for instance in instances])


def test_stopping_one_cluster_instance_leaves_the_others_control_socket(tmp_path, started):
    env = environment(tmp_path)
    for name in ("instance-1", "instance-2"):
        started.append(
            cluster.launch_instance(
                name, env, free_port(), 1, tmp_path / f"{name}.log", tmp_path / name
            )
        )
    first, second = started
    for instance in started:
        instance.wait_ready()
        wait_for_socket(instance)
    assert first.control_socket == tmp_path / "instance-1" / cluster.CONTROL_SOCKET
    assert answers_for(first) and answers_for(second)

    first.stop()
    assert not first.control_socket.exists()
    assert answers_for(second)


@dataclass
class MakeRun:
    """A server started as ``make run`` starts it (gunicorn.conf.py, no socket given)."""

    instance: cluster.Instance

    @classmethod
    def start(cls, env: dict[str, str], log_path: Path) -> MakeRun:
        port = free_port()
        with log_path.open("ab") as log_file:
            process = subprocess.Popen(
                [*MAKE_RUN, "--workers", "1", "--bind", f"127.0.0.1:{port}", "wsgi:app"],
                cwd=cluster.ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        socket = cluster.ROOT / "instance" / "run" / f"gunicorn-127.0.0.1_{port}.ctl"
        return cls(cluster.Instance(f"make-run-{port}", port, process, log_path, socket))


def test_two_servers_started_as_make_run_starts_one_keep_their_own_sockets(tmp_path, started):
    env = environment(tmp_path)
    servers = [MakeRun.start(env, tmp_path / f"run-{n}.log").instance for n in (1, 2)]
    started.extend(servers)
    first, second = servers
    for server in servers:
        server.wait_ready()
        wait_for_socket(server)
    assert answers_for(first) and answers_for(second)

    first.stop()
    assert not first.control_socket.exists()
    assert answers_for(second)
