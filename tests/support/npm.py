"""The npm packages the tests drive (wallet, identity provider, accessibility checker), each
installed from its own lock file on first use, so a clean clone runs the tests as is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def ensure_node_modules(directory: Path, installed: str) -> None:
    """``npm ci`` in ``directory`` unless ``node_modules/<installed>`` is already there.

    Without npm the tests that need it fail (never skip), so a missing tool cannot go
    unnoticed.
    """
    if (directory / "node_modules" / installed).exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(f"npm is required to install {installed} (in {directory})")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=directory,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=300,
    )
