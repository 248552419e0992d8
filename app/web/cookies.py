"""Flask's signed cookie session, opened only when the request carries its cookie."""

from __future__ import annotations

from typing import Any

from flask.sessions import SecureCookieSession, SecureCookieSessionInterface


class LazyCookieSessionInterface(SecureCookieSessionInterface):
    """The dashboard's one-time notices ride in Flask's cookie; nothing else does.

    The stock interface builds its signing serializer (a key derivation) on every request to
    look for a cookie most requests never send: measured, a tenth of what ``/healthz`` cost.
    Without the cookie the session starts empty, exactly as the stock one would start it.
    """

    def open_session(self, app: Any, request: Any) -> SecureCookieSession | None:
        if not app.secret_key or self.get_cookie_name(app) in request.cookies:
            return super().open_session(app, request)
        return self.session_class()
