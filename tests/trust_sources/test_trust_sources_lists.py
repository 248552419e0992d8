"""ETSI trusted lists as trust sources, end to end: a list published on a local server and
signed by xmlsec1 is fetched by the refresh job, kept, and decides SD-JWT VCs whose x5c chain
ends at a CA it lists; withdrawn, tampered or stale lists refuse with a plain reason."""

from __future__ import annotations

from datetime import timedelta

import pytest
from factories import make_staff
from flows import (
    add_source,
    make_verification,
    read_source,
    refresh_now,
    run_jobs,
    verify,
    wallet_request,
)
from sources_support import (
    NOW,
    QC,
    WITHDRAWN,
    Pointer,
    Service,
    aki_of_a_leaf_under,
    etsi_xml,
    make_party,
    tampered,
    x5c_presentation,
)

PID_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"
LIST_SIGNER = make_party("DE list signer", rsa_key=True)
ISSUING_CA = make_party("Bundesdruckerei test CA", ca=True, country="DE")
PID_ISSUER = make_party("PID issuer", issuer=ISSUING_CA, dns=("pid.example",))
OTHER_CA = make_party("Unlisted CA", ca=True)
OTHER_ISSUER = make_party("Other issuer", issuer=OTHER_CA, dns=("pid.example",))


def pid(request):
    """A PID whose x5c holds its leaf only: the listed CA completes the chain."""
    return x5c_presentation(request, PID_ISSUER, [PID_ISSUER], iss="https://pid.example")


def unlisted(request):
    return x5c_presentation(
        request, OTHER_ISSUER, [OTHER_ISSUER, OTHER_CA], iss="https://pid.example"
    )


def publish(publisher, path: str, document: bytes) -> str:
    publisher.add(path, document)
    return publisher.url(path)


def trusted_list_source(publisher, document: bytes, name: str = "DE list") -> dict:
    return {
        "name": name,
        "kind": "TRUSTED_LIST",
        "url": publish(publisher, "/de.xml", document),
        "signer_certificates": LIST_SIGNER.pem,
    }


def listed(status=None) -> bytes:
    service = Service("Bundesdruckerei", ISSUING_CA.certificate)
    if status:
        service = Service("Bundesdruckerei", ISSUING_CA.certificate, status=status)
    return etsi_xml(LIST_SIGNER, [service], sequence=123)


def setup(list_app, list_client, publisher, document: bytes):
    staff = make_staff(list_app)
    source = add_source(list_client, staff, trusted_list_source(publisher, document))
    run_jobs(list_app)
    verification = make_verification(
        list_client,
        staff,
        schema_id=PID_SCHEMA,
        claims=["given_name"],
        attributes=[],
        trust_sources=[source["id"]],
    )
    return staff, source, verification


def test_the_refresh_job_keeps_the_list_with_its_sequence_and_dates(
    list_app, list_client, publisher
):
    staff, source, _ = setup(list_app, list_client, publisher, listed())
    kept = read_source(list_client, staff, source["id"])
    assert kept["sequence_number"] == 123
    assert kept["certificate_count"] == 1
    assert kept["refreshed_at"] and kept["issued_at"] and kept["next_update"]
    assert kept["last_error"] is None and kept["stale"] is False
    assert kept["lists"][0]["territory"] == "DE"


def test_a_credential_whose_ca_is_in_the_list_is_verified(list_app, list_client, publisher):
    staff, _, verification = setup(list_app, list_client, publisher, listed())
    assert verify(list_app, list_client, staff, verification, pid) == ("VERIFIED", None)


def test_a_credential_from_a_ca_not_in_the_list_fails_naming_the_list(
    list_app, list_client, publisher
):
    staff, _, verification = setup(list_app, list_client, publisher, listed())
    status, reason = verify(
        list_app,
        list_client,
        staff,
        verification,
        unlisted,
    )
    assert status == "FAILED"
    assert reason == (
        "Issuer certificate is not in the trusted list 'DE list' (trusted list of DE, sequence 123)"
    )


def test_a_withdrawn_service_fails_saying_so(list_app, list_client, publisher):
    staff, _, verification = setup(list_app, list_client, publisher, listed(WITHDRAWN))
    status, reason = verify(list_app, list_client, staff, verification, pid)
    assert status == "FAILED"
    assert reason.startswith("Issuer certificate is not in the trusted list 'DE list'")
    assert ": its service was withdrawn on " in reason


