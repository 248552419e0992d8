"""Reading a bulk-issue CSV and the issue form's typed values, before anything is issued."""

from __future__ import annotations

import pytest
from factories import make_staff

from app.extensions import db
from app.organizations.models import Organization
from app.recipients.operations import create_recipient
from app.staff.credential_upload import (
    MAX_ROWS,
    UploadRefused,
    claim_value,
    read_csv,
    resolve_recipients,
    typed_claims,
)

ATTRIBUTES = [
    {"name": "licence_number", "type": "TEXT"},
    {"name": "grade", "type": "NUMBER"},
    {"name": "active", "type": "BOOLEAN"},
]


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        ("NUMBER", "42", 42),
        ("NUMBER", " -7 ", -7),
        ("NUMBER", "3.5", 3.5),
        ("BOOLEAN", "true", True),
        ("BOOLEAN", "No", False),
        ("BOOLEAN", "1", True),
        ("TEXT", "  RN-1 ", "RN-1"),
        ("DATETIME", "2027-01-31", "2027-01-31"),
    ],
)
def test_values_take_the_type_of_their_attribute(kind, text, value):
    assert claim_value(kind, text) == value
    assert type(claim_value(kind, text)) is type(value)


@pytest.mark.parametrize(
    ("kind", "text"),
    [("NUMBER", "12a"), ("NUMBER", "nan"), ("NUMBER", "inf"), ("BOOLEAN", "maybe")],
)
def test_a_value_that_does_not_fit_its_type_is_refused(kind, text):
    with pytest.raises(ValueError, match=text):
        claim_value(kind, text)


def test_empty_values_are_left_out_and_every_bad_one_is_named():
    assert typed_claims(ATTRIBUTES, {"licence_number": "RN-1", "grade": "", "active": "yes"}) == [
        {"name": "licence_number", "value": "RN-1"},
        {"name": "active", "value": True},
    ]
    with pytest.raises(ValueError) as refused:
        typed_claims(ATTRIBUTES, {"grade": "x", "active": "maybe"})
    assert str(refused.value) == "grade: “x” is not a number; active: “maybe” is not true or false"


def test_a_file_is_read_row_by_row_with_spreadsheet_line_numbers():
    data = "\ufeffrecipient_email,licence_number,grade\r\na@x.test,RN-1,3\r\n\r\nb@x.test,RN-2,\r\n"
    upload = read_csv(data.encode(), ATTRIBUTES)
    assert upload.recipient_column == "recipient_email"
    assert [(r.line, r.recipient, r.values) for r in upload.rows] == [
        (2, "a@x.test", {"licence_number": "RN-1", "grade": "3"}),
        (4, "b@x.test", {"licence_number": "RN-2", "grade": ""}),
    ]


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        (b"", ["The file is empty; its first line must name the columns."]),
        (b"recipient_email,grade\n", ["The file has a header row but no rows to issue."]),
        (
            b"\xff\xfe\x00",
            ["Line 1: the file is not UTF-8 text; save it as \u201cCSV UTF-8\u201d."],
        ),
        (
            b"grade,colour,grade\n1,red,2\n",
            [
                "Line 1: name the recipient in one column, recipient_id or recipient_email.",
                "Line 1: colour is not an attribute of this schema (its attributes: "
                "licence_number, grade, active).",
                "Line 1: grade appears more than once.",
            ],
        ),
        (
            b"recipient_id,recipient_email\nx,y\n",
            ["Line 1: name the recipient in one column, recipient_id or recipient_email."],
        ),
    ],
)
def test_a_file_that_cannot_be_read_row_by_row_is_refused_whole(data, problems):
    with pytest.raises(UploadRefused) as refused:
        read_csv(data, ATTRIBUTES)
    assert refused.value.problems == problems


def test_at_most_a_thousand_rows():
    rows = "".join(f"r{i}@x.test,RN-{i}\n" for i in range(MAX_ROWS))
    header = "recipient_email,licence_number\n"
    assert len(read_csv((header + rows).encode(), ATTRIBUTES).rows) == MAX_ROWS
    with pytest.raises(UploadRefused, match="more than 1,000 rows"):
        read_csv((header + rows + "one@too.many,RN-X\n").encode(), ATTRIBUTES)


def test_cells_beyond_the_header_are_flagged():
    upload = read_csv(b"recipient_email,grade\na@x.test,1,oops\n", ATTRIBUTES)
    assert upload.rows[0].overflow is True


def test_recipients_are_found_by_email_or_id_only_in_the_organization(app):
    mine, theirs = make_staff(app), make_staff(app, "bob@example.test", org_name="Other")
    with app.app_context():
        organization = db.session.get(Organization, __import__("uuid").UUID(mine.organization_id))
        other = db.session.get(Organization, __import__("uuid").UUID(theirs.organization_id))
        ada = create_recipient(
            organization, {"first_name": "Ada", "last_name": "L", "email": "Ada@X.test"}
        )
        for _ in range(2):
            create_recipient(
                organization, {"first_name": "T", "last_name": "W", "email": "twin@x.test"}
            )
        stranger = create_recipient(
            other, {"first_name": "S", "last_name": "O", "email": "stranger@x.test"}
        )
        by_email = read_csv(
            b"recipient_email\nada@x.test\ntwin@x.test\nstranger@x.test\n",
            [],
        )
        found, problems = resolve_recipients(organization, by_email)
        assert found == {2: ada.id}
        assert problems == [
            "Line 3: several recipients share the email \u201ctwin@x.test\u201d.",
            "Line 4: no recipient of yours has the email \u201cstranger@x.test\u201d.",
        ]
        by_id = read_csv(f"recipient_id\n{ada.id}\n{stranger.id}\nnot-an-id\n".encode(), [])
        found, problems = resolve_recipients(organization, by_id)
        assert found == {2: ada.id}
        assert problems == [
            f"Line 3: no recipient of yours has the ID \u201c{stranger.id}\u201d.",
            "Line 4: no recipient of yours has the ID \u201cnot-an-id\u201d.",
        ]
        db.session.rollback()
