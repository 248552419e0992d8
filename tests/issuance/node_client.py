"""Run ``wallet_vci.mjs``: npm @openid4vc/openid4vci as the wallet, @sd-jwt/sd-jwt-vc and
@sd-jwt/jwt-status-list as the verifier; or ``wallet_sphereon.mjs``, npm
@sphereon/oid4vci-client as a draft-15 wallet (packages pinned in this folder's
package-lock.json)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support.npm import ensure_node_modules

HERE = Path(__file__).resolve().parent


def run(job: dict[str, Any], script: str = "wallet_vci.mjs") -> dict[str, Any]:
    """``script`` is the wallet: ``wallet_vci.mjs`` (OWF) or ``wallet_sphereon.mjs``."""
    # The package added last: a folder installed before it was added is installed again.
    ensure_node_modules(HERE, "@sphereon/oid4vci-client")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is required to run the OpenID4VCI test wallet")
    completed = subprocess.run(
        [node, script],
        cwd=HERE,
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=120,
    )
    result = json.loads(completed.stdout or "{}")
    if completed.returncode != 0:
        raise AssertionError(f"the npm wallet failed: {result.get('error') or completed.stderr}")
    return result
