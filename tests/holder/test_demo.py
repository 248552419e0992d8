"""``make demo`` runs ``demo/run.py``: the whole loop on a throwaway database with ``make run``'s
settings (``PUBLIC_URL`` the address served, no ``TRUST_ALLOW_PRIVATE``): VERIFIED, then FAILED
at once when the credential is revoked; then a Socious Wallet holder (the Identus SDK, in Node,
which CI has) verified over DIDComm by a second service on the same database, the one with
``TRUST_ALLOW_PRIVATE`` since the wallet's mediator is on loopback. Nothing is left running or
on disk."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_issues_presents_verified_revokes_presents_failed_then_cleans_up():
    done = subprocess.run(
        [sys.executable, str(ROOT / "demo" / "run.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"^  lookup\s+VERIFIED, ", out, re.MULTILINE), out
    assert re.search(r"^  revoked\s+credential REVOKED ", out, re.MULTILINE), out
    assert re.search(
        r"^  again\s+FAILED \(Credential has been revoked by its issuer\)$", out, re.MULTILINE
    ), out
    assert re.search(r"^  outcome\s+VERIFIED, then FAILED once revoked$", out, re.MULTILINE), out
    # Node.js is there (as in CI), so the DIDComm run happened, never skipped.
    didcomm = re.search(
        r"^  didcomm\s+VERIFIED \(Socious Wallet SDK 7\.0\.0 over DIDComm\), claims (\{.*\})$",
        out,
        re.MULTILINE,
    )
    assert didcomm, out
    assert json.loads(didcomm.group(1)) == {
        "country": "GB",
        "first_name": "Ada",
        "last_name": "Lovelace",
    }
    assert re.search(r"^  credential\s+ISSUED: ", out, re.MULTILINE), out
    # Stopped at the end: no dashboard address or sign-in token for a service that is gone.
    assert "sign-in token" not in out and "/dashboard" not in out and "vs_" not in out, out
    assert "make demo KEEP=1" in out
    service = re.search(r"^  service\s+(http://127\.0\.0\.1:\d+) ", out, re.MULTILINE)
    assert service, out
    # Only the requested claims travelled; the birthdate only for the age condition.
    presented = re.search(r"^  presented\s+(.+) to ", out, re.MULTILINE)
    assert presented, out
    assert sorted(presented.group(1).split(", ")) == [
        "birthdate",
        "family_name",
        "given_name",
        "member_number",
    ]
    workdir = re.search(r"SQLite in (\S+)\)", out).group(1)
    assert not Path(workdir).exists()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{service.group(1)}/healthz", timeout=5)


def test_only_a_kept_demo_prints_the_dashboard_address_and_a_sign_in_token(capsys, tmp_path):
    from demo.run import print_summary

    outcome = {
        "service": "http://127.0.0.1:5999",
        "organization": {"name": "Demo Org", "plan": "PRO"},
        "received": {"issuer": "http://127.0.0.1:5999/issuers/x", "vct": "urn:x", "claims": {}},
        "credential": {"status": "ISSUED"},
        "presented": {"disclosed": ["given_name"], "verifier": "redirect_uri:x"},
        "decision": {"status": "VERIFIED", "claims": {}},
        "revoked": {"status": "REVOKED"},
        "again": {"status": "FAILED", "validation_error": "revoked"},
        "didcomm": None,
        "dashboard": "http://127.0.0.1:5999/dashboard/login",
        "token": "vs_secret",
        "outcome": "VERIFIED, then FAILED once revoked",
    }
    print_summary(outcome, tmp_path)
    stopped = capsys.readouterr().out
    assert "vs_secret" not in stopped and "/dashboard/login" not in stopped
    print_summary(outcome, tmp_path, keep=True)
    kept = capsys.readouterr().out
    assert "  sign-in token  vs_secret" in kept and "/dashboard/login" in kept
