"""The list of measures in the docs, generated from the registry: names, parameters, formulas.

Every text that lists ``evaluate``'s metric strings is made here from
:func:`~polars_rankmetrics._measures._registry.builtin_measures` (names, aliases,
cutoff, parameters with their defaults, aggregation over users, which way is
better, the one-line ``doc``; a measure a user registers is not listed),
so a new measure appears everywhere without a hand edit:

* the site's pages, at build time: the MkDocs hook ``docs/hooks/generated.py``
  replaces ``<!-- measures:table -->`` with :func:`table` and
  ``<!-- measures:names -->`` with :func:`names`;
* README.md's paragraph between :data:`README_START` and :data:`README_END`,
  and the list of names in ``evaluate``'s docstring (its ``metrics``
  parameter, the paragraph that starts with :data:`DOCSTRING_LEAD`), which are
  committed text: ``python -m polars_rankmetrics._measures._catalog --write``
  rewrites them, ``--check`` (and ``tests/docs/test_docs_site.py``) fails when they
  differ from what the registry gives;
* ``evaluate``'s "Other Parameters", one entry per keyword option from its
  declaration (:data:`polars_rankmetrics.options.DECLARED`), rewritten the same way
  (and ``compare``'s, ``positions``' and ``list_metrics``' from theirs).
"""

from __future__ import annotations

import argparse
import html
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from polars_rankmetrics._measures._registry import Measure, builtin_measures
from polars_rankmetrics.options import DECLARED, INPUTS, POSITIONS, STATISTICS, Declared

__all__ = [
    "DOCSTRING_LEAD",
    "README_END",
    "README_START",
    "label",
    "metric_string",
    "names",
    "options_block",
    "reads_truth",
    "stale",
    "table",
    "write",
]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EVALUATE = ROOT / "polars_rankmetrics" / "evaluation.py"
COMPARE = ROOT / "polars_rankmetrics" / "analysis" / "comparison.py"
RANKING = ROOT / "polars_rankmetrics" / "ranking.py"
BEYOND = ROOT / "polars_rankmetrics" / "beyond.py"
COMMAND = "python -m polars_rankmetrics._measures._catalog --write"
README_START = f"<!-- measures: generated from the registry by `{COMMAND}` -->"
README_END = "<!-- measures: end -->"
DOCSTRING_LEAD = "Names (from the measure registry)."
_DOCSTRING_INDENT = " " * 8
_WIDTH = 88

_CUTOFF = {"required": "required", "optional": "optional", "none": "none"}
_DIRECTION = {"higher": "higher", "lower": "lower", "none": "neither (descriptive)"}
_AGGREGATION = {
    "mean": "mean",
    "geometric_mean": "geometric mean",
    "pooled": "pooled: sum / sum",
    "sum": "sum",
    "group": "one value per group",
}


def reads_truth(measure: Measure) -> bool:
    """Whether the measure compares the lists with the truth (else it describes the lists)."""
    return "beyond_accuracy" not in measure.inputs


def _number(value: object) -> str:
    # a number as written in a metric string (0.2, 1); a word (choices) as it is
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def label(measure: Measure) -> str:
    """The measure's name as the tables show it: ``"fbeta@k"``, ``"mean_rank"`` (no parameters)."""
    return measure.name if measure.cutoff == "none" else f"{measure.name}@k"


def metric_string(measure: Measure) -> str:
    """How the measure is written in a metric string: ``"fbeta(beta=1)@k"``, ``"mean_rank"``."""
    text = measure.name
    # a default decided by the data (None) is not written in the metric string
    params = [f"{p.name}={_number(p.default)}" for p in measure.params if p.default is not None]
    if params:
        text += f"({','.join(params)})"
    return text if measure.cutoff == "none" else f"{text}@k"


def _entry(measure: Measure, tick: str) -> str:
    entry = f"{tick}{metric_string(measure)}{tick}"
    if measure.aliases:
        at = "" if measure.cutoff == "none" else "@k"
        aliases = ", ".join(f"{tick}{alias}{at}{tick}" for alias in measure.aliases)
        entry += f" ({aliases})"
    return entry


def _sentence(measures: Iterable[Measure], tick: str) -> str:
    return ", ".join(_entry(m, tick) for m in measures)


def names(tick: str = "`") -> str:
    """One paragraph naming every metric string, the truth's measures then the lists'.

    ``tick`` quotes a name: ``"`"`` for Markdown, ``"``"`` for a docstring.
    """
    measures = builtin_measures()
    truth = [m for m in measures if reads_truth(m)]
    lists = [m for m in measures if not reads_truth(m)]
    required = [m for m in measures if m.cutoff == "required"]
    without = [m for m in measures if m.cutoff == "none"]
    cutoffs = f"Leave out {tick}@k{tick} to evaluate the whole list"
    if required:
        cutoffs += f"; {_plain(required, tick)} require a cutoff"
    if without:
        cutoffs += f", and {_plain(without, tick)} take none"
    parts = [
        f"Against the truth: {_sentence(truth, tick)}.",
        f"Of the lists themselves, which read no truth: {_sentence(lists, tick)}.",
        f"{cutoffs}.",
    ]
    return " ".join(parts)


def _plain(measures: Sequence[Measure], tick: str) -> str:
    return ", ".join(f"{tick}{m.name}{tick}" for m in measures)


def _cell(text: str) -> str:
    # a definition is plain text: '<' (``j<i``) must not open an HTML tag, '|' a column
    return html.escape(text, quote=False).replace("|", "\\|")


