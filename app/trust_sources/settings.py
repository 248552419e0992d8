"""The trust source settings of the running deployment, provided by the application factory
(as the webhook settings are), so the domain reads them without Flask."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.trust.fetch import Fetcher

STALE_POLICIES = ("refuse", "use")


@dataclass(frozen=True)
class TrustSourceSettings:
    # "refuse": a list past its next update vouches for nobody; "use": it still does (and is
    # flagged on the page and in the API either way).
    stale_policy: str
    # How often a list is fetched again, in minutes.
    refresh_minutes: int
    allow_private: bool
    fetcher: Fetcher

    @property
    def refuse_stale(self) -> bool:
        return self.stale_policy == "refuse"


def check_stale_policy(value: str) -> str:
    if value not in STALE_POLICIES:
        raise RuntimeError(f"TRUST_LIST_STALE must be refuse or use, not {value!r}")
    return value


def from_config(config: Mapping[str, Any], fetcher: Fetcher) -> TrustSourceSettings:
    return TrustSourceSettings(
        stale_policy=check_stale_policy(config.get("TRUST_LIST_STALE") or "refuse"),
        refresh_minutes=max(1, int(config.get("TRUST_LIST_REFRESH_MINUTES") or 60)),
        allow_private=bool(config.get("TRUST_ALLOW_PRIVATE")),
        fetcher=fetcher,
    )


_provider: Callable[[], TrustSourceSettings] | None = None


def provide(provider: Callable[[], TrustSourceSettings]) -> None:
    global _provider
    _provider = provider


def current() -> TrustSourceSettings:
    if _provider is None:
        raise RuntimeError("trust source settings are provided by the application factory")
    return _provider()
