"""Sphinx configuration: Markdown pages (MyST) with the Furo theme.

``make docs`` builds with ``-W --keep-going -n``: a broken link, a missing page or anchor, or a
page left out of the navigation fails the build.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

project = "Verity"
copyright = "Verity contributors"
extensions = ["myst_parser", "verity_reference"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = "Verity"
# Headings get GitHub's anchors, so links between pages work on GitHub and in the site alike.
myst_heading_anchors = 6
myst_enable_extensions = ["colon_fence"]
nitpicky = True
# Code blocks of shell sessions and sample output are not highlighted as a language they are not.
highlight_language = "none"
# The site's own few rules (docs/_static/verity.css): the endpoint tables stay readable on a laptop.
html_static_path = ["_static"]
html_css_files = ["verity.css"]
