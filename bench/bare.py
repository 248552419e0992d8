"""A bare Flask app for the benchmark's baseline: the framework and gunicorn, nothing of ours.

``GET /healthz`` answers the same body as the service's own, so the two differ only by what
the service adds around a request (its hooks, headers and error handling).
"""

from flask import Flask

app = Flask(__name__)


@app.get("/healthz")
def healthz():
    return {"status": "ok"}
