"""The ``customer_sig`` snippets of docs/how-to/sign-customer-ids.md run as written: the
signatures the Python and the Node snippet make open individuals of a ``signed``
verification, and a signature under another secret does not."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from factories import make_staff, make_verification

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "sign-customer-ids.md"
# Unicode, a slash and a plus: the bytes signed are the customer ID's UTF-8 bytes.
CUSTOMERS = ["crm-42", "Zoë/Łódź+1"]


def block(language: str) -> str:
    (found,) = re.findall(rf"^```{language}\n(.*?)^```$", PAGE.read_text(), re.M | re.S)
    return found


def python_sig(secret: str, customer_id: str) -> str:
    namespace: dict = {}
    exec(compile(block("python"), str(PAGE), "exec"), namespace)
    return namespace["customer_sig"](secret, customer_id)


def node_sigs(tmp_path: Path, secret: str, customers: list[str]) -> list[str]:
    (tmp_path / "sig.mjs").write_text(block("js"))
    (tmp_path / "run.mjs").write_text(
        'import { customerSig } from "./sig.mjs";\n'
        "const [secret, customers] = [process.argv[2], JSON.parse(process.argv[3])];\n"
        "console.log(JSON.stringify(customers.map((c) => customerSig(secret, c))));\n"
    )
    done = subprocess.run(
        ["node", "run.mjs", secret, json.dumps(customers)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def opens(client, verification_id: str, customer_id: str, customer_sig: str) -> int:
    return client.post(
        "/verifications/individuals",
        json={
            "customer_id": customer_id,
            "verification_id": verification_id,
            "customer_sig": customer_sig,
        },
    ).status_code


def test_the_python_and_node_snippets_sign_customer_ids_the_service_accepts(app, client, tmp_path):
    created = make_verification(client, make_staff(app), anonymous_open="signed")
    secret = created["link_secret"]
    from_node = node_sigs(tmp_path, secret, CUSTOMERS)
    for customer, node_sig in zip(CUSTOMERS, from_node, strict=True):
        assert python_sig(secret, customer) == node_sig
        assert "=" not in node_sig
    assert opens(client, created["id"], CUSTOMERS[0], python_sig(secret, CUSTOMERS[0])) == 201
    assert opens(client, created["id"], CUSTOMERS[1], from_node[1]) == 201
    forged = python_sig("vls_not-the-secret", "crm-43")
    assert opens(client, created["id"], "crm-43", forged) == 401
