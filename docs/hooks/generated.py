"""MkDocs hook: fill the pages' placeholders with tables generated from the code.

``<!-- measures:table -->`` and ``<!-- measures:names -->`` become the measure
registry's tables and list of names
(:mod:`polars_rankmetrics._measures._catalog`); ``<!-- options:table -->``
becomes the table of the keyword options every surface shares, from their
declaration (:mod:`polars_rankmetrics.options`: the ``TypedDict``
types, ``DEFAULTS``, and the value each conventions preset gives). A page
keeps no hand-written copy that could drift.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# the site documents this checkout, not whichever copy of the package is installed
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from polars_rankmetrics import options  # noqa: E402
from polars_rankmetrics._measures import _catalog as catalog  # noqa: E402
from polars_rankmetrics.conventions import PRESETS  # noqa: E402
from polars_rankmetrics.options import DEFAULTS  # noqa: E402


def _type(hint: Any) -> str:
    """A type as a reader writes it: ``"min_k" | "relevant" | None``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return " | ".join(f'"{arg}"' if isinstance(arg, str) else repr(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type(arg) for arg in args)
    if hint is type(None):
        return "None"
    if hint is Any:
        return "any frame"
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_type(arg) for arg in args)}]"
    return getattr(hint, "__name__", str(hint))


def _code(value: object) -> str:
    return f'`"{value}"`' if isinstance(value, str) else f"`{value}`"


def options_table() -> str:
    """One table per declaration: each keyword, its type, its default (and each preset's value)."""
    hints = typing.get_type_hints(options.EvaluateOptions)
    presets = {name: dataclasses.asdict(preset) for name, preset in PRESETS.items()}
    tables = []
    for declaration in (options.Roles, options.ConventionOptions, options.ListInputs):
        by_preset = declaration is options.ConventionOptions
        columns = ["option", "type", "default"]
        if by_preset:
            columns += [f"{name!r} preset" for name in presets]
        rows = [
            f"**`{declaration.__name__}`**",
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
        ]
        for name in options.names(declaration):
            cells = [f"`{name}`", _type(hints[name]).replace("|", "\\|"), _code(DEFAULTS[name])]
            if by_preset:
                cells += [
                    _code(values[name]) if name in values and name != "conventions" else ""
                    for values in presets.values()
                ]
            rows.append("| " + " | ".join(cells) + " |")
        tables.append("\n".join(rows))
    return "\n\n".join(tables) + "\n"


PLACEHOLDERS: dict[str, Callable[[], str]] = {
    "<!-- measures:table -->": catalog.table,
    "<!-- measures:names -->": catalog.names,
    "<!-- options:table -->": options_table,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each placeholder on the page with what the code says today."""
    for placeholder, make in PLACEHOLDERS.items():
        if placeholder in markdown:
            markdown = markdown.replace(placeholder, make())
    return markdown
