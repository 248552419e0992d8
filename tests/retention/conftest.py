"""The service on a real loopback port: its own issuer serves the status lists re-checked."""

from holder.conftest import serve, serve_wsgi  # noqa: F401
