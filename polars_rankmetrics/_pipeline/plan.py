"""The orchestration: a call of ``evaluate`` or ``per_user_parts`` as one lazy query.

1. rank the recommendations (from the score when given) and cut them to the
   largest cutoff requested (:mod:`~polars_rankmetrics._pipeline.rank_cut`);
2. keep the truth rows with a positive grade and, for groups that only the
   recommendations have (models), repeat them per group; per user, count the
   relevant items (m_u) and, if a measure needs it, the ideal DCG
   (:mod:`~polars_rankmetrics._pipeline.truth`);
3. join those truth rows with the ranked cut (the hits table,
   :mod:`~polars_rankmetrics._pipeline.hits`): each relevant item recommended
   within the cut, with its position. Non-relevant recommendations never
   change a measure that reads the hits, so they are not carried past the
   join. Without a relevance column every truth row has grade 1: a hit takes
   nothing from its truth row, and a semi join (the recommendations whose key
   is in the truth) replaces the pairing join;
4. one ``group_by(by..., user).agg(...)`` gathers the partial sums the
   requested measures declare, and their per-user formulas give the parts
   (:mod:`~polars_rankmetrics._pipeline.kernel`);
5. apply the users-counted conventions
   (:mod:`~polars_rankmetrics._pipeline.population`), then combine users per
   ``by`` group as each measure says
   (:mod:`~polars_rankmetrics._pipeline.aggregate`).

The data checks of every step (:mod:`~polars_rankmetrics._pipeline.checks`)
are returned beside the plan, for :func:`polars_rankmetrics._validation.guard`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._names import PREFIX, check_roles
from polars_rankmetrics._pipeline.checks import (
    check_ideal,
    check_tie_average,
    cut_checks,
    gain_check,
    hit_checks,
    list_checks,
    prepare,
    recs_alone,
    row_checks_on_cut,
    truthless_names,
)
from polars_rankmetrics._pipeline.hits import packed_key
from polars_rankmetrics._pipeline.inputs import (
    ListInputs,
    RecsSpec,
    Request,
    Roles,
    TruthSpec,
    as_list,
    like,
    metric_requests,
)
from polars_rankmetrics._pipeline.kernel import per_user_partials
from polars_rankmetrics._pipeline.lists import list_parts
from polars_rankmetrics._pipeline.overlap import MIN_USER_SHARE, warn_if_disjoint_frames
from polars_rankmetrics._pipeline.parse import MetricSpec, metric_specs
from polars_rankmetrics._pipeline.population import counted_parts, judged_users, user_sets_check
from polars_rankmetrics._pipeline.propensity import item_propensities, join_keys, missing_check
from polars_rankmetrics._pipeline.rank_cut import (
    largest_cutoff,
    lengths_in_rank_order,
    ranked_cut,
    reads_score_ties,
    retrieved_recs,
)
from polars_rankmetrics._pipeline.sampled_probe import warn_if_sampled
from polars_rankmetrics._pipeline.subtopics import collapsed_truth
from polars_rankmetrics._pipeline.truth import grade_levels
from polars_rankmetrics.conventions import Conventions, resolve
from polars_rankmetrics.options import DEFAULTS, INPUTS, EvaluateOptions, conventions_given

_HIT_ROW = f"{PREFIX}hit_row"  # a hit row's recommendation row, for the checks on the hit rows


_HIT_USERS = f"{PREFIX}hit_users"  # users with a hit (the overlap warning's evidence)

# each frame with the data checks to run on it (polars_rankmetrics._validation.guard)
Checks = list[tuple[pl.LazyFrame, list[v.DataCheck]]]


def specs(options: EvaluateOptions) -> tuple[Roles, Conventions, ListInputs]:
    """The call's keyword options read once into typed specs: roles, conventions, inputs.

    ``options``: every option with its default (:func:`polars_rankmetrics.options.read`),
    the frames among them already Polars (the boundary read them).
    """
    conv = resolve(options["conventions"], **conventions_given(options))
    roles = Roles(
        options["user"],
        options["item"],
        options["rank"],
        options["score"],
        options["relevance"],
        tuple(as_list(options["by"])),
    )
    # the inputs beside the lists and the truth, as declared (options.INPUTS)
    described = ListInputs(**{option.name: options[option.name] for option in INPUTS})  # type: ignore[literal-required]
    return roles, conv, described


def plan_call(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    metrics: str | Sequence[str],
    options: EvaluateOptions,
) -> tuple[pl.LazyFrame, Checks, list[Request], list[str], pl.LazyFrame | None]:
    """:func:`plan` for a call of ``evaluate`` or ``per_user_parts``, its options read.

    The options are read into typed specs by :func:`specs`.

    See :func:`polars_rankmetrics.evaluation.evaluate` and
    :func:`polars_rankmetrics.evaluation.per_user_parts`.
    """
    roles, conv, described = specs(options)
    return plan(recs, truth, metrics, roles, conv, described=described)


def guarded_parts(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    metrics: str | Sequence[str],
    roles: Roles,
    conv: Conventions,
    *,
    described: ListInputs,
) -> pl.LazyFrame:
    """Per (by..., user) the part columns of each metric, sorted, guarded by the data checks.

    What :func:`polars_rankmetrics.evaluation.per_user_parts` gives (lazily: the
    checks run when it is collected).
    """
    parts, checks, requests, keys, _ = plan(recs, truth, metrics, roles, conv, described=described)
    columns = [name for request in requests for name in request.part_names()]
    return v.guard(parts.select(*keys, *columns).sort(keys), checks)


def plan(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    metrics: str | Sequence[str],
    roles: Roles,
    conv: Conventions,
    *,
    described: ListInputs,
) -> tuple[pl.LazyFrame, Checks, list[Request], list[str], pl.LazyFrame | None]:
    """The per-user parts frame (unsorted, unguarded), its data checks, the requests, the keys.

    And, when the hits table is held (computed once), a one-row frame of its
    number of distinct users (:data:`_HIT_USERS`), else ``None``.
    """
    specs, requests, position, keys = _requests(metrics, roles, conv)
    tie_average = conv.ties == "average"
    recs_spec = _recs_spec(roles, conv, position)
    # measures of the lists themselves (coverage, novelty, ...) read no truth
    truth_requests = [
        request for request in requests if "beyond_accuracy" not in request.measure.inputs
    ]
    described_requests = [
        request for request in requests if "beyond_accuracy" in request.measure.inputs
    ]
    in_memory = isinstance(recs, pl.DataFrame)
    # given ranks cut at a finite k: rows are checked where they are read (the cut)
    checks_on_cut = row_checks_on_cut(roles.score, conv, specs)
    recs_lf, judged, retrieved, checks = _read(
        recs,
        truth,
        recs_spec,
        roles=roles,
        conv=conv,
        requests=requests,
        truth_requests=truth_requests,
        row_checks=not checks_on_cut,
        subtopic=_subtopic_column(truth, truth_requests, described),
    )
    # ranks given and no measure reads whole lists: only the hit rows can show a repeat
    # that changes a number, so the recs' repeats are checked (or dropped) there
    hits_only = roles.score is None and all(q.measure.repeats == "hits" for q in requests)
    ranked = _rank(
        recs,
        recs_lf if retrieved is None else retrieved,
        recs_spec,
        specs,
        in_memory=in_memory,
        removed=retrieved is not None,
        tie_average=tie_average,
        hits_only=hits_only,
    )
    given = recs.lazy() if isinstance(recs, pl.DataFrame) else recs
    checks.extend(
        cut_checks(recs_lf, ranked, recs_spec, in_memory=in_memory, given=given)
        if checks_on_cut
        else []
    )
    parts: pl.LazyFrame | None = None
    hit_rows: pl.LazyFrame | None = None
    hit_users: pl.LazyFrame | None = None
    if truth_requests and truth is not None and judged is not None:
        parts, hit_rows, hit_users = _truth_parts(
            recs_lf,
            ranked,
            truth,
            judged,
            recs_spec=recs_spec,
            roles=roles,
            conv=conv,
            truth_requests=truth_requests,
            checks=checks,
            specs=specs,
            hits_only=hits_only,
            in_memory=in_memory,
            described=described,
        )
    if described_requests:
        parts, described_checks = list_parts(
            parts, ranked, recs_spec, described_requests, described
        )
        checks.extend(described_checks)
    if parts is None:  # unreachable: metrics is never empty
        raise ValueError("metrics is empty")
    checks.extend(
        _repeat_checks(ranked, hit_rows, recs_spec, in_memory=in_memory, hits_only=hits_only)
    )
    return parts, checks, requests, keys, hit_users


def _requests(
    metrics: str | Sequence[str], roles: Roles, conv: Conventions
) -> tuple[list[MetricSpec], list[Request], str, list[str]]:
    """The metrics parsed and requested (roles checked), the position column, the key columns."""
    specs = metric_specs(metrics)
    check_roles(
        user=roles.user,
        item=roles.item,
        by=roles.by,
        recs_only={"score": roles.score} if roles.score is not None else {"rank": roles.rank},
        truth_only={"relevance": roles.relevance},
    )
    requests, position, keys = metric_requests(specs, roles, conv)
    if conv.ties == "average":
        check_tie_average(requests, roles)
    return specs, requests, position, keys


def _subtopic_column(
    truth: pl.DataFrame | pl.LazyFrame | None,
    requests: Sequence[Request],
    described: ListInputs,
) -> str | None:
    """The truth's subtopic column when a requested measure reads subtopic judgements.

    Refused, naming those measures, when the truth lacks it.
    """
    readers = [q.spec.label for q in requests if "subtopics" in q.measure.inputs]
    if not readers or truth is None:
        return None
    column = described.subtopic or str(DEFAULTS["subtopic"])
    names = truth.collect_schema().names() if isinstance(truth, pl.LazyFrame) else truth.columns
    if column not in names:
        raise ValueError(
            f"{', '.join(readers)} read subtopic judgements: the truth needs one row per "
            f"(user, subtopic, item) with its subtopic in the column subtopic={column!r}, which "
            f"it lacks (it has {names}); name that column with subtopic=..."
        )
    return column


def _recs_spec(roles: Roles, conv: Conventions, position: str) -> RecsSpec:
    """The recs' roles and conventions; ``position``: the rank column read or written."""
    return RecsSpec(
        roles.user,
        roles.item,
        position,
        roles.score,
        roles.by,
        # ties="average": the duplicate policy runs on a strict order, then each group of
        # equal scores gets its first position and size (ranked_cut)
        "item_desc" if conv.ties == "average" else conv.ties,
        conv.duplicates,
    )


