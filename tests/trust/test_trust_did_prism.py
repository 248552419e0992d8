"""did:prism issuers: long forms resolved from their own text, short forms from a pinned
document or a Universal Resolver-style resolver on a local server, and trusted_issuers
comparing both forms of one DID. DIDs are made by ``app.didcomm.prism.make`` (the codec is
tested against the Identus SDK in tests/didcomm); the signatures by joserfc."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from joserfc import jws
from joserfc.jwk import ECKey
from trust_support import NOW, LocalServer

from app.didcomm import prism
from app.sdjwt import verify_jws
from app.trust import PrismResolution, is_trusted
from app.trust.did_prism import load_pinned, short_form
from app.trust.errors import TrustError
from app.trust.fetch import Fetcher
from app.trust.issuers import ResolvedIssuer, resolve_issuer_key
from app.trust.policy import names_issuer

KEYS = {"master-0": prism.MASTER, "auth-1": prism.AUTHENTICATION, "issue-1": prism.ISSUING}


@pytest.fixture(scope="module")
def issuer() -> prism.NewPrismDid:
    return prism.make(KEYS)


def short(did: str) -> str:
    return prism.parse(did).canonical


def resolve(
    iss: str, kid: str | None = None, prism_resolution=None, fetcher=None
) -> ResolvedIssuer:
    header = {"alg": "ES256K", **({"kid": kid} if kid else {})}
    return resolve_issuer_key(
        header,
        {"iss": iss},
        fetcher=fetcher or Fetcher(timeout=1.0),
        anchors=[],
        now=NOW,
        prism=prism_resolution,
    )


def refusal(iss: str, kid: str | None = None, **options: Any) -> str:
    with pytest.raises(TrustError) as refused:
        resolve(iss, kid, **options)
    return refused.value.reason


def signed_by(issuer: prism.NewPrismDid, key_id: str = "issue-1") -> str:
    pem = issuer.keys[key_id].private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    key = ECKey.import_key(pem)
    return jws.serialize_compact({"alg": "ES256K"}, b'{"a":1}', key, algorithms=["ES256K"])


def short_document(did: str) -> dict[str, Any]:
    """What a PRISM node answers for the published DID: the same keys under the short form."""
    parsed = prism.parse(did)
    document = json.loads(json.dumps(parsed.document()).replace(did, parsed.canonical))
    document.pop("alsoKnownAs")
    return document


# --------------------------------------------------------------------------- long form


@pytest.mark.parametrize("kid", [None, "{long}#issue-1", "{short}#issue-1", "#issue-1", "issue-1"])
def test_a_long_form_resolves_to_its_issuing_key_named_by_its_short_form(issuer, kid):
    resolved = resolve(issuer.did, kid and kid.format(long=issuer.did, short=short(issuer.did)))

    assert (resolved.identifier, resolved.method) == (short(issuer.did), "did:prism")
    assert verify_jws(signed_by(issuer), resolved.key, ("ES256K",))[1] == {"a": 1}


def test_an_authentication_key_does_not_issue(issuer):
    assert refusal(issuer.did, "#auth-1") == (
        f"Key #auth-1 of {short(issuer.did)} is not listed for assertionMethod"
    )


def test_the_master_key_is_not_in_the_document(issuer):
    assert refusal(issuer.did, "#master-0") == f"DID {short(issuer.did)} has no key #master-0"


def test_a_kid_of_another_did_is_refused(issuer):
    other = prism.make(KEYS).did
    assert refusal(issuer.did, f"{other}#issue-1") == (
        f"Key id '{other}#issue-1' does not belong to {short(issuer.did)}"
    )


def test_without_kid_two_issuing_keys_are_ambiguous():
    two = prism.make({**KEYS, "issue-2": prism.ISSUING})
    assert refusal(two.did) == (
        f"The JWS names no key (kid) and DID {short(two.did)} does not list exactly one "
        "assertionMethod key"
    )
    assert resolve(two.did, "#issue-2").identifier == short(two.did)


def test_a_long_form_whose_hash_is_not_its_operations_is_refused(issuer):
    operation = issuer.did.rsplit(":", 1)[1]
    wrong = f"did:prism:{'0' * 64}:{operation}"
    assert "hash is not the SHA-256 of its operation" in refusal(wrong)


@pytest.mark.parametrize("suffix", ["#issue-1", "?service=x", "/path"])
def test_a_did_url_is_not_an_issuer(issuer, suffix):
    assert refusal(issuer.did + suffix) == f"Issuer {issuer.did + suffix} is a DID URL, not a DID"


# --------------------------------------------------------------------------- short form


def test_a_short_form_without_pin_or_resolver_says_how_to_pin_it(issuer):
    assert refusal(short(issuer.did), "#issue-1") == (
        f"Issuer {short(issuer.did)} is a short-form did:prism, which only a PRISM node can "
        "resolve: the deployment's operator can pin its DID document "
        "(PINNED_DID_DOCUMENTS_FILE) or name a DID resolver (DID_RESOLVER_URL)"
    )


def test_a_pinned_short_form_resolves_without_a_fetch(issuer, connections: list[str]):
    canonical = short(issuer.did)
    pinned = PrismResolution({canonical: short_document(issuer.did)}, "https://resolver.test")

    resolved = resolve(canonical, f"{canonical}#issue-1", pinned)
    assert resolved.identifier == canonical
    assert verify_jws(signed_by(issuer), resolved.key, ("ES256K",))
    assert connections == []


def test_a_pinned_short_form_wins_over_the_long_forms_own_keys(issuer):
    rotated = prism.make(KEYS)
    document = json.loads(
        json.dumps(short_document(rotated.did)).replace(short(rotated.did), short(issuer.did))
    )
    resolved = resolve(issuer.did, "#issue-1", PrismResolution({short(issuer.did): document}))

    assert verify_jws(signed_by(rotated), resolved.key, ("ES256K",))


@pytest.mark.parametrize("wrapped", [True, False], ids=["resolution result", "bare document"])
def test_a_resolver_answer_resolves_a_short_form(
    issuer, server: LocalServer, dev_fetcher: Fetcher, wrapped: bool
):
    canonical = short(issuer.did)
    document = short_document(issuer.did)
    body = {"didDocument": document, "didDocumentMetadata": {}} if wrapped else document
    server.add(f"/resolver/1.0/identifiers/{canonical}", body)
    resolver = PrismResolution(resolver_url=server.url("/resolver/"))

    resolved = resolve(canonical, "#issue-1", resolver, dev_fetcher)
    assert resolved.identifier == canonical
    assert verify_jws(signed_by(issuer), resolved.key, ("ES256K",))


def test_a_resolver_may_answer_with_the_long_forms_document(
    issuer, server: LocalServer, dev_fetcher: Fetcher
):
    canonical = short(issuer.did)
    server.add(f"/1.0/identifiers/{canonical}", {"didDocument": prism.resolve(issuer.did)})
    resolver = PrismResolution(resolver_url=server.url(""))

    assert resolve(canonical, f"{canonical}#issue-1", resolver, dev_fetcher).identifier == (
        canonical
    )


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("other", "The DID resolver answered with the document of another DID than {did}"),
        ("deactivated", "DID {did} is deactivated"),
        ("no document", "The DID resolver did not answer with a DID document for {did}"),
    ],
)
def test_a_resolver_answer_that_is_not_this_dids_document_is_refused(
    issuer, server: LocalServer, dev_fetcher: Fetcher, answer: str, reason: str
):
    canonical = short(issuer.did)
    other = prism.make(KEYS).did
    bodies = {
        "other": {"didDocument": short_document(other)},
        "deactivated": {
            "didDocument": short_document(issuer.did),
            "didDocumentMetadata": {"deactivated": True},
        },
        "no document": {"didResolutionMetadata": {"error": "notFound"}},
    }
    server.add(f"/1.0/identifiers/{canonical}", bodies[answer])
    resolver = PrismResolution(resolver_url=server.url(""))

    assert refusal(canonical, "#issue-1", prism_resolution=resolver, fetcher=dev_fetcher) == (
        reason.format(did=canonical)
    )


def test_the_resolver_goes_through_the_fetchers_address_rules(issuer, server: LocalServer):
    canonical = short(issuer.did)
    server.add(f"/1.0/identifiers/{canonical}", {"didDocument": short_document(issuer.did)})
    resolver = PrismResolution(resolver_url=server.url("").replace("http:", "https:"))

    reason = refusal(canonical, "#issue-1", prism_resolution=resolver)
    assert reason.startswith(f"Could not resolve {canonical}: ")
    assert "loopback" in reason
    assert server.hits[f"/1.0/identifiers/{canonical}"] == 0


# --------------------------------------------------------------------------- long form, resolver


def without_issuing_key(did: str) -> dict[str, Any]:
    """The published document after the DID's update removed ``issue-1``."""
    document = short_document(did)
    document["verificationMethod"] = [
        m for m in document["verificationMethod"] if not m["id"].endswith("#issue-1")
    ]
    document["assertionMethod"] = []
    return document


