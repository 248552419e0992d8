"""The README documents the contract itself: a clone has nothing else to read."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
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
    source = (Path(__file__).resolve().parents[2] / "app" / "config.py").read_text()
    names = set(re.findall(r'env\("([A-Z_]+)"', source)) | set(
        re.findall(r'_int\("([A-Z_]+)"', source)
    )
    missing = sorted(name for name in names if f"`{name}`" not in README)
    assert not missing
