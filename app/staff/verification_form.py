"""The verification form of the dashboard: what a browser posts, turned into the JSON API's body.

A browser can only send strings. The domain reads every condition value by its attribute's
type whatever the client sends, so the form needs only split IN's comma-separated list; it also
gives numbers and booleans their JSON type, so that a definition made here reads back through
the JSON API the way a JSON client would have written it. Every rule about what a verification
may contain stays where the JSON API enforces it (``VerificationIn`` and ``VerificationPatch``
in ``app.web.payloads.verifications``, ``check_conditions`` in the domain): the form builds the
same dict and lets those decide, so the two surfaces cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from werkzeug.datastructures import MultiDict

from app.schemas.models import Schema
from app.verifications.conditions import OPERATORS, echoed
from app.verifications.models import (
    DEFAULT_RETENTION_DAYS,
    DEFAULT_STATUS_CHECK_HOURS,
    Verification,
)
from app.web.language import DEFAULT, LANGUAGES

# The builder posts ``conditions-<n>-<part>``; indexes need not be contiguous (htmx appends
# rows with the next free index, and removed rows leave gaps).
ROW_FIELD = re.compile(r"^conditions-(\d{1,3})-(attribute|operator|value|remove)$")
# Beyond the JSON API's 50 conditions, so that too many rows are refused by the same model
# (with its message) instead of being cut silently, yet a forged form cannot make us loop.
MAX_ROWS = 60
# The purpose in the person's other languages: one field each, ``description-de`` and so on.
TRANSLATED = [code for code in LANGUAGES if code != DEFAULT]

PEM_BEGIN = "-----BEGIN CERTIFICATE-----"
PEM_END = "-----END CERTIFICATE-----"

OPERATOR_LABELS = {
    "EQUAL": "equals",
    "NOT": "is not",
    "BIGGER": "is greater than / after",
    "SMALLER": "is less than / before",
    "IN": "is one of",
    "EXISTS": "is present",
    "AGE_AT_LEAST": "age at least (years)",
}
assert set(OPERATOR_LABELS) == set(OPERATORS)

_INTEGER = re.compile(r"^[+-]?\d+$")
_DECIMAL = re.compile(r"^[+-]?(\d+\.\d*|\.\d+)$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


class FormError(Exception):
    """Input the form cannot even turn into a body (an unterminated certificate)."""


@dataclass
class ConditionRow:
    attribute: str = ""
    operator: str = "EQUAL"
    value: str = ""

    def blank(self) -> bool:
        return not self.attribute and not self.value


@dataclass
class VerificationForm:
    """What the form shows: the person's own strings, kept as typed so nothing is lost."""

    name: str = ""
    description: str = ""
    # By language code; a language left empty shows the English description.
    description_translations: dict[str, str] = field(default_factory=dict)
    schema_id: str = ""
    claims: list[str] = field(default_factory=list)
    conditions: list[ConditionRow] = field(default_factory=list)
    trusted_issuers: str = ""
    # Ticked: any issuer whose signature verifies (``trusted_issuers: []``), an explicit choice.
    any_issuer: bool = False
    trust_sources: list[str] = field(default_factory=list)
    # The registration certificate it is made under; empty: the one it has, else the only one.
    registration_certificate_id: str = ""
    return_url: str = ""
    # One wallet a line, "Name | https://address".
    recommended_wallets: str = ""
    # The wallet protocols in order, comma-separated ("didcomm,openid4vp").
    wallet_protocols: str = "openid4vp"
    retention_days: str = str(DEFAULT_RETENTION_DAYS)
    status_check_hours: str = str(DEFAULT_STATUS_CHECK_HOURS)
    # Who may open an individual without the integration key (allowed, signed, refused);
    # empty when a submission left it out, which changes nothing.
    anonymous_open: str = "allowed"
    # Ticked: the age claim is asked as a zero-knowledge proof (``zk``).
    zk: bool = False
    # The highest row index the browser sent: the next added row takes the one after it.
    last_index: int = -1

    @classmethod
    def from_verification(cls, verification: Verification) -> VerificationForm:
        return cls(
            name=verification.name,
            description=verification.description or "",
            description_translations=dict(verification.description_translations or {}),
            schema_id=str(verification.schema_id),
            claims=list(verification.claims or []),
            conditions=[
                ConditionRow(
                    str(c.get("name") or c.get("attribute_id") or ""),
                    str(c.get("operator") or "EQUAL"),
                    value_text(c.get("value")),
                )
                for c in verification.attributes or []
            ],
            trusted_issuers="\n".join(verification.trusted_issuers or []),
            any_issuer=not verification.trusted_issuers,
            trust_sources=list(verification.trust_sources or []),
            registration_certificate_id=str(verification.registration_certificate_id or ""),
            return_url=verification.return_url or "",
            recommended_wallets="\n".join(
                f"{w['name']} | {w['url']}" for w in verification.recommended_wallets or []
            ),
            wallet_protocols=",".join(verification.protocols()),
            retention_days=str(verification.retention_days),
            status_check_hours=str(verification.status_check_hours),
            anonymous_open=verification.anonymous_open or "allowed",
            zk=bool(verification.zk),
        )

    @classmethod
    def from_submission(cls, data: MultiDict[str, str]) -> VerificationForm:
        """The form as posted (or as htmx sent it), rows marked for removal left out."""
        rows: dict[int, dict[str, str]] = {}
        for key in data:
            match = ROW_FIELD.match(key)
            if match and (int(match.group(1)) in rows or len(rows) < MAX_ROWS):
                rows.setdefault(int(match.group(1)), {})[match.group(2)] = data.get(key, "")
        conditions = [
            ConditionRow(
                row.get("attribute", "").strip(),
                row.get("operator", "EQUAL").strip(),
                row.get("value", "").strip(),
            )
            for _, row in sorted(rows.items())
            if not row.get("remove")
        ]
        return cls(
            name=data.get("name", ""),
            description=data.get("description", ""),
            description_translations={
                code: data.get(f"description-{code}", "") for code in TRANSLATED
            },
            schema_id=data.get("schema_id", "").strip(),
            claims=[c for c in data.getlist("claims") if c],
            conditions=conditions,
            trusted_issuers=data.get("trusted_issuers", ""),
            any_issuer=bool(data.get("any_issuer")),
            trust_sources=[s for s in data.getlist("trust_sources") if s],
            registration_certificate_id=data.get("registration_certificate_id", "").strip(),
            return_url=data.get("return_url", "").strip(),
            recommended_wallets=data.get("recommended_wallets", ""),
            wallet_protocols=data.get("wallet_protocols", "openid4vp").strip() or "openid4vp",
            retention_days=data.get("retention_days", "").strip(),
            status_check_hours=data.get("status_check_hours", "").strip(),
            anonymous_open=data.get("anonymous_open", "").strip(),
            zk=bool(data.get("zk")),
            last_index=max(rows, default=-1),
        )

    def leaves_issuers_unsaid(self) -> bool:
        """No trusted issuer typed and "Accept any issuer" not ticked."""
        return not self.any_issuer and not self.trusted_issuers.strip()

    def for_schema(self, schema: Schema | None) -> VerificationForm:
        """After choosing another schema: claims it does not have are unticked.

        Conditions keep their attribute even when the new schema lacks it; the row then says
        so, and saving names it, rather than losing what the person typed.
        """
        names = schema.attribute_names() if schema else []
        self.claims = [c for c in self.claims if c in names]
        return self

    def without_blank_rows(self) -> VerificationForm:
        """Rows added but never filled in are not conditions."""
        self.conditions = [row for row in self.conditions if not row.blank()]
        return self

    def body(self, schema: Schema | None) -> dict[str, Any]:
        """The JSON API's body for this form (``VerificationIn``; every field, also for edits).

        ``return_url`` is left out when empty: the API takes ``null`` as "no change" on edits.
        ``trusted_issuers`` is ``[]`` (any issuer) only when "any issuer" is ticked; left empty
        and unticked it is left out, so a new verification gets the API's default (pinned to
        the organization's own issuer on its own SD-JWT VC schema) and an edit keeps the list.
        """
        types = attribute_types(schema)
        body: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            # Every language, the empty ones left out: an edit that empties one removes it.
            "description_translations": {
                code: text.strip()
                for code, text in self.description_translations.items()
                if text.strip()
            },
            "schema_id": self.schema_id,
            "claims": self.claims,
            "attributes": [
                {
                    "name": row.attribute or None,
                    "operator": row.operator,
                    "value": typed_value(row.operator, row.value, type_of(row.attribute, types)),
                }
                for row in self.conditions
            ],
            "trust_sources": self.trust_sources,
            "recommended_wallets": parse_recommended_wallets(self.recommended_wallets),
            "wallet_protocols": [p.strip() for p in self.wallet_protocols.split(",") if p.strip()],
            "zk": self.zk,
        }
        if self.anonymous_open:
            body["anonymous_open"] = self.anonymous_open
        if self.registration_certificate_id:
            body["registration_certificate_id"] = self.registration_certificate_id
        pins = parse_trusted_issuers(self.trusted_issuers)
        if self.any_issuer and not pins:
            body["trusted_issuers"] = []
        elif pins:
            body["trusted_issuers"] = pins
        if self.return_url:
            body["return_url"] = self.return_url
        # Whole numbers as numbers; anything else is passed on for the API's model to refuse.
        for key in ("retention_days", "status_check_hours"):
            text = getattr(self, key)
            if text:
                body[key] = int(text) if _INTEGER.match(text) else text
        return body