def _read(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    recs_spec: RecsSpec,
    *,
    roles: Roles,
    conv: Conventions,
    requests: Sequence[Request],
    truth_requests: Sequence[Request],
    row_checks: bool,
    subtopic: str | None = None,
) -> tuple[
    pl.LazyFrame,
    tuple[pl.LazyFrame, TruthSpec] | None,
    pl.LazyFrame | None,
    Checks,
]:
    """The recs lazy, the truth lazy with its spec, the recs left to rank, the input checks.

    ``truth_requests``: the requested metrics that read the truth (none: the
    truth is not read, and neither it nor the recs left to rank are returned).
    ``subtopic``: the truth's subtopic column (its rows are then (user,
    subtopic, item), checked as such).
    """
    if truth_requests and truth is None:
        raise ValueError(
            f"{[request.spec.label for request in truth_requests]} compare the lists with the "
            "truth: pass truth= (it may be None only when every metric describes the lists "
            f"themselves: {truthless_names()})"
        )
    judged: tuple[pl.LazyFrame, TruthSpec] | None = None
    if truth_requests and truth is not None:
        recs_lf, truth_lf, truth_spec, checks = prepare(
            recs,
            truth,
            recs_spec,
            (roles.relevance, conv.relevance_level),
            recs_row_checks=row_checks,
            subtopic=subtopic,
        )
        judged = (truth_lf, truth_spec)
    else:
        recs_lf, checks = recs_alone(recs, recs_spec, row_checks=row_checks)
    check_ideal(requests, conv)
    if truth is None and (conv.unjudged == "remove" or conv.nonpositive_scores == "drop"):
        raise ValueError(
            "unjudged='remove' and nonpositive_scores='drop' change the lists compared with "
            "the truth: pass truth= (the measures of the lists alone read every row)"
        )
    retrieved = (
        retrieved_recs(recs_lf, judged[0], recs_spec, judged[1], conv)
        if judged is not None
        else None
    )
    return recs_lf, judged, retrieved, checks


