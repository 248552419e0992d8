"""The ``deployment`` fixture: two instances behind nginx (see deploy_support.py)."""

from deploy_support import deployment  # noqa: F401
