"""Run N Verity instances behind nginx on one machine, sharing one PostgreSQL and one Redis.

    DATABASE_URL=postgresql+psycopg://verity@db/verity RATELIMIT_STORAGE_URI=redis://cache:6379/0 \\
    SECRET_KEY=... ISSUER_KEY_SECRET=... python deploy/cluster.py --instances 2 --listen 127.0.0.1:8080

(``make cluster`` runs it with the project's virtualenv.) It migrates the database once, starts
each instance as ``make run`` does (gunicorn, ``--workers`` sync workers, on its own loopback
port; its event stream server, threads holding ``GET /events`` streams, on a port of its own;
and its job worker: webhook deliveries, the schedule and CSV uploads, each on threads of its
own), then nginx in front of them with ``deploy/nginx/nginx.conf`` and ``verity.conf``, without
root: its pid file, temporary files and logs live in a prefix directory of its own. Every
instance gets the same environment, plus ``PUBLIC_URL`` (the nginx address unless set) and
``TRUSTED_PROXY_COUNT=1``, and a run directory of its own (``--logs``/instance-N) where its
gunicorn control socket lives: ``gunicornc -s instance/cluster/instance-1/gunicorn.ctl``.

Ctrl-C or SIGTERM stops everything; so does any process of the cluster exiting. SIGHUP is passed to every gunicorn master: each starts
new workers on the current code and configuration and lets the old ones finish their requests.

The functions below are also what tests/deploy drives, so the test runs this configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NGINX_DIR = ROOT / "deploy" / "nginx"
START_TIMEOUT = 60  # seconds for an instance or nginx to answer /healthz
STOP_TIMEOUT = 20  # seconds for a process group to end after SIGTERM / SIGQUIT
# nginx's temporary directories (nginx.conf), created under its prefix.
NGINX_TEMP = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
# In each instance's run directory: the path gunicornc -s takes.
CONTROL_SOCKET = "gunicorn.ctl"
EVENTS_CONTROL_SOCKET = "events.ctl"
# When nginx leaves an instance out: after 3 failures to reach it in 5 s, for 5 s (an answer,
# whatever its status, is never a failure: see verity.conf).
UPSTREAM_SERVER_PARAMETERS = "max_fails=3 fail_timeout=5s"
# Without root, nginx runs as whoever starts it; started by root, it is started as this user.
UNPRIVILEGED_USER = "nobody"


class ClusterError(Exception):
    """The cluster could not start; the message says what is missing or what broke."""


def nginx_binary() -> str | None:
    """Debian installs nginx in /usr/sbin, which is not on every user's PATH."""
    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


def check_environment(env: Mapping[str, str]) -> list[str]:
    """What the instances must share and cannot default: one line per problem."""
    problems = []
    if not env.get("DATABASE_URL", "").startswith("postgresql"):
        problems.append("DATABASE_URL must name the PostgreSQL database every instance uses")
    if not env.get("RATELIMIT_STORAGE_URI", "").startswith(("redis://", "rediss://")):
        problems.append("RATELIMIT_STORAGE_URI must name the Redis every instance counts in")
    for name in ("SECRET_KEY", "ISSUER_KEY_SECRET"):
        if not env.get(name):
            problems.append(f"{name} must be set, the same random value for every instance")
    return problems


def instance_environment(env: Mapping[str, str], public_url: str) -> dict[str, str]:
    """The one environment every instance runs with."""
    return {**env, "PUBLIC_URL": public_url, "TRUSTED_PROXY_COUNT": "1"}


