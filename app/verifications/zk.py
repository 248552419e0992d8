"""What a verification that asks for a zero-knowledge proof (``"zk": true``) may ask.

A proof is checked against a circuit Verity pins (``app.zk.circuits``), and every pinned
circuit proves one claim of an ISO mdoc, equal to a value the verifier chooses. So such a
verification is of an ``mso_mdoc`` schema and asks one age claim, ``age_over_NN`` (ISO/IEC
18013-5 7.2.5), requested, or put under one ``EQUAL`` condition on a boolean, or both; the value
the proof must show is the condition's, true without one. Anything else is refused when the
verification is saved, naming why, rather than failing every person later. Without the ``zk``
extra installed nothing here can be verified: 503 ``NOT_CONFIGURED``.
"""

from __future__ import annotations

import re
from typing import Any

from app.errors import InvalidRequest, NotConfigured
from app.oid4vp.formats import MSO_MDOC
from app.verifications.conditions import condition_name
from app.zk import available
from app.zk.circuits import MAX_CLAIMS

AGE_CLAIM = re.compile(r"age_over_\d{2}")


def check_zk(schema_format: str, claims: list[str], conditions: list[dict[str, Any]]) -> None:
    """Refuse a ZK verification no pinned circuit can answer (400) or no library can check
    here (503)."""
    if schema_format != MSO_MDOC:
        raise InvalidRequest(
            f"zk: a zero-knowledge proof is made over an ISO mdoc ({MSO_MDOC}); this "
            f"verification's schema is {schema_format}",
            code="ZK_NOT_AVAILABLE",
        )
    zk_claim(claims, conditions)
    if not available():
        raise NotConfigured(
            "zk: zero-knowledge proofs are not configured on this deployment (install the zk extra)"
        )


def zk_claim(claims: list[str], conditions: list[dict[str, Any]]) -> tuple[str, Any]:
    """The one claim a ZK verification proves and the value it must have."""
    names = list(dict.fromkeys([*claims, *(condition_name(c) or "" for c in conditions)]))
    if len(names) != MAX_CLAIMS or not AGE_CLAIM.fullmatch(names[0]):
        raise InvalidRequest(
            "zk: the pinned circuits prove one age claim (age_over_NN); ask for exactly one, "
            "in claims or in one EQUAL condition",
            code="ZK_CLAIM_NOT_PROVABLE",
        )
    if not conditions:
        return names[0], True
    if len(conditions) != 1 or conditions[0].get("operator") != "EQUAL":
        raise InvalidRequest(
            "zk: a zero-knowledge proof shows a claim equal to a value; the only condition it "
            "can answer is one EQUAL",
            code="ZK_CLAIM_NOT_PROVABLE",
        )
    value = conditions[0].get("value")
    if not isinstance(value, bool):
        raise InvalidRequest(
            f"zk: {names[0]} is proven true or false; the EQUAL condition's value must be a "
            "boolean",
            code="ZK_CLAIM_NOT_PROVABLE",
        )
    return names[0], value
