"""A web process that dies right after committing a decision, before it can enqueue anything.

Run as ``python decide_then_die.py '<config json>'`` with ``{"path", "form"}`` (a wallet's
answer) on stdin: the service decides and commits; the hook that would hand the relay job to
the queue kills the process instead, so only the outbox knows about the event.
"""

from __future__ import annotations

import json
import os
import signal
import sys

from app import create_app, jobs


def die(*_args, **_kwargs) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    config = json.loads(sys.argv[1])
    answer = json.loads(sys.stdin.read())
    app = create_app(config)
    jobs.enqueue = die  # the process is killed between the commit and the enqueue
    app.test_client().post(answer["path"], data=answer["form"])
    sys.exit("the decision was not committed, or nothing was enqueued after it")


if __name__ == "__main__":
    main()