def flask(env: Mapping[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0:
        raise ClusterError(f"flask {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def prepare(env: Mapping[str, str]) -> None:
    """Once for the whole cluster, before any instance starts (never at start-up)."""
    flask(env, "db", "upgrade")
    flask(env, "schemas", "seed")


def wait_healthy(base: str, alive: Callable[[], bool], log: Callable[[], str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if not alive():
            raise ClusterError(f"{base} exited on start:\n{log()[-3000:]}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(base + "/healthz", timeout=5) as answer,
        ):
            if answer.status == 200:
                return
        if time.monotonic() > deadline:
            raise ClusterError(f"{base} did not answer /healthz in {START_TIMEOUT} s:\n{log()}")
        time.sleep(0.1)


def signal_group(process: subprocess.Popen, sig: int) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)


def stop_group(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """End a process started in a session of its own, with everything it started."""
    signal_group(process, sig)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        signal_group(process, signal.SIGKILL)
        process.wait(STOP_TIMEOUT)


def stop_all(processes: Sequence[subprocess.Popen], sig: int = signal.SIGTERM) -> None:
    """Signal them all first, then wait for each: they wind down side by side."""
    for process in processes:
        signal_group(process, sig)
    for process in processes:
        stop_group(process, sig)


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                    found.add(int(entry.name))
    return found


@dataclass
class Instance:
    """One gunicorn master and its workers, in a process group of its own."""

    name: str
    port: int
    process: subprocess.Popen
    log_path: Path
    control_socket: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def base(self) -> str:
        return f"http://{self.address}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def workers(self) -> set[int]:
        return children(self.process.pid)

    def reload(self) -> None:
        """gunicorn's graceful restart: new workers, the old ones finish what they took."""
        os.kill(self.process.pid, signal.SIGHUP)

    def kill(self) -> None:
        """A crash: the master and its workers die at once, mid-request."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT)

    def wait_ready(self) -> None:
        """Until it answers /healthz; stopped if it does not."""
        try:
            wait_healthy(self.base, lambda: self.process.poll() is None, self.log)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        stop_group(self.process)


def launch_instance(
    name: str, env: Mapping[str, str], port: int, workers: int, log_path: Path, run_dir: Path
) -> Instance:
    """Start gunicorn without waiting for it (see ``Instance.wait_ready``).

    ``run_dir`` is the instance's own: its control socket (``gunicornc -s``) is made there.
    gunicorn's default path is one for every server the user runs, so the instances would take
    it from each other and stopping one would remove it for all.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    control_socket = run_dir / CONTROL_SOCKET
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{port}",
                "--control-socket",
                str(control_socket),
                "wsgi:app",
            ],
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Instance(name, port, process, log_path, control_socket)


def launch_event_server(
    name: str, env: Mapping[str, str], port: int, log_path: Path, run_dir: Path
) -> Instance:
    """The instance's event stream server (``gunicorn.events.conf.py``: threads that hold
    ``GET /events`` streams), without waiting for it; its control socket is ``events.ctl``
    in the instance's run directory."""
    run_dir.mkdir(parents=True, exist_ok=True)
    control_socket = run_dir / EVENTS_CONTROL_SOCKET
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--config",
                str(ROOT / "gunicorn.events.conf.py"),
                "--bind",
                f"127.0.0.1:{port}",
                "--control-socket",
                str(control_socket),
                "wsgi:app",
            ],
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Instance(name, port, process, log_path, control_socket)


def start_instance(
    name: str, env: Mapping[str, str], port: int, workers: int, log_path: Path, run_dir: Path
) -> Instance:
    instance = launch_instance(name, env, port, workers, log_path, run_dir)
    instance.wait_ready()
    return instance


@dataclass
class JobWorker:
    """``flask jobs worker`` of one instance, in a process group of its own."""

    name: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        stop_group(self.process)


def launch_worker(name: str, env: Mapping[str, str], log_path: Path) -> JobWorker:
    """The job worker: with its queues in the shared storage, one per instance is safe (a
    delivery is leased to one worker at a time)."""
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "wsgi", "jobs", "worker"],
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return JobWorker(name, process, log_path)


# -- nginx ---------------------------------------------------------------------------------


def render(template: str, fields: Mapping[str, str]) -> str:
    for name, value in fields.items():
        template = template.replace(f"@{name}@", value)
    left = re.findall(r"@[A-Z_]+@", template)
    if left:
        raise ClusterError(f"nginx template fields without a value: {', '.join(left)}")
    return template


def nginx_prefix() -> Path:
    """A fresh prefix directory for nginx: its configuration, pid file and temporary files.

    Started by root, nginx is run as an unprivileged user, who must own the prefix; it is made
    directly in the system's temporary directory, whose parents anyone may pass through.
    """
    prefix = Path(tempfile.mkdtemp(prefix="verity-nginx-"))
    for name in NGINX_TEMP:
        (prefix / "temp" / name).mkdir(parents=True)
    return prefix


def write_nginx_config(
    prefix: Path,
    listen: str,
    upstreams: Sequence[str],
    access_log: bool = False,
    event_servers: Sequence[str] = (),
) -> Path:
    """``nginx.conf`` and ``verity.conf`` rendered into ``prefix``; the path of nginx.conf.
    Without ``event_servers``, ``/events`` goes to the instances (which refuse it, 421)."""

    def servers(addresses: Sequence[str]) -> str:
        return "\n".join(
            f"    server {address} {UPSTREAM_SERVER_PARAMETERS};" for address in addresses
        )

    site = render(
        (NGINX_DIR / "verity.conf").read_text(),
        {
            "UPSTREAM_SERVERS": servers(upstreams),
            "EVENT_SERVERS": servers(event_servers or upstreams),
            "LISTEN": listen,
            "ACCESS_LOG": (
                f"access_log {prefix}/access.log verity_no_paths;"
                if access_log
                else "access_log off;"
            ),
        },
    )
    main = render(
        (NGINX_DIR / "nginx.conf").read_text(),
        {
            "PREFIX": str(prefix),
            "WORKER_PROCESSES": "1",
        },
    )
    (prefix / "verity.conf").write_text(site)
    config = prefix / "nginx.conf"
    config.write_text(main)
    if os.geteuid() == 0:
        account = pwd.getpwnam(UNPRIVILEGED_USER)
        for path in [prefix, *prefix.rglob("*")]:
            os.chown(path, account.pw_uid, account.pw_gid)
    return config


@dataclass
class Nginx:
    process: subprocess.Popen
    prefix: Path
    log_path: Path
    base: str

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        stop_group(self.process, signal.SIGQUIT)  # graceful: open requests are answered


def launch_nginx(config: Path, listen: str, log_path: Path) -> Nginx:
    """Start nginx on a configuration it accepts, without waiting for it (see ``start_nginx``)."""
    binary = nginx_binary()
    if binary is None:
        raise ClusterError("nginx is not installed (make nginx installs Debian's)")
    prefix = config.parent
    command = [binary, "-e", "stderr", "-p", str(prefix), "-c", str(config)]
    user = UNPRIVILEGED_USER if os.geteuid() == 0 else None
    checked = subprocess.run(
        [*command, "-t", "-q"], capture_output=True, text=True, user=user, check=False
    )
    if checked.returncode != 0:
        raise ClusterError(f"nginx refused {config}:\n{checked.stderr}")
    with log_path.open("ab") as log_file:
        process = subprocess.Popen(
            [*command, "-g", "daemon off;"],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=user,
        )
    return Nginx(process, prefix, log_path, f"http://{listen}")


def start_nginx(config: Path, listen: str, log_path: Path) -> Nginx:
    """nginx, once /healthz answers through it (from an instance)."""
    proxy = launch_nginx(config, listen, log_path)
    try:
        wait_healthy(proxy.base, lambda: proxy.process.poll() is None, proxy.log)
    except BaseException:
        proxy.stop()
        raise
    return proxy


# -- the command ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per instance")
    parser.add_argument("--listen", default="127.0.0.1:8080", help="nginx's address")
    parser.add_argument("--first-port", type=int, default=8001, help="the first instance's port")
    parser.add_argument(
        "--first-events-port",
        type=int,
        default=9001,
        help="the first instance's event stream server's port",
    )
    parser.add_argument(
        "--logs",
        type=Path,
        default=ROOT / "instance" / "cluster",
        help="the logs, and a run directory for each instance (its control socket)",
    )
    args = parser.parse_args(argv)

    problems = check_environment(os.environ)
    if problems:
        print("cluster: " + "\ncluster: ".join(problems), file=sys.stderr)
        return 2
    env = instance_environment(os.environ, os.environ.get("PUBLIC_URL") or f"http://{args.listen}")
    args.logs.mkdir(parents=True, exist_ok=True)
    instances: list[Instance] = []
    event_servers: list[Instance] = []
    workers: list[JobWorker] = []
    proxy: Nginx | None = None
    # SIGTERM unwinds like Ctrl-C, so everything started is stopped; SIGHUP restarts the
    # instances started so far.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started in background
    signal.signal(
        signal.SIGHUP, lambda *_: [server.reload() for server in [*instances, *event_servers]]
    )
    try:
        prepare(env)
        for number in range(args.instances):
            name = f"instance-{number + 1}"
            instances.append(
                launch_instance(
                    name,
                    env,
                    args.first_port + number,
                    args.workers,
                    args.logs / f"{name}.log",
                    args.logs / name,
                )
            )
            event_servers.append(
                launch_event_server(
                    f"{name}-events",
                    env,
                    args.first_events_port + number,
                    args.logs / f"{name}-events.log",
                    args.logs / name,
                )
            )
            workers.append(launch_worker(f"{name}-jobs", env, args.logs / f"{name}-jobs.log"))
        for instance in [*instances, *event_servers]:
            instance.wait_ready()
        prefix = nginx_prefix()
        config = write_nginx_config(
            prefix,
            args.listen,
            [i.address for i in instances],
            event_servers=[e.address for e in event_servers],
        )
        proxy = start_nginx(config, args.listen, args.logs / "nginx.log")
        print(
            f"cluster: nginx on http://{args.listen} in front of "
            f"{', '.join(i.address for i in instances)}; logs in {args.logs}",
            flush=True,
        )
        running = [
            proxy.process,
            *(i.process for i in [*instances, *event_servers]),
            *(w.process for w in workers),
        ]
        while all(p.poll() is None for p in running):
            time.sleep(1)
        print("cluster: a process exited; stopping the others", file=sys.stderr)
        return 1
    except ClusterError as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if proxy is not None:
            proxy.stop()
            shutil.rmtree(proxy.prefix, ignore_errors=True)
        stop_all(
            [*(i.process for i in [*instances, *event_servers]), *(w.process for w in workers)]
        )


if __name__ == "__main__":
    sys.exit(main())
