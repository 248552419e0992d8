"""The wallet side of the ``org-iso-mdoc`` tests (ISO/IEC 18013-7 Annex C), from code we did
not write: npm ``@auth0/mdl`` issues and answers the service's DeviceRequest and npm
``@hpke/core`` seals the answer (``wallet.mjs``, pinned by this folder's package-lock.json);
PyPI ``pymdoccbor`` issues a second kind of mdoc whose device signature PyPI ``pycose`` makes.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import cbor2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from factories import make_apikey, make_staff, make_verification
from mdoc.mdoc_support import MDL, MDL_NS, Iaca, pem_cert, pem_key
from pages.pages_support import request_id_of, wallet_link
from support.npm import ensure_node_modules

HERE = Path(__file__).resolve().parent
ORIGIN = "https://verity.test"
MDL_SCHEMA_ID = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"
ELEMENTS: dict[str, Any] = {
    "family_name": "Mustermann",
    "given_name": "Erika",
    "age_over_18": True,
    "issuing_country": "UT",
    "document_number": "UT-12345",
}
ADULT = [{"name": "age_over_18", "operator": "EQUAL", "value": "true"}]


def start(
    app, client, iaca: Iaca, email: str = "alice@example.test", **verification: Any
) -> tuple[Any, dict, str, str]:
    """A verification of the shipped mDL schema pinned to ``iaca``'s root, one individual, and
    the ID of the presentation request behind its page: (staff, verification, individual, id)."""
    staff = make_staff(app, email)
    created = make_verification(
        client,
        staff,
        schema_id=MDL_SCHEMA_ID,
        claims=verification.pop("claims", ["given_name", "family_name"]),
        attributes=verification.pop("attributes", ADULT),
        trusted_issuers=[pem_cert(iaca.root)],
        **verification,
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-1", "verification_id": created["id"]},
    ).get_json()
    page = client.get(f"/i/{individual['id']}").get_data(as_text=True)
    return staff, created, individual["id"], request_id_of(wallet_link(page))


def iso_mdoc_request(client, request_id: str) -> dict[str, str]:
    """The ``data`` of the page's ``org-iso-mdoc`` request."""
    body = client.get(f"/oid4vp/dc-requests/{request_id}").get_json()
    found = [r["data"] for r in body["requests"] if r["protocol"] == "org-iso-mdoc"]
    assert len(found) == 1, body
    return found[0]


def wallet_answer(
    request: dict[str, str],
    iaca: Iaca,
    *,
    origin: str = ORIGIN,
    doctype: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
    recipient: ec.EllipticCurvePublicKey | None = None,
) -> dict[str, Any]:
    """@auth0/mdl's DeviceResponse to ``request``, sealed by @hpke/core: ``{"response", ...}``."""
    job: dict[str, Any] = {
        "request": request,
        "origin": origin,
        "namespaces": {MDL_NS: ELEMENTS},
        "issuer_key_pem": pem_key(iaca.signer_key),
        "issuer_certificate_pem": pem_cert(iaca.signer),
        "device_key_pem": pem_key(ec.generate_private_key(ec.SECP256R1())),
        "extra": [list(pair) for pair in extra],
    }
    if doctype is not None:
        job["doctype"] = doctype
    if recipient is not None:
        job["recipient_hex"] = point(recipient).hex()
    return run_wallet(job)


def sealed(request: dict[str, str], device_response: bytes, origin: str = ORIGIN) -> dict:
    """A DeviceResponse made elsewhere, sealed to ``request`` by @hpke/core."""
    return run_wallet(
        {"request": request, "origin": origin, "device_response_hex": device_response.hex()}
    )


def run_wallet(job: dict[str, Any]) -> dict[str, Any]:
    ensure_node_modules(HERE, "@auth0/mdl")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run the org-iso-mdoc wallet")
    done = subprocess.run(
        [node, str(HERE / "wallet.mjs")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"wallet.mjs failed: {done.stderr}")
    return json.loads(done.stdout)


def point(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )


def dc_post(client, request_id: str, body: dict, origin: str = ORIGIN):
    return client.post(f"/oid4vp/dc-responses/{request_id}", json=body, headers={"Origin": origin})


def as_credential(answer: dict[str, Any]) -> dict[str, Any]:
    """The DigitalCredential the browser hands the page."""
    return {"protocol": "org-iso-mdoc", "data": {"response": answer["response"]}}


def status_of(client, individual_id: str) -> str:
    return client.get(f"/verifications/{individual_id}/verify").get_json()["status"]


def lookup(app, client, staff, verification) -> dict:
    key = make_apikey(app, staff.organization_id)
    response = client.get(
        f"/verifications/{verification['id']}/individuals/crm-1", headers={"apikey": key}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def decoded(text: str) -> Any:
    return cbor2.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


__all__ = ["MDL", "MDL_NS"]
