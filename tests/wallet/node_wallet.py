"""Issue and present SD-JWT VCs with an implementation we did not write (npm @sd-jwt/sd-jwt-vc).

The verifier's own tests build tokens with a test-side signer; this wallet checks that real
credentials from another implementation verify too. See ``wallet.mjs`` for the job format.

Typical use::

    presentation = present({"issuer_jwk": ..., "holder_jwk": ..., "vct": ..., ...})
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support.npm import ensure_node_modules

WALLET_DIR = Path(__file__).resolve().parent


def issue_and_present(job: dict[str, Any]) -> dict[str, str]:
    """Run one job through the wallet; returns ``{"issued": ..., "presentation": ...}``."""
    ensure_node_modules(WALLET_DIR, "@sd-jwt/sd-jwt-vc")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run the test wallet")
    completed = subprocess.run(
        [node, "wallet.mjs"],
        cwd=WALLET_DIR,
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"test wallet failed: {completed.stderr}")
    return json.loads(completed.stdout)


def present(job: dict[str, Any]) -> str:
    """The SD-JWT+KB presentation for ``job``: the disclosures it selects and a KB-JWT."""
    return issue_and_present(job)["presentation"]
