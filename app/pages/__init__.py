"""The person's page: server-rendered HTML for the people being verified.

Pages are not the JSON API: an unknown individual or token is a 404 page here, not the
contract's 400 JSON body, because a person follows links and reads pages.
"""

from app.pages import authorize, offer  # noqa: F401  (their routes join the blueprint)
from app.pages.views import bp

__all__ = ["bp"]