def _rank(
    recs: pl.DataFrame | pl.LazyFrame,
    kept: pl.LazyFrame,
    recs_spec: RecsSpec,
    specs: Sequence[MetricSpec],
    *,
    in_memory: bool,
    removed: bool,
    tie_average: bool,
    hits_only: bool,
) -> pl.LazyFrame:
    """The ranked cut of ``kept`` (``recs`` lazy, or what is left once ``removed`` some)."""
    # rows removed before ranking: the lists are no longer runs of the input's rows
    run_lengths = (
        lengths_in_rank_order(recs, recs_spec) if not removed and not tie_average else None
    )
    run_scores = None
    if run_lengths is not None and isinstance(recs, pl.DataFrame) and reads_score_ties(specs):
        run_scores = recs.get_column(recs_spec.score or "")
    return ranked_cut(
        kept,
        recs_spec,
        specs,
        hold=in_memory,
        run_lengths=run_lengths,
        run_scores=run_scores,
        renumber=removed and recs_spec.score is None,
        tie_groups=tie_average,
        drop_repeats=not hits_only,
    )


def _truth_parts(
    recs_lf: pl.LazyFrame,
    ranked: pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame,
    judged: tuple[pl.LazyFrame, TruthSpec],
    *,
    recs_spec: RecsSpec,
    roles: Roles,
    conv: Conventions,
    truth_requests: Sequence[Request],
    checks: Checks,
    specs: Sequence[MetricSpec],
    hits_only: bool,
    in_memory: bool,
    described: ListInputs,
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame | None]:
    """The parts of the metrics read against the truth, the hit rows and their users.

    Appends the checks of the truth's side to ``checks``. The users with a hit
    are counted only where the hits table is held (else ``None``).
    """
    truth_lf, truth_spec = judged
    subtopic_truth = None
    if truth_spec.subtopic is not None:
        # the diversity measures read the subtopic rows; the others one row per (user, item)
        subtopic_truth, truth_lf = truth_lf, collapsed_truth(truth_lf, truth_spec)
    # the truth's users: a subtopic truth has the collapsed one's, read without its group-by
    users_of = truth_lf if subtopic_truth is None else subtopic_truth
    if conv.user_sets == "strict":
        checks.append(user_sets_check(recs_lf, users_of, recs_spec, truth_spec))
    inputs = {name for request in truth_requests for name in request.measure.inputs}
    # only the ideal DCG reads the grades up front (an in-memory truth's distinct grades)
    levels = grade_levels(truth, truth_spec) if "ideal" in inputs else None
    propensities = (
        _propensities(truth_lf, truth_spec, truth_requests, described, checks)
        if "propensity" in inputs
        else None
    )
    per_user, hit_rows = per_user_partials(
        recs_lf,
        ranked,
        truth_lf,
        spec=recs_spec,
        truth_spec=truth_spec,
        requests=truth_requests,
        conv=conv,
        grade_levels=levels,
        truth_rows=truth.height if isinstance(truth, pl.DataFrame) else None,
        hit_row=_HIT_ROW if hits_only else None,
        hold=largest_cutoff(specs) is not None,
        cut=largest_cutoff(specs),
        join_key=packed_key(
            truth, recs_lf, truth_lf, [*truth_spec.shared_by, roles.user, roles.item]
        ),
        propensities=propensities,
        subtopic_truth=subtopic_truth,
    )
    # held hits only: else counting their users would run the join once more (the run's
    # subtopic rows where no measure reads the hits: the hits' join is then not run)
    held = in_memory and largest_cutoff(specs) is not None
    hit_users = hit_rows.select(pl.col(roles.user).n_unique().alias(_HIT_USERS)) if held else None
    parts = counted_parts(
        per_user,
        recs_lf,
        judged_users(recs_lf, users_of, recs_spec, truth_spec),
        spec=recs_spec,
        requests=truth_requests,
        conv=conv,
    )
    if roles.relevance is not None and "gain" in inputs:
        checks.append(
            (truth_lf, [gain_check(roles, conv, in_memory=isinstance(truth, pl.DataFrame))])
        )
    return parts, hit_rows, hit_users


