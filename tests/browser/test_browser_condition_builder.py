"""The verification builder's condition rows in Debian's Chromium, at desktop and phone width:
every operator's text can be read whole in its list, and attributes show the schema's display
names. Screenshots land in test-output/screenshots/builder-*.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    DESKTOP,
    PHONE,
    Delegate,
    assert_clean,
    launched_chromium,
    loopback_server,
    screenshot,
    watched_page,
)
from factories import make_staff

from app.staff.verification_form import OPERATOR_LABELS

# The text the select shows for its chosen option, against the room it has for text (its
# width less its padding, where the drop-down arrow is drawn).
CHOSEN_TEXT_FITS = """(select) => {
  const style = getComputedStyle(select);
  const canvas = document.createElement("canvas").getContext("2d");
  canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const text = select.options[select.selectedIndex].text;
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {text, needed: Math.ceil(canvas.measureText(text).width), room: Math.floor(room)};
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def base(make_app) -> Iterator[tuple[str, str]]:
    """The app on a loopback server, and a PRO owner's session token."""
    delegate = Delegate()
    with loopback_server(delegate) as url:
        delegate.app = make_app(PUBLIC_URL=url)
        yield url, make_staff(delegate.app).token


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_operator_reads_whole_and_attributes_show_display_names(browser, base, viewport):
    from playwright.sync_api import expect

    url, token = base
    problems: list[str] = []
    page = watched_page(browser, viewport, problems)
    page.goto(f"{url}/dashboard/login")
    # No identity provider configured: the token form is open already.
    page.get_by_label("Session token").fill(token)
    page.get_by_role("button", name="Sign in with the token").click()
    page.goto(f"{url}/dashboard/verifications/new")
    page.get_by_role("button", name="Add a condition").click()
    attribute = page.get_by_label("Condition 1: attribute")
    expect(attribute).to_be_visible()
    attribute.select_option("birthdate")
    assert "Date of birth (birthdate)" in attribute.locator("option:checked").inner_text()
    chosen = attribute.evaluate(CHOSEN_TEXT_FITS)
    assert chosen["needed"] <= chosen["room"], chosen
    expect(page.get_by_label("Current first names")).to_be_visible()

    operator = page.get_by_label("Operator").first
    cut = []
    for value in OPERATOR_LABELS:
        operator.select_option(value)
        shown = operator.evaluate(CHOSEN_TEXT_FITS)
        assert value in shown["text"]
        if shown["needed"] > shown["room"]:
            cut.append(shown)
    operator.select_option("AGE_AT_LEAST")
    name = "desktop" if viewport is DESKTOP else "phone"
    screenshot(page, f"builder-{name}-conditions")
    assert cut == [], "operator texts cut off in the list"
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert_clean(page, problems)
    page.context.close()
