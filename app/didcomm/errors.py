"""Errors of the DIDComm protocol code: each carries a reason a person can read."""

from __future__ import annotations


class DidcommError(ValueError):
    """Base of every DIDComm protocol error; ``reason`` is the readable explanation."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PeerDidError(DidcommError):
    """A did:peer:2 that cannot be read or made."""


class PrismDidError(DidcommError):
    """A long-form did:prism that cannot be read, or a JWS its keys do not verify."""


class MessageError(DidcommError):
    """A DIDComm message refused on arrival, or one that cannot be packed."""


class TooLarge(MessageError):
    """The message is larger than :data:`app.didcomm.messaging.MAX_MESSAGE_BYTES`."""


class Malformed(MessageError):
    """Not JSON, or JSON that is not a JWE in the general serialization."""


class NotEncrypted(MessageError):
    """A plaintext or signed-only message: only encrypted messages are accepted from outside."""


class Unsupported(MessageError):
    """An ``alg``, ``enc`` or key type this agent does not accept."""


class UnknownRecipient(MessageError):
    """None of the message's recipients is a key this agent holds."""


class UnknownSender(MessageError):
    """The sender's DID or key cannot be resolved (unknown method, no such key)."""


class DecryptionFailed(MessageError):
    """The key unwrap or the authentication tag failed: altered, or not from the named sender."""


class SenderMismatch(MessageError):
    """The plaintext's ``from`` is not the DID whose key authenticated it, or ``to`` omits us."""


class NoService(MessageError):
    """The recipient's DID has no DIDComm v2 service to deliver to."""


class InvitationError(DidcommError):
    """An out-of-band invitation or ``_oob`` URL that cannot be read."""
