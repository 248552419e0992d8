"""A local stand-in for the three Stripe endpoints the service calls, served over real HTTP.

The billing tests run ``app.billing.stripe.StripeBilling`` (the production client, its
``requests`` calls included) against this server, so form encoding, headers, status handling
and error parsing are all exercised. It behaves as Stripe does where the client could notice:

- ``Authorization: Bearer <secret key>`` is checked; otherwise 401 with Stripe's error shape.
- Form fields Stripe requires are required; unknown customers and prices give 400
  ``resource_missing`` (``No such customer: 'cus_x'``).
- An ``Idempotency-Key`` reused with the same parameters replays the first answer; reused with
  other parameters it is refused, as Stripe does.
- ``fail_next = True`` makes the next call answer 500 ``api_error`` (an outage).

Typical use::

    with FakeStripe() as stripe:
        billing = StripeBilling(stripe.api_key, stripe.prices, api_base=stripe.url)
        ...
        assert stripe.customers
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from werkzeug.datastructures import MultiDict
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

DEFAULT_PRICES = {"PRO": "price_test_pro", "PREMIUM_PLUS": "price_test_premium_plus"}
_INDEX = re.compile(r"\[([^\]]*)\]")


class StripeError(Exception):
    """An error answer, rendered in Stripe's ``{"error": {...}}`` shape."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"type": type, "message": message}
        if code:
            self.body["code"] = code
        if param:
            self.body["param"] = param


def missing(param: str) -> StripeError:
    return StripeError(
        400, f"Missing required param: {param}.", code="parameter_missing", param=param
    )


def no_such(kind: str, object_id: str, param: str) -> StripeError:
    return StripeError(400, f"No such {kind}: '{object_id}'", code="resource_missing", param=param)


def nest(form: MultiDict[str, str]) -> dict[str, Any]:
    """Decode Stripe's bracket notation: ``line_items[0][price]`` -> ``{"line_items": [{...}]}``."""
    result: dict[str, Any] = {}
    for key, value in form.items(multi=True):
        head = key.split("[", 1)[0]
        path = [head, *_INDEX.findall(key[len(head) :])]
        node = result
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return {name: _lists(value) for name, value in result.items()}


def _lists(value: Any) -> Any:
    """Turn dicts keyed "0", "1", ... into lists, as Stripe reads indexed parameters."""
    if not isinstance(value, dict):
        return value
    converted = {key: _lists(item) for key, item in value.items()}
    if converted and all(key.isdigit() for key in converted):
        return [converted[key] for key in sorted(converted, key=int)]
    return converted


def valid_url(value: str) -> bool:
    return bool(re.match(r"^https?://[^\s/]+", value))


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, str]


