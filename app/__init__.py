"""Verity: verify people by the digital credentials they hold, and issue such credentials."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flask import Flask
from sqlalchemy import event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from werkzeug.middleware.proxy_fix import ProxyFix

from app import config as settings
from app.database import (
    configure_postgresql,
    configure_sqlite,
    engine_options,
    forbid_writes_when_read_only,
    watch_storage,
)
from app.deployment import check_issuing, register_issuing, register_verifier
from app.extensions import db, migrate
from app.throttle import throttle_voucher_exchange
from app.web.converters import register_converters
from app.web.cookies import LazyCookieSessionInterface

if TYPE_CHECKING:
    from app.trust import PrismResolution


class Verity(Flask):
    """Commit once at the request boundary, and only for a success.

    Views never roll back themselves: an exception rolls back before any error handler runs
    (so a handler draws its page from stored state), and so does a view's own answer of 400 or
    more (a refused form re-rendered, for one): whatever it changed on the way is undone.
    """

    def dispatch_request(self) -> Any:
        response = self.make_response(super().dispatch_request())
        # A view that never touched the database (healthz, metrics) has no session to end;
        # asking for one would create it only to commit nothing.
        if not db.session.registry.has():
            return response
        if response.status_code < 400:
            db.session.commit()
        else:
            roll_back()
        return response

    def handle_user_exception(self, e: Exception) -> Any:
        roll_back()
        return super().handle_user_exception(e)

    def handle_exception(self, e: Exception) -> Any:
        roll_back()
        return super().handle_exception(e)


def roll_back() -> None:
    """Undo the request's transaction before its error answer is drawn.

    When the database is unreachable the rollback itself can fail; the transaction died with
    its connection, so there is nothing left to undo: the connection is dropped and the error
    answer goes on (instead of a second error escaping the first one's handler).
    """
    if not db.session.registry.has():
        return
    try:
        db.session.rollback()
    except SQLAlchemyError:
        with contextlib.suppress(SQLAlchemyError):
            db.session.invalidate()


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    app = Verity(
        __name__,
        instance_path=str(settings.INSTANCE_DIR),
        static_folder="../static",
        template_folder="../templates",
    )
    app.config.update(settings.from_environment())
    app.config.update(overrides or {})
    settings.check_production_ready(app.config)
    settings.settle_public_url(app.config)
    settings.check_key_store(app.config)
    check_issuing(app.config)
    app.config.setdefault(
        "SQLALCHEMY_ENGINE_OPTIONS", engine_options(app.config["SQLALCHEMY_DATABASE_URI"])
    )
    app.json.sort_keys = False
    app.session_interface = LazyCookieSessionInterface()
    configure_logging(app)
    register_extensions(app)
    register_converters(app)
    register_blueprints(app)
    register_error_handlers(app)
    register_commands(app)
    return app


def configure_logging(app: Flask) -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s")


def register_extensions(app: Flask) -> None:
    from app import mail, models  # noqa: F401  (every model registered before migrations look)
    from app.billing.setup import billing_provider
    from app.web import language

    if app.config["TRUSTED_PROXY_COUNT"] > 0:
        count = app.config["TRUSTED_PROXY_COUNT"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=count, x_proto=count, x_host=count)  # type: ignore[method-assign]
    settings.INSTANCE_DIR.mkdir(exist_ok=True)
    db.init_app(app)
    with app.app_context():
        configure_sqlite(db.engine)
        configure_postgresql(db.engine)
        watch_storage(db.engine)
    if not event.contains(Session, "before_flush", forbid_writes_when_read_only):
        event.listen(Session, "before_flush", forbid_writes_when_read_only)
    register_audit()
    migrate.init_app(app, db, directory=str(settings.INSTANCE_DIR.parent / "migrations"))
    language.init_app(app, settings.INSTANCE_DIR / "translations")
    app.extensions["billing"] = billing_provider(app.config)
    register_verifier(app)
    register_issuing(app)
    mail.init_app(app)
    register_trust(app)
    register_jobs(app)
    register_webhooks(app)
    register_didcomm()
    register_zk_checks()
    register_type_addresses()


def register_type_addresses() -> None:
    """Schema writes learn where this deployment serves type metadata, so a ``vct`` under its
    ``/types/`` is held by one schema whichever page or endpoint writes it."""
    from flask import current_app

    from app.schemas import operations as schema_ops

    schema_ops.provide_types_base(lambda: current_app.config["PUBLIC_URL"])


def register_audit() -> None:
    """Every write a member of staff or an integration makes leaves an audit event."""
    from flask import current_app

    from app.audit import operations as audit
    from app.web.audit import request_actor

    audit.provide_actor(request_actor)
    audit.provide_retention_days(lambda: current_app.config["AUDIT_RETENTION_DAYS"])
    audit.listen()


def register_webhooks(app: Flask) -> None:
    """Events are written with the change that causes them and rendered as the API shows
    records; deliveries read the running application's settings."""
    from flask import current_app

    from app.api.webhook_endpoints import provide_renderers
    from app.webhooks import outbox
    from app.webhooks import settings as webhook_settings

    webhook_settings.provide(lambda: webhook_settings.from_config(current_app.config))
    outbox.listen()
    provide_renderers()


def register_didcomm() -> None:
    """The DIDComm agent reads the running application's settings, decides presentations with
    the same trust context as OpenID4VP answers, and hands credential offers to the issuance."""
    from flask import current_app

    from app.api.wallet import trust_context
    from app.didcomm_agent import settings as didcomm_settings
    from app.didcomm_agent.identities import prepare
    from app.issuance import didcomm as issuance_didcomm
    from app.presentations import didcomm as presentations_didcomm
    from app.presentations.operations import before_link
    from app.web.requests import base_url

    didcomm_settings.provide(lambda: didcomm_settings.from_config(current_app.config, base_url()))
    didcomm_settings.provide_context(trust_context)
    before_link(prepare)
    # The agent's threads are the parts': presentation requests and credential offers.
    presentations_didcomm.register()
    issuance_didcomm.register()


def register_zk_checks() -> None:
    """Zero-knowledge answers are checked by the job worker, with the trust context of any
    answer and its own pool (``app.api.zk_answers``)."""
    from flask import current_app

    from app.api.wallet import trust_context
    from app.api.zk_answers import check_settings
    from app.presentations import zk_checks

    zk_checks.provide(lambda: check_settings(current_app.config, trust_context))


def register_jobs(app: Flask) -> None:
    """The job queue, bound to every registered job (webhook deliveries, scheduled work)."""
    from app.jobs import queue

    queue.init_app(app)


def register_trust(app: Flask) -> None:
    """One outbound fetcher per process (its cache is only a cache) and the configured anchors."""
    from app.deployment import kept_status_check
    from app.retention import jobs as retention_jobs
    from app.trust import Fetcher, load_pem_anchors

    app.extensions["fetcher"] = Fetcher(
        timeout=app.config["FETCH_TIMEOUT"], allow_private=app.config["TRUST_ALLOW_PRIVATE"]
    )
    pem = app.config["TRUST_ANCHORS_PEM"]
    app.extensions["trust_anchors"] = load_pem_anchors(pem) if pem else []
    app.extensions["prism"] = prism_resolution(app.config)
    register_trust_sources(app)
    # The revocation re-check job reads kept status references with the same fetcher.
    retention_jobs.provide(kept_status_check)


def prism_resolution(config: Mapping[str, Any]) -> PrismResolution:
    """Where short-form did:prism issuers resolve (``app.trust.did_prism``): the pinned DID
    documents and the DID resolver. A file that cannot be read, or a resolver address that is
    not a URL the fetcher may reach, stops the start rather than fail every presentation."""
    from app.trust import PrismResolution
    from app.trust.did_prism import load_pinned

    url = config.get("DID_RESOLVER_URL") or ""
    schemes = ("https://", "http://") if config.get("TRUST_ALLOW_PRIVATE") else ("https://",)
    if url and not url.startswith(schemes):
        raise RuntimeError("DID_RESOLVER_URL must be an https:// URL")
    try:
        pinned = load_pinned(config.get("PINNED_DID_DOCUMENTS") or "")
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None
    return PrismResolution(pinned, url)


def register_trust_sources(app: Flask) -> None:
    """Lists are fetched by their own fetcher: larger than any issuer document (the EU's
    lists run to megabytes), never cached (a refresh wants the list as published now)."""
    from flask import current_app

    from app.trust import Fetcher
    from app.trust_sources import operations
    from app.trust_sources import settings as source_settings

    fetcher = Fetcher(
        timeout=app.config["TRUST_LIST_TIMEOUT"],
        max_bytes=app.config["TRUST_LIST_MAX_BYTES"],
        cache_ttl=0,
        allow_private=app.config["TRUST_ALLOW_PRIVATE"],
    )
    source_settings.check_stale_policy(app.config["TRUST_LIST_STALE"])
    app.extensions["trust_list_fetcher"] = fetcher
    source_settings.provide(
        lambda: source_settings.from_config(
            current_app.config, current_app.extensions["trust_list_fetcher"]
        )
    )
    operations.listen()


def register_blueprints(app: Flask) -> None:
    from app import pages, staff
    from app.api import (
        audit,
        auth,
        backend,
        credentials,
        dc_api,
        didcomm,
        events,
        health,
        issuer,
        public,
        reference,
        staff_api,
        trust_sources,
        wallet,
        webhook_endpoints,
        webhooks,
    )
    from app.request_log import register_request_log

    for module in (
        health,
        public,
        wallet,
        didcomm,
        backend,
        events,
        staff_api,
        credentials,
        issuer,
        auth,
        webhooks,
        webhook_endpoints,
        trust_sources,
        audit,
        dc_api,
        reference,
        pages,
        staff,
    ):
        app.register_blueprint(module.bp)
    throttle_voucher_exchange(app)
    register_request_log(app)


def register_error_handlers(app: Flask) -> None:
    from app.errors import register_error_handlers as register

    register(app)


def register_commands(app: Flask) -> None:
    from app.cli import register
    from app.jobs.cli import jobs_cli

    register(app)
    app.cli.add_command(jobs_cli)
