"""``--measures``: load the measures you wrote before a command reads its metric strings.

A measure written with :mod:`polars_rankmetrics.measures` is registered when
the module declaring it is imported. The commands that read metric strings
(``evaluate``, ``compare``, ``gate``) take ``--measures`` with Python files
(``my_measures.py``) or importable module names (``team.measures``); each is
imported once, before the command runs, so its names work in ``-m``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from polars_rankmetrics.cli._common import CliError

__all__ = ["DEST", "add_measures_option", "load_measures"]

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
