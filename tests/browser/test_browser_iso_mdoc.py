"""The person's page in Debian's Chromium for an mdoc verification: one Digital Credentials API
call offers the protocols the browser allows (Safari's org-iso-mdoc alone; every one where the
browser cannot say), the button stays hidden where the API is missing or allows nothing, and an
``org-iso-mdoc`` answer (ISO/IEC 18013-7 Annex C) from a wallet we did not write (@auth0/mdl,
sealed by @hpke/core) verifies.

Chromium has no wallet here: an init script stands in for ``navigator.credentials.get``. It
records what the page offered and hands the ``org-iso-mdoc`` request to the node wallet through
an exposed function, then returns its answer as the browser would (a DigitalCredential)."""

from __future__ import annotations

from browser_support import (
    DESKTOP,
    Delegate,
    assert_clean,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from factories import make_apikey, make_staff, make_verification
from iso_mdoc.iso_mdoc_support import MDL_SCHEMA_ID, wallet_answer
from mdoc.mdoc_support import make_iaca, pem_cert

# Safari's browser: it allows org-iso-mdoc only, so the page must offer nothing else.
BROWSER_WALLET = """
window.__offered = null;
window.DigitalCredential = function () {};
window.DigitalCredential.userAgentAllowsProtocol = (protocol) => protocol === "org-iso-mdoc";
Object.defineProperty(navigator.credentials, "get", {
  value: async (options) => {
    window.__offered = options.digital.requests.map((request) => request.protocol);
    const request = options.digital.requests.find((r) => r.protocol === "org-iso-mdoc");
    const data = await window.isoMdocWallet(request.data);
    return { protocol: "org-iso-mdoc", data: data };
  },
});
"""
# A browser without the API (Firefox today). This Chromium has DigitalCredential natively (with
# userAgentAllowsProtocol true for each protocol), so the stand-in takes it away.
NO_API = """
delete window.DigitalCredential;
"""
# A browser that has the API but allows none of the service's protocols: no button.
ALLOWS_NOTHING = """
window.DigitalCredential = function () {};
window.DigitalCredential.userAgentAllowsProtocol = () => false;
"""
# A browser with the API but without userAgentAllowsProtocol: the page offers every protocol
# the verification can use, in one call, and the wallet takes the one it speaks.
BROWSER_WITHOUT_ALLOWS = """
window.__calls = [];
window.DigitalCredential = function () {};
Object.defineProperty(navigator.credentials, "get", {
  value: async (options) => {
    window.__calls.push(options.digital.requests.map((request) => request.protocol));
    const request = options.digital.requests.find((r) => r.protocol === "org-iso-mdoc");
    const data = await window.isoMdocWallet(request.data);
    return { protocol: "org-iso-mdoc", data: data };
  },
});
"""
# The wallet is a node process (@auth0/mdl) started per answer: on a busy machine it takes
# seconds, longer than the default wait.
WALLET_TIMEOUT_MS = 30_000
OUTCOME_TIMEOUT_MS = 15_000


def test_each_browser_is_offered_what_it_allows_and_an_iso_mdoc_answer_verifies(make_app):
    from playwright.sync_api import expect

    iaca = make_iaca()
    delegate = Delegate()
    with loopback_server(delegate) as url, launched_chromium() as browser:
        app = delegate.app = make_app(PUBLIC_URL=url)
        client = app.test_client()
        staff = make_staff(app)
        verification = make_verification(
            client,
            staff,
            schema_id=MDL_SCHEMA_ID,
            claims=["given_name", "family_name"],
            attributes=[{"name": "age_over_18", "operator": "EQUAL", "value": "true"}],
            trusted_issuers=[pem_cert(iaca.root)],
        )
        individual = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-safari", "verification_id": verification["id"]},
        ).get_json()
        problems: list[str] = []
        page = watched_page(browser, DESKTOP, problems)
        page.expose_function(
            "isoMdocWallet",
            lambda data: {"response": wallet_answer(data, iaca, origin=url)["response"]},
        )
        page.context.add_init_script(BROWSER_WALLET)
        page.goto(f"{url}/i/{individual['id']}")
        page.locator("#dc-api").click()
        expect(page.locator("#dc-api-message")).to_contain_text(
            "Your wallet answered.", timeout=WALLET_TIMEOUT_MS
        )
        assert page.evaluate("window.__offered") == ["org-iso-mdoc"]
        expect(page.locator("#status")).to_contain_text("Verified.", timeout=OUTCOME_TIMEOUT_MS)
        screenshot(page, "person-page-org-iso-mdoc")
        assert_clean(page, problems)
        page.context.close()

        # Chrome-like browsers, on a second person's page (its button is in the page, hidden).
        other = client.post(
            "/verifications/individuals",
            json={"customer_id": "crm-chrome", "verification_id": verification["id"]},
        ).get_json()
        person_page = f"{url}/i/{other['id']}"
        for init_script in (NO_API, ALLOWS_NOTHING):
            page = watched_page(browser, DESKTOP, problems)
            page.context.add_init_script(init_script)
            page.goto(person_page)
            expect(page.locator("#status")).to_be_visible()
            assert page.locator("#dc-api").count() == 1
            expect(page.locator("#dc-api")).to_be_hidden()
            assert_clean(page, problems)
            page.context.close()

        page = watched_page(browser, DESKTOP, problems)
        page.expose_function(
            "isoMdocWallet",
            lambda data: {"response": wallet_answer(data, iaca, origin=url)["response"]},
        )
        page.context.add_init_script(BROWSER_WITHOUT_ALLOWS)
        page.goto(person_page)
        page.locator("#dc-api").click()
        expect(page.locator("#dc-api-message")).to_contain_text(
            "Your wallet answered.", timeout=WALLET_TIMEOUT_MS
        )
        # No signing certificate here: the unsigned OpenID4VP request beside Annex C's.
        assert page.evaluate("window.__calls") == [["openid4vp-v1-unsigned", "org-iso-mdoc"]]
        expect(page.locator("#status")).to_contain_text("Verified.", timeout=OUTCOME_TIMEOUT_MS)
        assert_clean(page, problems)
        page.context.close()

        key = make_apikey(app, staff.organization_id)
        for customer_id in ("crm-safari", "crm-chrome"):
            found = client.get(
                f"/verifications/{verification['id']}/individuals/{customer_id}",
                headers={"apikey": key},
            ).get_json()
            assert found["status"] == "VERIFIED", customer_id