def parse_recommended_wallets(text: str) -> list[dict[str, str]]:
    """``Name | https://address`` a line; a line without ``|`` is passed on whole as the name,
    so the API's model refuses it with its reason rather than the form dropping it."""
    wallets = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, url = line.rpartition("|") if "|" in line else (line, "", "")
        wallets.append({"name": name.strip(), "url": url.strip()})
    return wallets


def attribute_types(schema: Schema | None) -> dict[str, str]:
    if schema is None:
        return {}
    return {a["name"]: a.get("type", "TEXT") for a in schema.attributes}


def type_of(name: str, types: dict[str, str]) -> str:
    """A schema attribute's type; a path inside one (``address.country``) is read as text."""
    return types.get(name, "TEXT")


def _number(text: str) -> int | float | None:
    if _INTEGER.match(text):
        return int(text)
    if _DECIMAL.match(text):
        return float(text)
    return None


def _scalar(text: str, attribute_type: str) -> Any:
    """One value as the credential would carry it: numbers and booleans for such attributes."""
    if attribute_type == "NUMBER" and (number := _number(text)) is not None:
        return number
    if attribute_type == "BOOLEAN" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def typed_value(operator: str, text: str, attribute_type: str) -> Any:
    """The condition's value with the JSON type the JSON API's clients would send.

    IN takes a comma-separated list; AGE_AT_LEAST, BIGGER and SMALLER take a number when the
    text is one (BIGGER and SMALLER otherwise keep the text, an ISO date); EQUAL and NOT follow
    the attribute's type. What does not fit is passed on as typed, for the domain to refuse
    with its own message.
    """
    text = text.strip()
    if operator == "EXISTS":
        return None
    if operator == "IN":
        return [_scalar(part.strip(), attribute_type) for part in text.split(",") if part.strip()]
    if not text:
        return None
    if operator in ("AGE_AT_LEAST", "BIGGER", "SMALLER"):
        number = _number(text)
        return text if number is None else number
    return _scalar(text, attribute_type)


