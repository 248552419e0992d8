"""OpenID4VCI 1.0 issuance: the protocol side (no database, no Flask).

Keys and their sealing at rest, the SD-JWT VC signer, the proof-of-possession check of the
credential endpoint (OpenID4VCI 1.0 Appendix F.1), the metadata documents and the signed Token
Status List. The storage and HTTP layers call these and translate ``CredentialError`` and
``TokenError`` into the JSON error bodies OpenID4VCI 1.0 §8.3.1 and RFC 6749 §5.2 define.
"""
