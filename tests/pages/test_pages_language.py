"""The person's pages in the person's language: the catalogs, the choice, and what it sets."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from pages_support import open_individual, present, wallet_link

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
        for message in messages:
            key = message[0] if isinstance(message, tuple) else message
            entry = catalog.get(key)
            assert entry is not None, f"{language}: missing {key!r}"
            forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
            assert all(form.strip() for form in forms), f"{language}: empty {key!r}"
            for form in forms:
                assert placeholders(form) == placeholders(key), f"{language}: {form!r}"


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
