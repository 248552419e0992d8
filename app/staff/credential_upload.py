"""Reading the dashboard's issue forms: typed claim values, and the CSV of a bulk issue.

A CSV has a header row naming the recipient column (``recipient_id`` or ``recipient_email``)
and the schema's attribute names, then one row per credential, at most ``MAX_ROWS``. The whole
file is checked before anything is issued, and every problem is reported with its line number
(the header is line 1, as a spreadsheet numbers it), so one upload shows everything to fix.
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from app.csv_input import CsvInputError, read_table
from app.extensions import db
from app.issuance.claims import MAX_TEXT
from app.organizations.models import Organization
from app.recipients.models import Recipient

MAX_ROWS = 1000
RECIPIENT_COLUMNS = ("recipient_id", "recipient_email")
INTEGER = re.compile(r"[+-]?\d+")
TRUE_WORDS = frozenset({"true", "yes", "1"})
FALSE_WORDS = frozenset({"false", "no", "0"})


class UploadRefused(Exception):
    """The file, or some of its rows, cannot be issued; ``problems`` says where and why."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def claim_value(kind: str, text: str) -> Any:
    """A form's or a cell's text as the JSON value its attribute type asks for.

    Numbers and booleans become JSON numbers and booleans, so the credential's claim has the
    type the schema promises; other types stay text for the issuing checks to judge.
    """
    text = text.strip()
    if kind == "NUMBER":
        if INTEGER.fullmatch(text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"“{text}” is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"“{text}” is not a number")
        return number
    if kind == "BOOLEAN":
        if text.lower() in TRUE_WORDS:
            return True
        if text.lower() in FALSE_WORDS:
            return False
        raise ValueError(f"“{text}” is not true or false")
    return text


def typed_claims(attributes: list[dict[str, Any]], values: dict[str, str]) -> list[dict[str, Any]]:
    """``[{"name", "value"}]`` for every attribute given a value; an empty one is left out.

    Raises ``ValueError`` naming each attribute whose text does not fit its type.
    """
    claims, problems = [], []
    for attribute in attributes:
        name = attribute["name"]
        text = values.get(name, "")
        if not text.strip():
            continue
        try:
            claims.append({"name": name, "value": claim_value(attribute["type"], text)})
        except ValueError as exc:
            problems.append(f"{name}: {exc}")
    if problems:
        raise ValueError("; ".join(problems))
    return claims


@dataclass
class UploadRow:
    line: int
    recipient: str
    values: dict[str, str] = field(default_factory=dict)
    # Cells beyond the header's columns: a stray comma, or a value in the wrong column.
    overflow: bool = False


@dataclass
class Upload:
    """The parsed file: by which column recipients are named, and the rows."""

    recipient_column: str
    rows: list[UploadRow]


def read_csv(data: bytes, attributes: list[dict[str, Any]]) -> Upload:
    """Parse the file; raises ``UploadRefused`` for a file that cannot be read row by row.

    A cell is a claim value (or a recipient's ID or email), so it has a claim's text limit,
    the one the JSON API applies to the same values."""
    try:
        table = read_table(data, max_rows=MAX_ROWS, max_cell=MAX_TEXT)
    except CsvInputError as exc:
        raise UploadRefused(exc.problems) from None
    header = table.header
    recipient_column = check_header(header, [a["name"] for a in attributes])
    rows = [row_of(line, header, cells, recipient_column) for line, cells in table.rows]
    if not rows:
        raise UploadRefused(["The file has a header row but no rows to issue."])
    return Upload(recipient_column, rows)


def check_header(header: list[str], attribute_names: list[str]) -> str:
    if not any(header):
        raise UploadRefused(["The file is empty; its first line must name the columns."])
    problems = []
    named = [c for c in RECIPIENT_COLUMNS if c in header]
    if len(named) != 1:
        problems.append(
            "Line 1: name the recipient in one column, recipient_id or recipient_email."
        )
    unknown = [c for c in header if c not in (*RECIPIENT_COLUMNS, *attribute_names)]
    if unknown:
        problems.append(
            f"Line 1: {', '.join(unknown)} "
            f"{'is not an attribute' if len(unknown) == 1 else 'are not attributes'} of this "
            f"schema (its attributes: {', '.join(attribute_names) or 'none'})."
        )
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        verb = "appears" if len(repeated) == 1 else "appear"
        problems.append(f"Line 1: {', '.join(repeated)} {verb} more than once.")
    if problems:
        raise UploadRefused(problems)
    return named[0]


def row_of(line: int, header: list[str], cells: list[str], recipient_column: str) -> UploadRow:
    values = dict(zip(header, cells, strict=False))
    recipient = values.pop(recipient_column, "").strip()
    return UploadRow(line, recipient, values, overflow=len(cells) > len(header))


def resolve_recipients(
    organization: Organization, upload: Upload
) -> tuple[dict[int, uuid.UUID], list[str]]:
    """The organization's recipient for each row (by line), by ID or by email, and a problem
    for every row that names nobody, someone else's recipient, or an email two share."""
    problems: list[str] = []
    found: dict[int, uuid.UUID] = {}
    if upload.recipient_column == "recipient_id":
        known = own_ids(organization, upload.rows)
        for row in upload.rows:
            try:
                ident = uuid.UUID(row.recipient)
            except ValueError:
                ident = None
            if ident is None or ident not in known:
                problems.append(
                    f"Line {row.line}: no recipient of yours has the ID “{row.recipient}”."
                )
            else:
                found[row.line] = ident
    else:
        by_email = own_emails(organization, upload.rows)
        for row in upload.rows:
            matches = by_email.get(row.recipient.lower(), [])
            if len(matches) != 1:
                why = "no recipient of yours has" if not matches else "several recipients share"
                problems.append(f"Line {row.line}: {why} the email “{row.recipient}”.")
            else:
                found[row.line] = matches[0]
    return found, problems


def own_ids(organization: Organization, rows: list[UploadRow]) -> set[uuid.UUID]:
    wanted = set()
    for row in rows:
        try:
            wanted.add(uuid.UUID(row.recipient))
        except ValueError:
            continue
    query = select(Recipient.id).where(
        Recipient.organization_id == organization.id, Recipient.id.in_(wanted)
    )
    return set(db.session.scalars(query))


def own_emails(organization: Organization, rows: list[UploadRow]) -> dict[str, list[uuid.UUID]]:
    wanted = {row.recipient.lower() for row in rows if row.recipient}
    query = select(Recipient.id, Recipient.email).where(
        Recipient.organization_id == organization.id, func.lower(Recipient.email).in_(wanted)
    )
    by_email: dict[str, list[uuid.UUID]] = {}
    for ident, email in db.session.execute(query):
        by_email.setdefault(email.lower(), []).append(ident)
    return by_email
