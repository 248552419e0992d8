"""French sets a no-break space before a colon, every time: a phone never wraps the colon
onto a line of its own, and no string has the space while its neighbour lacks it."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
FRENCH = ROOT / "app" / "translations" / "fr" / "LC_MESSAGES" / "messages.po"
NO_BREAK_SPACES = "\u00a0\u202f"


def french_strings() -> list[tuple[str, str]]:
    with FRENCH.open("rb") as catalog:
        messages = [m for m in read_po(catalog) if m.id]
    pairs = []
    for message in messages:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        pairs += [(ids[0], text) for text in strings]
    return pairs


def test_every_french_colon_follows_a_no_break_space():
    wrong = [
        (msgid, text)
        for msgid, text in french_strings()
        for at in (m.start() for m in re.finditer(r":(?!//)", text))
        if at == 0 or text[at - 1] not in NO_BREAK_SPACES
    ]
    assert wrong == []


def test_no_template_puts_a_colon_after_a_translated_string():
    """A colon outside the message cannot take each language's spacing."""
    outside = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "templates").rglob("*.html")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"_\([^)]*\)\s*\}\}:", line)
    ]
    assert outside == []


def test_the_language_switcher_reads_with_french_spacing(client):
    page = client.get("/", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert "Langue\u00a0:" in page
