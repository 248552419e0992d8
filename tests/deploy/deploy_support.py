"""Two instances behind nginx, as deploy/cluster.py runs them, on a PostgreSQL schema of the
test's own and the test Redis.

They run in the PostgreSQL pass of ``make test`` (``VERITY_TEST_DB=postgresql``) when nginx is
installed (``make test`` installs Debian's); otherwise they are skipped, saying why.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import shutil
import socket
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from factories import make_staff
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

from app import create_app
from app.extensions import db
from deploy import cluster

# Settings of the developer's environment that would change the deployment under test.
SCRUBBED = ("RATELIMIT_STORAGE_URI", "VOUCHER_EXCHANGE_LIMIT", "TRUSTED_PROXY_COUNT", "FLASK_APP")
SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"  # the shipped public PID schema
EMAIL = "operator@example.test"
WORKERS = 2  # per instance, as ``make run``
HTTP_TIMEOUT = 30


def why_skipped() -> str | None:
    if cluster.nginx_binary() is None:
        return "nginx is not installed (make test installs Debian's nginx)"
    if os.environ.get("VERITY_TEST_DB") != "postgresql" or not os.environ.get("TEST_DATABASE_URL"):
        return (
            "instances share PostgreSQL: runs in the PostgreSQL pass "
            "(VERITY_TEST_DB=postgresql with TEST_DATABASE_URL, as make test does)"
        )
    if not os.environ.get("TEST_REDIS_URL"):
        return "instances share Redis: needs TEST_REDIS_URL"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def loopback_client() -> str:
    """A loopback address of its own (all of 127/8 reaches this machine), so the per-IP voucher
    budget in the shared Redis is this run's alone."""
    return "127." + ".".join(str(1 + secrets.randbelow(254)) for _ in range(3))


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    request_id: str
    headers: Message

    def json(self) -> Any:
        return json.loads(self.body)


