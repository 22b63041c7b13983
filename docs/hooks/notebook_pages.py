"""MkDocs hook: a notebook's page gives its outputs the table of contents' column.

The notebooks' charts are stored as pictures at most 1,000 px wide, to be shown
at their own size (``tests/docs/test_notebooks.py`` keeps them so). Beside the
table of contents and the ``In [1]:`` prompts, a 1280 px wide window leaves
about 630 px for them, and the browser shrinks their text to 5-6 px. As the
Charts page does (``hide: [toc]``), each notebook's page hides the table of
contents; the prompts are left out in ``mkdocs.yml`` (``no_prompt``).
"""

from __future__ import annotations

from typing import Any


def on_page_context(context: dict[str, Any], page: Any, **_: Any) -> dict[str, Any]:
    """Hide the table of contents of a notebook's page."""
    if page.file.src_uri.endswith(".ipynb"):
        hidden = page.meta.setdefault("hide", [])
        if "toc" not in hidden:
            hidden.append("toc")
    return context
