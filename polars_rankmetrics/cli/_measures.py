"""``--measures`` and ``--direction``: the measures you wrote, and which way is better.

A measure written with :mod:`polars_rankmetrics.measures` is registered when
the module declaring it is imported. The commands that read metric strings
(``evaluate``, ``compare``, ``gate``) take ``--measures`` with Python files
(``my_measures.py``) or importable module names (``team.measures``); each is
imported once, before the command runs, so its names work in ``-m``.

``--direction METRIC=higher`` (``compare``, ``gate``) says which way is better
for a metric whose measure declares none (``arp@10``) or overrides the
declared one; every decision of the command reads it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from polars_rankmetrics._measures._registry import Direction
from polars_rankmetrics.cli._common import CliError

__all__ = [
    "DEST",
    "add_direction_option",
    "add_measures_option",
    "direction_option",
    "direction_words",
    "load_measures",
]

DEST = "measure_modules"
"""Where ``--measures`` is kept on the parsed arguments (``trec``'s own ``-m`` is ``measures``)."""

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
# files load under a name of their own, so that they cannot shadow an installed module
_PREFIX = "rankmetrics_measures_"


def add_measures_option(parser: argparse.ArgumentParser) -> None:
    """Declare ``--measures FILE_OR_MODULE ...`` on a command that reads metric strings."""
    parser.add_argument(
        "--measures",
        dest=DEST,
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE_OR_MODULE",
        help="Python files (my_measures.py) or modules (team.measures) that register "
        "measures you wrote (polars_rankmetrics.measures); loaded first, so their names "
        "work in --metrics",
    )


def load_measures(sources: Sequence[str]) -> None:
    """Import each file or module of ``--measures`` (each registers its measures)."""
    for source in sources:
        path = Path(source)
        if path.suffix == ".py" or path.exists():
            _load_file(path, source)
        elif _MODULE.fullmatch(source):
            _load_module(source)
        else:
            raise CliError(
                f"--measures {source}: no such file, and not a module name "
                "(give a path to a .py file, or a module importable from here)"
            )


def _load_file(path: Path, source: str) -> None:
    if not path.is_file():
        raise CliError(f"--measures {source}: no such file")
    name = _PREFIX + re.sub(r"\W", "_", path.stem)
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path.resolve()):
        return  # loaded already (the command runs twice in one process)
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:
        raise CliError(f"--measures {source}: cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    # registered before it runs: its functions then pickle by value (Spark's workers)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise CliError(f"--measures {source} failed: {type(error).__name__}: {error}") from None


def _load_module(source: str) -> None:
    try:
        importlib.import_module(source)
    except ModuleNotFoundError as error:
        raise CliError(
            f"--measures {source}: no module {error.name!r} importable from here "
            "(give a path to a .py file instead)"
        ) from None
    except Exception as error:
        raise CliError(f"--measures {source} failed: {type(error).__name__}: {error}") from None


def add_direction_option(parser: argparse.ArgumentParser) -> None:
    """Declare ``--direction METRIC=higher|lower ...`` on a command that decides."""
    parser.add_argument(
        "--direction",
        nargs="+",
        action="extend",
        default=[],
        metavar="METRIC=WAY",
        help="which way is better for a metric, e.g. arp@10=lower (higher or lower); by "
        "default each measure's own (fallout@10 and mean_rank: lower); every decision reads it",
    )


def direction_option(given: Sequence[str]) -> dict[str, Direction] | None:
    """``--direction``'s pairs as ``{metric: way}`` (``None`` when none was given)."""
    pairs: dict[str, Direction] = {}
    for text in given:
        metric, sep, way = text.rpartition("=")
        if not sep or not metric or way not in ("higher", "lower"):
            raise CliError(
                f"--direction {text}: write METRIC=higher or METRIC=lower, e.g. arp@10=lower"
            )
        if metric in pairs:
            raise CliError(f"--direction names {metric} twice")
        pairs[metric] = "higher" if way == "higher" else "lower"
    return pairs or None


# the library's advice, direction={'arp@10': 'higher'}, as the command line writes it
_DIRECTION_ADVICE = re.compile(r"direction=\{'([^']*)': '(higher|lower)'\}")


def direction_words(message: str, parser: argparse.ArgumentParser) -> str:
    """``direction={'m': 'higher'}`` advice as ``--direction m=higher`` where the command has it.

    >>> parser = argparse.ArgumentParser()
    >>> add_direction_option(parser)
    >>> direction_words("say so with direction={'arp@10': 'higher'} (or 'lower')", parser)
    "say so with --direction arp@10=higher (or 'lower')"
    """
    if not any("--direction" in action.option_strings for action in parser._actions):
        return message
    return _DIRECTION_ADVICE.sub(r"--direction \1=\2", message)
