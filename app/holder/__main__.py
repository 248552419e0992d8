"""``python -m app.holder receive|present|list``: a development wallet on the command line.

Results are printed as JSON on stdout; a failure prints ``{"error": ...}`` and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.holder.issuance import receive
from app.holder.jose import JoseError
from app.holder.presentation import present
from app.holder.store import DEFAULT_PATH, Wallet, WalletError
from app.holder.transport import HolderError

# What --help prints: the module docstring's words without its reStructuredText markup.
DESCRIPTION = (
    "A development wallet on the command line: receive, present, list. Results are printed "
    'as JSON on stdout; a failure prints {"error": ...} and exits 1.'
)


def parser() -> argparse.ArgumentParser:
    """``--wallet`` is taken before or after the subcommand: people type it either way."""
    wallet_help = f"wallet file (default {DEFAULT_PATH}); before or after the command"
    cli = argparse.ArgumentParser(prog="python -m app.holder", description=DESCRIPTION)
    cli.add_argument("--wallet", default=str(DEFAULT_PATH), help=wallet_help)
    # The subcommands' copy has no default of its own, so it never overwrites a --wallet
    # given before the subcommand.
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--wallet", default=argparse.SUPPRESS, help=wallet_help)
    commands = cli.add_subparsers(dest="command", required=True)
    take = commands.add_parser(
        "receive", parents=[shared], help="take a credential offer (OpenID4VCI 1.0)"
    )
    take.add_argument("offer", help="openid-credential-offer://... link")
    take.add_argument("--tx-code", help="the transaction code sent with the offer, if any")
    show = commands.add_parser(
        "present", parents=[shared], help="answer a presentation request (OpenID4VP 1.0)"
    )
    show.add_argument("request", help="openid4vp://... link")
    commands.add_parser("list", parents=[shared], help="the credentials in the wallet")
    return cli


def run(argv: list[str] | None = None) -> tuple[int, dict[str, Any]]:
    arguments = parser().parse_args(argv)
    try:
        wallet = Wallet.open(arguments.wallet)
        if arguments.command == "receive":
            return 0, receive(arguments.offer, wallet, tx_code=arguments.tx_code)
        if arguments.command == "present":
            return 0, present(arguments.request, wallet)
        return 0, {
            "wallet": str(wallet.path),
            "credentials": [
                {name: entry.get(name) for name in ("id", "issuer", "vct", "received_at")}
                for entry in wallet.credentials
            ],
        }
    except (HolderError, WalletError, JoseError) as exc:
        return 1, {"error": str(exc)}


def main() -> None:
    status, result = run()
    print(json.dumps(result, indent=2))
    sys.exit(status)


if __name__ == "__main__":
    main()
