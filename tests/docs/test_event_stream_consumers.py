"""The Python and Node consumers of docs/how-to/event-streams.md run as written, against the
service's routes served by a threaded server (as the event stream server serves them): each
reads the log from the start, and again from a Last-Event-ID, and gets each event once, in
order, as the webhook body.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest
from factories import make_apikey, make_staff, make_verification
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "event-streams.md"
PEOPLE = 3


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE.read_text(), re.M | re.S)


@pytest.fixture
def served(make_app) -> Iterator[tuple[str, str, list[str]]]:
    """A stream server on a free port, an integration key, and the organization's events so
    far: each person's link (individual.requested), opened through the routes."""
    app = make_app(EVENTS_POLL_SECONDS=0.02, EVENTS_HEARTBEAT_SECONDS=0.2, EVENTS_STREAM_SECONDS=60)
    staff = make_staff(app)
    apikey = make_apikey(app, staff.organization_id)
    client = app.test_client()
    verification = make_verification(client, staff)
    people = []
    for number in range(PEOPLE):
        opened = client.post(
            "/verifications/individuals",
            json={"customer_id": f"crm-{number}", "verification_id": verification["id"]},
        )
        assert client.get(f"/verifications/{opened.get_json()['id']}/connect").status_code == 200
        people.append(f"crm-{number}")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", apikey, people
    finally:
        server.shutdown()
        thread.join(10)


def test_the_python_consumer_reads_each_event_once_in_order_and_resumes(served):
    base, apikey, people = served
    namespace: dict = {"__name__": "consumer"}
    exec(compile(blocks("python")[0], str(PAGE), "exec"), namespace)
    events = namespace["events"]
    got = list(islice(events(base, apikey, last_event_id=0), PEOPLE))
    assert [event_id for event_id, _ in got] == [1, 2, 3]
    assert [body["data"]["customer_id"] for _, body in got] == people
    assert {body["type"] for _, body in got} == {"individual.requested"}
    resumed = list(islice(events(base, apikey, last_event_id=1), 2))
    assert [event_id for event_id, _ in resumed] == [2, 3]
    typed = events(base, apikey, last_event_id=0, type="individual.requested")
    assert next(typed)[0] == 1


def test_the_node_consumer_reads_each_event_once_in_order_and_resumes(served, tmp_path):
    base, apikey, people = served
    (tmp_path / "events.mjs").write_text(blocks("js")[0])
    (tmp_path / "run.mjs").write_text(
        'import { events } from "./events.mjs";\n'
        "const [base, apikey, last, count] = process.argv.slice(2);\n"
        "const got = [];\n"
        "for await (const { id, event } of events(base, apikey, Number(last))) {\n"
        "  got.push([id, event.type, event.data.customer_id]);\n"
        "  if (got.length === Number(count)) break;\n"
        "}\n"
        "console.log(JSON.stringify(got));\n"
    )

    def node(last: int, count: int) -> list[list]:
        done = subprocess.run(
            ["node", "run.mjs", base, apikey, str(last), str(count)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert node(0, PEOPLE) == [
        [number + 1, "individual.requested", customer] for number, customer in enumerate(people)
    ]
    assert [event[0] for event in node(2, 1)] == [3]