def _propensities(
    truth_lf: pl.LazyFrame,
    truth_spec: TruthSpec,
    requests: Sequence[Request],
    described: ListInputs,
    checks: Checks,
) -> pl.LazyFrame:
    """The propensity table of the measures that read it (cached); appends its checks."""
    reading = [request for request in requests if "propensity" in request.measure.inputs]
    table, table_checks = item_propensities(
        described,
        truth=truth_lf,
        truth_keys=[*truth_spec.shared_by, truth_spec.user],
        relevance=truth_spec.relevance,
        item=truth_spec.item,
        labels=[request.spec.label for request in reading],
        # the measures that also read the catalog read the popularity ranks and its size
        ranked=[r.spec.label for r in reading if "catalog" in r.measure.inputs],
    )
    checks.extend(table_checks)
    # read twice (the hits, the relevant truth): computed once
    table = table.cache()
    if described.propensity is not None and join_keys(table) == [truth_spec.item]:
        relevant = truth_lf
        if truth_spec.relevance is not None:
            relevant = truth_lf.filter(pl.col(truth_spec.relevance).cast(pl.Float64) > 0)
        checks.append(
            missing_check(relevant, table, item=truth_spec.item, column=described.propensity)
        )
    return table


def _repeat_checks(
    ranked: pl.LazyFrame,
    hit_rows: pl.LazyFrame | None,
    recs_spec: RecsSpec,
    *,
    in_memory: bool,
    hits_only: bool,
) -> Checks:
    """The checks for repeated items and positions: on the hit rows or on the ranked cut."""
    if hits_only and hit_rows is not None:
        # with given ranks, a repeated item or position changes a hits measure only where
        # a relevant item sits: check the (few) hit rows rather than every recommendation
        return [(hit_rows, hit_checks(recs_spec, _HIT_ROW, in_memory=in_memory))]
    # ranks from scores: the top k comes in no fixed order (in every layout the same
    # example, the first list's offending row at its best position)
    return list_checks(
        ranked, recs_spec, in_memory=in_memory, by_position=recs_spec.score is not None
    )


