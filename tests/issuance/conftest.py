"""The service on a real loopback port for the wallet tests: the same fixtures the holder
tests start it with."""

from holder.conftest import serve, serve_wsgi  # noqa: F401
