"""DIDComm v2 groundwork for Hyperledger Identus wallets: the DID methods they use.

A protocol package: no database, no Flask. ``peer_did`` encodes, resolves and makes
did:peer:2 DIDs (``#key-N`` key ids, abbreviated services); ``prism`` reads, resolves and makes
long-form did:prism DIDs and signs and verifies ES256K JWS with their keys. Every failure
raises a :class:`DidcommError` subclass whose ``reason`` a person can read.
"""

from app.didcomm import peer_did, prism
from app.didcomm.errors import DidcommError, PeerDidError, PrismDidError

__all__ = ["DidcommError", "PeerDidError", "PrismDidError", "peer_did", "prism"]
