"""DIDComm v2 for Hyperledger Identus wallets: the DID methods they use, and messaging.

A protocol package: no database, no Flask. ``peer_did`` encodes, resolves and makes
did:peer:2 DIDs (``#key-N`` key ids, abbreviated services); ``prism`` reads, resolves and makes
long-form did:prism DIDs and signs and verifies ES256K JWS with their keys; ``jwe`` is the
authcrypt/anoncrypt envelope; ``messaging`` packs, unpacks and routes messages through a
holder's mediator; ``invitation`` makes out-of-band invitations and ``_oob`` URLs the SDK
reads. Every failure raises a :class:`DidcommError` subclass whose ``reason`` a person can
read.
"""

from app.didcomm import invitation, jwe, messaging, peer_did, prism
from app.didcomm.errors import DidcommError, MessageError, PeerDidError, PrismDidError

__all__ = [
    "DidcommError",
    "MessageError",
    "PeerDidError",
    "PrismDidError",
    "invitation",
    "jwe",
    "messaging",
    "peer_did",
    "prism",
]
