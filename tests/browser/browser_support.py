"""What the browser tests share: Debian's Chromium through Playwright, a real loopback HTTP
server for the app, screenshots kept as test output, and axe-core's accessibility findings.

Chromium comes from Debian (``apt-get install chromium``), never from a browser download.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from support.npm import ensure_node_modules
from werkzeug.serving import make_server
from werkzeug.wsgi import FileWrapper

BROWSER_DIR = Path(__file__).resolve().parent
SCREENSHOTS = BROWSER_DIR.parents[1] / "test-output" / "screenshots"
AXE = BROWSER_DIR / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# Recorded from the first script the page runs; an init script is not subject to the CSP.
RECORD_CSP_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + event.blockedURI);
});
"""
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map((n) => n.target.join(" "))}));
}"""


def chromium() -> str:
    """Debian's Chromium; its absence is a failure, not a skip, so it cannot go unnoticed."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(
            "The browser tests need Debian's chromium: run `apt-get install -y chromium` "
            "(never a browser download such as `playwright install`)"
        )
    return path


def axe_script() -> Path:
    """axe-core from npm, installed from tests/browser's lock file on first use."""
    ensure_node_modules(BROWSER_DIR, "axe-core")
    return AXE


@contextmanager
def launched_chromium() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("The browser tests need the playwright package: pip install playwright")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


class Delegate:
    """A WSGI app to bind the server to before the real app exists (it needs the port)."""

    app: Flask | None = None

    def __call__(self, environ, start_response):
        assert self.app is not None
        body = self.app(environ, start_response)
        if isinstance(body, FileWrapper):
            # A static file, read whole and closed here: when the browser drops the connection
            # mid-response, werkzeug's development server never closes the iterable, and the
            # open file is collected later as a ResourceWarning in whichever test runs then.
            try:
                return [b"".join(body)]
            finally:
                body.close()
        return body


@contextmanager
def loopback_server(delegate: Delegate) -> Iterator[str]:
    """Serve ``delegate`` on a free loopback port; yields the base URL."""
    server = make_server("127.0.0.1", 0, delegate, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def watched_page(browser: Any, viewport: dict, problems: list[str], **options: Any) -> Any:
    """A page that records console CSP reports and script errors into ``problems``."""
    context = browser.new_context(viewport=viewport, **options)
    context.add_init_script(RECORD_CSP_VIOLATIONS)
    page = context.new_page()
    page.on(
        "console",
        lambda message: (
            problems.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    return page


def assert_clean(page: Any, problems: list[str]) -> None:
    assert problems == []
    assert page.evaluate("window.__cspViolations") == []


def axe_findings(page: Any) -> list[dict]:
    """axe-core's serious and critical findings on the page as it is now.

    axe is evaluated through the DevTools protocol rather than added as a script element, so the
    page keeps its Content Security Policy while it is checked.
    """
    page.evaluate(f"() => {{ {axe_script().read_text()}\n}}")
    violations = page.evaluate(AXE_RUN)
    return [v for v in violations if v["impact"] in ("serious", "critical")]


def serious_violations(browser: Any, url: str, **context_options: Any) -> list[dict]:
    """axe-core's serious and critical findings at ``url``; only this context bypasses the CSP."""
    context = browser.new_context(bypass_csp=True, **context_options)
    page = context.new_page()
    page.goto(url)
    findings = axe_findings(page)
    context.close()
    return findings


def read_qr_code(png: bytes) -> list[str]:
    """The texts of the QR codes in a screenshot, read by zxing-cpp (the decoder behind many
    phone scanner apps), so a test checks what a phone would read rather than how it is drawn."""
    from io import BytesIO

    import zxingcpp
    from PIL import Image

    return [result.text for result in zxingcpp.read_barcodes(Image.open(BytesIO(png)))]
