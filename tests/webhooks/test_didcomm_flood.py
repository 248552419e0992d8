"""A flood of DIDComm messages naming a tarpit never delays another organization's webhook.

``POST /didcomm`` is open to anyone, and a sender's DID names where our answers go. Here
organization A's invitations are taken by made-up DIDs whose endpoint is a tarpit (it accepts
connections and never answers), which then ping; strangers' DIDs (no exchange of ours) ping
too. The worker is the real command (``flask --app wsgi jobs worker``) in a process of its
own, its DIDComm sends under a deadline longer than the test, so the tarpit holds every send
it gets throughout. Organization B's webhook test event still arrives: before any of those
sends ended (it never waited for one), with the tarpit holding no more than its host's share
of sends although more were waiting and DIDComm threads were free."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from didcomm.test_didcomm_verifier import connection_request, identity_schema, post
from factories import make_staff, make_verification
from flask import Flask
from receiver import Receiver
from support.tarpit import Tarpit
from webhook_support import add_endpoint, environment

from app.didcomm import invitation as oob
from app.didcomm import messaging, peer_did, protocols

ROOT = Path(__file__).resolve().parents[2]
INVITATIONS = 6
PINGS_PER_HOLDER = 3
STRANGERS = 40
SENDS_PER_HOST = 2


class Worker:
    def __init__(self, app: Flask) -> None:
        env = {
            **environment(app),
            "DIDCOMM_SEND_TIMEOUT": "120",
            "DIDCOMM_SENDS_PER_HOST": str(SENDS_PER_HOST),
        }
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "flask", "--app", "wsgi", "jobs", "worker"),
                *("--threads", "1", "--delivery-threads", "4", "--didcomm-threads", "4"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    with Tarpit() as running:
        yield running


@pytest.fixture
def worker(hooks_app: Flask, tarpit: Tarpit) -> Iterator[Worker]:
    started = Worker(hooks_app)
    yield started
    tarpit.close()  # the hanging sends end at once, so the worker stops without waiting
    started.stop()


def ping(sender: peer_did.NewPeerDid, ours: str) -> bytes:
    message = messaging.message(protocols.PING, {"response_requested": True})
    return messaging.pack(message, to_did=ours, sender=sender)


def flood(app: Flask, tarpit: Tarpit) -> None:
    """A's invitations taken by DIDs naming the tarpit, their pings, and strangers' pings."""
    client = app.test_client()
    staff = make_staff(app, email="a@example.test", org_name="A")
    verification = make_verification(
        client,
        staff,
        schema_id=identity_schema(client, staff),
        claims=["given_name"],
        attributes=[{"name": "country", "operator": "EQUAL", "value": "DE"}],
        wallet_protocols=["didcomm"],
    )
    ours = ""
    for number in range(INVITATIONS):
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": f"a-{number}", "verification_id": verification["id"]},
        ).get_json()
        connected = client.get(f"/verifications/{individual['id']}/connect").get_json()
        invitation = oob.parse_oob(connected["connection_url"])
        ours = invitation["from"]
        holder = peer_did.make(tarpit.url)
        request = messaging.pack(connection_request(invitation), to_did=ours, sender=holder)
        assert post(client, request).status_code == 202
        for _ in range(PINGS_PER_HOLDER):
            assert post(client, ping(holder, ours)).status_code == 202
    for _ in range(STRANGERS):
        assert post(client, ping(peer_did.make(tarpit.url), ours)).status_code == 202


def test_another_organizations_webhook_arrives_while_didcomm_sends_hang_on_a_tarpit(
    hooks_app: Flask, receiver: Receiver, tarpit: Tarpit, worker: Worker
):
    flood(hooks_app, tarpit)
    tarpit.wait_for(SENDS_PER_HOST)  # the worker took the flood: sends are hanging

    client = hooks_app.test_client()
    staff_b = make_staff(hooks_app, email="b@example.test", org_name="B")
    endpoint = add_endpoint(client, staff_b, receiver.url)
    sent = client.post(f"/webhooks/endpoints/{endpoint['id']}/test", headers=staff_b.headers())
    assert sent.status_code == 202, sent.get_json()

    # A liveness bound, not a measure of speed: it took a tenth of a second without a flood.
    arrived = receiver.wait_for(1, timeout=10)
    assert len(arrived) == 1
    assert arrived[0].verified(endpoint["secret"])["type"] == "webhook.test"
    # B waited for none of the tarpit's sends to end: every one of them is still hanging,
    # and the tarpit never got more than its host's share although far more sends (two per
    # connection, one per ping) were waiting and two DIDComm threads were free.
    assert tarpit.ended == 0
    assert tarpit.hanging() == SENDS_PER_HOST
    assert tarpit.arrived == SENDS_PER_HOST
