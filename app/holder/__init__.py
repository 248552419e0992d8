"""A small wallet for development: receive a credential through OpenID4VCI 1.0 and present it
through OpenID4VP 1.0, from the command line (``python -m app.holder``).

It is written against the wire protocols, not against this service's code: it imports nothing
from the issuer or the verifier, so driving the service with it checks what a wallet sees. It
keeps one P-256 key and its credentials in a local JSON file (``app.holder.store``).
"""
