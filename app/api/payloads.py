"""The request and response models live in ``app.web.payloads``: the JSON API and the dashboard
validate with the same models, so they sit in the web kit both use. This name is kept for
code written against it."""

from app.web.payloads import *  # noqa: F403