def test_the_dcql_query_names_the_listed_ca_by_key_identifier(list_app, list_client, publisher):
    _, _, verification = setup(list_app, list_client, publisher, listed())
    request = wallet_request(list_client, verification)
    (query,) = request.claims["dcql_query"]["credentials"]
    assert query["trusted_authorities"] == [
        {"type": "aki", "values": [aki_of_a_leaf_under(ISSUING_CA)]}
    ]


def test_no_trusted_authorities_when_an_issuer_is_trusted_by_identifier(
    list_app, list_client, publisher
):
    staff, _, verification = setup(list_app, list_client, publisher, listed())
    list_client.put(
        f"/verifications/{verification['id']}",
        json={"trusted_issuers": ["https://issuer.example"]},
        headers=staff.headers(),
    )
    (query,) = wallet_request(list_client, verification).claims["dcql_query"]["credentials"]
    assert "trusted_authorities" not in query


def test_a_tampered_refresh_keeps_the_last_good_copy_and_says_why(list_app, list_client, publisher):
    staff, source, verification = setup(list_app, list_client, publisher, listed())
    publisher.add("/de.xml", tampered(listed(WITHDRAWN)))
    kept = refresh_now(list_app, list_client, staff, source["id"])
    assert kept["last_error"] == "The list's content does not match its signature"
    assert kept["last_error_at"] and kept["sequence_number"] == 123
    # The last good copy still vouches for the CA.
    assert verify(list_app, list_client, staff, verification, pid) == ("VERIFIED", None)


def test_an_unreachable_list_keeps_the_last_good_copy(list_app, list_client, publisher):
    staff, source, _ = setup(list_app, list_client, publisher, listed())
    publisher.add("/de.xml", b"gone", status=404)
    kept = refresh_now(list_app, list_client, staff, source["id"])
    assert kept["last_error"].startswith("Could not fetch ")
    assert kept["certificate_count"] == 1 and kept["refreshed_at"]


def test_a_good_refresh_takes_the_new_list_and_clears_the_error(list_app, list_client, publisher):
    staff, source, verification = setup(list_app, list_client, publisher, listed())
    publisher.add("/de.xml", b"gone", status=404)
    refresh_now(list_app, list_client, staff, source["id"])
    publisher.add("/de.xml", listed(WITHDRAWN))
    kept = refresh_now(list_app, list_client, staff, source["id"])
    assert kept["last_error"] is None
    status, _ = verify(list_app, list_client, staff, verification, pid)
    assert status == "FAILED"


def test_a_list_tampered_from_the_start_fails_the_credential_plainly(
    list_app, list_client, publisher
):
    staff, source, verification = setup(list_app, list_client, publisher, tampered(listed()))
    assert read_source(list_client, staff, source["id"])["refreshed_at"] is None
    status, reason = verify(list_app, list_client, staff, verification, pid)
    assert status == "FAILED"
    assert reason == (
        "Issuer certificate is not in the trusted list 'DE list' (not read yet: The list's "
        "content does not match its signature)"
    )


def stale_list() -> bytes:
    return etsi_xml(
        LIST_SIGNER,
        [Service("Bundesdruckerei", ISSUING_CA.certificate)],
        issued=NOW - timedelta(days=200),
        next_update=NOW - timedelta(days=2),
    )


def test_a_list_past_its_next_update_is_flagged_and_refused_by_default(
    list_app, list_client, publisher
):
    staff, source, verification = setup(list_app, list_client, publisher, stale_list())
    kept = read_source(list_client, staff, source["id"])
    assert kept["stale"] is True and kept["lists"][0]["stale"] is True
    status, reason = verify(list_app, list_client, staff, verification, pid)
    assert status == "FAILED"
    assert reason.startswith("Trusted list 'DE list' is past its next update (")


def test_a_stale_list_is_still_used_when_the_deployment_says_so(make_app, publisher):
    app = make_app(TRUST_ALLOW_PRIVATE=True, TRUST_LIST_STALE="use")
    client = app.test_client()
    staff, source, verification = setup(app, client, publisher, stale_list())
    assert read_source(client, staff, source["id"])["stale"] is True
    assert verify(app, client, staff, verification, pid) == ("VERIFIED", None)


def test_an_unknown_stale_setting_refuses_to_start(make_app):
    with pytest.raises(RuntimeError, match="TRUST_LIST_STALE"):
        make_app(TRUST_LIST_STALE="sometimes")


