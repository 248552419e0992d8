"""A minimal organization backend for Verity, in Python (Flask and requests).

1. ``GET /verify?customer_id=...`` opens an individual of the verification for that customer
   and redirects the person's browser to the individual's ``page_url``, where Verity asks for
   the credential (a QR code, a wallet link, the browser's Digital Credentials API).
2. ``POST /webhooks/verity`` receives Verity's signed events; the signature is checked with
   the Standard Webhooks library before anything in the body is believed.
3. On an outcome event the backend takes the decision from the authenticated lookup, never
   from the event alone.
4. ``GET /customers/<customer_id>`` shows what the backend now knows of that customer.

Settings (environment): VERITY_URL, VERITY_APIKEY, VERITY_VERIFICATION_ID,
VERITY_WEBHOOK_SECRET (``whsec_...``), HOST and PORT (where this backend listens).
"""

from __future__ import annotations

import os
import threading
from urllib.parse import quote

import requests
from flask import Flask, abort, jsonify, redirect, request
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

VERITY_URL = os.environ.get("VERITY_URL", "http://127.0.0.1:8000").rstrip("/")
APIKEY = os.environ["VERITY_APIKEY"]
VERIFICATION_ID = os.environ["VERITY_VERIFICATION_ID"]
WEBHOOK = Webhook(os.environ["VERITY_WEBHOOK_SECRET"])
OUTCOMES = ("individual.verified", "individual.failed", "individual.revoked")

app = Flask(__name__)
customers: dict[str, dict] = {}  # what this backend knows; a real one keeps it in its database
lock = threading.Lock()


@app.get("/verify")
def verify():
    """Open an individual (safe to retry: one per customer and verification), send the person."""
    customer_id = request.args.get("customer_id") or abort(400, "customer_id is required")
    opened = requests.post(  # with the key: the verification takes no other open ("refused")
        f"{VERITY_URL}/verifications/individuals",
        json={"customer_id": customer_id, "verification_id": VERIFICATION_ID},
        headers={"apikey": APIKEY},
        timeout=10,
    )
    opened.raise_for_status()
    return redirect(opened.json()["page_url"], code=303)


@app.post("/webhooks/verity")
def webhook():
    """Check the signature on the raw body, then read the decision from the lookup."""
    try:
        event = WEBHOOK.verify(request.get_data(), dict(request.headers))
    except WebhookVerificationError:
        abort(400, "bad signature")
    data = event["data"]
    if event["type"] in OUTCOMES and data["verification_id"] == VERIFICATION_ID:
        customer_id = data["customer_id"]
        lookup = requests.get(
            f"{VERITY_URL}/verifications/{VERIFICATION_ID}/individuals/{quote(customer_id, safe='')}",
            headers={"apikey": APIKEY},
            timeout=10,
        )
        lookup.raise_for_status()
        decision = lookup.json()
        with lock:
            customers[customer_id] = {
                "webhook": {
                    "id": request.headers["webhook-id"],
                    "type": event["type"],
                    "signature": "verified",
                },
                "status": decision["status"],
                "validation_error": decision["validation_error"],
                # Who opened the record first: trust it only if "backend" (this key's).
                "opened_by": decision["opened_by"],
                "claims": decision["claims"],
            }
    return "", 204  # any 2xx: delivered; anything else is retried


@app.get("/customers/<customer_id>")
def customer(customer_id: str):
    with lock:
        known = customers.get(customer_id)
    return jsonify(known) if known else (jsonify({"status": "UNKNOWN"}), 404)


if __name__ == "__main__":
    app.run(host=os.environ.get("HOST", "127.0.0.1"), port=int(os.environ.get("PORT", "5000")))
