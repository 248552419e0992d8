"""The dashboard's verifier identity page: generate, download the CSR, upload the chain."""

from __future__ import annotations

import io
import re

import pytest
from cryptography import x509
from factories import PID_SCHEMA_ID, Staff, make_staff
from identity_support import Registrar, pem_of
from staff.staff_support import sign_in, submit, text_of


@pytest.fixture
def owner(app) -> Staff:
    return make_staff(app, "alice@acme.test", org_name="Acme Bank")


@pytest.fixture
def browser(app, owner):
    client = app.test_client()
    assert sign_in(client, owner.token).status_code == 302
    return client


def test_the_page_walks_from_csr_to_a_certificate_in_use(browser, owner):
    page = browser.get("/dashboard/verifier-identity")
    assert page.status_code == 200
    assert 'data-testid="uses-deployment"' in text_of(page)

    made = submit(browser, "/dashboard/verifier-identity/signing-request", {"country": "de"})
    assert made.status_code == 303
    page = text_of(browser.get("/dashboard/verifier-identity"))
    assert 'data-testid="pending-request"' in page

    download = browser.get("/dashboard/verifier-identity/signing-request.csr")
    assert download.status_code == 200
    assert download.mimetype == "application/pkcs10"
    assert "attachment" in download.headers["Content-Disposition"]
    csr = x509.load_pem_x509_csr(download.data)
    assert csr.is_signature_valid
    assert "O=Acme Bank" in csr.subject.rfc4514_string()

    registrar = Registrar()
    leaf = registrar.issue(download.data.decode())
    uploaded = submit(
        browser,
        "/dashboard/verifier-identity/certificate",
        {"chain_pem": registrar.chain_pem(leaf)},
    )
    assert uploaded.status_code == 303
    page = text_of(browser.get("/dashboard/verifier-identity"))
    client_id = re.search(r'data-testid="client-id">([^<]+)<', page).group(1)
    assert client_id.startswith("x509_hash:")
    assert "PRIVATE KEY" not in page


def test_a_chain_file_out_of_order_is_refused_on_the_page(browser):
    submit(browser, "/dashboard/verifier-identity/signing-request", {"country": "FR"})
    csr = browser.get("/dashboard/verifier-identity/signing-request.csr").data.decode()
    registrar = Registrar()
    leaf = registrar.issue(csr)
    refused = submit(
        browser,
        "/dashboard/verifier-identity/certificate",
        {"chain_file": (io.BytesIO(pem_of(registrar.root, leaf).encode()), "chain.pem")},
        content_type="multipart/form-data",
    )
    assert refused.status_code == 400
    assert "out of order" in text_of(refused)
    assert 'data-testid="uses-deployment"' in text_of(refused)


def test_a_bad_country_is_said_on_the_page(browser):
    refused = submit(browser, "/dashboard/verifier-identity/signing-request", {"country": "X"})
    assert refused.status_code == 400
    assert 'data-testid="form-error"' in text_of(refused)


def test_the_organization_page_links_to_it(browser, owner):
    page = text_of(browser.get(f"/dashboard/organizations/{owner.organization_id}"))
    assert "/dashboard/verifier-identity" in page


def test_registration_certificates_are_uploaded_listed_and_refused_on_the_page(browser, owner):
    from identity_support import RegistrationRegistrar

    submit(browser, "/dashboard/verifier-identity/signing-request", {"country": "DE"})
    csr = browser.get("/dashboard/verifier-identity/signing-request.csr").data.decode()
    registrar = Registrar()
    leaf = registrar.issue(csr)
    submit(
        browser,
        "/dashboard/verifier-identity/certificate",
        {"chain_pem": registrar.chain_pem(leaf)},
    )
    registrars = RegistrationRegistrar()
    refused = submit(
        browser,
        "/dashboard/verifier-identity/registration-certificates",
        {"registration_certificate": registrars.certificate(leaf)},
    )
    assert refused.status_code == 400
    assert "trusts no registrar" in text_of(refused)
    submit(
        browser,
        "/dashboard/trust",
        {"name": "Registrar", "kind": "REGISTRARS", "certificates": registrars.anchor_pem},
    )
    uploaded = submit(
        browser,
        "/dashboard/verifier-identity/registration-certificates",
        {"registration_certificate": registrars.certificate(leaf)},
    )
    assert uploaded.status_code == 303, text_of(uploaded)
    page = text_of(browser.get("/dashboard/verifier-identity"))
    assert page.count('data-testid="registration-certificate"') == 1
    assert "age-check-1" in page and "Checking that you are of age" in page
    assert "<code>address</code>" in page
    # The verification form offers it, and refuses a query outside it with its reason.
    form = text_of(browser.get("/dashboard/verifications/new"))
    assert 'name="registration_certificate_id"' in form and "age-check-1" in form
    offered = form[form.index('name="registration_certificate_id"') :]
    chosen = re.search(r'<option value="([0-9a-f-]{36})"', offered).group(1)
    data = {
        "name": "Adults",
        "description": "Age check.",
        "schema_id": PID_SCHEMA_ID,
        "claims": ["given_name", "nationalities"],
        "any_issuer": "1",
        "registration_certificate_id": chosen,
    }
    refused = submit(browser, "/dashboard/verifications/new", data)
    assert refused.status_code == 400
    assert "permits: nationalities" in text_of(refused)
    created = submit(browser, "/dashboard/verifications/new", {**data, "claims": ["given_name"]})
    assert created.status_code == 303, text_of(created)
    verification_id = created.headers["Location"].rsplit("/", 1)[1]
    body = browser.get(f"/verifications/{verification_id}", headers=owner.headers()).get_json()
    assert body["registration_certificate_id"] == chosen


def test_the_privacy_policy_is_set_on_the_page_beside_the_logo(browser, owner):
    saved = submit(
        browser,
        "/dashboard/verifier-identity/profile",
        {"logo_uri": "https://acme.test/logo.png", "privacy_policy_uri": "https://acme.test/p"},
    )
    assert saved.status_code == 303
    page = text_of(browser.get("/dashboard/verifier-identity"))
    assert 'value="https://acme.test/p"' in page
    refused = submit(
        browser,
        "/dashboard/verifier-identity/profile",
        {"privacy_policy_uri": "http://acme.test/p"},
    )
    assert refused.status_code == 400


def test_an_eu_request_is_made_on_the_page_and_its_profile_shown(browser, owner):
    made = submit(
        browser,
        "/dashboard/verifier-identity/signing-request",
        {
            "country": "DE",
            "organization_identifier": "VATDE-123456789",
            "contact_email": "wallets@acme.test",
        },
    )
    assert made.status_code == 303
    download = browser.get("/dashboard/verifier-identity/signing-request.csr")
    csr = x509.load_pem_x509_csr(download.data)
    assert "2.5.4.97=VATDE-123456789" in csr.subject.rfc4514_string()
    registrar = Registrar()
    leaf = registrar.issue_eu(download.data.decode())
    uploaded = submit(
        browser,
        "/dashboard/verifier-identity/certificate",
        {"chain_pem": registrar.chain_pem(leaf)},
    )
    assert uploaded.status_code == 303
    page = text_of(browser.get("/dashboard/verifier-identity"))
    assert re.search(r'data-testid="ts-119-411-8">\s*met', page)


def test_a_malformed_organization_identifier_is_said_on_the_page(browser, owner):
    refused = submit(
        browser,
        "/dashboard/verifier-identity/signing-request",
        {"country": "DE", "organization_identifier": "DE123456789", "contact_email": "a@b.test"},
    )
    assert refused.status_code == 400
    assert "EN 319 412-1" in text_of(refused)
