"""Griffe extension: show ``**options: Unpack[...Options]`` as the keywords it stands for.

``evaluate``, ``per_user_parts``, ``compare``, ``curves``, the pandas and Spark
functions take the shared options as ``**options: Unpack[EvaluateOptions]``
(declared once in :mod:`polars_rankmetrics.options`). A reader of
the reference wants each keyword with its type and default, as a type checker
sees them, so the site's signatures spell them out: the ``TypedDict`` fields
(through its bases, in declaration order) become keyword-only parameters with
their annotation and their default from ``DEFAULTS``. A docstring that
documents ``**options`` as one entry is parsed first, against the signature it
was written for; one that documents each option (``evaluate``) is parsed
against the expanded signature, which gives its entries their types.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from polars_rankmetrics.options import DEFAULTS, POSITIONS, STATISTICS  # noqa: E402

_STATISTICS = {name: option.default for name, option in STATISTICS.items()}
# the keyword declarations a signature may unpack, each with its options' defaults
DECLARATIONS: dict[str, dict[str, object]] = {
    "EvaluateOptions": dict(DEFAULTS),
    "StatisticsOptions": _STATISTICS,
    "CompareOptions": {**_STATISTICS, **DEFAULTS},
    "PositionOptions": {name: option.default for name, option in POSITIONS.items()},
}
_DOCUMENTS_OPTIONS = re.compile(r"^\s*(?:[\w, ]*, )?\*\*options\s*$", re.MULTILINE)


def _fields(cls: griffe.Class) -> list[griffe.Attribute]:
    """The fields of a ``TypedDict``: its bases' first, then its own, in source order."""
    fields: list[griffe.Attribute] = []
    for base in cls.bases:
        path = getattr(base, "canonical_path", str(base))
        if path in {"typing.TypedDict", "typing_extensions.TypedDict"}:
            continue
        parent = cls.modules_collection.get_member(path) if cls.modules_collection else None
        if isinstance(parent, griffe.Alias):
            parent = parent.final_target
        if isinstance(parent, griffe.Class):
            fields.extend(_fields(parent))
    fields.extend(
        member
        for member in cls.members.values()
        if isinstance(member, griffe.Attribute) and member.annotation is not None
    )
    return fields


def _default(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _functions(obj: griffe.Object) -> list[griffe.Function]:
    found: list[griffe.Function] = []
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, griffe.Function):
            found.append(member)
        elif isinstance(member, (griffe.Module, griffe.Class)):
            found.extend(_functions(member))
    return found


class SharedOptions(griffe.Extension):
    """Expand ``**options: Unpack[EvaluateOptions]`` into keyword-only parameters."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Once the package is loaded (the declaration with it), rewrite each signature."""
        del kwargs
        if pkg.name != "polars_rankmetrics":
            return
        expanded = {name: _fields(pkg["options"][name]) for name in DECLARATIONS}
        missing = set(DEFAULTS) ^ {field.name for field in expanded["EvaluateOptions"]}
        if missing:
            raise ValueError(f"EvaluateOptions' fields and DEFAULTS differ: {sorted(missing)}")
        for func in _functions(pkg):
            options = next(
                (p for p in func.parameters if p.kind is griffe.ParameterKind.var_keyword), None
            )
            unpacked = next(
                (
                    name
                    for name in DECLARATIONS
                    if f"Unpack[{name}]" in str(getattr(options, "annotation", ""))
                ),
                None,
            )
            if options is None or unpacked is None:
                continue
            documents_options = bool(
                func.docstring and _DOCUMENTS_OPTIONS.search(func.docstring.value)
            )
            if func.docstring and documents_options:
                _ = func.docstring.parsed  # against the signature with **options
            del func.parameters[options.name]
            for field in expanded[unpacked]:
                if field.name in func.parameters:  # a keyword of its own (none today)
                    continue
                func.parameters.add(
                    griffe.Parameter(
                        field.name,
                        annotation=field.annotation,
                        kind=griffe.ParameterKind.keyword_only,
                        default=_default(DECLARATIONS[unpacked][field.name]),
                    )
                )
            _own_defaults(func)


def _own_defaults(func: griffe.Function) -> None:
    """Give each documented parameter its own default and type, those of the signature.

    An entry naming several parameters (``user, item, rank, score, relevance``)
    would otherwise show the first one's default, or all of them, on every row.
    """
    for section in func.docstring.parsed if func.docstring else []:
        if section.kind not in (
            griffe.DocstringSectionKind.parameters,
            griffe.DocstringSectionKind.other_parameters,
        ):
            continue
        for entry in section.value:
            if entry.name in func.parameters:
                entry.value = func.parameters[entry.name].default
                entry.annotation = func.parameters[entry.name].annotation
