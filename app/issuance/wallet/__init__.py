"""The issuer side a wallet talks to (OpenID4VCI 1.0; the authorization code flow's own
steps are in ``app.issuance.authorization``), one module per endpoint or step.

``metadata``: the documents (§12) and the offer by reference (§4.1.3). ``token``: the Token
Endpoint (§6). The Credential Endpoint (§8) is ``credential``, which runs its steps in order:
``access`` (the access token and its DPoP proof), the request read from its raw bytes
(``app.oid4vci.request``), ``proofs`` (the key proofs and their nonces, with the Nonce Endpoint,
§7), the credential taken and its copies chosen, then ``signing`` (each copy in the schema's
format). ``status_lists``: the Token Status List and what else verifiers fetch. Every refusal is
a ``TokenError`` or a ``CredentialError`` carrying its registered code; the HTTP layer renders
them. Single use (codes, nonces, access tokens) is decided by conditional writes, so two
concurrent redemptions cannot both succeed. The modules log under ``app.issuance.wallet``.
Import from the module; this package re-exports nothing.
"""