@pytest.mark.parametrize(
    ("published", "reason"),
    [
        (
            lambda did: {
                "didDocument": short_document(did),
                "didDocumentMetadata": {"deactivated": True},
            },
            "DID {did} is deactivated",
        ),
        (lambda did: {"didDocument": without_issuing_key(did)}, "DID {did} has no key #issue-1"),
    ],
    ids=["deactivated", "key removed"],
)
def test_with_a_resolver_a_long_form_is_checked_against_its_published_state(
    issuer, server: LocalServer, dev_fetcher: Fetcher, published, reason: str
):
    canonical = short(issuer.did)
    server.add(f"/1.0/identifiers/{canonical}", published(issuer.did))
    resolver = PrismResolution(resolver_url=server.url(""))

    assert resolve(issuer.did, "#issue-1", fetcher=dev_fetcher).identifier == canonical  # alone
    refused = refusal(issuer.did, "#issue-1", prism_resolution=resolver, fetcher=dev_fetcher)
    assert refused == reason.format(did=canonical)
    assert server.hits[f"/1.0/identifiers/{canonical}"] == 1


@pytest.mark.parametrize("answer", ["404", "notFound"])
def test_a_long_form_the_resolver_does_not_know_stands_on_its_own_text(
    issuer, server: LocalServer, dev_fetcher: Fetcher, answer: str
):
    canonical = short(issuer.did)
    if answer == "notFound":
        server.add(
            f"/1.0/identifiers/{canonical}", {"didResolutionMetadata": {"error": "notFound"}}
        )
    resolver = PrismResolution(resolver_url=server.url(""))

    resolved = resolve(issuer.did, "#issue-1", resolver, dev_fetcher)
    assert resolved.identifier == canonical
    assert verify_jws(signed_by(issuer), resolved.key, ("ES256K",))
    assert server.hits[f"/1.0/identifiers/{canonical}"] == 1


