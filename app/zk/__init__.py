"""Zero-knowledge age proofs over ISO mdoc (Longfellow, ``mso_mdoc_zk``).

Protocol code beside ``app.mdoc``: no database, no Flask. ``circuits`` pins the circuits and
builds the request's ``zk_system_type`` list; ``answer`` decides a ``zkDocuments`` answer
strictly; ``backend`` is the one call into the optional ``pylongfellow`` library; ``pool`` runs
that call in bounded worker processes.
"""

from app.zk.answer import ZkRequest, ZkVerified, check_answer
from app.zk.backend import ProofCheck, available, verify_proof
from app.zk.circuits import PINNED, zk_system_types
from app.zk.errors import ZkBusy, ZkError, ZkUnavailable
from app.zk.pool import VerificationPool, shared_pool

__all__ = [
    "PINNED",
    "ProofCheck",
    "VerificationPool",
    "ZkBusy",
    "ZkError",
    "ZkRequest",
    "ZkUnavailable",
    "ZkVerified",
    "available",
    "check_answer",
    "shared_pool",
    "verify_proof",
    "zk_system_types",
]
