"""The kit both HTTP surfaces share: the JSON API (``app.api``) and the dashboard's pages
(``app.staff``).

Who is calling and for which organization (``access``), the request and response models
(``payloads``), identifiers, addresses and paging (``requests``, ``paging``). Neither surface
imports the other; both import this.
"""
