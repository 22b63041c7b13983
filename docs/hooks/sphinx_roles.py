"""MkDocs hook: show the docstrings' Sphinx roles (:func:`x`) as plain code (`x`).

The docstrings are written for ``help()`` and IDEs as well as for the site, in
the numpy style with Sphinx roles; mkdocstrings renders the role's name as
text (":func: x"), which this removes.
"""

from __future__ import annotations

import re
from typing import Any

_ROLES = "func|class|meth|attr|data|mod|obj|exc"
# a leading ``~`` (Sphinx: show the last name only) is dropped: the full path shows
_ROLE = re.compile(rf":(?:{_ROLES}):<code>~?")
# inside a code span the role stays raw text: :func:`x`
_RAW_ROLE = re.compile(rf":(?:{_ROLES}):`~?([^`<]+)`")


def on_page_content(html: str, **_: Any) -> str:
    """Drop the role prefix in front of each rendered code span."""
    return _RAW_ROLE.sub(r"\1", _ROLE.sub("<code>", html))
