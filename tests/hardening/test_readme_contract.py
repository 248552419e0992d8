"""The README and docs/ document the contract itself: a clone has nothing else to read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The README is the way in; the contract's details live in the documentation under docs/.
README = "\n".join(
    path.read_text()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    if "_build" not in path.parts
)
PARAM = re.compile(r"<(?:[a-z_]+:)?([a-zA-Z_]+)>")


def test_the_readme_points_to_no_document_a_clone_lacks():
    assert "INTERFACE.md" not in README and "shared/" not in README


def test_every_endpoint_outside_the_dashboard_is_in_the_readme(app):
    documented = [
        PARAM.sub(r"{\1}", rule.rule)
        for rule in app.url_map.iter_rules()
        if not rule.rule.startswith(("/dashboard", "/static"))
    ]
    missing = [path for path in documented if f"`{path}`" not in README]
    assert not missing


def test_the_readme_states_the_rules_clients_branch_on():
    for rule in (
        "/i/{individual_id}",
        "/p/{token}",
        '"sql: no rows in result set"',
        '"code": "UPGRADE_REQUIRED", "tier": "FREE"',
        "STORAGE_UNAVAILABLE",
        "Retry-After",
        "current-identity",
        "UNSUPPORTED_MEDIA_TYPE",
    ):
        assert rule in README, rule


def test_every_setting_the_service_reads_is_in_the_configuration_table():
    """The settings reference is rendered from app/settings_reference.py (tests/docs holds that
    table to every read of the environment); config.py's own reads are checked here too."""
    from app.settings_reference import SETTINGS

    source = (ROOT / "app" / "config.py").read_text()
    names = set(re.findall(r'env\("([A-Z_]+)"', source)) | set(
        re.findall(r'_int\("([A-Z_]+)"', source)
    )
    documented = {name for setting in SETTINGS for name in setting.names}
    missing = sorted(names - documented)
    assert not missing
