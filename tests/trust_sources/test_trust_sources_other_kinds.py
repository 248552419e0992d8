"""Lists of Trusted Entities and VICALs as trust sources, end to end: an EU PID provider's CA
from a List of Trusted Entities anchors an SD-JWT VC, and an IACA from a VICAL anchors an mDL
presented by the OpenWallet Foundation's @owf/mdoc."""

from __future__ import annotations

from factories import make_staff
from flows import add_source, make_verification, read_source, run_jobs, verify
from mdoc.mdoc_support import MDL_NS, MdocJob, make_iaca, present
from sources_support import lote_jws, make_party, vical, x5c_presentation

PID_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000001"
MDL_SCHEMA = "5c4a3f3e-0b1d-4c7e-9a51-000000000004"
PID_ISSUANCE = "http://uri.etsi.org/19602/SvcType/PID/Issuance"
WALLET_ISSUANCE = "http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance"
LOTE_SIGNER = make_party("PID list signer")
PID_CA = make_party("PID provider CA", ca=True)
PID_ISSUER = make_party("PID provider", issuer=PID_CA, dns=("pid.example",))
WALLET_CA = make_party("Wallet provider CA", ca=True)
WALLET_SIGNER = make_party("Signed by the wallet provider", issuer=WALLET_CA, dns=("pid.example",))


def test_an_eu_pid_provider_in_a_list_of_trusted_entities_is_trusted(
    list_app, list_client, publisher
):
    publisher.add(
        "/pid-providers.jws",
        lote_jws(
            LOTE_SIGNER,
            [
                ("PID provider", PID_ISSUANCE, PID_CA.certificate),
                ("Wallet", WALLET_ISSUANCE, WALLET_CA.certificate),
            ],
        ),
    )
    staff = make_staff(list_app)
    source = add_source(
        list_client,
        staff,
        {
            "name": "EU PID providers",
            "kind": "LIST_OF_TRUSTED_ENTITIES",
            "url": publisher.url("/pid-providers.jws"),
            "signer_certificates": LOTE_SIGNER.pem,
            "service_types": [PID_ISSUANCE],
        },
    )
    run_jobs(list_app)
    kept = read_source(list_client, staff, source["id"])
    assert (kept["sequence_number"], kept["certificate_count"], kept["last_error"]) == (4, 1, None)
    verification = make_verification(
        list_client,
        staff,
        schema_id=PID_SCHEMA,
        claims=["given_name"],
        attributes=[],
        trust_sources=[source["id"]],
    )

    def pid(request):
        return x5c_presentation(request, PID_ISSUER, [PID_ISSUER], iss="https://pid.example")

    def from_wallet_ca(request):
        return x5c_presentation(request, WALLET_SIGNER, [WALLET_SIGNER], iss="https://pid.example")

    assert verify(list_app, list_client, staff, verification, pid) == ("VERIFIED", None)
    # The wallet provider's CA is listed too, but not as a PID provider: not kept.
    assert verify(list_app, list_client, staff, verification, from_wallet_ca, "crm-2") == (
        "FAILED",
        "Issuer certificate is not in the list of trusted entities 'EU PID providers' (sequence 4)",
    )


def vical_source(list_app, list_client, publisher, staff, iacas) -> dict:
    vical_root = make_party("VICAL root", ca=True)
    vical_signer = make_party("VICAL signer", issuer=vical_root)
    publisher.add("/vical.cbor", vical(vical_signer, [vical_signer.certificate], iacas))
    source = add_source(
        list_client,
        staff,
        {
            "name": "AAMVA test VICAL",
            "kind": "VICAL",
            "url": publisher.url("/vical.cbor"),
            "signer_certificates": vical_root.pem,
        },
    )
    run_jobs(list_app)
    return source


def answer(iaca):
    def respond(request):
        return present(
            MdocJob(
                iaca,
                client_id=request.client_id,
                nonce=request.nonce,
                response_uri=request.response_uri,
                disclose={MDL_NS: ["given_name", "family_name"]},
            )
        )

    return respond


def test_an_iaca_in_a_vical_anchors_mdls_of_its_doctype(list_app, list_client, publisher):
    listed = make_iaca()
    other_doctype = make_iaca()
    staff = make_staff(list_app)
    source = vical_source(
        list_app,
        list_client,
        publisher,
        staff,
        [
            (listed.root, ["org.iso.18013.5.1.mDL"]),
            (other_doctype.root, ["org.iso.23220.photoid.1"]),
        ],
    )
    kept = read_source(list_client, staff, source["id"])
    assert (kept["sequence_number"], kept["certificate_count"], kept["last_error"]) == (5, 2, None)
    verification = make_verification(
        list_client,
        staff,
        schema_id=MDL_SCHEMA,
        claims=["given_name", "family_name"],
        attributes=[],
        trust_sources=[source["id"]],
    )
    assert verify(list_app, list_client, staff, verification, answer(listed)) == ("VERIFIED", None)
    status, reason = verify(
        list_app, list_client, staff, verification, answer(other_doctype), "crm-2"
    )
    assert status == "FAILED"
    assert reason == "Issuer certificate is not in the VICAL 'AAMVA test VICAL' (sequence 5)"
