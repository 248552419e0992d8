"""The wire shapes of the JSON API and the dashboard: request bodies both validate with, the
answers the JSON API gives, and what /openapi.json documents (``app.api.openapi``).

One module per domain, named like the domain package (``verifications``, ``schemas``,
``recipients``, ``credentials``, ``policies``, ``organizations``, ``integrations``, ``audit``,
``billing``) or the part of the API (``individuals`` for opening and looking up individuals,
``certificates`` for the organization's issuer, mdoc and verifier certificates, ``login`` for
signing in), over ``base`` (``Body``, ``Out``, ``ErrorOut`` and the shared limits). They sit in
the web kit rather than beside one blueprint because the JSON API (``app.api``) and the dashboard
(``app.staff``) read the same models and neither imports the other. Import a model from its
module; this package re-exports nothing.
"""
