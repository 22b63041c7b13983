"""``similarity``: how alike two systems' lists are, user by user (RBO, Jaccard, intersection).

:func:`similarity` compares each list of the recommendations with the list
of the same user in a reference run, as one Polars lazy plan on the long
frames (one row per user, item, rank or score, as ``evaluate`` reads them).
Positions come from the package's ranking rules
(:func:`polars_rankmetrics._pipeline.rank_cut.with_positions`), ties and
duplicates included. Definitions: ``docs/similarity.md``.

RBO is computed as in Corsi & Urbano (2024), whose formulas extend Webber,
Moffat & Zobel (2010) to ties; the plan is :mod:`polars_rankmetrics.analysis._rbo`
(closed forms over the items of lists without ties, a row per depth only
for pairs with tie groups). Jaccard@k and intersection@k read the top k of
both lists (with tie groups: each item's probability of being in it).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._frames import AnyFrame, ArrowStream, Frame, Polars, caller
from polars_rankmetrics._names import PREFIX, check_no_reserved, check_roles
from polars_rankmetrics._pipeline.checks import check_recs_schema, list_checks, recs_checks
from polars_rankmetrics._pipeline.inputs import RecsSpec, as_list, to_lazy
from polars_rankmetrics._pipeline.inputs import Ties as StrictTies
from polars_rankmetrics._pipeline.parse import _PATTERN
from polars_rankmetrics._pipeline.rank_cut import score_value, with_positions
from polars_rankmetrics._sums import exact_mean, exact_sums, fixed_point
from polars_rankmetrics.analysis import _rbo as rbo_plan
from polars_rankmetrics.conventions import Duplicates, Ties
from polars_rankmetrics.options import Roles, Unpack

__all__ = ["similarity"]


@dataclass(frozen=True)
class _Kind:
    """A family of similarity measures: its form, parameters and cutoff rule."""

    form: str
    takes_p: bool
    cutoff: Literal["optional", "required"]


# the measure names this function reads, each with what it computes (a lookup, so that
# no name is ever compared by hand)
_KINDS: dict[str, _Kind] = {
    "rbo": _Kind("ext", takes_p=True, cutoff="optional"),
    "rbo_ext": _Kind("ext", takes_p=True, cutoff="optional"),
    "rbo_min": _Kind("min", takes_p=True, cutoff="optional"),
    "rbo_res": _Kind("res", takes_p=True, cutoff="optional"),
    "jaccard": _Kind("jaccard", takes_p=False, cutoff="required"),
    "intersection": _Kind("intersection", takes_p=False, cutoff="required"),
}
_RBO_FORMS = frozenset({"ext", "min", "res"})
_DEFAULT_P = 0.9


@dataclass(frozen=True)
class _Measure:
    label: str
    form: str
    k: int | None
    p: float


def _parse(text: object) -> _Measure:
    if not isinstance(text, str):
        raise TypeError(f"a similarity measure must be a string like 'rbo(p=0.9)', got {text!r}")
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(
            f"cannot read similarity measure {text!r}: write 'rbo(p=0.9)', 'rbo_min(p=0.8)@100', "
            "'jaccard@10' or 'intersection@10'"
        )
    name = match.group("name").lower()
    kind = _KINDS.get(name)
    if kind is None:
        hint = difflib.get_close_matches(name, list(_KINDS), n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(
            f"unknown similarity measure {match.group('name')!r} in {text!r}{suggestion} "
            f"(known: {sorted(_KINDS)})"
        )
    p = _persistence(match.group("params"), name=name, text=text, takes_p=kind.takes_p)
    raw_cutoffs = match.group("cutoffs")
    k: int | None = None
    if raw_cutoffs is not None:
        if "," in raw_cutoffs:
            raise ValueError(f"{text!r}: give one cutoff per measure string")
        k = v.check_cutoff(int(raw_cutoffs), what=f"the cutoff in {text!r}")
    if kind.cutoff == "required" and k is None:
        raise ValueError(f"{text!r} needs a cutoff, e.g. '{name}@10'")
    return _Measure(text, kind.form, k, p)


def _persistence(raw: str | None, *, name: str, text: str, takes_p: bool) -> float:
    """The p of ``rbo(p=...)`` (0.9 when not given), checked to be in (0, 1)."""
    p = _DEFAULT_P
    if raw is not None and raw.strip():
        if not takes_p:
            raise ValueError(f"{name!r} takes no parameters, in {text!r}")
        parts = raw.split(",")
        if len(parts) > 1:
            raise ValueError(f"{text!r} gives {len(parts)} parameters: write one p, rbo(p=0.9)")
        for part in parts:
            key, sep, value = (piece.strip() for piece in part.partition("="))
            if not sep or key != "p":
                raise ValueError(
                    f"unknown parameter {part.strip()!r} in {text!r}: {name!r} takes the "
                    "persistence p, written rbo(p=0.9)"
                )
            try:
                p = float(value)
            except ValueError:
                raise ValueError(
                    f"parameter 'p' in {text!r} must be a number, got {value!r}"
                ) from None
            if not 0 < p < 1:
                raise ValueError(
                    f"parameter 'p' in {text!r} must be in (0, 1) (the persistence: the "
                    f"weight of depth d is proportional to p^(d-1)), got {p}"
                )
    return p


def _parse_all(measures: str | Sequence[str]) -> list[_Measure]:
    texts = [measures] if isinstance(measures, str) else list(measures)
    if not texts:
        raise ValueError("measures is empty: ask for at least one, e.g. ['rbo(p=0.9)']")
    parsed = [_parse(text) for text in texts]
    labels = [one.label for one in parsed]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"measure(s) {repeated} requested twice")
    return parsed


# positions (first and last of the item's tie group) and the pairs' columns: analysis._rbo
_T, _B, _S, _L, _ITEM = rbo_plan.T, rbo_plan.B, rbo_plan.SHORT, rbo_plan.LONG, rbo_plan.ITEM
_SIDE = f"{PREFIX}side"


def _positions(
    lf: pl.LazyFrame, spec: RecsSpec, *, average: bool, in_memory: bool
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """Each list's items with the first and last position of their tie group, and the checks.

    Given ranks are read as an order (1, 2, 5 are positions 1, 2, 3); scores
    are ranked by the package's rule (``spec.ties``); with ``average`` a group
    of equal scores keeps positions t..b, every item of it.
    """
    columns = [*spec.list_keys, spec.item, spec.score or spec.rank]
    ranked = with_positions(lf.select(list(dict.fromkeys(columns))), spec, None)
    checks = list_checks(ranked, spec, in_memory=in_memory)
    keys = spec.list_keys
    if average and spec.score is not None:
        value = score_value(spec.score)
        top = value.rank("min", descending=True).over(keys).cast(pl.Int64)
        size = pl.len().over([*keys, value]).cast(pl.Int64)
        out = ranked.with_columns(top.alias(_T), (top + size - 1).alias(_B))
    else:
        order = pl.col(spec.rank).rank("ordinal").over(keys).cast(pl.Int64)
        out = ranked.with_columns(order.alias(_T), order.alias(_B))
    # read by every part of the plan (lengths, shared items, unseen items): ranked once
    return out.select(*keys, spec.item, _T, _B).cache(), checks


def _renamed(
    checks: list[tuple[pl.LazyFrame, list[v.DataCheck]]], frame: str
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """The checks of the recommendations, their messages naming ``frame`` instead."""
    return [
        (
            rows,
            [
                dataclasses.replace(one, message=f"{frame} {one.message.removeprefix('recs ')}")
                for one in group
            ],
        )
        for rows, group in checks
    ]


def _at_k(lists: rbo_plan.Lists, keys: list[str], measures: Sequence[_Measure]) -> pl.LazyFrame:
    """Jaccard@k and intersection@k of each pair (the expected overlap under tie groups)."""
    ts, bs = pl.col(f"{_S}{_T}"), pl.col(f"{_S}{_B}")
    tl, bl = pl.col(f"{_L}{_T}"), pl.col(f"{_L}{_B}")
    contribution = rbo_plan.contribution
    terms = {
        one.label: contribution(ts, bs, pl.lit(one.k)) * contribution(tl, bl, pl.lit(one.k))
        for one in measures
    }
    # without ties every term is 0 or 1, a sum exact in any order; tie groups make
    # fractions, and the shared items come out of a join in no fixed order: exact sums
    overlap = (
        lists.common.group_by(keys).agg(term.sum().alias(label) for label, term in terms.items())
        if lists.tied is None
        else exact_sums(lists.common, keys, terms)
    )
    columns = []
    for one in measures:
        k = one.k or 0
        shared = pl.col(one.label).fill_null(0.0)
        value = shared / k
        if one.form == "jaccard":
            union = pl.min_horizontal(pl.col(_S), k) + pl.min_horizontal(pl.col(_L), k) - shared
            value = shared / union
        columns.append(pl.when(pl.col(_L) > 0).then(value).alias(one.label))
    return lists.lengths.join(overlap, on=keys, how="left").select(*keys, *columns)


def _to_frame(frame: Polars, name: str) -> tuple[pl.LazyFrame, bool]:
    """The frame lazy, and whether it is in memory."""
    return to_lazy(frame, name=name), isinstance(frame, pl.DataFrame)


def similarity(
    recs: Frame | ArrowStream,
    reference: AnyFrame,
    measures: str | Sequence[str],
    *,
    per_user: bool = False,
    ties: Ties = "item_desc",
    duplicates: Duplicates = "error",
    **roles: Unpack[Roles],
) -> Frame:
    """How alike each list is to the reference run's list of the same user.

    Parameters
    ----------
    recs
        Long-format recommendations: one row per (by..., user, item) with a
        ``rank`` or a ``score``. Any frame (Polars, pandas, Arrow: see
        :func:`polars_rankmetrics.evaluate`).
    reference
        The reference run (the old model, the original experiment), in the same
        format and with the same column roles. Its ``by`` columns that ``recs``
        also has (a fold) join with it; those only in ``recs`` (the model) share
        it, so every model is compared with the one reference.
    measures
        Strings: ``"rbo(p=0.9)"`` (RBO, extrapolated; ``"rbo"`` is p = 0.9),
        ``"rbo_min(p=...)"``, ``"rbo_res(p=...)"`` (``"rbo_ext"`` is ``"rbo"``),
        each with an optional cutoff (``"rbo(p=0.9)@100"``: the top 100 of
        both lists); ``"jaccard@k"`` and ``"intersection@k"``. Each label is
        its output column.
    per_user
        ``False``: one row per ``by`` group, each measure's mean over the
        users where it is defined. ``True``: one row per (by..., user), the
        frame :func:`polars_rankmetrics.compare_per_user` takes for intervals
        and paired tests between the models.
    ties
        Order of equal scores, as in ``evaluate``: ``"item_desc"``,
        ``"item_asc"``, ``"input"``, or ``"average"`` (tied items keep their
        group of positions: Corsi & Urbano's RBO^a and the expected
        intersection@k; refused for ``jaccard``, whose expectation is not a
        ratio of expectations).
    duplicates
        An item twice in one list: ``"error"`` or ``"first"`` (its best position).
    **roles
        ``user``, ``item``, ``rank``, ``score`` and ``by`` (the columns of
        separate lists besides the user, e.g. the model), as for ``evaluate``.

    Returns
    -------
    A frame of the kind ``recs`` is (as for ``evaluate``: a LazyFrame stays
    lazy, pandas in, pandas out, Arrow in, Polars DataFrame out): the ``by``
    columns (and ``user`` with ``per_user=True``), then one Float64 column per
    measure, sorted by them.

    Notes
    -----
    With S the shorter list (length s), L the longer (length l), X_d the
    overlap of their top d, A_d = X_d / d and c = (1 - p) / p (Webber, Moffat
    & Zobel 2010; the extrapolation of uneven lists is their eq. 32):

    * ``rbo_min = c (sum_{d=1}^{l} X_d p^d / d + X_l (ln(1 / (1 - p)) -
      sum_{d=1}^{l} p^d / d))``: no item below the lists is shared;
    * ``rbo = c (sum_{d=1}^{l} X_d p^d / d + sum_{d=s+1}^{l} X_s (d - s) p^d
      / (s d)) + (X_l - X_s + l X_s / s) p^l / l``: the unseen part of S
      agrees as its seen part did (A_s), and below l both agree as at l;
    * ``rbo_res = RBO_max - rbo_min``, RBO_max being the RBO of the best
      continuation of both lists: how much the unseen items could still add.

    The lists are the whole lists given (or their top k): lists of different
    lengths take the uneven forms above, which the popular ``rbo`` package
    gets wrong (dlukes/rbo#5).

    With ``ties="average"`` a group of tied items at positions t..b
    contributes (d - t + 1) / (b - t + 1) of each item to the prefix of depth
    d within the group (Corsi & Urbano 2024, RBO^a, their default for ties
    that mean uncertainty), so X_d is the expected overlap over every order
    of the ties. RBO^a_min is then the expected RBO_min, and RBO^a_ext too
    when the lists have one length; with uneven lists RBO^a_ext and RBO^a_res
    are Corsi & Urbano's formulas on the expected contributions, which can
    differ from the mean over the orders (``a`` against ``a (b c)``, p = 0.5:
    RBO^a_res = 0.2444, the mean 0.3069). The values equal their reference
    implementation's. With the other ``ties`` rules the lists have no ties
    and every form is Webber's.

    ``jaccard@k`` = |A_k & B_k| / |A_k | B_k| and ``intersection@k`` =
    |A_k & B_k| / k (RecTools' ``Intersection`` divides by |A_k| instead:
    the same when the list has at least k items).

    Users: every user of ``recs`` (any group) or of the reference counts in
    every group. A user with a list on one side only compares an empty list
    with a non-empty one: 0 for every measure but ``rbo_res``, which is 1
    (RBO_max = 1: nothing rules out identical lists). A user with no list on
    either side in a group gets null (undefined), left out of the mean.

    References: Webber, Moffat & Zobel (2010), "A similarity measure for
    indefinite rankings", ACM TOIS 28(4); Corsi & Urbano (2024), "The
    Treatment of Ties in Rank-Biased Overlap", SIGIR.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> reference = pl.DataFrame({"user": [1, 1, 1, 2, 2], "item": list("abcxy"),
    ...                           "rank": [1, 2, 3, 1, 2]})
    >>> recs = pl.DataFrame({
    ...     "model": ["new"] * 5 + ["old"] * 5,
    ...     "user": [1, 1, 1, 2, 2] * 2,
    ...     "item": list("bacyz") + list("abcxy"),
    ...     "rank": [1, 2, 3, 1, 2] * 2,
    ... })
    >>> per_user = prm.similarity(recs, reference, ["rbo(p=0.9)", "jaccard@2"], by="model",
    ...                           per_user=True)
    >>> per_user
    shape: (4, 4)
    ┌───────┬──────┬────────────┬───────────┐
    │ model ┆ user ┆ rbo(p=0.9) ┆ jaccard@2 │
    │ ---   ┆ ---  ┆ ---        ┆ ---       │
    │ str   ┆ i64  ┆ f64        ┆ f64       │
    ╞═══════╪══════╪════════════╪═══════════╡
    │ new   ┆ 1    ┆ 0.9        ┆ 1.0       │
    │ new   ┆ 2    ┆ 0.45       ┆ 0.333333  │
    │ old   ┆ 1    ┆ 1.0        ┆ 1.0       │
    │ old   ┆ 2    ┆ 1.0        ┆ 1.0       │
    └───────┴──────┴────────────┴───────────┘

    By hand, user 1's lists differ by a swap at the top: A_1 = 0, A_2 = A_3 = 1,
    extrapolated to A_d = 1 below, so RBO = (1 - p)(p + p^2 + ...) = p = 0.9.
    User 2's (x y against y z): A_1 = 0, A_2 = 1/2, so RBO = (1 - p) p / 2 +
    p^2 / 2 = 0.45. The per-user frame goes to ``compare_per_user`` for
    intervals and paired tests:

    >>> cmp = prm.compare_per_user(per_user, "rbo(p=0.9)", baseline="old")
    >>> cmp.select("system", "n", "mean", "diff")
    shape: (2, 4)
    ┌────────┬─────┬───────┬────────┐
    │ system ┆ n   ┆ mean  ┆ diff   │
    │ ---    ┆ --- ┆ ---   ┆ ---    │
    │ str    ┆ i64 ┆ f64   ┆ f64    │
    ╞════════╪═════╪═══════╪════════╡
    │ old    ┆ 2   ┆ 1.0   ┆ null   │
    │ new    ┆ 2   ┆ 0.675 ┆ -0.325 │
    └────────┴─────┴───────┴────────┘
    """
    parsed = _parse_all(measures)
    if not isinstance(per_user, bool):
        raise TypeError(f"per_user must be True or False, got {per_user!r}")
    spec = _spec(parsed, roles, ties=ties, duplicates=duplicates)
    average = ties == "average"
    call = caller(recs, name="recs")
    recs_lf, recs_memory = _to_frame(call.frame, "recs")
    ref_lf, ref_memory = _to_frame(call.read(reference, name="reference"), "reference")
    inputs = _Inputs.read(
        recs_lf, ref_lf, spec, average=average, in_memory=(recs_memory, ref_memory)
    )
    table = _values(inputs, parsed, spec.list_keys)
    labels = [one.label for one in parsed]
    table = table.select(*spec.list_keys, *labels).sort(spec.list_keys)
    if not per_user:
        table = _means(table, labels, list(spec.by))
    return call.back(v.guard(table, inputs.checks))


def _values(inputs: _Inputs, parsed: list[_Measure], keys: list[str]) -> pl.LazyFrame:
    """Per list, every measure asked for: the RBO forms at their cutoff, the overlaps at k."""
    rbos = [one for one in parsed if one.form in _RBO_FORMS]
    at_k = [one for one in parsed if one.form not in _RBO_FORMS]
    table = inputs.population.select(keys)
    if rbos:
        cutoffs = {one.k for one in rbos}
        if len(cutoffs) > 1:
            raise ValueError(
                "the RBO measures of one call read one pair of lists per user: give them one "
                f"cutoff, got {sorted(cutoffs, key=str)}"
            )
        requests = [rbo_plan.RboRequest(one.label, one.form, one.p) for one in rbos]
        values = rbo_plan.rbo(inputs.oriented(rbos[0].k), keys, requests)
        table = table.join(values, on=keys, how="left")
    if at_k:
        # the items below the largest cutoff change none of them
        deepest = max(one.k or 0 for one in at_k)
        table = table.join(_at_k(inputs.oriented(deepest), keys, at_k), on=keys, how="left")
    return table


def _means(table: pl.LazyFrame, labels: list[str], by: list[str]) -> pl.LazyFrame:
    """Each measure's mean over the users of a ``by`` group.

    The users' rows come out of joins in no fixed order: exact means (fixed
    point, scaled over all the users, as evaluate's), the same bits on every call.
    """
    means = [exact_mean(label) for label in labels]
    table = table.with_columns(fixed_point(labels))
    return table.group_by(by).agg(means).sort(by) if by else table.select(means)


def _spec(
    parsed: Sequence[_Measure], roles: Roles, *, ties: Ties, duplicates: Duplicates
) -> RecsSpec:
    """The recommendations' roles and conventions, every argument checked."""
    v.check_literal(ties, ("item_desc", "item_asc", "input", "average"), name="ties")
    v.check_literal(duplicates, ("error", "first"), name="duplicates")
    unknown = [name for name in roles if name not in Roles.__annotations__]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(Roles.__annotations__), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"similarity() got an unexpected keyword argument {unknown[0]!r}{hint}")
    if roles.get("relevance") is not None:
        raise ValueError("similarity compares lists with lists: it reads no relevance column")
    user, item = roles.get("user", "user"), roles.get("item", "item")
    rank, score = roles.get("rank", "rank"), roles.get("score")
    by = as_list(roles.get("by"))
    if ties == "average":
        if score is None:
            raise ValueError(
                "ties='average' keeps groups of equal scores: pass score=<column> (given ranks "
                "have no ties)"
            )
        jaccard = [one.label for one in parsed if one.form == "jaccard"]
        if jaccard:
            raise ValueError(
                f"ties='average' is not implemented for {jaccard}: the expected Jaccard index "
                "over the orders of the ties is no ratio of expected counts; use another ties= "
                "or intersection@k"
            )
        cut = [one.label for one in parsed if one.form in _RBO_FORMS and one.k is not None]
        if cut:
            raise ValueError(
                f"ties='average' compares the whole lists: a cutoff would split a group of "
                f"ties; drop the cutoff of {cut}"
            )
    check_roles(user=user, item=item, by=by, recs_only={"rank": rank, "score": score})
    # ties="average": duplicates are resolved on a strict order, then equal scores grouped
    strict: StrictTies = "item_desc" if ties == "average" else ties
    return RecsSpec(user, item, rank, score, tuple(by), strict, duplicates)


