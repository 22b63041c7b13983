"""Kaggle submission/solution readers, competition presets and the ``kaggle`` command.

Expected scores are computed by hand from each competition's published rule.
"""

from __future__ import annotations

from math import log2
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import cli
from polars_rankmetrics.kaggle import (
    PRESETS,
    SubmissionWarning,
    read_solution,
    read_submission,
    score_submission,
)
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run


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
    with pytest.warns(SubmissionWarning) as caught:
        score = score_submission(OTTO_SUBMISSION, OTTO_SOLUTION, preset="otto")
    assert [str(w.message).split(": ")[1][:25] for w in caught] == [
        "1 scored id(s) of the sol",
        "1 session_type value(s) l",  # 1_carts lists 20 twice
    ]
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
    with pytest.warns(SubmissionWarning, match=r"'1' again for '1_clicks'"):
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
    assert cli.main(["kaggle", str(sub), str(sub)]) == 2  # -m or --preset is required
    assert "one of the arguments -m/--metrics --preset is required" in capsys.readouterr().err


# ---------------------------------------------------------------- quoting, line endings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'id,items\n"00123","0002 0001"\n', [("00123", "0002", 1), ("00123", "0001", 2)]),
        (b'id,items\n"a,b","x"\n', [("a,b", "x", 1)]),  # a quoted comma is part of the id
        (b'id,items\n"say ""hi""",x\n', [('say "hi"', "x", 1)]),  # "" is a quote
        (b"id,items\n  u1 ,A  B\n", [("u1", "A", 1), ("u1", "B", 2)]),
    ],
)
def test_csv_quoting_as_the_standard_says(
    text: bytes, expected: list[tuple[str, str, int]]
) -> None:
    assert read_submission(text).rows() == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            b'customer_id,prediction\n00123,"0002 0001\n',
            r"<submission bytes>, line 2: malformed CSV quoting",
        ),
        (b'id,items\n1,A\n00123,"0002 0001\n5,B\n', r"line 3: "),
    ],
)
def test_an_unterminated_quote_is_refused_with_its_line(text: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_submission(text)


def test_an_unterminated_quote_never_scores() -> None:
    # once, the quote stayed inside the item id and this scored 0.5 instead of refusing
    with pytest.raises(ValueError, match="line 2"):
        score_submission(
            b'customer_id,prediction\n00123,"0002 0001\n',
            b"customer_id,prediction\n00123,0002 0001\n",
            "map@12",
        )


ENDINGS = {"lf": b"\n", "crlf": b"\r\n", "cr": b"\r"}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("reader", ["submission", "solution", "trec_run", "trec_qrels"])
def test_every_line_ending_reads_the_same(ending: str, reader: str) -> None:
    lines = {
        "submission": [b"id,items", b"u1,A B", b"u2,C"],
        "solution": [b"id,items", b"u1,A", b"u2,C D"],
        "trec_run": [b"q1 Q0 d1 1 0.9 r", b"q1 Q0 d2 2 0.8 r", b"q2 Q0 d1 1 0.5 r"],
        "trec_qrels": [b"q1 0 d1 1", b"q1 0 d2 0", b"q2 0 d1 2"],
    }[reader]
    function = {
        "submission": read_submission,
        "solution": read_solution,
        "trec_run": read_trec_run,
        "trec_qrels": read_trec_qrels,
    }[reader]
    expected = function(b"\n".join(lines) + b"\n")
    assert expected.height == 3
    got = function(ENDINGS[ending].join(lines) + ENDINGS[ending])
    assert_frame_equal(got, expected)
    # and without a final line ending
    assert_frame_equal(function(ENDINGS[ending].join(lines)), expected)


# ---------------------------------------------------------------- frames, per user, unknown ids


def _frames(kind: str) -> tuple[object, object]:
    sub = pl.read_csv(HM_SUBMISSION, infer_schema=False)
    sol = pl.read_csv(HM_SOLUTION, infer_schema=False)
    if kind == "lazy":
        return sub.lazy(), sol.lazy()
    if kind == "pandas":
        pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
        return sub.to_pandas(), sol.to_pandas()
    return sub, sol


@pytest.mark.parametrize("kind", ["eager", "lazy", "pandas"])
def test_frames_score_like_their_files(kind: str) -> None:
    sub, sol = _frames(kind)
    with pytest.warns(SubmissionWarning):
        from_files = score_submission(HM_SUBMISSION, HM_SOLUTION, preset="hm")
    with pytest.warns(SubmissionWarning, match="<submission frame>"):
        from_frames = score_submission(sub, sol, preset="hm")
    assert from_frames == from_files == 0.375


def test_a_frame_problem_names_the_row() -> None:
    sub = pl.DataFrame({"customer_id": ["c1", ""], "prediction": ["A", "B"]})
    with pytest.raises(ValueError, match=r"<submission frame>, row 2: empty submission id: ',B'"):
        score_submission(sub, HM_SOLUTION, preset="hm")


def test_something_else_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="submission must be a path, bytes, an open file, or a"):
        score_submission(42, HM_SOLUTION, preset="hm")


