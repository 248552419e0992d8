"""A SoftHSM2 token for the tests, in a directory of the test run's own.

SoftHSM reads ``SOFTHSM2_CONF`` once, when the PKCS#11 library is first initialised in the
process, so one token serves the whole run. Debian's ``softhsm2`` is installed by
``make test`` (like chromium); without it these tests fail rather than skip.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

MODULE = "/usr/lib/softhsm/libsofthsm2.so"
TOKEN_LABEL = "verity-test"
PIN = "4826-test-pin"
SO_PIN = "9931-test-so-pin"


@dataclass(frozen=True)
class SoftHsm:
    module: str
    token_label: str
    pin: str

    def settings(self) -> dict[str, str]:
        """What a deployment sets to keep its keys in this token."""
        return {
            "PKCS11_MODULE": self.module,
            "PKCS11_TOKEN_LABEL": self.token_label,
            "PKCS11_PIN": self.pin,
        }


def start_token(directory: Path) -> SoftHsm:
    if not Path(MODULE).exists():
        raise RuntimeError(f"SoftHSM2 is required ({MODULE}): apt-get install softhsm2")
    tokens = directory / "tokens"
    tokens.mkdir(parents=True, exist_ok=True)
    conf = directory / "softhsm2.conf"
    conf.write_text(
        f"directories.tokendir = {tokens}\nobjectstore.backend = file\nlog.level = ERROR\n"
    )
    os.environ["SOFTHSM2_CONF"] = str(conf)
    subprocess.run(
        [
            "softhsm2-util",
            "--init-token",
            "--free",
            "--label",
            TOKEN_LABEL,
            "--pin",
            PIN,
            "--so-pin",
            SO_PIN,
        ],
        check=True,
        capture_output=True,
    )
    return SoftHsm(MODULE, TOKEN_LABEL, PIN)
