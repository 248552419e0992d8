"""PEM trust sources in a verification's decision, and the periodic sweep that queues the
refresh of every list that is due."""

from __future__ import annotations

from datetime import timedelta

from factories import make_staff
from flows import add_source, make_verification, read_source, run_jobs, verify, wallet_request
from sources_support import (
    Service,
    aki_of_a_leaf_under,
    etsi_xml,
    make_party,
    x5c_presentation,
)
from wallets import Issuer, python_presentation

from app import clock, jobs
from app.jobs.queue import queue_of
from app.trust_sources.jobs import SWEEP_JOB

PID_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"
ROOT = make_party("Our root CA", ca=True)
ISSUER = make_party("Our issuer", issuer=ROOT, dns=("pid.example",))
STRANGER_ROOT = make_party("Stranger root", ca=True)
STRANGER = make_party("Stranger", issuer=STRANGER_ROOT, dns=("pid.example",))


def pem_verification(app, client):
    staff = make_staff(app)
    source = add_source(client, staff, {"name": "Our CAs", "kind": "PEM", "certificates": ROOT.pem})
    verification = make_verification(
        client,
        staff,
        schema_id=PID_SCHEMA,
        claims=["given_name"],
        attributes=[],
        trust_sources=[source["id"]],
    )
    return staff, verification


def test_a_pem_source_anchors_x5c_issuers_and_names_itself_when_it_does_not(app, client):
    staff, verification = pem_verification(app, client)

    def ours(request):
        return x5c_presentation(request, ISSUER, [ISSUER, ROOT], iss="https://pid.example")

    def theirs(request):
        return x5c_presentation(
            request, STRANGER, [STRANGER, STRANGER_ROOT], iss="https://pid.example"
        )

    assert verify(app, client, staff, verification, ours) == ("VERIFIED", None)
    assert verify(app, client, staff, verification, theirs, "crm-2") == (
        "FAILED",
        "Issuer certificate is not in the certificates of trust source 'Our CAs'",
    )
    (query,) = wallet_request(client, verification, "crm-3").claims["dcql_query"]["credentials"]
    assert query["trusted_authorities"] == [{"type": "aki", "values": [aki_of_a_leaf_under(ROOT)]}]


def test_with_sources_an_issuer_without_a_certificate_is_not_trusted(app, client):
    staff, verification = pem_verification(app, client)
    issuer = Issuer()

    def by_did(request):
        return python_presentation(request, issuer)

    assert verify(app, client, staff, verification, by_did) == (
        "FAILED",
        f"Credential issuer {issuer.did} is not trusted by this verification",
    )


def test_the_sweep_queues_lists_never_fetched_and_those_past_the_interval(
    list_app, list_client, publisher
):
    signer = make_party("List signer", rsa_key=True)
    ca = make_party("CA", ca=True)
    publisher.add("/tl.xml", etsi_xml(signer, [Service("CA", ca.certificate)]))
    staff = make_staff(list_app)
    source = add_source(
        list_client,
        staff,
        {
            "name": "List",
            "kind": "TRUSTED_LIST",
            "url": publisher.url("/tl.xml"),
            "signer_certificates": signer.pem,
        },
    )
    queue_of(list_app).huey.flush()  # the creation's refresh lost with the queue
    with list_app.app_context():
        jobs.enqueue(SWEEP_JOB)
    run_jobs(list_app)  # the sweep, and the refresh it queued
    assert publisher.hits["/tl.xml"] == 1
    with list_app.app_context():
        jobs.enqueue(SWEEP_JOB)
    run_jobs(list_app)
    assert publisher.hits["/tl.xml"] == 1  # fetched just now: not due

    later = clock.now() + timedelta(minutes=61)
    clock.set_source(lambda: later)
    with list_app.app_context():
        jobs.enqueue(SWEEP_JOB)
    run_jobs(list_app)
    assert publisher.hits["/tl.xml"] == 2
    assert read_source(list_client, staff, source["id"])["last_attempt_at"] == later.isoformat()
