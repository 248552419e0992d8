"""The dashboard's mdoc signer page: download the CSR, upload the chain the organization's
IACA returns (Post/Redirect/Get, CSRF like every dashboard form), see a refusal on the page."""

from __future__ import annotations

import io

import pytest
from cryptography import x509
from factories import Staff, make_staff
from issuance.test_mdoc_signer_upload import OwnIaca, pem_of
from staff.staff_support import sign_in, submit, text_of


@pytest.fixture
def owner(app) -> Staff:
    return make_staff(app, "alice@acme.test", org_name="Acme Bank")


@pytest.fixture
def browser(app, owner):
    client = app.test_client()
    assert sign_in(client, owner.token).status_code == 302
    return client


def test_the_page_walks_from_csr_to_the_organizations_own_iaca(browser, owner) -> None:
    page = browser.get("/dashboard/mdoc-signer")
    assert page.status_code == 200
    assert 'data-testid="uses-generated-iaca"' in text_of(page)
    assert "/dashboard/mdoc-signer" in text_of(
        browser.get(f"/dashboard/organizations/{owner.organization_id}")
    )

    download = browser.get("/dashboard/mdoc-signer/signing-request.csr")
    assert download.status_code == 200
    assert download.mimetype == "application/pkcs10"
    assert "attachment" in download.headers["Content-Disposition"]
    csr = x509.load_pem_x509_csr(download.data)
    assert csr.is_signature_valid
    assert "O=Acme Bank" in csr.subject.rfc4514_string()

    iaca = OwnIaca.make()
    chain = pem_of(iaca.certify(csr.public_key()), iaca.certificate)  # type: ignore[arg-type]
    uploaded = submit(browser, "/dashboard/mdoc-signer/certificate", {"chain_pem": chain})
    assert uploaded.status_code == 303
    assert uploaded.headers["Location"].endswith("/dashboard/mdoc-signer")
    page = text_of(browser.get("/dashboard/mdoc-signer"))
    assert 'data-testid="uses-own-iaca"' in page
    assert "Acme IACA" in page or iaca.pem.splitlines()[1] in page
    assert "PRIVATE KEY" not in page


def test_a_chain_file_out_of_order_is_refused_on_the_page(browser) -> None:
    csr = x509.load_pem_x509_csr(browser.get("/dashboard/mdoc-signer/signing-request.csr").data)
    iaca = OwnIaca.make()
    refused = submit(
        browser,
        "/dashboard/mdoc-signer/certificate",
        {
            "chain_file": (
                io.BytesIO(pem_of(iaca.certificate, iaca.certify(csr.public_key())).encode()),  # type: ignore[arg-type]
                "chain.pem",
            )
        },
        content_type="multipart/form-data",
    )
    assert refused.status_code == 400
    assert "out of order" in text_of(refused)
    assert 'data-testid="uses-generated-iaca"' in text_of(refused)


def test_a_form_without_its_csrf_token_is_refused(browser) -> None:
    refused = browser.post("/dashboard/mdoc-signer/certificate", data={"chain_pem": "x"})
    assert refused.status_code == 403
    assert 'data-testid="uses-generated-iaca"' in text_of(browser.get("/dashboard/mdoc-signer"))