@dataclass(frozen=True)
class _Inputs:
    """Both sides' lists (positioned), the (by..., user) population and the data checks."""

    recs: pl.LazyFrame
    reference: pl.LazyFrame
    population: pl.LazyFrame
    keys: list[str]
    item: str
    checks: list[tuple[pl.LazyFrame, list[v.DataCheck]]]
    average: bool

    @classmethod
    def read(
        cls,
        recs: pl.LazyFrame,
        reference: pl.LazyFrame,
        spec: RecsSpec,
        *,
        average: bool,
        in_memory: tuple[bool, bool],
    ) -> _Inputs:
        """Both frames checked and positioned; ``in_memory``: each was a frame in memory."""
        recs_schema, ref_schema = recs.collect_schema(), reference.collect_schema()
        check_no_reserved(recs_schema.names(), frame="recs")
        check_no_reserved(ref_schema.names(), frame="reference")
        shared = tuple(name for name in spec.by if name in ref_schema)
        ref_spec = dataclasses.replace(spec, by=shared)
        check_recs_schema(recs_schema, spec)
        try:
            check_recs_schema(ref_schema, ref_spec)
        except (ValueError, TypeError) as error:
            raise type(error)(str(error).replace("recs", "reference", 1)) from None
        given_recs, given_ref = recs, reference
        try:
            recs, reference, recs_key_checks, ref_key_checks = v.unify_key_dtypes(
                recs,
                reference,
                [*shared, spec.user, spec.item],
                recs_schema=recs_schema,
                truth_schema=ref_schema,
            )
        except TypeError as error:
            # the rule is the truth's (ranking.relevance): here the other frame is the reference
            raise TypeError(str(error).replace("truth", "reference")) from None
        recs_memory, ref_memory = in_memory
        recs_pos, recs_list_checks = _positions(recs, spec, average=average, in_memory=recs_memory)
        ref_pos, ref_list_checks = _positions(
            reference, ref_spec, average=average, in_memory=ref_memory
        )
        by = list(spec.by)
        users = pl.concat(
            [recs.select(*shared, spec.user), reference.select(*shared, spec.user)]
        ).unique()
        population = users
        if by:
            # every user counts in every group (model): the models are paired on them
            groups = recs.select(by).unique()
            population = _expand(users, groups, shared)
            if len(shared) < len(by):
                ref_pos = _expand(ref_pos, groups, shared)
        checks = [
            (given_recs, recs_checks(spec, recs_schema, in_memory=recs_memory)),
            *recs_list_checks,
            (given_recs, recs_key_checks),
            *_renamed(
                [(given_ref, recs_checks(ref_spec, ref_schema, in_memory=ref_memory))], "reference"
            ),
            *_renamed(ref_list_checks, "reference"),
            *_renamed([(given_ref, ref_key_checks)], "reference"),
        ]
        keys = spec.list_keys
        return cls(
            recs_pos.select(*keys, spec.item, _T, _B),
            ref_pos.select(*keys, spec.item, _T, _B),
            population.select(keys),
            keys,
            spec.item,
            checks,
            average,
        )

    def _side(self, lf: pl.LazyFrame, name: str, k: int | None) -> pl.LazyFrame:
        kept = lf if k is None else lf.filter(pl.col(_T) <= k)
        return kept.rename({_T: f"{name}{_T}", _B: f"{name}{_B}", self.item: _ITEM})

    def oriented(self, k: int | None) -> rbo_plan.Lists:
        """The pairs (s <= l), their shared items and the longer lists' unseen items."""
        keys, on = self.keys, [*self.keys, _ITEM]
        x, y = self._side(self.recs, "x", k), self._side(self.reference, "y", k)
        nx = x.group_by(keys).agg(pl.len().alias("nx"))
        ny = y.group_by(keys).agg(pl.len().alias("ny"))
        # S is the shorter list; equal lengths: the recommendations (RBO is then symmetric)
        pairs = (
            self.population.join(nx, on=keys, how="left")
            .join(ny, on=keys, how="left")
            .with_columns(pl.col("nx").fill_null(0), pl.col("ny").fill_null(0))
            .with_columns(
                pl.min_horizontal("nx", "ny").cast(pl.Int64).alias(_S),
                pl.max_horizontal("nx", "ny").cast(pl.Int64).alias(_L),
                (pl.col("nx") <= pl.col("ny")).alias(_SIDE),
            )
            .cache()
        )
        x_short = pl.col(_SIDE)
        picked = [
            pl.when(x_short == first).then(pl.col(f"x{col}")).otherwise(pl.col(f"y{col}"))
            .alias(f"{name}{col}")
            for name, first in ((_S, True), (_L, False))
            for col in (_T, _B)
        ]  # fmt: skip
        # one join finds the shared items and the items of one list only
        both = (
            x.join(y, on=on, how="full", coalesce=True)
            .join(pairs.select(*keys, _SIDE), on=keys, how="left")
            .select(*on, *picked)
            .cache()
        )
        ts, tl = pl.col(f"{_S}{_T}"), pl.col(f"{_L}{_T}")
        common = both.filter(ts.is_not_null() & tl.is_not_null()).drop(_ITEM)
        # the longer list's items that the shorter one lacks
        unseen = both.filter(ts.is_null() & tl.is_not_null()).select(*on, tl, pl.col(f"{_L}{_B}"))
        tied = None
        if self.average:
            sides = (self.recs, self.reference)
            tied = pl.concat(
                [side.filter(pl.col(_B) > pl.col(_T)).select(keys) for side in sides]
            ).unique()
        return rbo_plan.Lists(pairs.select(*keys, _S, _L), common, unseen, tied)


def _expand(frame: pl.LazyFrame, groups: pl.LazyFrame, shared: Sequence[str]) -> pl.LazyFrame:
    """``frame`` repeated for every group of ``groups`` (within its shared ``by`` values)."""
    if shared:
        return frame.join(groups, on=list(shared), how="inner")
    return frame.join(groups, how="cross")
