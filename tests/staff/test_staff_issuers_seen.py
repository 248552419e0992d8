"""The verification page's "Issuers seen": listed with their counts, trusted by a form that
carries the CSRF token (one without it is refused), and never another organization's."""

from __future__ import annotations

import pytest
from didcomm.inbox_holder import Holder
from didcomm.test_issuers_seen import OTHER_ISSUER, Flow, prism_credential, short
from factories import make_staff
from staff_support import sign_in, submit, text_of

from app.didcomm import prism


@pytest.fixture
def holder():
    made = Holder.start()
    yield made
    made.server.stop()


@pytest.fixture
def served(make_app):
    return make_app(TRUST_ALLOW_PRIVATE=True)


def test_an_issuer_seen_is_trusted_from_its_verifications_page(served, holder):
    issuer = prism.make()
    flow = Flow(served, holder, [OTHER_ISSUER])
    flow.present(
        lambda did: prism_credential(issuer, did, iss=issuer.did, kid=f"{issuer.did}#issuing-0")
    )
    page_path = f"/dashboard/verifications/{flow.verification['id']}"
    trust_path = f"{page_path}/trusted-issuers"
    staff = served.test_client()
    sign_in(staff, flow.staff.token)
    page = text_of(staff.get(page_path))
    assert short(issuer.did) in page and "Trust this issuer" in page

    forged = staff.post(trust_path, data={"issuer": short(issuer.did)})
    assert forged.status_code == 403

    stranger = served.test_client()
    sign_in(stranger, make_staff(served, email="eve@globex.test", org_name="Globex").token)
    assert submit(stranger, trust_path, {"issuer": short(issuer.did)}).status_code == 404

    unseen = submit(staff, trust_path, {"issuer": "https://never.seen.test"})
    assert unseen.status_code == 400
    assert "no presentation to this verification named this issuer" in text_of(unseen)

    trusted = submit(staff, trust_path, {"issuer": short(issuer.did)})
    assert trusted.status_code == 303
    page = text_of(staff.get(page_path))
    assert f"{short(issuer.did)} is now trusted" in page
    assert "Trust this issuer" not in page
    assert flow.client.get(
        f"/verifications/{flow.verification['id']}", headers=flow.staff.headers()
    ).get_json()["trusted_issuers"] == [OTHER_ISSUER, short(issuer.did)]
