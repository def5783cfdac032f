"""Sphinx settings for the documentation site (make docs): Markdown pages read by MyST, an API page
generated from the docstrings of ``workbench.__all__``, built offline with warnings as errors."""

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE / "_ext")]  # the package from this checkout, and our extension

project = "workbench"
author = "workbench"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "workbench_api"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]

# headings get anchors, so `page.md#a-heading` resolves; a link that does not resolve is a warning (an error)
myst_heading_anchors = 3
nitpicky = False  # type names in signatures (pathlib.Path, pydantic models) need no target of ours

autodoc_typehints = "signature"
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"  # its CSS and JS ship in the package: the site works from file:// with no network
html_title = "workbench"
html_static_path: list[str] = []
