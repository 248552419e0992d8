"""The webhook receivers of docs/how-to/receive-webhooks.md run as written.

Each is fed deliveries signed by the service's own signer (``signed_headers``, the code every
delivery goes through) with a secret made as the service makes them: a good delivery is taken
once (204, and a repeat of its ``webhook-id`` is not acted on twice), a changed body or
another secret's signature is refused with 400.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import requests
from support.npm import ensure_node_modules

from app.webhooks.delivery import signed_headers
from app.webhooks.sealing import new_secret

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "receive-webhooks.md"
EXAMPLES_NODE = ROOT / "examples" / "node"


def block(language: str) -> str:
    (found,) = re.findall(rf"^```{language}\n(.*?)^```$", PAGE.read_text(), re.M | re.S)
    return found


def event(customer_id: str) -> str:
    data = {"customer_id": customer_id, "status": "VERIFIED", "claims": None}
    return json.dumps(
        {"type": "individual.verified", "timestamp": "2026-11-28T07:00:00Z", "data": data}
    )


def test_the_python_receiver_takes_a_signed_delivery_once_and_refuses_a_forged_one(
    monkeypatch, capsys
):
    secret = new_secret()
    monkeypatch.setenv("VERITY_WEBHOOK_SECRET", secret)
    namespace: dict = {"__name__": "receiver"}
    exec(compile(block("python"), str(PAGE), "exec"), namespace)
    client = namespace["app"].test_client()
    body = event("crm-42")
    headers = signed_headers("msg_1", body, [secret])

    assert client.post("/verity/webhook", data=body, headers=headers).status_code == 204
    assert client.post("/verity/webhook", data=body, headers=headers).status_code == 204
    assert capsys.readouterr().out == "crm-42 VERIFIED\n"

    forged = body.replace("crm-42", "crm-43")
    assert client.post("/verity/webhook", data=forged, headers=headers).status_code == 400
    other = signed_headers("msg_2", body, [new_secret()])
    assert client.post("/verity/webhook", data=body, headers=other).status_code == 400
    assert capsys.readouterr().out == ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_node_receiver_takes_a_signed_delivery_once_and_refuses_a_forged_one(tmp_path):
    ensure_node_modules(EXAMPLES_NODE, "standardwebhooks")
    (tmp_path / "node_modules").symlink_to(EXAMPLES_NODE / "node_modules")
    (tmp_path / "receiver.mjs").write_text(block("js"))
    secret, port = new_secret(), free_port()
    url = f"http://127.0.0.1:{port}/verity/webhook"
    env = {**os.environ, "VERITY_WEBHOOK_SECRET": secret, "PORT": str(port)}
    receiver = subprocess.Popen(
        ["node", "receiver.mjs"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(requests.ConnectionError):
                requests.get(url, timeout=2)
                break
            time.sleep(0.1)
        body = event("crm-42")
        headers = signed_headers("msg_1", body, [secret])

        assert requests.post(url, data=body, headers=headers, timeout=5).status_code == 204
        assert requests.post(url, data=body, headers=headers, timeout=5).status_code == 204
        forged = body.replace("crm-42", "crm-43")
        assert requests.post(url, data=forged, headers=headers, timeout=5).status_code == 400
        other = signed_headers("msg_2", body, [new_secret()])
        assert requests.post(url, data=body, headers=other, timeout=5).status_code == 400
    finally:
        receiver.terminate()
        out, _ = receiver.communicate(timeout=10)
    assert out == "crm-42 VERIFIED\n"
