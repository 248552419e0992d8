"""The documentation site builds strictly, as ``make docs`` builds it.

``-W --keep-going -n``: a broken link between pages, a missing page or heading anchor, a page
left out of the navigation, or a reference page whose generation fails is an error. The build
writes to a temporary directory, so the tree stays clean.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# The build reads no database of the suite's, so the PostgreSQL pass of `make test` would
# only repeat the SQLite pass.
pytestmark = pytest.mark.skipif(
    os.environ.get("VERITY_TEST_DB") == "postgresql", reason="run once, in the SQLite pass"
)

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE_BUILD = re.compile(r"^\t\$\(BIN\)/sphinx-build (.+) docs docs/_build/html$", re.MULTILINE)


def build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    flags = MAKEFILE_BUILD.search((ROOT / "Makefile").read_text()).group(1).split()
    return subprocess.run(
        [sys.executable, "-m", "sphinx", *flags, str(source), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_site_builds_strictly(tmp_path):
    done = build(ROOT / "docs", tmp_path / "html")

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    endpoints = (tmp_path / "html" / "reference" / "endpoints.html").read_text()
    assert "/verifications/individuals" in endpoints
    settings = (tmp_path / "html" / "reference" / "settings.html").read_text()
    assert "ISSUER_KEY_SECRET" in settings
    cli = (tmp_path / "html" / "reference" / "cli.html").read_text()
    assert "rotate-key" in cli
    # -q means quiet: no log lines of the libraries the reference pages load (alembic's INFO).
    assert " INFO " not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]


def test_a_link_to_a_missing_anchor_fails_the_build(tmp_path):
    """The strictness the first test relies on: the same flags refuse a broken anchor."""
    source = tmp_path / "docs"
    source.mkdir()
    (source / "conf.py").write_text(
        'extensions = ["myst_parser"]\nmyst_heading_anchors = 6\nnitpicky = True\n'
    )
    (source / "index.md").write_text("# Home\n\n```{toctree}\nother\n```\n")
    (source / "other.md").write_text("# Other\n\n[gone](index.md#no-such-heading)\n")

    done = build(source, tmp_path / "html")

    assert done.returncode != 0
    assert "no-such-heading" in done.stderr


def test_the_readme_is_short_and_its_links_into_the_docs_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert len(readme.encode()) <= 15 * 1024
    assert "make run" in readme and "make test" in readme and "make demo" in readme
    links = re.findall(r"\]\(((?:docs/)[^)#\s]*)(?:#[^)]*)?\)", readme)
    assert len(links) > 10
    for link in links:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"
