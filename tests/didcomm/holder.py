"""The Identus SDK holder (``identus/holder.mjs``, the Socious Wallet's agent) as a Python
object: one node process speaking line-delimited JSON, its commands as methods, its events
kept in order for the tests to wait on."""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from support.npm import ensure_node_modules

SDK_DIR = Path(__file__).resolve().parent / "identus"


class HolderError(RuntimeError):
    """The driver answered a command with ``ok: false``, or died."""


class Holder:
    """Start with the mediator's DID; :meth:`close` stops node (always call it).

    ``poll_ms`` is the SDK's own pickup period (``Agent.startFetchingMessages(period)``); the
    wallet keeps the default 5000, the tests use less to wait less.
    """

    def __init__(self, mediator_did: str, *, poll_ms: int = 200, start_timeout: float = 60):
        ensure_node_modules(SDK_DIR, "@hyperledger/identus-sdk")
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is required to run the Identus SDK holder")
        self._ids = itertools.count(1)
        self._lines: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._reading = True  # stdout still open
        self._process = subprocess.Popen(
            [node, "holder.mjs", mediator_did, f"--poll-ms={poll_ms}"],
            cwd=SDK_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        try:
            self.ready = self._wait(
                lambda line: line.get("event") in ("ready", "error"), start_timeout, "ready"
            )
            if self.ready["event"] != "ready":
                raise HolderError(f"the holder did not start: {self.ready}\n{self.stderr()}")
        except BaseException:
            self.close()
            raise

    # Commands.

    def prism_did(self) -> str:
        """A new long-form did:prism (secp256k1 master-0, authentication-0) held by the agent:
        issue credentials to it, and it signs presentations with it."""
        return self.call("prism_did")["did"]

    def peer_did(self) -> str:
        """A new did:peer:2 routed through the mediator (keylist updated), as for a connection."""
        return self.call("peer_did")["did"]

    def store_credential(self, jwt: str) -> dict[str, Any]:
        """Store a JWT VC (``JWTCredential.fromJWS`` + ``pluto.storeCredential``)."""
        return self.call("store_credential", jwt=jwt)["credential"]

    def accept(self, url: str) -> dict[str, Any]:
        """``parseOOBInvitation`` + ``acceptInvitation``: the invitation's id and from."""
        return self.call("accept", url=url)["invitation"]

    def is_revoked(self, credential_type: str) -> bool:
        """The SDK's own ``Agent.isCredentialRevoked`` on the stored credential whose claims'
        ``type`` is this one (HolderError with the SDK's reason when it cannot tell)."""
        return self.call("is_revoked", type=credential_type)["revoked"]

    def pick(self, credential_type: str | None) -> None:
        """Present the credential whose claims' ``type`` is this one, as a person picks one in
        the wallet (None: the wallet's own choice, the KYC credential)."""
        self.call("pick", type=credential_type)

    def call(self, cmd: str, timeout: float = 60, **args: Any) -> dict[str, Any]:
        command_id = next(self._ids)
        if self._process.stdin is None or self._process.poll() is not None:
            raise HolderError(f"the holder is not running\n{self.stderr()}")
        self._process.stdin.write(json.dumps({"id": command_id, "cmd": cmd, **args}) + "\n")
        self._process.stdin.flush()
        reply = self._wait(lambda line: line.get("id") == command_id, timeout, cmd)
        if not reply.get("ok"):
            raise HolderError(f"{cmd}: {reply.get('error')}")
        return reply

    # Events.

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """Events so far (``connected``, ``message``, ``request``, ``presented``, ``error``)."""
        with self._changed:
            return [e for e in self._lines if "event" in e and name in (None, e["event"])]

    def errors(self) -> list[dict[str, Any]]:
        return self.events("error")

    def wait_for(self, event: str, timeout: float = 30, **fields: Any) -> dict[str, Any]:
        """The first ``event`` whose fields include ``fields``, waiting up to ``timeout`` s."""
        return self._wait(
            lambda line: (
                line.get("event") == event and all(line.get(k) == v for k, v in fields.items())
            ),
            timeout,
            f"{event} {fields}",
        )

    def stderr(self) -> str:
        return "\n".join(self._stderr)

    # Process.

    def close(self) -> None:
        """Ask the agent to stop, then make sure node is gone."""
        process = self._process
        if process.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert process.stdin is not None
                process.stdin.write(json.dumps({"id": 0, "cmd": "stop"}) + "\n")
                process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        for reader in self._readers:
            reader.join(timeout=5)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait(self, match, timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self._lines:
                    if match(line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or (self._process.poll() is not None and not self._reading):
                    events = [e.get("event") or e.get("id") for e in self._lines]
                    raise HolderError(
                        f"waited {timeout} s for {what}; the holder said {events}\n{self.stderr()}"
                    )
                self._changed.wait(min(left, 0.5))

    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        for text in self._process.stdout:
            try:
                line = json.loads(text)
            except ValueError:
                self._stderr.append(f"(stdout) {text.rstrip()}")
                continue
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._reading = False
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        for text in self._process.stderr:
            self._stderr.append(text.rstrip())
