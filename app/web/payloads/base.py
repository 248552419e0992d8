"""The ground every payload stands on: request bodies refuse unknown fields (``Body``),
answers read from records (``Out``), the error body every refusal carries (``ErrorOut``), the
limits and per-language texts the domains share, and the health answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.web.language import DEFAULT as DEFAULT_LANGUAGE
from app.web.language import LANGUAGES

# The longest purpose (a verification's description) and display name (a schema attribute's
# description), in English and in each other language.
PURPOSE_LENGTH = 5000
DISPLAY_NAME_LENGTH = 1000
Name = Field(min_length=1, max_length=200)
Text = Field(default="", max_length=PURPOSE_LENGTH)


DESCRIPTION_TRANSLATIONS = (
    "The purpose in other languages of the person's page, by language code "
    '({"de": "..."}); the description (English) is shown where none is given.'
)
# The languages a text can be given in besides English, which is the field itself.
TRANSLATED_LANGUAGES = tuple(code for code in LANGUAGES if code != DEFAULT_LANGUAGE)
TranslatedLanguage = Literal[TRANSLATED_LANGUAGES]  # type: ignore[valid-type]


def language_map(longest: int) -> Any:
    """A text per language (``{"de": "..."}``): only the languages the person's pages speak
    other than English, each at most as long as the English field it translates. An unknown
    key is refused by name (a typo such as ``de-DE`` or ``DE`` would never be shown)."""
    return dict[TranslatedLanguage, Annotated[str, StringConstraints(max_length=longest)]]


class Body(BaseModel):
    """Request bodies: unknown fields are refused so that typos do not pass silently."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class ErrorOut(Out):
    error: str = Field(
        description="For people; it may change. 'sql: no rows in result set' is the fixed "
        'text of code NOT_FOUND and means only "not found".'
    )
    code: str | None = Field(
        default=None,
        description="Stable, to branch on: NOT_FOUND (an ID that does not exist, or another "
        "organization's), INVALID_REQUEST, UPGRADE_REQUIRED, ... (see the errors reference).",
    )
    tier: str | None = Field(default=None, description="FREE, with UPGRADE_REQUIRED (402).")


class HealthOut(Out):
    status: str
