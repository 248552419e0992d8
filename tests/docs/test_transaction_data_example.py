"""The payment example of docs/reference/transaction-data.md runs as written: against the
service as ``make run`` serves it, with the OpenWallet Foundation's OpenID4VP client as the
person's wallet, a payment its key binding confirms is confirmed, and one it does not is not."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
import requests
from hardening.served import prepare, served, service_env
from interop.interop_support import (
    HOST,
    SCRUBBED,
    Deployment,
    answer_link,
    interop_database,
    make_organization,
)

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "transaction-data.md"
PAYEE = {"name": "Merchant", "id": "DE89370400440532013000"}


def example() -> dict:
    (found,) = re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), re.M | re.S)
    namespace: dict = {}
    exec(compile(found, str(PAGE), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    directory: Path = tmp_path_factory.mktemp("payments")
    with interop_database(directory) as database_url:
        env = {k: v for k, v in service_env(database_url).items() if k not in SCRUBBED}
        prepare(env)
        with served(env, directory / "server.log", workers=1, public_host=HOST) as server:
            future: Future = Future()
            future.set_result(server)
            yield Deployment(server, make_organization(env, future, "Shop", "owner@shop.test"))


def test_the_payment_example_confirms_only_what_the_wallet_confirmed(deployment: Deployment):
    code = example()
    base, organization = deployment.server.base, deployment.organization
    (membership,) = requests.get(
        f"{base}/organizations", headers=organization.staff, timeout=10
    ).json()["results"]
    code["enable_payments"](base, organization.staff_token, membership["organization"]["id"])
    for order, confirmation, confirmed in (
        ("order-5521", "confirm", True),
        ("order-5522", "omit", False),
        ("order-5523", "wrong", False),
    ):
        opened = code["open_payment"](
            base, organization.apikey, organization.verification_id, order, PAYEE, 23.58
        )
        assert opened["page_url"].startswith(f"{base}/i/")
        link = deployment.connect_link(opened["id"])
        answer = answer_link(link, None, transaction_data=confirmation)
        assert answer.status == 200, answer.body
        assert answer.request["transaction_data"][0]["payload"]["amount"] == 23.58
        check = code["payment_confirmed"]
        args = (base, organization.apikey, organization.verification_id, order, PAYEE)
        assert check(*args, 23.58) is confirmed, order
        assert check(*args, 99.0) is False  # never another amount than the one confirmed
