"""The ``rankmetrics`` command line: ``demo``, ``evaluate``, ``trec``, ``compare``, ``fuse``...

Each command is one module of this package with two functions:
``add(subparsers)`` declares its parser (and sets ``run`` as the default of
``args.handler``) and ``run(args)`` does the work, returning the exit status.
Adding a command is one module plus one entry in :data:`COMMANDS`.

:func:`main` handles what every command shares: a refusal (bad file, bad
option, bad data) is one line on stderr, ``rankmetrics CMD: error: ...``, with
exit status 2 and never a traceback; library advice such as
``duplicates='first'`` is rewritten as the command's option
(``--duplicates first``); warnings are printed as one line each. A reader
that closes stdout early (``rankmetrics ... | head``) ends the command
quietly with status 141, as a shell reports ``cat`` or ``yes`` stopped by
SIGPIPE, and no message.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import warnings
from collections.abc import Sequence

import polars as pl
from polars.exceptions import PolarsError

from polars_rankmetrics._progress import logger
from polars_rankmetrics._version import package_version
from polars_rankmetrics.cli import compare, demo, evaluate, fuse, gate, kaggle, trec
from polars_rankmetrics.cli._common import (
    CliError,
    Parser,
    cli_words,
    file_words,
    input_files,
    one_line,
    progress,
    shows_progress,
    warn,
)
from polars_rankmetrics.cli._measures import DEST, direction_words, load_measures

__all__ = ["COMMANDS", "STDOUT_CLOSED", "build_parser", "main"]

COMMANDS = (demo, evaluate, kaggle, trec, compare, fuse, gate)
"""The command modules, in the order ``rankmetrics --help`` lists them."""


def build_parser() -> Parser:
    """The ``rankmetrics`` argument parser with every command of :data:`COMMANDS`."""
    parser = Parser(
        prog="rankmetrics", description="Ranking metrics for recommendation and search results."
    )
    parser.add_argument("--version", action="version", version=_version())
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add(subparsers)
    return parser


def _version() -> str:
    """``rankmetrics --version``: the package's, with the Polars and Python it runs on."""
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"rankmetrics {package_version()} (polars {pl.__version__}, Python {python})"


STDOUT_CLOSED = 141
"""The status when stdout's reader went away: 128 + SIGPIPE, as a shell shows ``cat | head``."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rankmetrics``; returns the exit status (2 for a refused input or option).

    141 (:data:`STDOUT_CLOSED`) when stdout was closed by its reader, with
    nothing printed about it.
    """
    try:
        status = _main(argv)
        # the output is flushed here, where a closed pipe can still be handled
        sys.stdout.flush()
    except BrokenPipeError:
        return _stdout_closed()
    return status


def _stdout_closed() -> int:
    """Stop quietly: stdout's reader is gone (``rankmetrics ... | head``).

    Python's documentation (signal module, "Note on SIGPIPE"): stdout is
    pointed at ``os.devnull`` so that the interpreter's last flush finds no
    closed pipe and prints no "Broken pipe" of its own.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a stdout without a file (captured)
        pass
    return STDOUT_CLOSED


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error, already printed on one line
        return done.code if isinstance(done.code, int) else 2
    name = args.command
    args.started = time.perf_counter()
    # the library's own stages (a comparison's resampling, ...) join the command's progress
    relay = _ProgressRelay(args, name)
    if shows_progress(args):
        logger.addHandler(relay)
        logger.setLevel(logging.INFO)
    try:
        return _run(args, name)
    finally:
        logger.removeHandler(relay)


class _ProgressRelay(logging.Handler):
    """The library's log lines, printed as the command's progress lines."""

    def __init__(self, args: argparse.Namespace, command: str) -> None:
        super().__init__(level=logging.INFO)
        self.args, self.command = args, command

    def emit(self, record: logging.LogRecord) -> None:
        progress(self.args, self.command, record.getMessage())


def _run(args: argparse.Namespace, name: str) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            load_measures(getattr(args, DEST, ()))
            status: int = args.handler(args)
        except KeyboardInterrupt:
            print(f"rankmetrics {name}: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            raise  # main's: stdout's reader went away, no error of the command
        except Exception as error:  # every failure is one line, never a traceback
            for warning in caught:
                warn(name, str(warning.message))
            message = _words(one_line(error), args)
            if not isinstance(error, (CliError, ValueError, TypeError, OSError, PolarsError)):
                message = f"{type(error).__name__}: {message}"
            print(f"rankmetrics {name}: error: {message}", file=sys.stderr)
            return 2
    for warning in caught:
        warn(name, _words(str(warning.message), args))
    progress(args, name, f"done in {time.perf_counter() - args.started:.1f} s")
    return status


def _words(message: str, args: argparse.Namespace) -> str:
    """A library message in the command's words: its options and its files' names."""
    advised = direction_words(cli_words(message, args.command_parser), args.command_parser)
    return file_words(advised, _files_by_role(args))


def _files_by_role(args: argparse.Namespace) -> dict[str, str]:
    """The file each frame of the library (``recs``, ``truth``...) was read from."""
    files: dict[str, str] = {}
    given = getattr(args, "files", None)  # compare: RECS [TRUTH], unless --trec
    if isinstance(given, list) and given and not getattr(args, "trec", False):
        files.update(zip(("recs", "truth"), given, strict=False))
    for role in ("recs", "truth"):
        path = getattr(args, role, None)
        if isinstance(path, str):
            files[role] = path
    files.update(input_files(args))
    return files


if __name__ == "__main__":
    sys.exit(main())
