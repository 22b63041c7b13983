"""trec_eval's measure families as registry declarations (``TrecFamily``).

``rankmetrics trec`` reads its measure table from the registry: these tests pin
the table to trec_eval's (``measures.c``), check that each declared ``evaluate``
twin is a registered metric string, and add a family in one declaration.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
import pytest

from polars_rankmetrics import _measures as registry
from polars_rankmetrics._measures import _registry
from polars_rankmetrics._measures._registry import TrecFamily
from polars_rankmetrics._measures._trec_plan import Plan, Request, code
from polars_rankmetrics.trec import format_trec_eval, parse_trec_measures, trec_eval

# trec_eval 10.0's measures.c, te_trec_measures[], in order (prefs and avgjg left out)
MEASURES_C = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
]  # fmt: skip

QRELS = pl.DataFrame(
    {"user": ["q1"] * 4 + ["q2"], "item": ["d1", "d2", "d3", "d4", "d5"], "rel": [1, 0, -1, 1, 1]}
)
RUN = pl.DataFrame(
    {
        "user": ["q1"] * 4 + ["q2"] * 2,
        "item": ["d1", "d2", "d3", "d9", "d5", "d8"],
        "score": [0.9, 0.8, 0.7, 0.6, 0.9, 0.8],
    }
)


def test_families_are_trec_evals_table_in_its_order() -> None:
    assert list(registry.trec_families()) == MEASURES_C


def test_sets_are_trec_evals_nicknames() -> None:
    official = [m.name for m in parse_trec_measures("official")]
    assert official[:12] == [*MEASURES_C[:10], "iprec_at_recall_0.00", "iprec_at_recall_0.10"]
    assert official[-9:] == [
        "P_5",
        "P_10",
        "P_15",
        "P_20",
        "P_30",
        "P_100",
        "P_200",
        "P_500",
        "P_1000",
    ]
    families = {m.family for m in parse_trec_measures("all_trec")}
    assert families == set(MEASURES_C) - {"dcg", "ideal_dcg"}
    assert {m.family for m in parse_trec_measures("set")} == {
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
    }  # fmt: skip


def test_every_evaluate_twin_is_a_registered_metric() -> None:
    twins = 0
    for family in registry.trec_families().values():
        if family.metric is None:
            continue
        cutoff: float = family.defaults[0] if family.params.startswith("cut") else 0
        shown = int(cutoff) if family.params == "cut_long" else cutoff
        metric = family.metric.format(k=shown)
        base = metric.split("@")[0].split("(")[0]
        assert registry.lookup(base).name == base, family.name
        twins += 1
    assert twins == 16


def test_register_trec_refuses_a_taken_name_or_position() -> None:
    with pytest.raises(ValueError, match="taken"):
        registry.register_trec(TrecFamily("P", 99, None))
    with pytest.raises(ValueError, match="taken"):
        registry.register_trec(TrecFamily("new_measure", 11, None))


def _unpooled(plan: Plan, request: Request) -> None:
    # documents of the list the qrels do not list (code -1)
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, ((code == -1) & (pl.col("_rank") <= k)).sum().cast(pl.Float64))


@pytest.fixture
def unpooled() -> Iterator[TrecFamily]:
    family = registry.register_trec(
        TrecFamily("unpooled", 100, _unpooled, "cut_long", (2.0, 10.0), summary="sum")
    )
    yield family
    del _registry._TREC[family.name]


def test_a_family_is_one_declaration(unpooled: TrecFamily) -> None:
    # q1: d1 (1), d2 (0), d3 (-1: pooled, unjudged), d9 (not in the qrels); q2: d5, d8
    defaults = parse_trec_measures(["unpooled", "map"])
    assert [(m.name, m.cutoff) for m in defaults] == [
        ("map", None), ("unpooled_2", 2), ("unpooled_10", 10),
    ]  # fmt: skip
    assert [m.name for m in parse_trec_measures(["unpooled_3", "P.5"])] == ["P_5", "unpooled_3"]
    table = trec_eval(QRELS, RUN, ["unpooled.2,10"], per_query=True)
    values = {(m, q): v for m, q, v, _ in table.iter_rows()}
    assert values == {
        ("unpooled_2", "q1"): 0.0, ("unpooled_10", "q1"): 1.0,
        ("unpooled_2", "q2"): 1.0, ("unpooled_10", "q2"): 1.0,
        ("unpooled_2", "all"): 1.0, ("unpooled_10", "all"): 2.0,
    }  # fmt: skip
    # trec_eval prints only its plain counts (num_ret...) as integers
    assert "unpooled_10           \tall\t2.0000\n" in format_trec_eval(table)


def test_rbp_resid_by_hand() -> None:
    # q1 at p = 0.5: d1 judged, d2 judged, d3 pooled-unjudged, d9 unpooled, n = 4:
    # p^4 + (1 - p)(p^2 + p^3) = 0.0625 + 0.5 * 0.375 = 0.25
    # q2: d5 judged, d8 unpooled, n = 2: p^2 + (1 - p) p = 0.25 + 0.25 = 0.5
    table = trec_eval(QRELS, RUN, ["rbp_resid.p=0.5"], per_query=True)
    assert table["value"].to_list() == pytest.approx([0.25, 0.5, 0.375])
