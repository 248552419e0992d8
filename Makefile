# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 2
# The event stream server (GET /events, gunicorn.events.conf.py): threads, beside the web server.
EVENTS_PORT ?= 8001
# The address `make run` serves is the deployment's public URL unless one is set: issuers,
# audiences, status lists and links name it, never a request's Host header.
PUBLIC_URL ?= http://$(HOST):$(PORT)
# `make run` installs the runtime dependencies only; `make test` (and lint, bench) the test extra.
RUNTIME := $(VENV)/.installed-runtime
STAMP := $(VENV)/.installed-test

.PHONY: run test docs lint migrate seed bench bench-pg bench-zk bench-load clean chromium wrk nginx softhsm xmlsec1 cluster demo

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUNTIME): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e .
	touch $(RUNTIME)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[test,docs,zk]'
	touch $(RUNTIME) $(STAMP) $(VENV)/.installed-docs

migrate: $(RUNTIME)
	$(BIN)/flask --app wsgi db upgrade

seed: migrate
	$(BIN)/flask --app wsgi schemas seed > /dev/null

# The web server, the event stream server (GET /events on EVENTS_PORT, threads, so that idle
# streams hold no web worker) and the job worker (every job queue: deliveries, the schedule
# and CSV uploads, each on threads of its own) together: when any stops (or Ctrl-C), all stop.
run: SHELL := /bin/bash
run: seed
	@export PUBLIC_URL='$(PUBLIC_URL)'; \
	$(BIN)/flask --app wsgi jobs worker & worker=$$!; \
	$(BIN)/gunicorn --config gunicorn.conf.py --workers $(WORKERS) --bind $(HOST):$(PORT) wsgi:app & web=$$!; \
	$(BIN)/gunicorn --config gunicorn.events.conf.py --bind $(HOST):$(EVENTS_PORT) wsgi:app & events=$$!; \
	trap 'kill $$worker $$web $$events 2>/dev/null; wait' EXIT; \
	wait -n $$worker $$web $$events

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The page tests drive Debian's chromium; install it from the distribution when it is missing
# (never a browser download). Needs root or password-less sudo on a fresh machine.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The tests of instances behind nginx (tests/deploy) need Debian's nginx; install it like
# chromium. Debian puts it in /usr/sbin, which not every user has on PATH.
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nginx >/dev/null; }

# The tests of keys kept in a PKCS#11 token (tests/keys) need Debian's SoftHSM2; install it like
# chromium.
softhsm:
	@[ -e /usr/lib/softhsm/libsofthsm2.so ] || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq softhsm2 >/dev/null; }

# The trusted list tests sign their own lists with Debian's xmlsec1, an XML signer independent
# of the one the reader verifies with; install it like chromium.
xmlsec1:
	@command -v xmlsec1 >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq xmlsec1 >/dev/null; }

# The documentation site (docs/) into docs/_build/html, strictly: a broken link, page or anchor
# fails. The test suite builds it the same way (tests/docs/).
DOCS := $(VENV)/.installed-docs
$(DOCS): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $(DOCS)

docs: $(DOCS)
	$(BIN)/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html

# The suite runs on SQLite; with TEST_DATABASE_URL set it runs again on PostgreSQL. It builds
# the documentation strictly and runs the tutorials against a live instance (tests/docs/).
test: $(STAMP) lint chromium nginx softhsm xmlsec1
	$(BIN)/pytest
	@if [ -n "$$TEST_DATABASE_URL" ]; then \
		echo "== again on PostgreSQL"; \
		VERITY_TEST_DB=postgresql $(BIN)/pytest; \
	fi

# The benchmark drives the server with Debian's wrk; install it from the distribution when it
# is missing, like chromium above.
wrk:
	@command -v wrk >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk >/dev/null; }

# The whole loop on a throwaway SQLite database: issue, receive, present, VERIFIED; then stop.
# With Node.js, also a Socious Wallet holder (the Identus SDK, `npm ci` on first use) verified
# over DIDComm through a loopback mediator, by a second instance with TRUST_ALLOW_PRIVATE.
demo: $(RUNTIME)
	$(BIN)/python demo/run.py $(if $(KEEP),--keep)

# With BENCH_PG_URL (a postgresql:// URL) the SQLite run ends with the apikey lookup among a
# million individuals on PostgreSQL; `make bench-pg` runs that step alone.
bench: $(STAMP) wrk
	$(BIN)/python bench/run.py
	$(BIN)/python bench/delivering.py

# Zero-knowledge age proofs (bench/zk.py): Verity's check over the raw library call, and the
# person's poll under a flood of ZK answers.
bench-zk: $(STAMP) wrk
	$(BIN)/python bench/zk.py

# The person's page under load (bench/load/): locust, from the bench extra, drives gunicorn.
$(VENV)/.installed-bench: pyproject.toml $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $@

bench-load: $(VENV)/.installed-bench
	$(BIN)/python bench/load/run.py

# INSTANCES gunicorn instances behind nginx on HOST:PORT (deploy/cluster.py); needs
# DATABASE_URL (PostgreSQL), RATELIMIT_STORAGE_URI (Redis), SECRET_KEY and ISSUER_KEY_SECRET.
INSTANCES ?= 2
cluster: $(RUNTIME) nginx
	$(BIN)/python deploy/cluster.py --instances $(INSTANCES) --workers $(WORKERS) \
		--listen $(HOST):$(PORT)

bench-pg: $(STAMP) wrk
	$(BIN)/python bench/run.py --million

clean:
	rm -rf $(VENV) instance .pytest_cache docs/_build
