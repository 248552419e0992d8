"""Verity's own DIDComm v2 agent: the stateful side of talking to Identus wallets.

``app.didcomm`` is the protocol (DIDs, encryption, messages) with no database; this package
keeps what the protocol needs remembered: each organization's did:peer:2 and its sealed keys
(``DidcommIdentity``) and each presentation exchange's thread (``DidcommExchange``). Messages
arrive at ``POST /didcomm`` (``app.api.didcomm``), are opened once there to refuse what is not
for us, and are handled on the job queue (``jobs``): handling sends messages to the holder's
mediator and may fetch issuer keys and status lists, which must never hold a web request.
"""