class FakeStripe:
    """Customers, Checkout Sessions and billing portal sessions on ``127.0.0.1:<free port>``."""

    def __init__(self, api_key: str | None = None, prices: dict[str, str] | None = None) -> None:
        self.api_key = api_key or f"sk_test_{secrets.token_hex(12)}"
        self.prices = dict(prices or DEFAULT_PRICES)
        self.customers: dict[str, dict[str, Any]] = {}
        self.checkout_sessions: dict[str, dict[str, Any]] = {}
        self.portal_sessions: dict[str, dict[str, Any]] = {}
        self.requests: list[RecordedRequest] = []
        self.fail_next = False
        self.url = ""
        self._idempotent: dict[str, tuple[str, dict[str, str], Response]] = {}
        self._lock = threading.Lock()
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeStripe:
        # Port 0: the OS picks a free port and the socket is already bound, so there is no race.
        self._server = make_server("127.0.0.1", 0, self.wsgi, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeStripe:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- HTTP -----------------------------------------------------------------------------

    def wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        with self._lock:
            response = self._handle(request)
        response.headers["Request-Id"] = f"req_{secrets.token_hex(7)}"
        return response(environ, start_response)

    def _handle(self, request: Request) -> Response:
        form = request.form
        self.requests.append(
            RecordedRequest(request.method, request.path, dict(request.headers), dict(form.items()))
        )
        try:
            self._authenticate(request)
            if self.fail_next:
                self.fail_next = False
                raise StripeError(500, "An unknown error occurred", type="api_error")
            return self._idempotently(request, form)
        except StripeError as error:
            return json_response({"error": error.body}, error.status)

    def _authenticate(self, request: Request) -> None:
        header = request.headers.get("Authorization", "")
        if not header:
            raise StripeError(
                401,
                "You did not provide an API key. You need to provide your API key in the "
                "Authorization header, using Bearer auth (e.g. 'Authorization: Bearer "
                "YOUR_SECRET_KEY').",
            )
        scheme, _, key = header.partition(" ")
        if scheme != "Bearer" or key != self.api_key:
            masked = key[:8] + "*" * max(len(key) - 12, 0) + key[-4:] if len(key) > 12 else key
            raise StripeError(401, f"Invalid API Key provided: {masked}")

    def _idempotently(self, request: Request, form: MultiDict[str, str]) -> Response:
        key = request.headers.get("Idempotency-Key")
        params = dict(form.items())
        if key and key in self._idempotent:
            path, first_params, first = self._idempotent[key]
            if (path, first_params) != (request.path, params):
                raise StripeError(
                    400,
                    "Keys for idempotent requests can only be used with the same parameters "
                    f"they were first used with. Try using a key other than '{key}' if you "
                    "meant to execute a different request.",
                    type="idempotency_error",
                )
            replay = Response(first.get_data(), first.status_code, mimetype="application/json")
            replay.headers["Idempotent-Replayed"] = "true"
            return replay
        response = self._route(request, nest(form))
        if key:
            self._idempotent[key] = (request.path, params, response)
        return response

    def _route(self, request: Request, params: dict[str, Any]) -> Response:
        routes = {
            "/v1/customers": self._create_customer,
            "/v1/checkout/sessions": self._create_checkout_session,
            "/v1/billing_portal/sessions": self._create_portal_session,
        }
        handler = routes.get(request.path)
        if request.method != "POST" or handler is None:
            raise StripeError(
                404,
                f"Unrecognized request URL ({request.method}: {request.path}). Please see "
                "https://stripe.com/docs or we can help at https://support.stripe.com/.",
            )
        return json_response(handler(params))

    # -- resources ------------------------------------------------------------------------

    def _create_customer(self, params: dict[str, Any]) -> dict[str, Any]:
        customer = {
            "id": f"cus_{secrets.token_hex(7)}",
            "object": "customer",
            "name": params.get("name"),
            "email": params.get("email"),
            "metadata": params.get("metadata", {}),
            "livemode": False,
        }
        self.customers[customer["id"]] = customer
        return customer

    def _create_checkout_session(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode")
        if not mode:
            raise missing("mode")
        if mode not in ("payment", "setup", "subscription"):
            raise StripeError(
                400,
                f"Invalid mode: must be one of payment, setup, or subscription (got '{mode}')",
                param="mode",
            )
        self._require_url(params, "success_url", required=True)
        self._require_url(params, "cancel_url", required=False)
        customer = params.get("customer")
        if customer is not None and customer not in self.customers:
            raise no_such("customer", customer, "customer")
        line_items = self._line_items(params, required=mode != "setup")
        session_id = f"cs_test_{secrets.token_hex(16)}"
        session = {
            "id": session_id,
            "object": "checkout.session",
            "mode": mode,
            "customer": customer,
            "client_reference_id": params.get("client_reference_id"),
            "success_url": params["success_url"],
            "cancel_url": params.get("cancel_url"),
            "metadata": params.get("metadata", {}),
            "line_items": line_items,
            "status": "open",
            "payment_status": "unpaid",
            "url": f"{self.url}/c/pay/{session_id}",
            "livemode": False,
        }
        self.checkout_sessions[session_id] = session
        return session

    def _line_items(self, params: dict[str, Any], *, required: bool) -> list[dict[str, Any]]:
        items = params.get("line_items")
        if not items:
            if required:
                raise missing("line_items")
            return []
        for index, item in enumerate(items):
            price = item.get("price")
            if not price:
                raise missing(f"line_items[{index}][price]")
            if price not in self.prices.values():
                raise no_such("price", price, f"line_items[{index}][price]")
            quantity = item.get("quantity", "")
            if not quantity.isdigit() or int(quantity) < 1:
                raise StripeError(
                    400,
                    f"Quantity is required. Add `quantity` to `line_items[{index}]`",
                    code="parameter_missing",
                    param=f"line_items[{index}][quantity]",
                )
        return [{"price": item["price"], "quantity": int(item["quantity"])} for item in items]

    def _create_portal_session(self, params: dict[str, Any]) -> dict[str, Any]:
        customer = params.get("customer")
        if not customer:
            raise missing("customer")
        if customer not in self.customers:
            raise no_such("customer", customer, "customer")
        self._require_url(params, "return_url", required=False)
        session_id = f"bps_{secrets.token_hex(12)}"
        session = {
            "id": session_id,
            "object": "billing_portal.session",
            "customer": customer,
            "return_url": params.get("return_url"),
            "url": f"{self.url}/p/session/test_{secrets.token_hex(12)}",
            "livemode": False,
        }
        self.portal_sessions[session_id] = session
        return session

    @staticmethod
    def _require_url(params: dict[str, Any], name: str, *, required: bool) -> None:
        value = params.get(name)
        if value is None:
            if required:
                raise missing(name)
            return
        if not valid_url(value):
            raise StripeError(400, "Not a valid URL", code="url_invalid", param=name)


def json_response(body: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(body), status, mimetype="application/json")
