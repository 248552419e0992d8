"""The one client for every outbound fetch the trust code makes: issuer metadata, JWK sets,
did:web documents and status lists.

Every URL it fetches comes from a credential someone presented, so each fetch is a
server-side request forgery attempt until shown otherwise (SD-JWT VC 10.1). The rules:

- https only; plain http only in development (``allow_private=True``).
- The host is resolved once, every address it resolves to must be public (no loopback,
  RFC 1918, fc00::/7, link-local, unspecified, multicast or reserved ranges), and the
  connection goes to an address from that checked answer. Nothing resolves the name again
  between the check and the connect, so DNS rebinding cannot swap in another address.
- Redirects are never followed. The status list draft lets clients follow them (Token Status
  List 8.2, 11.4), but a redirect names a new host that would need the same checks; issuers
  can publish the final URL instead.
- A total deadline for the whole attempt: connect, TLS, the answer's headers and its body.
  A socket timeout bounds each read only, so a peer sending a byte every few seconds would
  hold the caller for as long as it liked; at the deadline a timer shuts the attempt's
  socket down, which ends any read blocked on it. (Name resolution counts against the
  deadline but is left to the system resolver's own timeouts: it cannot be interrupted.)
- A size cap enforced while streaming, and no compressed bodies (``Accept-Encoding:
  identity``), so a small answer cannot inflate past the cap.
- A POST (webhook deliveries) reads only the start of its answer's body, as much as the caller
  asks to keep: enough to show what the receiver said, never the whole of a large answer.
- An in-process TTL cache. It is a cache only: every instance can refetch, nothing depends on
  it (scale-out).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import idna
import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3 import exceptions as urllib3_exceptions

from app import metrics
from app.trust.errors import (
    AddressRefused,
    AnsweredStatus,
    ConnectionRefused,
    DeadlinePassed,
    FetchError,
)

# Pinning hooks into this method (requests 2.32.2 and later). Without it requests would resolve
# the host name itself and the address checks would protect nothing, so refuse to load.
if not hasattr(HTTPAdapter, "get_connection_with_tls_context"):  # pragma: no cover
    raise ImportError("app.trust.fetch needs requests 2.32.2 or later")

DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_CACHE_TTL = 300.0
# Cached bodies and verified status lists together: bounded so that credentials naming many
# large documents cannot grow the process without limit.
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
_CHUNK = 16 * 1024
# The well-known NAT64 prefix (RFC 6052) carries an IPv4 address in its last 32 bits.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TTLCache:
    """A small thread-safe map whose entries expire, bounded in entries and in bytes (as the
    caller reports them), dropping the oldest entries first. Values larger than the whole
    budget are not kept."""

    def __init__(
        self,
        max_entries: int = 512,
        max_bytes: int = DEFAULT_CACHE_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: OrderedDict[Hashable, tuple[float, Any, int]] = OrderedDict()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._bytes = 0
        self._clock = clock
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= self._clock():
                self._drop(key)
                return None
            return entry[1]

    def set(self, key: Hashable, value: Any, ttl: float, *, size: int = 0) -> None:
        if ttl <= 0 or size > self._max_bytes:
            return
        with self._lock:
            self._drop(key)
            self._entries[key] = (self._clock() + ttl, value, size)
            self._bytes += size
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _drop(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry[2]


def address_problem(address: IPAddress) -> str | None:
    """Why an address must not be fetched from, or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv6 form that embeds an IPv4 address reaches that IPv4 address.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return address_problem(embedded)
    checks = (
        (address.is_loopback, "a loopback address"),
        (address.is_unspecified, "the unspecified address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "not a public address"),
    )
    return next((reason for failed, reason in checks if failed), None)


def host_problem(host: str) -> str | None:
    """Why a URL's host would be refused before any lookup (an address literal that is not
    public, or a ``localhost`` name), or None; a name is judged when it is resolved."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return "a loopback address"
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None
    return address_problem(address)


@dataclass(frozen=True)
class Answer:
    """What a POST was answered: the status, the headers as received (a header sent twice
    reads as one, its values joined by commas), and the body's first ``body_limit`` bytes
    as they came over the wire; ``body_cut`` says the body went on past them (or broke off
    or outran the deadline before it ended)."""

    status: int
    headers: dict[str, str]
    body: bytes
    body_cut: bool


@dataclass(frozen=True)
class _Target:
    url: str
    host: str  # ASCII hostname or IP literal, without brackets
    port: int
    host_header: str


class _ConnectFailed(Exception):
    """Connecting to one address failed; the next checked address may work."""

    def __init__(self, refused: bool) -> None:
        super().__init__()
        self.refused = refused


class _Deadline:
    """The deadline of one whole attempt, over every address tried and every socket opened.

    A timer shuts the attempt's sockets down when it passes (``shutdown`` acts on the
    connection, so a read blocked in another thread returns at once). Each socket is watched
    through a duplicate of its descriptor: TLS wraps the original socket into a new object
    and detaches the one first opened.
    """

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._timer.cancel()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            sock.close()

    def remaining(self) -> float:
        return max(self.at - time.monotonic(), 0.001)

    def watch(self, sock: socket.socket) -> None:
        watched = sock.dup()
        with self._lock:
            if not self.passed:
                self._sockets.append(watched)
                return
        _shut(watched)
        watched.close()

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _watched(connection_class: type, deadline: _Deadline) -> type:
    """``connection_class`` with every socket it opens put under ``deadline``."""

    class Watched(connection_class):  # type: ignore[misc, valid-type]
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    return Watched


class _PinnedAdapter(HTTPAdapter):
    """Sends the request to one checked address instead of letting urllib3 resolve the name.

    The connection pool is opened on the IP, while ``server_hostname`` makes TLS send the
    hostname as SNI and check the certificate against the hostname, and the Host header
    (set by the Fetcher) names the host: the server sees an ordinary request for that name.
    """

    def __init__(self, address: str, hostname: str, deadline: _Deadline) -> None:
        super().__init__(max_retries=0)
        self._address = address
        self._hostname = hostname
        self._deadline = deadline
        self._pools: list[HTTPConnectionPool] = []

    def get_connection_with_tls_context(
        self,
        request: requests.PreparedRequest,
        verify: bool | str | None,
        proxies: dict[str, str] | None = None,
        cert: Any = None,
    ) -> HTTPConnectionPool:
        parts = urlsplit(request.url or "")
        if parts.scheme == "https":
            pool: HTTPConnectionPool = HTTPSConnectionPool(
                self._address, parts.port or 443, server_hostname=self._hostname, maxsize=1
            )
        else:
            pool = HTTPConnectionPool(self._address, parts.port or 80, maxsize=1)
        pool.ConnectionCls = _watched(pool.ConnectionCls, self._deadline)
        self._pools.append(pool)
        return pool

    def close(self) -> None:
        for pool in self._pools:
            pool.close()
        super().close()


class Fetcher:
    """Fetches JSON and bytes from issuer-controlled URLs under the rules in the module doc.

    ``allow_private=True`` is the development setting: it allows plain http and private,
    loopback and link-local addresses, and nothing else changes. ``ca_bundle`` names a PEM
    file of CAs to trust instead of the default bundle (a private PKI, or tests).
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        cache_ttl: float = DEFAULT_CACHE_TTL,
        allow_private: bool = False,
        ca_bundle: str | None = None,
        cache: TTLCache | None = None,
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.cache_ttl = cache_ttl
        self.allow_private = allow_private
        self.ca_bundle = ca_bundle
        self.cache = cache if cache is not None else TTLCache()

    def get_json(self, url: str, *, cache_ttl: float | None = None) -> dict[str, Any]:
        """Fetch a JSON object."""
        body = self.get_bytes(url, accept="application/json", cache_ttl=cache_ttl)
        try:
            value = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise FetchError(f"{url} did not answer with JSON") from exc
        if not isinstance(value, dict):
            raise FetchError(f"{url} did not answer with a JSON object")
        return value

    def get_bytes(self, url: str, accept: str = "*/*", *, cache_ttl: float | None = None) -> bytes:
        """Fetch a body. ``cache_ttl`` overrides the default cache lifetime; 0 bypasses the
        cache (for callers that cache what they verified, like status lists)."""
        ttl = self.cache_ttl if cache_ttl is None else cache_ttl
        key = ("bytes", url, accept)
        if ttl > 0 and (cached := self.cache.get(key)) is not None:
            return cached
        try:
            body = self._fetch(url, accept)
        except FetchError:
            metrics.count_issuer_fetch_failure()
            raise
        self.cache.set(key, body, ttl, size=len(body))
        return body

    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, body_limit: int = 0
    ) -> Answer:
        """POST ``body`` to ``url`` under the same rules as every fetch (checked addresses,
        no redirects followed, the deadline); returns the answer, whatever its status, for the
        caller to judge, with at most ``body_limit`` bytes of its body. Once the status is in,
        the answer stands: a body that stalls or breaks off only ends what is kept of it."""
        target = self._target(url)
        with _Deadline(self.timeout) as deadline:
            addresses = self._resolve(target.host, target.port)
            failures = []
            for address in addresses:
                try:
                    return self._post_to(target, address, body, headers, deadline, body_limit)
                except _ConnectFailed as failed:
                    failures.append(failed)
            raise _not_connected(target.host, failures)

    def post_headers(self, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
        """Every header ``post`` sends with these arguments, as it sends them (the library's
        own included), for a log of what was sent; no connection is made."""
        target = self._target(url)
        with requests.Session() as session:
            session.trust_env = False
            return dict(_prepared(session, target, "POST", headers, body).headers)

    def _post_to(
        self,
        target: _Target,
        address: str,
        body: bytes,
        headers: Mapping[str, str],
        deadline: _Deadline,
        body_limit: int,
    ) -> Answer:
        with (
            self._pinned_session(target, address, deadline) as session,
            self._send(session, target, deadline, "POST", headers, body) as response,
        ):
            kept, cut = _first_bytes(response, body_limit, deadline)
            return Answer(response.status_code, dict(response.headers), kept, cut)

    def _fetch(self, url: str, accept: str) -> bytes:
        target = self._target(url)
        with _Deadline(self.timeout) as deadline:
            addresses = self._resolve(target.host, target.port)
            failures = []
            for address in addresses:
                try:
                    return self._fetch_from(target, address, accept, deadline)
                except _ConnectFailed as failed:
                    failures.append(failed)
            raise _not_connected(target.host, failures)

    def _target(self, url: str) -> _Target:
        try:
            parts = urlsplit(url)
            port = parts.port
        except (ValueError, AttributeError) as exc:
            raise FetchError(f"Not a valid URL: {url!r}") from exc
        scheme = parts.scheme.lower()
        if scheme != "https" and not (scheme == "http" and self.allow_private):
            raise FetchError(f"Only https:// URLs are fetched, not {url}")
        if parts.username is not None or parts.password is not None:
            raise FetchError(f"URLs carrying credentials are not fetched: {parts.hostname}")
        host = _ascii_host(parts.hostname or "", url)
        port = port or (443 if scheme == "https" else 80)
        bracketed = f"[{host}]" if ":" in host else host
        host_header = bracketed if parts.port is None else f"{bracketed}:{port}"
        return _Target(url, host, port, host_header)

    def _resolve(self, host: str, port: int) -> list[str]:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise FetchError(f"Could not resolve {host}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not addresses:
            raise FetchError(f"Could not resolve {host}")
        if not self.allow_private:
            for address in addresses:
                problem = address_problem(ipaddress.ip_address(address.split("%", 1)[0]))
                if problem:
                    raise AddressRefused(
                        f"Refused to fetch from {host}: {address} is {problem}", host, problem
                    )
        return addresses

    def _fetch_from(self, target: _Target, address: str, accept: str, deadline: _Deadline) -> bytes:
        with (
            self._pinned_session(target, address, deadline) as session,
            self._send(session, target, deadline, "GET", {"Accept": accept}) as response,
        ):
            self._check_response(response, target.url)
            return self._read_body(response, target.url, deadline)

    @staticmethod
    @contextmanager
    def _pinned_session(
        target: _Target, address: str, deadline: _Deadline
    ) -> Iterator[requests.Session]:
        """A session that connects only to ``address``, the one the checks above allowed."""
        with requests.Session() as session:
            # No proxy or .netrc from the environment: a proxy would resolve and connect on
            # its own, past every check above.
            session.trust_env = False
            adapter = _PinnedAdapter(address, target.host, deadline)
            session.mount("https://", adapter)
            session.mount("http://", adapter)
            yield session

    def _send(
        self,
        session: requests.Session,
        target: _Target,
        deadline: _Deadline,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
    ) -> requests.Response:
        prepared = _prepared(session, target, method, headers, body)
        remaining = deadline.remaining()
        try:
            return session.send(
                prepared,
                timeout=(remaining, remaining),
                allow_redirects=False,
                stream=True,
                verify=self.ca_bundle or True,
            )
        except requests.exceptions.RequestException as exc:
            if deadline.passed or isinstance(exc, requests.exceptions.Timeout):
                raise self._too_slow(target.url) from exc
            if isinstance(exc, requests.exceptions.SSLError):
                raise FetchError(f"TLS with {target.host} failed: {_tls_reason(exc)}") from exc
            if isinstance(exc, requests.exceptions.ConnectionError):
                raise _ConnectFailed(refused=_refused(exc)) from exc
            verb = "Posting to" if method == "POST" else "Fetching"
            raise FetchError(f"{verb} {target.url} failed") from exc

    def _too_slow(self, url: str) -> DeadlinePassed:
        return DeadlinePassed(f"{url} did not answer within {self.timeout:g} s", self.timeout)

    def _check_response(self, response: requests.Response, url: str) -> None:
        if 300 <= response.status_code < 400:
            raise FetchError(
                f"{url} answered with a redirect (HTTP {response.status_code}); "
                "redirects are not followed"
            )
        if not 200 <= response.status_code < 300:
            raise AnsweredStatus(
                f"{url} answered HTTP {response.status_code}", response.status_code
            )
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise FetchError(f"{url} answered with a compressed body ({encoding})")
        length = response.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > self.max_bytes:
            raise FetchError(f"{url} answered with more than {self.max_bytes} bytes")

    def _read_body(self, response: requests.Response, url: str, deadline: _Deadline) -> bytes:
        chunks: list[bytes] = []
        total = 0
        try:
            for chunk in response.iter_content(_CHUNK):
                total += len(chunk)
                if total > self.max_bytes:
                    raise FetchError(f"{url} answered with more than {self.max_bytes} bytes")
                chunks.append(chunk)
        except requests.exceptions.RequestException as exc:
            if deadline.passed:
                raise self._too_slow(url) from exc
            raise FetchError(f"{url} broke off or stalled while answering") from exc
        if deadline.passed:  # the socket shut down by the deadline reads as an early end
            raise self._too_slow(url)
        return b"".join(chunks)


def _prepared(
    session: requests.Session,
    target: _Target,
    method: str,
    headers: Mapping[str, str],
    body: bytes | None,
) -> requests.PreparedRequest:
    """The request as it goes out: one place, so ``post_headers`` names exactly what is sent."""
    outgoing = {
        **headers,
        "Host": target.host_header,
        "Accept-Encoding": "identity",
        "User-Agent": "Verity",
    }
    return session.prepare_request(
        requests.Request(method, target.url, data=body, headers=outgoing)
    )


def _first_bytes(
    response: requests.Response, limit: int, deadline: _Deadline
) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body as sent (not decompressed: a compressed answer
    cannot inflate past the limit), and whether there was more. One byte past the limit
    tells a body of exactly ``limit`` bytes from a longer one. A body that breaks off or
    outruns the deadline keeps what came and counts as cut."""
    if limit <= 0:
        return b"", False
    kept = bytearray()
    try:
        # read1: whatever has arrived, at once; a read of a fixed size would wait for all of
        # it and lose what came if the body then stalled into the deadline.
        while len(kept) <= limit:
            chunk = response.raw.read1(limit + 1 - len(kept), decode_content=False)
            if not chunk:
                return bytes(kept), deadline.passed
            kept += chunk
    except (requests.exceptions.RequestException, urllib3_exceptions.HTTPError, OSError):
        return bytes(kept), True
    return bytes(kept[:limit]), True


def _not_connected(host: str, failures: list[_ConnectFailed]) -> FetchError:
    if failures and all(failure.refused for failure in failures):
        return ConnectionRefused(f"Could not connect to {host}", host)
    return FetchError(f"Could not connect to {host}")


def _refused(exc: BaseException) -> bool:
    """Whether a connection error is, deep down, a refused connection (urllib3 wraps it)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        pending += [current.__cause__, current.__context__, getattr(current, "reason", None)]
        pending += [arg for arg in current.args if isinstance(arg, BaseException)]
    return False


def normalized_host(host: str) -> str:
    """``host`` as a request names it: an ASCII name (or address) stays as it is; any other
    is mapped and encoded by IDNA with UTS #46, as the ``requests`` library encodes it. A
    name may map onto another that looks nothing like it (``ⓛocalhost`` is ``localhost``),
    so every address rule applies to this form only; webhook registration uses it too.
    Raises ``ValueError`` for a name IDNA refuses."""
    if host.isascii():
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise ValueError(f"{host!r} is not a valid domain name") from exc


def _ascii_host(host: str, url: str) -> str:
    if not host:
        raise FetchError(f"URL has no host: {url!r}")
    try:
        return normalized_host(host)
    except ValueError as exc:
        raise FetchError(f"URL host is not a valid domain name: {url!r}") from exc


def _tls_reason(exc: Exception) -> str:
    text = str(exc)
    if "Hostname mismatch" in text or "doesn't match" in text:
        return "its certificate is not valid for this host name"
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "its certificate could not be verified (untrusted issuer or expired)"
    return "the handshake did not complete"