def test_a_long_form_is_refused_while_its_resolver_cannot_be_reached(
    issuer, server: LocalServer, dev_fetcher: Fetcher
):
    canonical = short(issuer.did)
    server.add(f"/1.0/identifiers/{canonical}", "down", status=503)
    resolver = PrismResolution(resolver_url=server.url(""))

    reason = refusal(issuer.did, "#issue-1", prism_resolution=resolver, fetcher=dev_fetcher)
    assert reason.startswith(f"Could not resolve {canonical}: ") and "HTTP 503" in reason


def test_a_short_form_that_is_not_64_hex_digits_is_refused():
    assert "is not a usable did:prism" in refusal("did:prism:abc")


# --------------------------------------------------------------------------- the pin file


def test_the_pin_file_takes_documents_and_resolution_results_keyed_by_short_form(issuer):
    other = prism.make(KEYS)
    text = json.dumps([short_document(issuer.did), {"didDocument": prism.resolve(other.did)}])
    pinned = load_pinned(text)

    assert set(pinned) == {short(issuer.did), short(other.did)}
    assert load_pinned(json.dumps(short_document(issuer.did))).keys() == {short(issuer.did)}
    assert load_pinned("") == {}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[", "PINNED_DID_DOCUMENTS_FILE is not JSON"),
        ('[{"no": "id"}]', "PINNED_DID_DOCUMENTS_FILE entry 0 is not a DID document"),
        ('{"id": "did:web:example.com"}', "entry 0 is not a did:prism"),
        ('{"id": "did:prism:' + "0" * 64 + ':AAAA"}', "hash is not the SHA-256"),
    ],
)
def test_a_malformed_pin_file_is_refused(text: str, reason: str):
    with pytest.raises(ValueError, match=reason):
        load_pinned(text)


# --------------------------------------------------------------------------- trusted_issuers


def test_a_did_prism_issuer_matches_a_pin_of_either_form(issuer):
    resolved = resolve(issuer.did)

    assert is_trusted(resolved, [short(issuer.did)])
    assert is_trusted(resolved, [issuer.did])
    assert not is_trusted(resolved, [short(prism.make(KEYS).did)])
    assert names_issuer([short(issuer.did)], issuer.did)
    assert names_issuer([issuer.did], short(issuer.did))
    assert not names_issuer(["did:prism:other"], issuer.did)


def test_short_form_leaves_other_identifiers_alone():
    assert short_form("https://issuer.example/a:b") == "https://issuer.example/a:b"
    assert short_form("did:web:example.com:a") == "did:web:example.com:a"
    assert short_form("did:prism:abc:def") == "did:prism:abc"
