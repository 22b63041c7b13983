"""Kaggle submission/solution readers, competition presets and the ``kaggle`` command.

Expected scores are computed by hand from each competition's published rule.
"""

from __future__ import annotations

from math import log2
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_rankmetrics import cli
from polars_rankmetrics.kaggle import (
    PRESETS,
    SubmissionWarning,
    read_solution,
    read_submission,
    score_submission,
)


def csv(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def long_frame(rows: list[tuple[str, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"user": pl.String, "item": pl.String, "rank": pl.UInt32}, orient="row"
    )


# ---------------------------------------------------------------- reading


def test_wide_submission_keeps_ids_as_strings_and_allows_empty_predictions() -> None:
    sub = read_submission(
        csv("customer_id,prediction", "000058a1,0706016001  0372860002", "00ab,", "0100,0001")
    )
    assert_frame_equal(
        sub,
        long_frame(
            [("000058a1", "0706016001", 1), ("000058a1", "0372860002", 2), ("0100", "0001", 1)]
        ),
    )


def test_repeated_prediction_keeps_the_first_and_wastes_the_slot() -> None:
    sub = read_submission(csv("id,items", "u,A B A C"))
    assert sub.rows() == [("u", "A", 1), ("u", "B", 2), ("u", "C", 4)]
    with pytest.raises(
        ValueError, match=r"line 2: submission item 'A' listed twice for this id: 'u,A B A C'"
    ):
        read_submission(csv("id,items", "u,A B A C"), duplicates="error")


def test_long_layout_repeats() -> None:
    text = csv("id,country", "u1,US", "u2,US", "u1,FR", "u1,US", "u1,IT")
    assert read_submission(text).rows() == [
        ("u1", "US", 1),
        ("u2", "US", 1),
        ("u1", "FR", 2),
        ("u1", "IT", 4),
    ]
    with pytest.raises(
        ValueError, match=r"line 5: submission item listed again for this id \(first on line 2\)"
    ):
        read_submission(text, duplicates="error")


def test_long_submission_rank_is_row_order() -> None:
    text = csv("id,country", "u1,NDF", "u2,US", "u1,US", "u1,FR")
    expected = long_frame([("u1", "NDF", 1), ("u2", "US", 1), ("u1", "US", 2), ("u1", "FR", 3)])
    assert_frame_equal(read_submission(text), expected)
    assert_frame_equal(read_submission(text, layout="long"), expected)


def test_quotes_crlf_and_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "sub.csv"
    path.write_bytes(b'\xef\xbb\xbf"id","items"\r\n"u1","A B"\r\n')
    assert read_submission(path).rows() == [("u1", "A", 1), ("u1", "B", 2)]


def test_columns_by_name() -> None:
    text = csv("score,items,id", "1,A B,u1")
    assert read_submission(text, user="id", item="items").rows() == [("u1", "A", 1), ("u1", "B", 2)]


def test_solution_wide_and_long_with_relevance() -> None:
    wide = read_solution(csv("ncodpers,added_products", "15889,p1 p2 p1", "15890,"))
    assert wide.rows() == [("15889", "p1"), ("15889", "p2")]
    graded = read_solution(csv("q,doc,grade", "a,x,3", "a,y,0", "b,x,1.5"), relevance="grade")
    assert graded.schema["rel"] == pl.Float64
    assert graded.rows() == [("a", "x", 3.0), ("a", "y", 0.0), ("b", "x", 1.5)]


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        (b"", {}, r"the file is empty; expected a CSV header on line 1"),
        (csv("id"), {}, r"line 1: expected a CSV header naming at least two columns"),
        (
            csv("customer,prediction", "1,A"),
            {"user": "customer_id"},
            r"line 1: the header has no submission id column 'customer_id' \(did you mean "
            r"'customer'\?\); header: 'customer,prediction'",
        ),
        (
            csv("u1,A B"),
            {"user": "customer_id"},
            r"no submission id column 'customer_id' \(is the header line missing\?\)",
        ),
        (
            csv("id,items", "u1,A", "u2,A B,C"),
            {},
            r"line 3: expected 2 comma-separated fields like the header 'id,items': 'u2,A B,C'",
        ),
        (csv("id,items", "u1,A", ",B"), {}, r"line 3: empty submission id: ',B'"),
        (
            csv("id,items", "u1,A B", "u2,C", "u1,D"),
            {},
            r"ids repeat \(long layout\) but some cells hold several",
        ),
        (
            csv("id,items", "u1,A B", "u1,D"),
            {"layout": "wide"},
            r"line 3: submission id listed again \(first on line 2\)",
        ),
        (csv("id,items", "u1,"), {"layout": "long"}, r"line 2: empty submission item"),
        (csv("id,items"), {"layout": "sideways"}, r"layout must be"),
    ],
)
def test_bad_submissions_name_the_line(text: bytes, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_submission(text, **kwargs)  # type: ignore[arg-type]


def test_bad_relevance_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "solution.csv"
    path.write_text("q,doc,grade\na,x,1\na,y,high\n")
    with pytest.raises(ValueError, match=r"solution\.csv, line 3: column 'grade' is not a number"):
        read_solution(path, relevance="grade")


# ---------------------------------------------------------------- presets

HM_SOLUTION = csv(
    "customer_id,prediction",
    "c1,0706016001 0706016002",
    "c2,0111",
    "c3,",  # no purchase in the test week: not scored
    "c4," + " ".join(f"i{n:02d}" for n in range(13)),  # 13 purchases: D = min(13, 12)
    "c5,0222",  # absent from the submission: scores 0
)
HM_SUBMISSION = csv(
    "customer_id,prediction",
    "c1,x 0706016001 y 0706016002",  # AP = (1/2 + 2/4) / 2 = 0.5
    "c2,",  # empty prediction: 0
    "c3,0111",
    "c4," + " ".join(f"i{n:02d}" for n in range(12)),  # 12 hits / 12 = 1
)


def test_hm_map_at_12() -> None:
    with pytest.warns(SubmissionWarning, match=r"1 scored id\(s\) .* have no row .* \['c5'\]"):
        score = score_submission(HM_SUBMISSION, HM_SOLUTION, preset="hm")
    assert score == pytest.approx((0.5 + 0 + 1 + 0) / 4)


def test_santander_counts_customers_without_added_products() -> None:
    solution = csv("ncodpers,added_products", "1,p1 p2", "2,", "3,p3")
    submission = csv(
        "ncodpers,added_products",
        "1,p2 p9 p1",  # (1/1 + 2/3) / 2
        "2,p1",  # nothing added: 0, and counted
        "3,p4 p5 p6 p7 p8 p9 p10 p3",  # the hit is 8th, past the cutoff 7
    )
    score = score_submission(submission, solution, preset="santander")
    assert score == pytest.approx((1 + 2 / 3) / 2 / 3)
    # the same files under H&M's rule average over customers 1 and 3 only
    assert score_submission(submission, solution, "map@7") == pytest.approx((1 + 2 / 3) / 2 / 2)


OTTO_SOLUTION = csv(
    "session_type,labels",
    "1_clicks,10",
    "1_carts,20 21",
    "1_orders,20",
    "2_clicks,30",
    "2_carts,",
    "2_orders,40 41 42",
    "3_clicks,50",
)
OTTO_SUBMISSION = csv(
    "session_type,labels",
    "1_clicks,11 10",
    "1_carts,20 20 22",
    "1_orders,20",
    "2_clicks,31",
    "2_carts,40",
    "2_orders,40 41",
)


def test_otto_weighted_pooled_recall() -> None:
    with pytest.warns(SubmissionWarning, match=r"1 scored id\(s\)"):
        score = score_submission(OTTO_SUBMISSION, OTTO_SOLUTION, preset="otto")
    clicks = 1 / 3  # sessions 1, 2 and 3 (missing from the submission)
    carts = 1 / 2  # session 1: one of two; session 2 has no cart truth
    orders = (1 + 2) / (1 + 3)
    assert score == pytest.approx(0.10 * clicks + 0.30 * carts + 0.60 * orders)


def test_otto_truncates_at_20_before_counting_and_caps_the_denominator() -> None:
    many = " ".join(str(n) for n in range(100, 125))
    solution = csv("session_type,labels", "1_clicks,7", f"1_carts,{many}", "1_orders,7")
    # the click is the 21st prediction (a repeat used up a slot): no hit
    clicks = "1 1 " + " ".join(str(n) for n in range(200, 218)) + " 7"
    first20 = " ".join(str(n) for n in range(100, 120))
    submission = csv(
        "session_type,labels", f"1_clicks,{clicks}", f"1_carts,{first20}", "1_orders,7"
    )
    # carts: 20 hits / min(20, 25) = 1; orders: 1
    assert score_submission(submission, solution, preset="otto") == pytest.approx(0.9)


def test_otto_refuses_unknown_types() -> None:
    with pytest.raises(ValueError, match=r"line 2: the id is not '<session>_<type>'"):
        score_submission(
            csv("session_type,labels", "1_views,1"),
            csv("session_type,labels", "1_views,1"),
            preset="otto",
        )


def test_expedia_ndcg_at_38_from_bookings_and_clicks() -> None:
    solution = csv(
        "srch_id,prop_id,position,click_bool,booking_bool",
        "1,h1,3,1,1",  # booked: 5
        "1,h2,1,1,0",  # clicked: 1
        "1,h3,2,0,0",
        "1,h4,4,0,0",
        "2,h5,1,0,0",  # a search without clicks scores 0 and counts
        "2,h6,2,0,0",
    )
    submission = csv("SearchId,PropertyId", "1,h2", "1,h1", "1,h3", "1,h4", "2,h6", "2,h5")
    dcg = (2**1 - 1) / log2(2) + (2**5 - 1) / log2(3)
    ideal = (2**5 - 1) / log2(2) + (2**1 - 1) / log2(3)
    assert score_submission(submission, solution, preset="expedia") == pytest.approx(
        dcg / ideal / 2
    )


def test_airbnb_ndcg_at_5() -> None:
    solution = csv("id,age,country_destination", "u1,30,FR", "u2,41,FR", "u3,25,ES")
    submission = csv(
        "id,country",
        "u1,FR",  # 1
        "u2,US",
        "u2,FR",  # 1 / log2(3), the example of the competition page
        *[f"u3,{c}" for c in ("NDF", "US", "FR", "IT", "GB", "ES")],  # 6th: past the cutoff
    )
    assert score_submission(submission, solution, preset="airbnb") == pytest.approx(
        (1 + 1 / log2(3) + 0) / 3
    )


def test_every_preset_has_a_rule_and_known_metric() -> None:
    assert sorted(PRESETS) == ["airbnb", "expedia", "hm", "otto", "santander"]
    assert PRESETS["hm"].metric == "map@12"
    assert PRESETS["otto"].weights == (("clicks", 0.10), ("carts", 0.30), ("orders", 0.60))


# ---------------------------------------------------------------- metric mode


def test_metrics_md_example_1_from_files() -> None:
    submission = csv("user,items", "1,A B C D E", "2,A C E B D")
    solution = csv("user,items", "1,B D Z", "2,B D Z")
    assert score_submission(submission, solution, "map@5") == pytest.approx(0.275)
    assert score_submission(submission, solution, "mrr") == pytest.approx(0.375)
    assert score_submission(submission, solution, "ndcg@5") == pytest.approx(0.440919, abs=1e-6)


def test_graded_long_solution() -> None:
    submission = csv("q,doc", "1,g1", "1,g2", "1,g3")
    solution = csv("q,doc,grade", "1,g3,3", "1,g2,2", "1,g1,1")
    score = score_submission(submission, solution, "ndcg@3", relevance="grade")
    assert score == pytest.approx(0.789998, abs=1e-6)  # METRICS.md example 7


def test_ids_only_in_the_submission_warn_and_are_ignored() -> None:
    submission = csv("id,items", "a,X", "b,Y", "c,Y", "d,")
    with pytest.warns(
        SubmissionWarning, match=r"3 id\(s\) are not in the solution .* \['b', 'c', 'd'\]"
    ):
        assert score_submission(submission, csv("id,items", "a,X"), "map@12") == 1.0


def test_arguments_are_checked() -> None:
    sub = csv("id,items", "a,X")
    with pytest.raises(ValueError, match="exactly one of metric"):
        score_submission(sub, sub)
    with pytest.raises(ValueError, match="exactly one of metric"):
        score_submission(sub, sub, "map@12", preset="hm")
    with pytest.raises(ValueError, match=r"unknown preset 'h&m'; did you mean 'hm'\?"):
        score_submission(sub, sub, preset="h&m")
    with pytest.raises(ValueError, match="unknown metric"):
        score_submission(sub, sub, "mapp@12")
    with pytest.raises(ValueError, match="users must be"):
        score_submission(sub, sub, "map@12", users="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no id to average over"):
        score_submission(sub, csv("id,items", "a,"), "map@12")


# ---------------------------------------------------------------- command line


def test_cli_kaggle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = tmp_path / "submission.csv"
    sol = tmp_path / "solution.csv"
    sub.write_bytes(HM_SUBMISSION)
    sol.write_bytes(HM_SOLUTION)
    assert cli.main(["kaggle", str(sub), str(sol), "--preset", "hm"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "0.375000\n"
    assert "rankmetrics kaggle: warning: " in captured.err
    assert "['c5']" in captured.err
    assert (
        cli.main(["kaggle", str(sub), str(sol), "--metric", "map@12", "--users", "solution"]) == 0
    )
    assert capsys.readouterr().out == f"{1.5 / 5:.6f}\n"


def test_cli_kaggle_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = tmp_path / "submission.csv"
    sub.write_text("customer_id,prediction\nc1,A\nc2,A,B\n")
    assert cli.main(["kaggle", str(sub), str(sub), "--preset", "hm"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rankmetrics kaggle: error: ")
    assert "submission.csv, line 3: expected 2 comma-separated fields" in err
    assert cli.main(["kaggle", str(sub), str(sub)]) == 2  # --metric or --preset is required
    assert "one of the arguments --metric --preset is required" in capsys.readouterr().err