def _params(measure: Measure) -> str:
    lines = []
    for param in measure.params:
        default = _number(param.default) if param.default is not None else "from the data"
        choices = f", one of {', '.join(param.choices)}" if param.choices else ""
        lines.append(
            f"<br>parameter `{param.name}` (default {default}{choices}): {_cell(param.doc)}"
        )
    return "".join(lines)


def _rows(measures: Iterable[Measure]) -> list[str]:
    rows = []
    for m in measures:
        # the parameters and their defaults are listed under the definition
        name = f"`{label(m)}`"
        if m.aliases:
            name += "<br>alias " + ", ".join(f"`{alias}`" for alias in m.aliases)
        rows.append(
            f"| {name} | {_CUTOFF[m.cutoff]} | {_AGGREGATION[m.aggregation]} "
            f"| {_DIRECTION[m.direction]} | {_cell(m.doc)}{_params(m)} |"
        )
    return rows


def table() -> str:
    """Markdown tables of every measure: the truth's, then the lists' own."""
    header = [
        "| metric string | `@k` | over users | better | definition |",
        "|---|---|---|---|---|",
    ]
    measures = builtin_measures()
    truth = [m for m in measures if reads_truth(m)]
    lists = [m for m in measures if not reads_truth(m)]
    return "\n".join(
        [
            "**Against the truth**",
            "",
            *header,
            *_rows(truth),
            "",
            "**Of the lists themselves** (no truth; `interactions=`, `items=`, `category=`, "
            "`group=` as each needs)",
            "",
            *header,
            *_rows(lists),
            "",
        ]
    )


def _readme_block() -> str:
    body = textwrap.fill(
        f"Metrics (`evaluate` strings, {len(builtin_measures())} measures). {names('`')}",
        width=79,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return f"{README_START}\n{body}\n{README_END}"


def _docstring_block() -> str:
    return textwrap.fill(
        f"{DOCSTRING_LEAD} {names('``')}",
        width=_WIDTH,
        initial_indent=_DOCSTRING_INDENT,
        subsequent_indent=_DOCSTRING_INDENT,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _replace_readme(text: str) -> str:
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the markers {README_START!r} ... {README_END!r}")
    return text[:start] + _readme_block() + text[end + len(README_END) :]


def _replace_docstring(text: str) -> str:
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(DOCSTRING_LEAD)]
    if len(starts) != 1:
        raise ValueError(f"evaluation.py needs one paragraph starting {DOCSTRING_LEAD!r}")
    start = starts[0]
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    return "\n".join([*lines[:start], _docstring_block(), *lines[end:]])


_OPTIONS_HEAD = "    Other Parameters\n    ----------------\n"
_OPTIONS_END = "\n\n    Returns\n"


def _default(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def options_block(declared: Mapping[str, Declared] = DECLARED) -> str:
    """An "Other Parameters" section: one entry per declared option, its own sentence.

    From :data:`polars_rankmetrics.options.DECLARED` (``evaluate``'s) or
    :data:`~polars_rankmetrics.options.STATISTICS` (``compare_per_user``'s),
    so that the docstring, the API reference and the command line say the
    same thing of each option.
    """
    entries = []
    for option in declared.values():
        kind = option.kind
        if ", default " not in kind:
            kind += f", default {_default(option.default)}"
        text = textwrap.fill(
            option.doc,
            width=_WIDTH + 8,
            initial_indent=_DOCSTRING_INDENT,
            subsequent_indent=_DOCSTRING_INDENT,
            break_long_words=False,
            break_on_hyphens=False,
        )
        entries.append(f"    {option.name} : {kind}\n{text}")
    return _OPTIONS_HEAD + "\n".join(entries)


def _replace_options(text: str, declared: Mapping[str, Declared] = DECLARED) -> str:
    """The first "Other Parameters" section of ``text`` written from ``declared``."""
    start = text.find(_OPTIONS_HEAD)
    end = text.find(_OPTIONS_END, start)
    if start < 0 or end < 0:
        raise ValueError("a docstring needs an 'Other Parameters' section before 'Returns'")
    return text[:start] + options_block(declared) + text[end:]


def _targets() -> dict[Path, str]:
    evaluate = _replace_docstring(EVALUATE.read_text(encoding="utf-8"))
    return {
        README: _replace_readme(README.read_text(encoding="utf-8")),
        EVALUATE: _replace_options(evaluate),
        COMPARE: _replace_options(COMPARE.read_text(encoding="utf-8"), STATISTICS),
        RANKING: _replace_options(RANKING.read_text(encoding="utf-8"), POSITIONS),
        BEYOND: _replace_options(
            BEYOND.read_text(encoding="utf-8"), {option.name: option for option in INPUTS}
        ),
    }


def stale() -> list[Path]:
    """The committed files whose list of measures differs from the registry's."""
    return [path for path, text in _targets().items() if path.read_text(encoding="utf-8") != text]


def write() -> list[Path]:
    """Rewrite the stale committed lists; the files rewritten."""
    rewritten = []
    for path, text in _targets().items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            rewritten.append(path)
    return rewritten


def main(argv: Sequence[str] | None = None) -> int:
    """``--write`` the committed lists, ``--check`` them, or print the docs' table."""
    parser = argparse.ArgumentParser(prog="python -m polars_rankmetrics._measures._catalog")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="rewrite README.md and evaluation.py")
    action.add_argument("--check", action="store_true", help="exit 1 when one is stale")
    args = parser.parse_args(argv)
    if args.write:
        for path in write():
            print(f"rewrote {path.relative_to(ROOT)}")
        return 0
    if args.check:
        paths = stale()
        for path in paths:
            print(f"{path.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
        return 1 if paths else 0
    print(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
