"""The tutorials' runnable command blocks (```bash), as the tests that run them read them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = [
    ROOT / "docs" / "tutorials" / "first-issued-credential.md",
    ROOT / "docs" / "tutorials" / "first-verification.md",
]
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# Where the tutorials expect `make run`; the tests put their own instance there instead.
TUTORIAL_BASE = "http://127.0.0.1:8000"


def runnable_blocks(page: Path) -> list[str]:
    return BASH_BLOCK.findall(page.read_text())


def script(page: Path, base: str, wallet: Path) -> str:
    """The page's blocks in order, against ``base`` and with the holder's wallet at ``wallet``."""
    return (
        "\n".join(runnable_blocks(page))
        .replace(TUTORIAL_BASE, base)
        .replace("-m app.holder ", f"-m app.holder --wallet {wallet} ")
    )
