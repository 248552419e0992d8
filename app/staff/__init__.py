"""The staff dashboard: sign in with OpenID Connect and run everything from the browser.

Every module of this package that defines pages registers them on the one blueprint when it is
imported, so adding a section is adding a module.
"""

import importlib
import pkgutil

from app.staff.blueprint import bp
from app.staff.context import register_context

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

register_context(bp)

__all__ = ["bp"]
