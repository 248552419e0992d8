"""The person's language: chosen by a remembered choice, else by ``Accept-Language``.

The person's page, the offer page, the authorization page and the mails are translated with
Flask-Babel. Catalogs live as ``.po`` files in ``app/translations``; they are compiled to
``.mo`` with Babel's own API when the app starts (into the instance folder, only when a
``.po`` is newer than its ``.mo``), so a fresh clone runs with the runtime dependencies alone
and no compiled file is ever out of date in the repository.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask, has_request_context, request
from flask_babel import Babel, get_locale

# Each language in its own name, as the switcher shows it.
LANGUAGES: dict[str, str] = {
    "en": "English",
    "de": "Deutsch",
    "fr": "Français",
    "es": "Español",
    "it": "Italiano",
    "nl": "Nederlands",
    "pt": "Português",
    "pl": "Polski",
    "ar": "العربية",
}
DEFAULT = "en"
RIGHT_TO_LEFT = frozenset({"ar"})
COOKIE = "verity_language"
COOKIE_SECONDS = 365 * 24 * 3600
SOURCE = Path(__file__).resolve().parent.parent / "translations"

babel = Babel()


def chosen_language() -> str:
    """The switcher's remembered choice first, then the browser's preference, then English
    (also for mail sent outside a request, by a job)."""
    if not has_request_context():
        return DEFAULT
    remembered = request.cookies.get(COOKIE, "")
    if remembered in LANGUAGES:
        return remembered
    # By preference order, a regional tag counting for its language (de-CH is German).
    for tag, _quality in request.accept_languages:
        primary = tag.split("-")[0].split("_")[0].lower()
        if primary in LANGUAGES:
            return primary
    return DEFAULT


def current_language() -> str:
    locale = get_locale()
    return locale.language if locale is not None else DEFAULT


def direction(language: str) -> str:
    return "rtl" if language in RIGHT_TO_LEFT else "ltr"


def safe_next(path: str | None) -> str:
    """Back to a page of this service only: a path, never another host (open redirect)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    parts = urlsplit(path)
    if parts.scheme or parts.netloc:
        return "/"
    return path


def compile_catalogs(source: Path, target: Path) -> None:
    """``.po`` to ``.mo`` with Babel, for every catalog whose compiled copy is missing or older."""
    for po in source.glob("*/LC_MESSAGES/messages.po"):
        mo = target / po.relative_to(source).with_suffix(".mo")
        if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        mo.parent.mkdir(parents=True, exist_ok=True)
        with po.open("rb") as read:
            catalog = read_po(read, locale=po.parent.parent.name)
        partial = mo.with_suffix(".mo.partial")
        with partial.open("wb") as written:
            write_mo(written, catalog)
        partial.replace(mo)  # another worker starting at once reads a whole file or the old one


def init_app(app: Flask, compiled: Path) -> None:
    compile_catalogs(SOURCE, compiled)
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(compiled)
    babel.init_app(app, locale_selector=chosen_language)

    @app.context_processor
    def language_context() -> dict:
        language = current_language()
        return {
            "language": language,
            "text_direction": direction(language),
            "languages": LANGUAGES,
            "direction_of": direction,
        }
