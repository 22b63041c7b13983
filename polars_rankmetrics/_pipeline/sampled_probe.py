"""Whether the lists look like sampled candidates: the warning ``evaluate`` gives then.

A sampled evaluation ranks each user's one held-out item among n sampled
items; the metric read on those lists is not the full-ranking metric
(Krichene & Rendle, KDD 2020) and :func:`polars_rankmetrics.sampled_metrics`
corrects it. ``evaluate`` cannot know that lists were sampled, but the shape
gives it away: every list has the same length, and each holds its user's one
relevant item, which a full ranking's top k would miss for many users.

The probe reads the first :data:`HEAD_ROWS` rows of a frame in memory (its
cost does not grow with the data) and warns when its complete lists, at least
:data:`MIN_USERS` of them, all have one length in (10, 1001] and each holds
exactly one relevant item, its user's only one. A truth of more than two rows
per list is not looked at (a sample's truth has one row per user). A list cut by the head is
left out; rows not grouped by user give lists of unequal lengths there, and
no warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import polars as pl

__all__ = ["HEAD_ROWS", "MIN_USERS", "SampledMetricsWarning", "warn_if_sampled"]

HEAD_ROWS = 50_000
MIN_USERS = 20
_SHORTEST, _LONGEST = 11, 1001  # a list of 10 or fewer is a top-k list more than a sample


class SampledMetricsWarning(UserWarning):
    """Metrics read on sampled candidate lists, without a correction.

    Uncorrected sampled metrics are not consistent with the full-ranking
    ones: they can order two systems the wrong way round (Krichene & Rendle,
    KDD 2020); :func:`polars_rankmetrics.sampled_metrics` estimates the
    full-ranking metric. Silence it with ``warnings.simplefilter("ignore",
    prm.SampledMetricsWarning)``.
    """


def warn_if_sampled(
    recs: pl.DataFrame,
    truth: pl.DataFrame,
    *,
    user: str,
    item: str,
    relevance: str | None,
    level: float | None,
    by: Sequence[str],
    stacklevel: int,
) -> None:
    """Warn with :class:`SampledMetricsWarning` when the lists look sampled (see the module)."""
    keys = [*(name for name in by if name in recs.columns), user]
    head = recs.head(HEAD_ROWS)
    lists = head.group_by(keys, maintain_order=True).len("__length")
    if recs.height > HEAD_ROWS:
        lists = lists.head(lists.height - 1)  # the last list may go on past the head
    lengths = lists.get_column("__length")
    if lists.height < MIN_USERS or lengths.n_unique() != 1:
        return
    length = int(lengths[0])
    # one relevant truth row per user: a truth much longer than the lists are many is not
    # (a sample's truth holds one row per user; a full ranking's usually several)
    if not _SHORTEST <= length <= _LONGEST or truth.height > 2 * recs.height / length:
        return
    relevant = pl.lit(value=True)
    if relevance is not None:
        grade = pl.col(relevance).cast(pl.Float64)
        relevant = (grade > 0) & (grade >= level if level is not None else pl.lit(value=True))
    users = lists.select(user).unique()
    found = (
        truth.lazy()
        .select(user, item, relevant.alias("__relevant"))
        .filter(pl.col("__relevant"))
        .join(users.lazy(), on=user, how="semi")
        .group_by(user)
        .agg(pl.col(item).first(), pl.len().alias("__n"))
        .collect()
    )
    if found.height != users.height or (found.get_column("__n") != 1).any():
        return
    listed = head.join(lists.select(keys), on=keys, how="semi")
    held = listed.join(found.select(user, item), on=[user, item], how="semi")
    if held.select(keys).unique().height != lists.height:
        return
    warnings.warn(
        f"these lists look like sampled evaluation: the first {lists.height} lists all hold "
        f"{length} items and each holds its user's one relevant item. Metrics read on "
        "sampled candidates are not the full-ranking metrics and can order systems the "
        "wrong way round; prm.sampled_metrics(recs, truth, metrics, n_items=N) estimates "
        "the full-ranking values (N: the items a full ranking ranks)",
        SampledMetricsWarning,
        stacklevel=stacklevel,
    )