def test_the_eu_list_of_trusted_lists_is_followed_to_the_member_states(
    list_app, list_client, publisher
):
    fr_signer = make_party("FR list signer", rsa_key=True)
    lotl_signer = make_party("LoTL signer", rsa_key=True)
    de = publish(publisher, "/de.xml", listed())
    publisher.add("/fr.xml", b"", status=500)
    fr = publisher.url("/fr.xml")
    lotl = etsi_xml(
        lotl_signer,
        territory="EU",
        sequence=300,
        pointers=[
            Pointer(de, "DE", LIST_SIGNER.certificate),
            Pointer(de.replace(".xml", ".pdf"), "DE", LIST_SIGNER.certificate, "application/pdf"),
            Pointer(fr, "FR", fr_signer.certificate),
        ],
    )
    staff = make_staff(list_app)
    source = add_source(
        list_client,
        staff,
        {
            "name": "EU",
            "kind": "LIST_OF_TRUSTED_LISTS",
            "url": publish(publisher, "/lotl.xml", lotl),
            "signer_certificates": lotl_signer.pem,
        },
    )
    run_jobs(list_app)
    kept = read_source(list_client, staff, source["id"])
    assert kept["sequence_number"] == 300 and kept["certificate_count"] == 1
    assert [(i["territory"], i["sequence_number"]) for i in kept["lists"]] == [
        ("EU", 300),
        ("DE", 123),
        ("FR", None),
    ]
    assert kept["lists"][2]["error"].startswith("Could not fetch ")
    assert kept["last_error"].startswith("Kept the last good copy of: trusted list of FR: ")
    assert publisher.hits["/de.pdf"] == 0

    verification = make_verification(
        list_client,
        staff,
        schema_id=PID_SCHEMA,
        claims=["given_name"],
        attributes=[],
        trust_sources=[source["id"]],
    )
    assert verify(list_app, list_client, staff, verification, pid) == ("VERIFIED", None)
    status, reason = verify(
        list_app,
        list_client,
        staff,
        verification,
        unlisted,
        customer_id="crm-2",
    )
    assert (status, reason) == (
        "FAILED",
        "Issuer certificate is not in the EU list of qualified trust service providers 'EU' "
        "(trusted list of DE, sequence 123; trusted list of FR, sequence None)",
    )


def test_the_list_can_be_restricted_to_territories(list_app, list_client, publisher):
    lotl_signer = make_party("LoTL signer", rsa_key=True)
    de = publish(publisher, "/de.xml", listed())
    lotl = etsi_xml(
        lotl_signer,
        territory="EU",
        pointers=[
            Pointer(de, "DE", LIST_SIGNER.certificate),
            Pointer(publisher.url("/fr.xml"), "FR", LIST_SIGNER.certificate),
        ],
    )
    staff = make_staff(list_app)
    source = add_source(
        list_client,
        staff,
        {
            "name": "EU, Germany only",
            "kind": "LIST_OF_TRUSTED_LISTS",
            "url": publish(publisher, "/lotl.xml", lotl),
            "signer_certificates": lotl_signer.pem,
            "territories": ["de"],
            "service_types": [QC],
        },
    )
    run_jobs(list_app)
    kept = read_source(list_client, staff, source["id"])
    assert [i["territory"] for i in kept["lists"]] == ["EU", "DE"]
    assert kept["territories"] == ["DE"] and kept["last_error"] is None
    assert publisher.hits["/fr.xml"] == 0


def test_changing_where_a_list_comes_from_drops_the_kept_copy_and_fetches_again(
    list_app, list_client, publisher
):
    staff, source, verification = setup(list_app, list_client, publisher, listed())
    publisher.add("/moved.xml", etsi_xml(LIST_SIGNER, [], sequence=124))
    changed = list_client.put(
        f"/trust/sources/{source['id']}",
        json={"url": publisher.url("/moved.xml")},
        headers=staff.headers(),
    ).get_json()
    assert (changed["refreshed_at"], changed["certificate_count"]) == (None, 0)
    run_jobs(list_app)
    kept = read_source(list_client, staff, source["id"])
    assert (kept["sequence_number"], kept["certificate_count"]) == (124, 0)
    assert verify(list_app, list_client, staff, verification, pid)[0] == "FAILED"
