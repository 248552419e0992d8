"""The wallet file keeps the holder's key and credentials; it holds a private key, so it is
written with mode 0600 and whole (a reader never sees half a file)."""

from __future__ import annotations

import json
import stat

import pytest

from app.holder import __main__ as holder_cli
from app.holder.store import Wallet, WalletError


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_wallet_is_created_with_mode_0600_and_keeps_its_key(tmp_path):
    path = tmp_path / "nested" / "wallet.json"
    wallet = Wallet.open(path)

    assert mode(path) == 0o600
    assert Wallet.open(path).jwk == wallet.jwk
    assert set(wallet.jwk) == {"kty", "crv", "x", "y"}  # the public half only


def test_every_save_replaces_the_file_with_mode_0600(tmp_path):
    path = tmp_path / "wallet.json"
    wallet = Wallet.open(path)
    path.chmod(0o644)

    wallet.add({"format": "dc+sd-jwt", "vct": "urn:example:1", "credential": "x~"})

    assert mode(path) == 0o600
    assert [entry["vct"] for entry in Wallet.open(path).credentials] == ["urn:example:1"]
    assert [p.name for p in tmp_path.iterdir()] == ["wallet.json"]  # no temporary left behind


@pytest.mark.parametrize(
    "content",
    ["not json", json.dumps({"credentials": []}), json.dumps({"key": {"kty": "EC"}})],
)
def test_an_unreadable_wallet_file_is_refused_with_its_path(tmp_path, content):
    path = tmp_path / "wallet.json"
    path.write_text(content)

    with pytest.raises(WalletError, match=r"wallet\.json"):
        Wallet.open(path)


def test_a_key_whose_public_half_does_not_match_is_refused(tmp_path):
    first, second = Wallet.open(tmp_path / "a.json"), Wallet.open(tmp_path / "b.json")
    document = json.loads(first.path.read_text())
    document["key"]["x"] = second.jwk["x"]
    first.path.write_text(json.dumps(document))

    with pytest.raises(WalletError):
        Wallet.open(first.path)


@pytest.mark.parametrize("before", [True, False], ids=["before the command", "after it"])
def test_the_wallet_file_is_taken_before_or_after_the_command(tmp_path, before):
    path = tmp_path / "mine.json"
    argv = ["--wallet", str(path), "list"] if before else ["list", "--wallet", str(path)]
    status, listed = holder_cli.run(argv)
    assert status == 0
    assert listed == {"wallet": str(path), "credentials": []}
    assert path.exists()


def test_without_wallet_the_default_file_is_used(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    arguments = holder_cli.parser().parse_args(["present", "openid4vp://?x=1"])
    assert arguments.wallet == str(holder_cli.DEFAULT_PATH)


def test_the_help_text_is_plain_words_without_restructuredtext_markup():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "app.holder", "--help"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "``" not in done.stdout, done.stdout
    assert "receive" in done.stdout and "present" in done.stdout
    assert '{"error": ...}' in done.stdout
