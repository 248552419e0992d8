"""The person's pages in the person's language: the catalogs, the choice, and what it sets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from factories import make_staff, make_verification, verification_body
from pages_support import open_individual, present, response_code, wallet_link

from app.web.language import LANGUAGES

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")
METHODS = [
    ("app/pages/**.py", "python"),
    ("app/mail/**.py", "python"),
    ("app/presentations/reasons.py", "python"),
    ("templates/base.html", "jinja2.ext:babel_extract"),
    ("templates/person/**.html", "jinja2.ext:babel_extract"),
]
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None}


def extracted() -> set[str | tuple[str, str]]:
    messages: set = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), METHODS, keywords=KEYWORDS, options_map={"**.html": {"extensions": ""}}
    ):
        messages.add(message)
    return {m for m in messages if m}


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def test_every_catalog_translates_every_message_with_its_placeholders():
    messages = extracted()
    assert len(messages) > 100
    for language in set(LANGUAGES) - {"en"}:
        with (ROOT / f"app/translations/{language}/LC_MESSAGES/messages.po").open("rb") as po:
            catalog = read_po(po, locale=language)
        # Babel's write_mo leaves fuzzy entries out of the compiled catalog at start-up: a
        # fuzzy translation would be English on the page, however complete the .po looks.
        fuzzy = [entry.id or "(the header)" for entry in catalog if entry.fuzzy]
        assert not fuzzy, f"{language}: fuzzy {fuzzy}"
        for message in messages:
            key = message[0] if isinstance(message, tuple) else message
            entry = catalog.get(key)
            assert entry is not None, f"{language}: missing {key!r}"
            forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
            assert all(form.strip() for form in forms), f"{language}: empty {key!r}"
            for form in forms:
                assert placeholders(form) == placeholders(key), f"{language}: {form!r}"


# A colon that punctuates a sentence (followed by a space or ending the text), as opposed to
# one inside an address or a time.
SENTENCE_COLON = re.compile(r"(.?):(?=\s|$)")


def test_french_puts_a_no_break_space_before_every_colon():
    """French typography: a space before the colon, and a no-break one, so that on a phone the
    colon never wraps alone onto the next line."""
    with (ROOT / "app/translations/fr/LC_MESSAGES/messages.po").open("rb") as po:
        catalog = read_po(po, locale="fr")
    texts = [
        text
        for message in catalog
        if message.id
        for text in (message.string if isinstance(message.string, tuple) else (message.string,))
    ]
    loose = [t for t in texts if any(m != "\u00a0" for m in SENTENCE_COLON.findall(t))]
    assert loose == []


def test_accept_language_chooses_the_page_language_and_direction(app, client):
    opened = open_individual(app, client)
    german = client.get(opened.path, headers={"Accept-Language": "de-CH, fr;q=0.5"})
    page = german.get_data(as_text=True)
    assert '<html lang="de" dir="ltr">' in page
    assert "Acme bittet Sie, einen Nachweis zu teilen" in page
    assert german.headers["Content-Language"] == "de"
    arabic = client.get(opened.path, headers={"Accept-Language": "ar"}).get_data(as_text=True)
    assert '<html lang="ar" dir="rtl">' in arabic
    unknown = client.get(opened.path, headers={"Accept-Language": "ja"}).get_data(as_text=True)
    assert '<html lang="en" dir="ltr">' in unknown


def test_the_switcher_is_remembered_and_returns_only_to_this_service(app, client):
    opened = open_individual(app, client)
    chosen = client.get(f"/language/pl?next={opened.path}")
    assert chosen.status_code == 303
    assert chosen.headers["Location"].endswith(opened.path)
    assert "verity_language=pl" in chosen.headers["Set-Cookie"]
    page = client.get(opened.path, headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert '<html lang="pl" dir="ltr">' in page
    away = client.get("/language/fr?next=//evil.example/")
    assert away.headers["Location"].endswith("/") and "evil" not in away.headers["Location"]


def test_a_purpose_written_per_language_falls_back_to_english(app, client):
    opened = open_individual(
        app,
        client,
        description="To check your age",
        description_translations={"de": "Um Ihr Alter zu prüfen"},
    )
    german = client.get(opened.path, headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert "Um Ihr Alter zu prüfen" in german
    french = client.get(opened.path, headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert "To check your age" in french


def test_a_failure_names_the_support_contact_staff_set_in_the_organization(app, client):
    opened = open_individual(app, client)
    staff = opened.staff
    saved = client.patch(
        f"/organizations/{staff.organization_id}",
        json={"support_contact": "help@acme.test"},
        headers=staff.headers(),
    )
    assert saved.status_code == 200, saved.get_json()
    waiting = client.get(opened.path).get_data(as_text=True)
    assert "help@acme.test" not in waiting
    present(client, wallet_link(waiting), good=False)
    failed = client.get(opened.path, headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert "Nicht bestätigt." in failed
    assert '<a href="mailto:help@acme.test">help@acme.test</a>' in failed


# -- texts per language: only the languages the pages speak, no longer than the English ------


@pytest.mark.parametrize(
    ("translations", "named"),
    [
        ({"xx": "Hallo"}, "xx"),
        ({"de-DE": "Hallo"}, "de-DE"),
        ({"en": "Hello"}, "en"),  # English is the description itself
        ({"DE": "Hallo"}, "DE"),
        ({"de": "x" * 5001}, "de"),
    ],
)
def test_a_purpose_in_a_language_the_pages_do_not_speak_or_too_long_is_400(
    app, client, translations, named
):
    staff = make_staff(app)
    body = verification_body(description_translations=translations)
    created = client.post("/verifications", json=body, headers=staff.headers())
    assert created.status_code == 400
    refused = created.get_json()
    assert refused["code"] == "INVALID_REQUEST"
    assert f"description_translations.{named}" in refused["error"]
    assert "x" * 100 not in refused["error"]
    # An edit is held to the same rule, and nothing is saved.
    made = make_verification(client, staff)
    edited = client.put(f"/verifications/{made['id']}", json=body, headers=staff.headers())
    assert edited.status_code == 400
    assert edited.get_json()["code"] == "INVALID_REQUEST"
    stored = client.get(f"/verifications/{made['id']}", headers=staff.headers()).get_json()
    assert stored["description_translations"] == {}


def test_every_language_of_the_pages_but_english_is_accepted_at_full_length(app, client):
    staff = make_staff(app)
    every = {code: "x" * 5000 for code in LANGUAGES if code != "en"}
    made = make_verification(client, staff, description_translations=every)
    assert made["description_translations"] == every


BADGE_SCHEMA = {
    "name": "Staff badge",
    "vct": "https://credentials.example.test/staff-badge",
    "attributes": [
        {
            "name": "employee_id",
            "description": "Payroll number",
            "description_translations": {"de": "Personalnummer", "ar": "رقم الموظف"},
        },
        {"name": "start_date", "description": "First day", "type": "DATETIME"},
    ],
}


@pytest.mark.parametrize(
    ("translations", "named"),
    [({"xx": "Nummer"}, "xx"), ({"en": "Number"}, "en"), ({"de": "x" * 1001}, "de")],
)
def test_a_display_name_in_an_unknown_language_or_too_long_is_400(app, client, translations, named):
    staff = make_staff(app)
    attribute = {"name": "level", "description": "Level", "description_translations": translations}
    body = {**BADGE_SCHEMA, "attributes": [attribute]}
    refused = client.post("/schemas", json=body, headers=staff.headers())
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "INVALID_REQUEST"
    assert f"description_translations.{named}" in refused.get_json()["error"]


def test_display_names_per_language_round_trip_through_the_json_api_to_the_person(app, client):
    staff = make_staff(app)
    created = client.post("/schemas", json=BADGE_SCHEMA, headers=staff.headers())
    assert created.status_code == 201, created.get_json()
    schema_id = created.get_json()["id"]
    read = client.get(f"/schemas/{schema_id}", headers=staff.headers()).get_json()
    assert read["attributes"][0]["description_translations"] == {
        "de": "Personalnummer",
        "ar": "رقم الموظف",
    }
    # Changed through the API: French added, Arabic dropped.
    attributes = [
        {**BADGE_SCHEMA["attributes"][0], "description_translations": {"fr": "Matricule"}},
        BADGE_SCHEMA["attributes"][1],
    ]
    changed = client.put(
        f"/schemas/{schema_id}", json={"attributes": attributes}, headers=staff.headers()
    )
    assert changed.status_code == 200, changed.get_json()
    read = client.get(f"/schemas/{schema_id}", headers=staff.headers()).get_json()
    assert read["attributes"][0]["description_translations"] == {"fr": "Matricule"}
    published = client.post(f"/schemas/{schema_id}/publish", headers=staff.headers())
    assert published.status_code == 200, published.get_json()
    made = make_verification(
        client,
        staff,
        schema_id=schema_id,
        claims=["employee_id", "start_date"],
        attributes=[],
    )
    individual = client.post(
        "/verifications/individuals",
        json={"customer_id": "crm-badge", "verification_id": made["id"]},
    ).get_json()
    path = f"/i/{individual['id']}"
    french = client.get(path, headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert "<bdi>Matricule</bdi>, <bdi>First day</bdi>." in french
    german = client.get(path, headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert "<bdi>Payroll number</bdi>, <bdi>First day</bdi>." in german


def test_the_result_page_names_the_support_contact_on_failure_only(app, client):
    opened = open_individual(app, client)
    staff = opened.staff
    client.patch(
        f"/organizations/{staff.organization_id}",
        json={"support_contact": "https://acme.test/help"},
        headers=staff.headers(),
    )
    failed = present(
        client, wallet_link(client.get(opened.path).get_data(as_text=True)), good=False
    )
    result = client.get(f"{opened.path}?response_code={response_code(failed['redirect_uri'])}")
    page = result.get_data(as_text=True)
    assert result.status_code == 200 and "You could not be verified" in page
    assert "Questions? Contact Acme:" in page
    assert '<a href="https://acme.test/help">https://acme.test/help</a>' in page
    again = open_individual(app, client, email="carol@example.test")
    client.patch(
        f"/organizations/{again.staff.organization_id}",
        json={"support_contact": "help@acme.test"},
        headers=again.staff.headers(),
    )
    verified = present(client, wallet_link(client.get(again.path).get_data(as_text=True)))
    result = client.get(f"{again.path}?response_code={response_code(verified['redirect_uri'])}")
    page = result.get_data(as_text=True)
    assert "You are verified" in page and "help@acme.test" not in page


def no_wallet_section(page: str) -> str:
    return page.split('data-testid="no-wallet"', 1)[1].split("</details>", 1)[0]


def named_apps(section: str) -> list[tuple[str, str]]:
    return re.findall(r'<li><a href="([^"]+)"[^>]*><bdi>([^<]+)</bdi></a></li>', section)


def test_no_wallet_yet_names_apps_a_person_can_install_for_the_format(app, client):
    """Apps, not libraries: for the EU PID as SD-JWT VC, the EU reference wallet; never an
    npm package name."""
    opened = open_individual(app, client)
    for language in ("en", "ar"):
        page = client.get(opened.path, headers={"Accept-Language": language})
        section = no_wallet_section(page.get_data(as_text=True))
        assert named_apps(section) == [
            ("https://github.com/eu-digital-identity-wallet",
             "EU Digital Identity Wallet (reference app)"),
        ]  # fmt: skip
        assert "@openid4vc" not in section and "npm" not in section


def test_an_organization_names_its_own_recommended_wallets(app, client):
    recommended = [
        {"name": "Acme Wallet", "url": "https://wallet.acme.example/get"},
        {"name": "Other", "url": "https://other.example/"},
    ]
    opened = open_individual(app, client, recommended_wallets=recommended)
    assert opened.verification["recommended_wallets"] == recommended
    page = client.get(opened.path, headers={"Accept-Language": "de"}).get_data(as_text=True)
    section = no_wallet_section(page)
    assert named_apps(section) == [(w["url"], w["name"]) for w in recommended]
    assert "empfiehlt" in section


@pytest.mark.parametrize(
    "wallets",
    [
        [{"name": "Plain", "url": "http://wallet.example/"}],
        [{"name": "", "url": "https://wallet.example/"}],
        [{"name": "x" * 61, "url": "https://wallet.example/"}],
        [{"name": f"W{n}", "url": "https://wallet.example/"} for n in range(6)],
        [{"name": "Script", "url": "javascript:alert(1)"}],
    ],
    ids=["http", "no name", "long name", "six", "script"],
)
def test_recommended_wallets_are_checked(app, client, wallets):
    staff = make_staff(app)
    response = client.post(
        "/verifications",
        json=verification_body(recommended_wallets=wallets),
        headers=staff.headers(),
    )
    assert response.status_code == 400
    assert response.get_json()["code"]
