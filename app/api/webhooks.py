"""Events pushed to the service by the payment processor, authenticated by their signature."""

from __future__ import annotations

from flask import Blueprint, current_app, request

from app.api.common import documented, json_response
from app.billing import operations as billing
from app.web.payloads.base import HealthOut

bp = Blueprint("webhooks", __name__)


@bp.post("/billing/webhook")
@documented(
    "Payment processor events (Stripe-Signature checked): plan bought or cancelled",
    responses={200: HealthOut},
    tags=("plan",),
)
def billing_webhook():
    """400 INVALID_SIGNATURE for an unsigned or stale event; 503 when no secret is configured."""
    billing.handle_webhook(
        current_app.config["STRIPE_WEBHOOK_SECRET"],
        request.get_data(cache=False),
        request.headers.get("Stripe-Signature", ""),
    )
    return json_response({"status": "received"})
