"""Fixtures for DIDComm tests against the Socious Wallet's agent (Identus SDK 7.0.0).

``mediator`` (session): :class:`didcomm.mediator.Mediator` on ``127.0.0.1:<random port>``.
    ``mediator.did`` is its did:peer:2 (service ``uri`` = ``mediator.url``);
    ``mediator.passed`` lists every message it unpacked (:class:`~didcomm.mediator.Passed`:
    type, id, sender, thid, body, next, answer); ``mediator.wait_for(type_, where=...)``,
    ``mediator.keylist(host_did)``, ``mediator.queued(holder_did)``; ``mediator.errors``
    and ``mediator.unroutable`` should stay empty.

``holder`` (module): :class:`didcomm.holder.Holder`, one node process per test module running
    the SDK's own ``Agent`` (``identus/holder.mjs``) against ``mediator``, already granted
    mediation (``holder.ready`` has its host and routing DIDs). Commands:
    ``holder.prism_did()`` (a long-form did:prism the agent signs with: issue VCs to it),
    ``holder.store_credential(jwt)``, ``holder.peer_did()``, ``holder.accept(oob_url)``.
    What the agent does by itself, as the wallet does, is reported as events:
    ``holder.wait_for("connected" | "message" | "request" | "presented" | "error", **fields)``,
    ``holder.events(name)``, ``holder.errors()``. On a request-presentation it presents the
    stored credential whose ``credentialSubject.type`` is ``verification`` (the wallet's
    choice with SDK 7, see DIDCOMM.md §1.5); with none it reports an error event.
    It polls the mediator every 0.2 s (the SDK's ``startFetchingMessages(period)``; the
    wallet keeps 5 s), so a message forwarded to it arrives in well under a second.

``peer`` (function): :class:`didcomm.peer.Peer`, a DIDComm party on loopback with its own
    did:peer:2, sending with ``messaging.for_holder`` (``peer.send(msg, to_did)``), making
    invitations (``peer.invitation_url()``), recording what arrives (``peer.wait_for``).

``served`` (function): Verity on a real loopback port with a job worker thread
    (:class:`Served`: ``app``, ``base``), ``PUBLIC_URL`` the bound address and the outbound
    guard open to loopback (the mediator's address).

For the verifier's end-to-end tests, put them in this directory (so these fixtures apply) and
serve the Flask app on a real loopback port, since the SDK (another process) POSTs to it:
bind the server first, then build the app with ``PUBLIC_URL`` = the bound base URL, so its
DID's service is ``<PUBLIC_URL>/didcomm`` (``tests/holder/conftest.py`` ``serve_wsgi`` does
exactly this with ``werkzeug.serving.make_server``; move it to ``tests/support`` to share it).
Give ``holder.accept`` the invitation URL the app makes, then wait on ``holder`` events
(``connected``, ``request``, ``presented``) and on the app's records. The app reaches the
holder through ``mediator``, named in the holder's DID, exactly as it will reach the
Socious mediator. A module that needs a fresh wallet builds its own ``Holder(mediator.did)``
in a ``with`` block.

No process outlives its fixture: ``Holder.close`` stops the agent and kills node if need be;
the servers shut down in teardown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from werkzeug.serving import make_server

from app.jobs.queue import queue_of
from didcomm.holder import Holder
from didcomm.mediator import Mediator
from didcomm.peer import Peer


@pytest.fixture(scope="session")
def mediator() -> Iterator[Mediator]:
    with Mediator() as running:
        yield running


@pytest.fixture(scope="module")
def holder(mediator: Mediator) -> Iterator[Holder]:
    with Holder(mediator.did) as running:
        yield running


@pytest.fixture
def peer() -> Iterator[Peer]:
    with Peer() as running:
        yield running


class _Late:
    """The WSGI entry bound before the app exists: PUBLIC_URL needs the port."""

    app: Any = None

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        return self.app(environ, start_response)


@dataclass
class Served:
    app: Any
    base: str


@pytest.fixture
def served(make_app) -> Iterator[Served]:
    """Verity on a real loopback port, with a job worker thread: the SDK posts to it from
    another process, and the messages it takes are handled on the queue."""
    entry_point = _Late()
    server = make_server("127.0.0.1", 0, entry_point, threaded=True)
    base = f"http://127.0.0.1:{server.server_port}"
    app = make_app(PUBLIC_URL=base, TRUST_ALLOW_PRIVATE=True)
    entry_point.app = app
    stop = threading.Event()
    threads = [
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}),
        threading.Thread(target=_work, args=(app, stop)),
    ]
    for thread in threads:
        thread.start()
    yield Served(app, base)
    stop.set()
    server.shutdown()
    server.server_close()
    for thread in threads:
        thread.join(timeout=10)


def _work(app, stop: threading.Event) -> None:
    queue = queue_of(app)
    while not stop.is_set():
        if not queue.run_pending():
            stop.wait(0.05)
