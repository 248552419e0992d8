"""Reading a text/event-stream as a client does: fields per the WHATWG parsing rules (enough
for what the service sends: id, event, data, retry and comments)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Message:
    id: str | None
    event: str | None
    data: str
    comment: bool = False

    def json(self) -> Any:
        return json.loads(self.data)


def messages(chunks: Iterable[bytes]) -> Iterator[Message]:
    """Messages (and comments, flagged) as the chunks complete them."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        while b"\n\n" in pending:
            block, pending = pending.split(b"\n\n", 1)
            yield parse_block(block.decode())


def parse_block(block: str) -> Message:
    fields: dict[str, list[str]] = {}
    comment = False
    for line in block.split("\n"):
        if line.startswith(":"):
            comment = True
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name, []).append(value.removeprefix(" "))
    return Message(
        id=fields.get("id", [None])[-1],
        event=fields.get("event", [None])[-1],
        data="\n".join(fields.get("data", [])),
        comment=comment and not fields,
    )


def events(chunks: Iterable[bytes], count: int) -> list[Message]:
    """The next ``count`` events, heartbeats and the retry field skipped."""
    found = []
    for message in messages(chunks):
        if message.id is not None:
            found.append(message)
            if len(found) == count:
                return found
    raise AssertionError(f"the stream ended after {len(found)} of {count} events")