def test_per_user_breakdown_averages_to_the_score() -> None:
    with pytest.warns(SubmissionWarning):
        table = score_submission(HM_SUBMISSION, HM_SOLUTION, preset="hm", per_user=True)
    # c1: 0.5, c2: 0 (empty prediction), c4: 1, c5: 0 (absent); c3 bought nothing
    assert table.rows() == [("c1", 0.5), ("c2", 0.0), ("c4", 1.0), ("c5", 0.0)]
    assert table["map@12"].mean() == 0.375


def test_otto_per_user_pools_to_the_score_and_matches_evaluate() -> None:
    with pytest.warns(SubmissionWarning):
        score = score_submission(OTTO_SUBMISSION, OTTO_SOLUTION, preset="otto")
    with pytest.warns(SubmissionWarning):
        table = score_submission(OTTO_SUBMISSION, OTTO_SOLUTION, preset="otto", per_user=True)
    assert table.columns == ["user", "type", "hits", "denominator", "recall"]
    pooled = table.group_by("type").agg(pl.col("hits").sum() / pl.col("denominator").sum())
    weights = dict(PRESETS["otto"].weights)
    assert sum(weights[t] * r for t, r in pooled.iter_rows()) == pytest.approx(score)
    # the package's own pooled recall, per type, is the oracle for the sums
    recs = read_submission(OTTO_SUBMISSION).with_columns(
        type=pl.col("user").str.split("_").list.last()
    )
    truth = read_solution(OTTO_SOLUTION).with_columns(
        type=pl.col("user").str.split("_").list.last()
    )
    oracle = prm.evaluate(recs, truth, "pooled_recall@20", by="type")
    assert dict(oracle.iter_rows()) == pytest.approx(dict(pooled.iter_rows()))


@pytest.mark.parametrize("choice", ["warn", "ignore", "error"])
def test_unknown_ids_warn_ignore_or_error(choice: str, recwarn: pytest.WarningsRecorder) -> None:
    if choice == "error":
        with pytest.raises(ValueError, match=r"1 scored id\(s\) .* \(unknown_ids='error'\)"):
            score_submission(HM_SUBMISSION, HM_SOLUTION, preset="hm", unknown_ids="error")
        return
    score = score_submission(HM_SUBMISSION, HM_SOLUTION, preset="hm", unknown_ids=choice)  # type: ignore[arg-type]
    assert score == 0.375
    assert len(recwarn) == (1 if choice == "warn" else 0)


@pytest.mark.parametrize("choice", ["warn", "ignore", "error"])
def test_cli_unknown_ids(choice: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sub.csv").write_bytes(HM_SUBMISSION)
    (tmp_path / "sol.csv").write_bytes(HM_SOLUTION)
    argv = ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm",
            "--unknown-ids", choice]  # fmt: skip
    status = cli.main(argv)
    err = capsys.readouterr().err
    if choice == "error":
        assert status == 2
        assert "(--unknown-ids error)" in err
    else:
        assert status == 0
        assert ("warning" in err) == (choice == "warn")


def test_cli_kaggle_per_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sub.csv").write_bytes(HM_SUBMISSION)
    (tmp_path / "sol.csv").write_bytes(HM_SOLUTION)
    out = tmp_path / "per_user.parquet"
    argv = ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm",
            "--per-user", str(out)]  # fmt: skip
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == "0.375000\n"
    assert pl.read_parquet(out)["map@12"].to_list() == [0.5, 0.0, 1.0, 0.0]


# ---------------------------------------------------------------- OTTO labels as JSONL


def _otto_jsonl() -> bytes:
    # the same truth as OTTO_SOLUTION, in the official test_labels format
    return (
        b'{"session": 1, "labels": {"clicks": 10, "carts": [20, 21], "orders": [20]}}\n'
        b'{"session": 2, "labels": {"clicks": 30, "orders": [40, 41, 42]}}\n'
        b'{"session": 3, "labels": {"clicks": 50}}\n'
    )


def test_otto_labels_jsonl_scores_like_the_csv(tmp_path: Path) -> None:
    path = tmp_path / "test_labels.jsonl"
    path.write_bytes(_otto_jsonl())
    with pytest.warns(SubmissionWarning):
        from_csv = score_submission(OTTO_SUBMISSION, OTTO_SOLUTION, preset="otto")
    with pytest.warns(SubmissionWarning):
        from_jsonl = score_submission(OTTO_SUBMISSION, path, preset="otto")
    with pytest.warns(SubmissionWarning):
        from_bytes = score_submission(OTTO_SUBMISSION, _otto_jsonl(), preset="otto")
    assert from_jsonl == pytest.approx(from_csv)
    assert from_bytes == pytest.approx(from_csv)


def test_otto_labels_jsonl_refuses_other_json() -> None:
    with pytest.raises(ValueError, match="expected OTTO labels"):
        score_submission(OTTO_SUBMISSION, b'{"id": 1}\n', preset="otto")