def send(
    base: str,
    method: str,
    path: str,
    body: str | bytes | None = None,
    headers: Mapping[str, str] | None = None,
    source: str | None = None,
) -> Answer:
    """One request on a fresh connection (so nginx spreads them), tagged with an X-Request-ID
    the instance that answers writes in its request log."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(
        host, int(port), timeout=HTTP_TIMEOUT, source_address=(source, 0) if source else None
    )
    request_id = uuid.uuid4().hex
    try:
        connection.request(
            method, path, body=body, headers={"X-Request-ID": request_id, **(headers or {})}
        )
        answer = connection.getresponse()
        return Answer(answer.status, answer.read(), request_id, answer.headers)
    finally:
        connection.close()


def post_json(base: str, path: str, value: Any, **kwargs: Any) -> Answer:
    headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
    return send(base, "POST", path, json.dumps(value), headers, **kwargs)


@dataclass
class Deployment:
    nginx: cluster.Nginx
    instances: list[cluster.Instance]
    env: dict[str, str]
    engine: Engine
    token: str
    workdir: Path
    verification_id: str = ""
    # Each instance's event stream server, when the deployment has them (same order).
    event_servers: list[cluster.Instance] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.nginx.base

    def staff(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def answered_by(self, request_ids: set[str]) -> dict[str, int]:
        """How many of these requests each instance answered, from its request log."""
        counts = {}
        for instance in self.instances:
            logged = {
                json.loads(line).get("request_id")
                for line in instance.log().splitlines()
                if line.startswith("{") and '"request_id"' in line
            }
            counts[instance.name] = len(request_ids & logged)
        return counts

    def restart(self, instance: cluster.Instance) -> cluster.Instance:
        index = self.instances.index(instance)
        instance.stop()
        fresh = cluster.start_instance(
            instance.name,
            self.env,
            instance.port,
            WORKERS,
            instance.log_path,
            instance.control_socket.parent,
        )
        self.instances[index] = fresh
        return fresh


@contextlib.contextmanager
def schema_of_its_own(base_url: str) -> Iterator[tuple[str, Engine]]:
    """A PostgreSQL schema for this deployment; its URL and an engine that reads it."""
    base = make_url(base_url)
    schema = f"verity_deploy_{os.getpid()}_{secrets.token_hex(3)}"
    admin = create_engine(base)
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    url = base.update_query_dict({"options": f"-csearch_path={schema}"})
    engine = create_engine(url)
    try:
        yield url.render_as_string(hide_password=False), engine
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


@contextlib.contextmanager
def two_instances_behind_nginx(
    workdir: Path,
    reach_database: Callable[[str], str] = str,
    event_servers: bool = False,
    settings: Mapping[str, str] | None = None,
) -> Iterator[Deployment]:
    """The deployment, stopped on leaving; ``reach_database`` turns the URL of its schema into
    the one its instances use (the same, unless a test puts something in between). With
    ``event_servers`` each instance has its event stream server, as deploy/cluster.py starts
    them; ``settings`` are added to every process's environment."""
    listen = f"127.0.0.1:{free_port()}"
    with schema_of_its_own(os.environ["TEST_DATABASE_URL"]) as (database_url, engine):
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env.update(
            DATABASE_URL=reach_database(database_url),
            RATELIMIT_STORAGE_URI=os.environ["TEST_REDIS_URL"],
            SECRET_KEY=secrets.token_hex(32),
            ISSUER_KEY_SECRET=secrets.token_hex(32),
            REQUEST_LOG="1",
            PYTHONUNBUFFERED="1",
        )
        env.update(settings or {})
        assert cluster.check_environment(env) == []
        env = cluster.instance_environment(env, f"http://{listen}")
        cluster.prepare(env)
        instances: list[cluster.Instance] = []
        streams: list[cluster.Instance] = []
        proxy = None
        prefix = cluster.nginx_prefix()
        try:
            for number in (1, 2):
                name = f"instance-{number}"
                instances.append(
                    cluster.launch_instance(
                        name, env, free_port(), WORKERS, workdir / f"{name}.log", workdir / name
                    )
                )
                if event_servers:
                    streams.append(
                        cluster.launch_event_server(
                            f"{name}-events",
                            env,
                            free_port(),
                            workdir / f"{name}-events.log",
                            workdir / name,
                        )
                    )
            token = staff_token(database_url)  # while the instances start
            for instance in [*instances, *streams]:
                instance.wait_ready()
            config = cluster.write_nginx_config(
                prefix,
                listen,
                [i.address for i in instances],
                event_servers=[s.address for s in streams],
            )
            proxy = cluster.start_nginx(config, listen, workdir / "nginx.log")
            deployment = Deployment(proxy, instances, env, engine, token, workdir, "", streams)
            seed(deployment)
            yield deployment
        finally:
            if proxy is not None:
                proxy.stop()
            cluster.stop_all([server.process for server in [*instances, *streams]])
            shutil.rmtree(prefix, ignore_errors=True)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    reason = why_skipped()
    if reason:
        pytest.skip(reason)
    with two_instances_behind_nginx(tmp_path_factory.mktemp("deploy")) as deployment:
        yield deployment


def staff_token(database_url: str) -> str:
    """A session token of a PRO organization's owner, made in this process."""
    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "TESTING": True})
    try:
        return make_staff(app, EMAIL, org_name="Two").token
    finally:
        with app.app_context():
            db.engine.dispose()


def seed(deployment: Deployment) -> None:
    """A verification any did:jwk issuer can answer."""
    created = post_json(
        deployment.base,
        "/verifications",
        {
            "name": "Behind nginx",
            "schema_id": SCHEMA_ID,
            "claims": ["given_name"],
            "attributes": [{"name": "birthdate", "operator": "AGE_AT_LEAST", "value": 18}],
            "trusted_issuers": [],
        },
        headers=deployment.staff(),
    )
    assert created.status == 201, created.body
    deployment.verification_id = created.json()["id"]
