"""Progress of the long calls, through the standard ``logging`` module.

The library prints nothing by itself. Its long steps (a comparison's
resampling, a Spark evaluation, solving a sampled-metric correction) log a
line when they start and when they end, with the seconds taken, to the
``polars_rankmetrics`` logger at level INFO. To see them::

    import logging
    logging.basicConfig(level=logging.INFO)  # or attach a handler to "polars_rankmetrics"

The command line shows the same stages with ``--progress`` (or on a terminal).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["EVERY", "Steps", "logger", "stage"]

logger = logging.getLogger("polars_rankmetrics")

EVERY = 5.0
"""Seconds between two lines of one loop's progress (:class:`Steps`)."""


@contextmanager
def stage(what: str) -> Iterator[None]:
    """Log ``what`` when it starts and ``what: done in X s`` when it ends (level INFO)."""
    if not logger.isEnabledFor(logging.INFO):
        yield
        return
    start = time.perf_counter()
    logger.info("%s ...", what)
    yield
    logger.info("%s: done in %.1f s", what, time.perf_counter() - start)


class Steps:
    """A long loop's progress: ``what: 40%`` at most every :data:`EVERY` seconds (INFO).

    Call it with the steps done so far after each step; it logs nothing when
    INFO is off, and nothing for a loop that ends before :data:`EVERY` seconds.
    """

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total = what, total
        self.last = time.perf_counter()

    def __call__(self, done: int) -> None:
        """Log the steps done if :data:`EVERY` seconds passed since the last line."""
        now = time.perf_counter()
        if now - self.last >= EVERY and logger.isEnabledFor(logging.INFO):
            self.last = now
            logger.info("%s: %d%%", self.what, 100 * done // max(self.total, 1))
