"""The QR drawings of the person's page are kept: per worker, and in Redis when configured,
where another instance finds them."""

from __future__ import annotations

import os

import pytest
import redis
from pages_support import open_individual, wallet_link

from app.pages.qr import KEY_PREFIX, QrCache, qr_svg

LABEL = "QR code that opens this request in your wallet app"


def test_the_page_shows_the_drawing_of_its_link(app, client):
    opened = open_individual(app, client)
    page = client.get(opened.path).get_data(as_text=True)
    assert str(qr_svg(wallet_link(page), LABEL)) in page
    # Loaded again within the link's window: the same link, the same drawing.
    assert client.get(opened.path).get_data(as_text=True).count("<svg") == page.count("<svg")


def test_the_local_cache_is_bounded_and_keeps_the_most_recent():
    cache = QrCache(size=3)
    drawings = [str(cache.svg(f"openid4vp://?request_uri=x{n}", LABEL)) for n in range(5)]
    assert len(cache.local) == 3
    assert str(cache.svg("openid4vp://?request_uri=x4", LABEL)) == drawings[4]
    assert drawings[0] == str(qr_svg("openid4vp://?request_uri=x0", LABEL))
    assert len(set(drawings)) == 5


def test_an_unreachable_redis_only_means_drawing_again():
    cache = QrCache("redis://127.0.0.1:9/0")
    assert str(cache.svg("openid4vp://?request_uri=y", LABEL)) == str(
        qr_svg("openid4vp://?request_uri=y", LABEL)
    )


@pytest.mark.skipif(not os.environ.get("TEST_REDIS_URL"), reason="TEST_REDIS_URL not set")
def test_instances_sharing_redis_draw_a_link_once(app, make_app):
    url = os.environ["TEST_REDIS_URL"]
    first = make_app(CACHE_REDIS_URL=url)
    second = make_app(CACHE_REDIS_URL=url)
    store = redis.Redis.from_url(url)
    opened = open_individual(first, first.test_client())
    page = first.test_client().get(opened.path).get_data(as_text=True)
    keys = [
        k
        for k in store.scan_iter(f"{KEY_PREFIX}*")
        if str(qr_svg(wallet_link(page), LABEL)).encode() == store.get(k)
    ]
    assert len(keys) == 1
    assert 0 < store.ttl(keys[0]) <= 15 * 60
    # The second instance has drawn nothing yet: what it shows comes from Redis.
    marked = store.get(keys[0]).replace(b'aria-label="', b'data-shared="1" aria-label="', 1)
    store.set(keys[0], marked)
    again = second.test_client().get(opened.path).get_data(as_text=True)
    assert wallet_link(again) == wallet_link(page)
    assert 'data-shared="1"' in again
    store.delete(keys[0])
    store.close()
