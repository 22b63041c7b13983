"""MkDocs hook: the copy button of an example copies code that pastes and runs.

The examples are written as doctests (``>>>`` prompts and the printed output,
so that the tests run them). Copied as shown, they paste into nothing. Material's
copy button copies the ``data-copy`` attribute of the nearest element that has
one instead of the shown text, so each code block holding prompts gets one: its
input lines without the ``>>> `` and ``... `` prompts, the output left out.
Blocks without prompts copy as shown.

A doctest writes a blank line of output as ``<BLANKLINE>`` (doctest's own
marker); the page shows that line blank, as the example prints it.
"""

from __future__ import annotations

import html
import re
from typing import Any

# a highlighted block as pymdownx.highlight (pages) and mkdocstrings (docstrings) write it
_BLOCK = re.compile(r'<div class="(?P<cls>[^"]*\bhighlight\b[^"]*)">(?P<body><pre>.*?</pre>)', re.S)
_TAG = re.compile(r"<[^>]+>")
_PROMPT = re.compile(r"^(>>>|\.\.\.)( |$)")


def runnable(shown: str) -> str | None:
    r"""The input lines of a doctest without their prompts; None when it has no prompts.

    A ``...`` line continues the input only right after an input line; after
    output it is output (a doctest's ellipsis).

    >>> runnable(">>> x = [1,\n...      2]\n>>> x\n[1,\n...\n>>> y")
    'x = [1,\n     2]\nx\ny\n'
    """
    lines = shown.splitlines()
    if not any(line.startswith(">>>") for line in lines):
        return None
    kept = []
    in_input = False
    for line in lines:
        if line.startswith(">>>") or (in_input and line.startswith("...")):
            kept.append(_PROMPT.sub("", line))
            in_input = True
        else:
            in_input = False
    return "\n".join(kept).rstrip() + "\n"


def blank_lines(page_html: str) -> str:
    r"""Each line of a code block that is doctest's ``<BLANKLINE>`` marker, shown blank.

    >>> blank_lines('<span class="o">&lt;</span><span class="n">BLANKLINE</span>'
    ...             '<span class="o">&gt;</span>\nMean')
    '\nMean'
    """
    return "\n".join(
        "" if html.unescape(_TAG.sub("", line)).strip() == "<BLANKLINE>" else line
        for line in page_html.split("\n")
    )


def on_page_content(page_html: str, **_: Any) -> str:
    """Give every code block with prompts a ``data-copy`` of its runnable input."""
    page_html = blank_lines(page_html)

    def attach(match: re.Match[str]) -> str:
        shown = html.unescape(_TAG.sub("", match.group("body")))
        code = runnable(shown)
        if code is None:
            return match.group(0)
        copy = html.escape(code, quote=True)
        return f'<div class="{match.group("cls")}" data-copy="{copy}">{match.group("body")}'

    return _BLOCK.sub(attach, page_html)
