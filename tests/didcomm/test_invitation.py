"""Out-of-band 2.0 invitations and the ``_oob`` value: only ``[A-Za-z0-9=]`` (what the Identus
SDK's standard-base64 decoder reads), decoding to exactly the invitation made."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.didcomm import invitation
from app.didcomm.errors import InvitationError

DID = "did:peer:2.Ez6LSexample"
SAFE = re.compile(r"\A[A-Za-z0-9=]*\Z")


def test_invitation_has_what_the_sdk_requires():
    made = invitation.make(DID, goal="Verify with Verity", expires_time=1_900_000_000)
    assert made["type"] == "https://didcomm.org/out-of-band/2.0/invitation"
    assert made["from"] == DID and made["id"]
    assert made["body"] == {
        "goal_code": "org.hyperledger.identus.connect",
        "goal": "Verify with Verity",
        "accept": ["didcomm/v2"],
    }
    assert made["expires_time"] == 1_900_000_000
    assert "expires_time" not in invitation.make(DID, goal="g")


def test_oob_url_round_trips_and_keeps_an_existing_query():
    made = invitation.make(DID, goal="Who? -> you ~ me", invitation_id="inv-1")
    url = invitation.oob_url("https://verity.example/connect", made)
    assert url.startswith("https://verity.example/connect?_oob=")
    assert invitation.parse_oob(url) == made
    with_query = invitation.oob_url("https://verity.example/c?lang=de", made)
    assert "?lang=de&_oob=" in with_query
    assert invitation.parse_oob(with_query) == made


def test_plain_base64_of_these_characters_would_need_plus_or_slash():
    """Why the escaping exists: the unescaped JSON's standard base64 is not URL-safe."""
    made = invitation.make(DID, goal="??>>~~", invitation_id="x")
    plain = base64.b64encode(json.dumps(made, separators=(",", ":")).encode()).decode()
    assert set(plain) & {"+", "/"}
    value = invitation.encode(made)
    assert SAFE.match(value)
    assert json.loads(base64.b64decode(value)) == made


invitations = st.builds(
    lambda goal, code, ident, frm, expires: invitation.make(
        frm, goal=goal, goal_code=code, invitation_id=ident, expires_time=expires
    ),
    # Text any database stores: the reader refuses NUL and lone surrogates (not UTF-8), as
    # every JSON door does.
    goal=st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00")),
    code=st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1
    ),
    ident=st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1
    ),
    frm=st.text(alphabet=st.characters(codec="ascii", exclude_characters="\x00"), min_size=1),
    expires=st.none() | st.integers(min_value=0, max_value=2**53),
)


@settings(max_examples=500, deadline=None)
@given(invitations)
def test_oob_value_uses_only_letters_digits_and_padding(made):
    value = invitation.encode(made)
    assert SAFE.match(value), value
    assert invitation.decode(value) == made
    # Standard base64 decoding (what the SDK does) gives the same invitation.
    assert json.loads(base64.b64decode(value)) == made


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from('?>~\x7f\\"aé€\U0001f600'), max_size=40))
def test_oob_value_is_safe_for_the_characters_that_produce_plus_and_slash(goal):
    made = invitation.make(DID, goal=goal, invitation_id="i")
    value = invitation.encode(made)
    assert SAFE.match(value) and invitation.decode(value) == made


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://v.example/connect", "no _oob"),
        ("https://v.example/connect?_oob=%%%", "not base64"),
        (
            "https://v.example/connect?_oob=" + base64.b64encode(b"[1]").decode(),
            "not an out-of-band",
        ),
        (
            "https://v.example/connect?_oob="
            + base64.b64encode(json.dumps({"type": invitation.TYPE, "id": "i"}).encode()).decode(),
            "no from",
        ),
        (
            "https://v.example/connect?_oob="
            + base64.b64encode(
                json.dumps({"type": invitation.TYPE, "id": "i", "from": DID, "body": {}}).encode()
            ).decode(),
            "accept",
        ),
    ],
)
def test_parse_oob_refuses_with_a_reason(url, reason):
    with pytest.raises(InvitationError, match=reason):
        invitation.parse_oob(url)
