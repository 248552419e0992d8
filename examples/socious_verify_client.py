"""A Socious Verify (ShinID) client, written from ShinID's own verification guide
(``docs/VERIFICATION.md`` of ``socious-io/shin-api``) and its API.

It is the backend an organization runs against ShinID, in the guide's two steps:

1. send the customer to the no-code link ``<app>/connect/redirect/<verification_id>?customer=<id>``;
2. fetch the customer's verification with the ``apikey`` header and read the claims from
   ``body``.

Its settings are ShinID's two addresses (the app and the API), the secret API key and the
verification's ID; nothing else.

Usage::

    SHINID_APP=https://app.shinid.com SHINID_API=https://api.shinid.com \\
    SHINID_API_KEY=... SHINID_VERIFICATION_ID=... \\
    python socious_verify_client.py link <customer>     # prints the link to send
    python socious_verify_client.py wait <customer>     # waits for the outcome, prints it

``wait`` prints one JSON object: ``status``, the claims read from ``body`` and
``validation_error``; it exits 0 on ``VERIFIED``, 1 on ``FAILED``, 2 on a timeout.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

APP = os.environ.get("SHINID_APP", "https://app.shinid.com").rstrip("/")
API = os.environ.get("SHINID_API", "https://api.shinid.com").rstrip("/")
API_KEY = os.environ.get("SHINID_API_KEY", "")
VERIFICATION_ID = os.environ.get("SHINID_VERIFICATION_ID", "")
# The claims this backend reads from the ShinID KYC credential's subject.
READS = ("first_name", "last_name", "country")


def verification_link(customer: str) -> str:
    """The guide's link: the customer's username rides along in ``customer``."""
    query = urllib.parse.urlencode({"customer": customer})
    return f"{APP}/connect/redirect/{VERIFICATION_ID}?{query}"


def fetch_individual(customer: str) -> dict | None:
    """``GET /verifications/{verification_id}/individuals/{customer}`` with the apikey;
    ``None`` while the customer has not opened the link yet (ShinID answers 400)."""
    path = f"/verifications/{VERIFICATION_ID}/individuals/{urllib.parse.quote(customer, safe='')}"
    request = urllib.request.Request(API + path, headers={"apikey": API_KEY})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        if error.code == 400:
            return None
        raise


def wait_for_outcome(customer: str, timeout: float) -> dict:
    """Polls the lookup every second until ``status`` is VERIFIED or FAILED."""
    deadline = time.monotonic() + timeout
    while True:
        individual = fetch_individual(customer)
        if individual and individual["status"] in ("VERIFIED", "FAILED"):
            body = individual.get("body") or {}
            return {
                "status": individual["status"],
                "claims": {name: body.get(name) for name in READS},
                "validation_error": individual.get("validation_error"),
                "verified_at": individual.get("verified_at"),
                "verification": individual["verification"]["name"],
            }
        if time.monotonic() > deadline:
            return {"status": individual["status"] if individual else None, "timeout": True}
        time.sleep(1)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("link", "wait"):
        print(__doc__, file=sys.stderr)
        return 64
    command, customer = argv
    if command == "link":
        print(verification_link(customer))
        return 0
    outcome = wait_for_outcome(customer, float(os.environ.get("SHINID_TIMEOUT", "120")))
    print(json.dumps(outcome))
    if outcome.get("timeout"):
        return 2
    return 0 if outcome["status"] == "VERIFIED" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
