"""Wallet apps a person can install, named on "No wallet yet?" by the credential's format.

Only apps known to hold credentials of that format by themselves, with their makers' own
addresses: Google Wallet and Apple Wallet keep ISO mdoc IDs (and answer the browser's Digital
Credentials API with them); the EU Digital Identity Wallet reference app keeps SD-JWT VC and
mdoc PIDs. A verification may name its own recommended wallets instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.oid4vp.formats import MSO_MDOC, SD_JWT_VC


@dataclass(frozen=True)
class WalletApp:
    name: str
    url: str


EU_REFERENCE = WalletApp(
    "EU Digital Identity Wallet (reference app)", "https://github.com/eu-digital-identity-wallet"
)
GOOGLE_WALLET = WalletApp("Google Wallet", "https://wallet.google/")
APPLE_WALLET = WalletApp("Apple Wallet", "https://www.apple.com/wallet/")

BY_FORMAT: dict[str, tuple[WalletApp, ...]] = {
    SD_JWT_VC: (EU_REFERENCE,),
    MSO_MDOC: (GOOGLE_WALLET, APPLE_WALLET, EU_REFERENCE),
}


def wallet_apps(credential_format: str, recommended: list[dict] | None = None) -> list[WalletApp]:
    """The organization's own recommendation first and alone; else the apps of the format."""
    if recommended:
        return [WalletApp(w["name"], w["url"]) for w in recommended]
    return list(BY_FORMAT.get(credential_format, ()))