def _overlap_shown(probe: v.Probe | None, truth: pl.DataFrame | pl.LazyFrame | None) -> bool:
    """Whether the users with a hit settle that the frames share ids (no warning possible).

    Each user with a hit is a truth user with a recommendation and each hit a
    recommended truth item, and the truth has at most ``truth.height`` users:
    ``hit users >= 1% of the truth's rows`` leaves the overlap warning's rule
    (fewer than 1% of the truth's users recommended anything, or no truth
    item recommended) nothing to find, without a look at the ids.
    """
    if probe is None or not isinstance(truth, pl.DataFrame):
        return False
    users = probe.values.get(_HIT_USERS) or 0
    return bool(users) and users >= MIN_USER_SHARE * truth.height


def guard_evaluation(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    result: pl.LazyFrame,
    checks: Checks,
    hit_users: pl.LazyFrame | None,
    *,
    user: str,
    item: str,
    relevance: str | None = None,
    level: float | None = None,
    by: Sequence[str] = (),
) -> pl.DataFrame | pl.LazyFrame:
    """``evaluate``'s result guarded by its data checks, then the id-overlap warning.

    The warning is only for frames in memory, and only where the users with a
    hit do not already settle it (:func:`_overlap_shown`).
    """
    in_memory = isinstance(recs, pl.DataFrame) and isinstance(truth, pl.DataFrame)
    probe = v.Probe(hit_users) if in_memory and hit_users is not None else None
    evaluated = like(recs, v.guard(result, checks, probes=[] if probe is None else [probe]))
    if (
        isinstance(recs, pl.DataFrame)
        and isinstance(truth, pl.DataFrame)
        and not _overlap_shown(probe, truth)
    ):
        # after the data checks passed; a lazy query is not run early (see check_overlap)
        warn_if_disjoint_frames(recs, truth, user=user, item=item)
    if isinstance(recs, pl.DataFrame) and isinstance(truth, pl.DataFrame):
        warn_if_sampled(
            recs, truth, user=user, item=item, relevance=relevance, level=level, by=by,
            stacklevel=3,
        )  # fmt: skip
    return evaluated