def value_text(value: Any) -> str:
    """A stored condition value as the form's text input shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value)
    return str(value)


def parse_trusted_issuers(text: str) -> list[str]:
    """One entry per line, except a PEM certificate, which is one entry from its BEGIN line to
    its END line. Blank lines are skipped; the domain strips and de-duplicates the entries.
    """
    entries: list[str] = []
    block: list[str] | None = None
    started = 0
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if block is not None:
            block.append(line)
            if PEM_END in line:
                entries.append("\n".join(block))
                block = None
        elif PEM_BEGIN in line:
            block, started = [line], number
            if PEM_END in line:
                entries.append(line)
                block = None
        elif line:
            entries.append(line)
    if block is not None:
        raise FormError(
            f"Trusted issuers: the certificate starting on line {started} has no '{PEM_END}' line"
        )
    return entries


def describe_condition(condition: dict[str, Any], schema: Schema | None = None) -> str:
    """A stored condition in words, for people reading the definition: the attribute by its
    display name (with its key), the value as it was sent."""
    name = condition.get("name") or condition.get("attribute_id") or "?"
    if schema is not None:
        name = schema.labelled(name)
    operator = condition.get("operator", "")
    value = echoed(condition)["value"]
    shown = value_text(value)
    dated = condition.get("type") == "DATETIME" or (
        isinstance(value, str) and bool(_ISO_DATE.match(value))
    )
    if operator == "EXISTS":
        return f"{name} is present"
    if operator == "AGE_AT_LEAST":
        return f"{name} shows an age of at least {shown} years"
    if operator == "IN":
        return f"{name} is one of: {shown}"
    if operator == "BIGGER":
        return f"{name} is {'after' if dated else 'greater than'} {shown}"
    if operator == "SMALLER":
        return f"{name} is {'before' if dated else 'less than'} {shown}"
    if operator == "NOT":
        return f"{name} is not {shown}"
    return f"{name} equals {shown}"


_WHERE = re.compile(r"attributes(?:\[(\d+)\]|\.(\d+))(\.)?")


def readable_message(message: str) -> str:
    """Name conditions as the form numbers them ("condition 2"), not by list index
    (``attributes[1]`` from the domain, ``attributes.1.value`` from pydantic)."""

    def named(match: re.Match[str]) -> str:
        number = int(match.group(1) or match.group(2)) + 1
        return f"condition {number}" + (", " if match.group(3) else "")

    return _WHERE.sub(named, message)


def shown_claims(claims: dict[str, Any] | None, schema: Schema) -> list[tuple[str, str]]:
    """Received claims as (label, value) rows: nested claims by their dotted path, each
    labelled with the schema's display name where it has one."""
    rows: list[tuple[str, str]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value and schema.display_name(path) is None:
            for key, inner in value.items():
                walk(inner, f"{path}.{key}" if path else str(key))
        elif path:
            rows.append((schema.labelled(path), value_text(value)))

    walk(claims or {}, "")
    return rows
