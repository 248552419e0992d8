"""Who the audit trail names for a request: the signed-in user, or the integration key."""

from __future__ import annotations

from flask import g, has_request_context, request

from app.audit.operations import Actor
from app.extensions import db
from app.integrations.models import Integration

# Reads write bookkeeping (a key's last use); only a write request can change a record.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def request_actor() -> Actor | None:
    """The caller of a write request, None for everyone else (the person, the wallet, jobs).

    The client address is ``remote_addr`` as ProxyFix left it, so only the
    ``TRUSTED_PROXY_COUNT`` nearest proxies are believed (as for the throttles).
    """
    if not has_request_context() or request.method not in WRITE_METHODS:
        return None
    cached = g.get("audit_actor")
    if cached is not None:
        return cached
    actor = None
    if g.get("user") is not None:
        user = g.user
        actor = Actor("user", str(user.id), user.email, request.remote_addr)
    elif g.get("integration_id") is not None:
        with db.session.no_autoflush:
            integration = db.session.get(Integration, g.integration_id)
        name = integration.name if integration is not None else "deleted integration"
        actor = Actor("integration", str(g.integration_id), name, request.remote_addr)
    if actor is not None:
        g.audit_actor = actor
    return actor
