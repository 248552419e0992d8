"""The staff dashboard: sign in with OpenID Connect and run everything from the browser.

Importing the modules registers their routes on the one blueprint.
"""

from app.staff import overview, signin  # noqa: F401  (routes register on import)
from app.staff.blueprint import bp
from app.staff.context import register_context

register_context(bp)

__all__ = ["bp"]
