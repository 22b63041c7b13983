"""What the command line writes, and how it reads ids: never over an input, one id rule."""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics.cli import build_parser, main
from polars_rankmetrics.cli import evaluate as evaluate_command
from polars_rankmetrics.options import ConventionOptions, names

RECS = "user,item,rank\n1,a,1\n1,b,2\n2,c,1\n"
TRUTH = "user,item\n1,b\n2,c\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\n"
QRELS = "q1 0 d2 1\n"
SUB = "customer_id,prediction\nc1,A B\n"
SOL = "customer_id,prediction\nc1,B\n"


def _inputs(tmp: Path, command: str) -> tuple[list[str], list[Path]]:
    """The command's argv up to its output option, and its input files."""
    if command == "evaluate":
        files = [tmp / "recs.csv", tmp / "truth.csv"]
        texts = [RECS, TRUTH]
        tail = ["-m", "mrr"]
    elif command == "kaggle":
        files = [tmp / "sub.csv", tmp / "sol.csv"]
        texts = [SUB, SOL]
        tail = ["--metric", "map@12"]
    else:
        files = [tmp / "qrels.txt", tmp / "run.txt"]
        texts = [QRELS, RUN]
        tail = ["-m", "map"]
    for file, text in zip(files, texts, strict=True):
        file.write_text(text)
    return [command, *map(str, files), *tail], files


OUTPUT_OPTIONS = [
    ("evaluate", "--per-user"),
    ("evaluate", "--output"),
    ("kaggle", "--per-user"),
    ("trec", "--output"),
]
SPELLINGS: dict[str, Callable[[Path], str]] = {
    "same": str,
    "dot-slash": lambda p: os.path.join(p.parent, ".", p.name),
    "dot-dot": lambda p: os.path.join(p.parent, "..", p.parent.name, p.name),
    "relative": os.path.relpath,
}


@pytest.mark.parametrize(("command", "option"), OUTPUT_OPTIONS)
@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("spelling", sorted([*SPELLINGS, "symlink"]))
def test_never_writes_over_an_input(
    command: str,
    option: str,
    which: int,
    spelling: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv, files = _inputs(tmp_path, command)
    target = files[which]
    before = target.read_bytes()
    if spelling == "symlink":
        link = tmp_path / f"link{target.suffix}"
        link.symlink_to(target)
        path = str(link)
    else:
        path = SPELLINGS[spelling](target)
    assert main([*argv, option, path]) == 2
    err = capsys.readouterr().err
    assert "refusing to overwrite" in err
    assert len(err.splitlines()) == 1
    assert target.read_bytes() == before


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".json", ".ndjson", ".jsonl"])
def test_output_format_follows_the_extension(suffix: str, tmp_path: Path) -> None:
    argv, _ = _inputs(tmp_path, "evaluate")
    out = tmp_path / f"per_user{suffix}"
    assert main([*argv, "--per-user", str(out)]) == 0
    if suffix == ".parquet":
        frame = pl.read_parquet(out)
    elif suffix in (".csv", ".tsv"):
        frame = pl.read_csv(out, separator="\t" if suffix == ".tsv" else ",")
    elif suffix == ".json":
        frame = pl.DataFrame(json.loads(out.read_text()))
    else:
        frame = pl.DataFrame([json.loads(line) for line in out.read_text().splitlines()])
    # user 1 finds b at rank 2, user 2 finds c at rank 1
    assert frame.sort("user").select(pl.col("user").cast(pl.String), "mrr").rows() == [
        ("1", 0.5),
        ("2", 1.0),
    ]


@pytest.mark.parametrize("command", ["evaluate", "demo"])
@pytest.mark.parametrize("output_format", ["json", "ndjson", "csv", "tsv"])
def test_machine_formats_print_only_the_data(
    command: str, output_format: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _inputs(tmp_path, command)[0] if command == "evaluate" else ["demo", "--users", "50"]
    assert main([*argv, "--format", output_format]) == 0
    out = capsys.readouterr().out
    if output_format == "json":
        rows = json.loads(out)
    elif output_format == "ndjson":
        rows = [json.loads(line) for line in out.splitlines()]
    else:
        separator = "\t" if output_format == "tsv" else ","
        rows = pl.read_csv(out.encode(), separator=separator).to_dicts()
    assert rows
    assert all("mrr" in row or "mrr@10" in row for row in rows)


def test_every_convention_of_evaluate_is_an_option() -> None:
    # the roles and the list inputs have options of their own (--user..., --interactions...)
    assert set(evaluate_command.CONVENTIONS) == set(names(ConventionOptions))
    parser = build_parser()
    help_text = parser.parse_args(["evaluate", "a", "b", "-m", "mrr"]).command_parser.format_help()
    for name in evaluate_command.CONVENTIONS:
        assert "--" + name.replace("_", "-") in help_text


@pytest.mark.parametrize(
    ("flag", "value", "kwargs"),
    [
        ("--denominator", "relevant", {"denominator": "relevant"}),
        ("--users-without-recs", "exclude", {"users_without_recs": "exclude"}),
        ("--conventions", "trec", {"conventions": "trec"}),
        ("--relevance-level", "2", {"relevance_level": 2.0}),
        ("--ties", "item_asc", {"ties": "item_asc"}),
    ],
)
def test_convention_options_reach_evaluate(
    flag: str,
    value: str,
    kwargs: dict[str, object],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    recs = pl.DataFrame(
        {"user": ["1", "1", "1", "3"], "item": ["a", "b", "c", "a"], "score": [0.5, 0.5, 0.1, 1.0]}
    )
    truth = pl.DataFrame({"user": ["1", "1", "2"], "item": ["b", "c", "a"], "rel": [2, 1, 3]})
    recs.write_csv(tmp_path / "r.csv")
    truth.write_csv(tmp_path / "t.csv")
    argv = ["evaluate", str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), "-m", "map@2",
            "ndcg@2", "--score", "score", "--relevance", "rel", "--format", "json", flag, value]  # fmt: skip
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)[0]
    expected = prm.evaluate(
        recs, truth, ["map@2", "ndcg@2"], score="score", relevance="rel", **kwargs
    ).row(0, named=True)
    assert printed == pytest.approx(expected)


def test_advice_is_given_in_the_words_of_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a relevant item twice (a repeated non-relevant item with ranks given changes nothing)
    (tmp_path / "r.csv").write_text("user,item,rank\n1,b,1\n1,b,2\n")
    (tmp_path / "t.csv").write_text(TRUTH)
    assert main(["evaluate", str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), "-m", "mrr"]) == 2
    err = capsys.readouterr().err
    assert "--duplicates first" in err
    assert "duplicates='first'" not in err
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 0.9 r\nq1 Q0 d1 2 0.8 r\n")
    (tmp_path / "q.txt").write_text(QRELS)
    assert main(["trec", str(tmp_path / "q.txt"), str(tmp_path / "run.txt")]) == 2
    err = capsys.readouterr().err
    assert "--duplicates first" in err


def test_progress_only_when_asked_or_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--users", "30", "--format", "csv"]) == 0
    assert capsys.readouterr().err == ""  # stderr is not a terminal under pytest
    assert main(["demo", "--users", "30", "--format", "csv", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "generating the sample for 30 users" in err
    # each line says the seconds since the command started; the last one the total
    lines = err.strip().splitlines()
    assert all(re.match(r"rankmetrics demo \[ *\d+\.\d s\]: ", line) for line in lines), lines
    assert re.search(r"done in \d+\.\d s$", lines[-1])


def test_progress_relays_the_library_stages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = prm.sample_data(n_users=60, n_items=50)
    sample.recs.write_parquet(tmp_path / "recs.parquet")
    sample.truth.write_parquet(tmp_path / "truth.parquet")
    args = ["compare", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet"),
            "-m", "ndcg@10", "--score", "score", "--test", "tukey_hsd", "--n-resamples", "200",
            "--progress"]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "test='tukey_hsd', 200 resamples ..." in err
    assert re.search(r"200 resamples: done in \d+\.\d s", err)


# ---------------------------------------------------------------- one id rule


def _score(tmp: Path, recs: pl.DataFrame, truth: pl.DataFrame, recs_ext: str, truth_ext: str,
           capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[list[dict[str, object]], str]:  # fmt: skip
    paths = []
    for name, frame, ext in (("recs", recs, recs_ext), ("truth", truth, truth_ext)):
        path = tmp / f"{name}{ext}"
        frame.write_parquet(path) if ext == ".parquet" else frame.write_csv(path)
        paths.append(str(path))
    out = tmp / f"per_user_{recs_ext[1:]}_{truth_ext[1:]}.csv"
    status = main(["evaluate", *paths, "-m", "ndcg@3", "--format", "json",
                   "--per-user", str(out), *extra])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 0, captured.err
    per_user = pl.read_csv(out, schema_overrides={"user": pl.String}).sort("user")
    return per_user.to_dicts(), captured.err


@pytest.mark.parametrize(
    "recs_user",
    [
        pl.Series([1, 1, 1, 2, 2], dtype=pl.Int64),
        pl.Series([1.0, 1.0, 1.0, 2.0, 2.0]),
        pl.Series([1, 1, 1, 2, 2], dtype=pl.UInt16),
        pl.Series(["1", "1", "1", "2", "2"]),
    ],
    ids=["int", "float", "uint16", "text"],
)
@pytest.mark.parametrize("formats", [(".parquet", ".csv"), (".csv", ".parquet"),
                                     (".parquet", ".parquet"), (".csv", ".csv")])  # fmt: skip
def test_ids_are_numbers_where_every_file_gives_numbers_else_text(
    recs_user: pl.Series,
    formats: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # item ids 10 / 9 / 100 sort differently as text and as numbers: ties follow the
    # numbers, in every format (a CSV's plain integers are numbers), as evaluate() does
    recs = pl.DataFrame({
        "user": recs_user, "item": [10, 9, 100, 5, 6], "score": [1.0, 1.0, 1.0, 0.5, 0.4]
    })  # fmt: skip
    truth = pl.DataFrame({"user": [1, 2], "item": [9, 6]})
    got, err = _score(tmp_path, recs, truth, *formats, capsys, "--score", "score")
    if recs_user.dtype == pl.Float64 and formats[0] == ".csv":
        # the CSV says "1.0", no integer as written: text, and the mismatch is warned about
        assert "share few ids: 0 of 2 user id(s)" in err
        assert "'1.0' only in" in err
        return
    # as numbers, item_desc ties: 100 > 10 > 9, so 9 is third for user 1 (as text,
    # "9" > "100" > "10" would put it first)
    assert got == [
        {"user": "1", "ndcg@3": 0.5},
        {"user": "2", "ndcg@3": pytest.approx(1 / __import__("math").log2(3))},
    ]
    if recs_user.dtype == pl.String and formats[0] == ".parquet":
        # text users in a typed file: users are compared as text, and the files are named
        assert f"{tmp_path / 'recs.parquet'} as text" in err
        assert "column 'user' as numbers" in err
    else:
        assert "warning" not in err


def test_fractional_float_ids_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = pl.DataFrame({"user": [1.5], "item": ["a"], "rank": [1]})
    recs.write_parquet(tmp_path / "r.parquet")
    (tmp_path / "t.csv").write_text("user,item\n1,a\n")
    assert (
        main(["evaluate", str(tmp_path / "r.parquet"), str(tmp_path / "t.csv"), "-m", "mrr"]) == 2
    )
    err = capsys.readouterr().err
    assert "r.parquet: id column 'user' holds fractional numbers" in err


@pytest.mark.parametrize("command", ["evaluate", "kaggle"])
def test_ids_that_lost_their_leading_zeros_give_a_warning(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if command == "evaluate":
        pl.DataFrame({"user": [123, 124], "item": ["a", "b"], "rank": [1, 1]}).write_parquet(
            tmp_path / "recs.parquet"
        )
        (tmp_path / "truth.csv").write_text("user,item\n00123,a\n00124,b\n")
        argv = ["evaluate", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.csv"), "-m",
                "mrr"]  # fmt: skip
    else:
        (tmp_path / "sub.csv").write_text("customer_id,prediction\n123,0002 0001\n")
        (tmp_path / "sol.csv").write_text("customer_id,prediction\n00123,0001\n")
        argv = ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "share few ids" in err
    assert "would match without leading zeros" in err
    assert "'00123'" in err


def test_trec_warns_when_run_and_qrels_share_no_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "q.txt").write_text("301 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q301 Q0 d1 1 0.9 r\n")
    # trec_eval stops with an error when no query has both results and judgements;
    # the warning naming the unmatched ids comes first
    assert main(["trec", str(tmp_path / "q.txt"), str(tmp_path / "run.txt"), "-m", "map"]) == 2
    err = capsys.readouterr().err
    assert "share few ids: 0 of 1 user id(s)" in err
    assert "no query in common with the qrels" in err


def test_parquet_and_csv_give_the_same_table_for_the_same_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same ids give the same numbers whatever the format: integer ids in Parquet and
    # the same ids written in CSV tie-break by value, as evaluate() does on the frames;
    # text ids in Parquet, by text, as evaluate() on text ids
    sample = prm.sample_data(n_users=60, n_items=40)
    recs = sample.recs.drop("model").filter(pl.col("user") >= 0).unique(["user", "item"])
    truth = sample.truth
    expected = prm.evaluate(recs, truth, "ndcg@3", score="score", per_user=True)
    expected = expected.with_columns(pl.col("user").cast(pl.String)).sort("user")
    for formats in ((".parquet", ".parquet"), (".csv", ".parquet"), (".parquet", ".csv"),
                    (".csv", ".csv")):  # fmt: skip
        got, err = _score(tmp_path, recs, truth, *formats, capsys, "--score", "score")
        assert_frame_equal(pl.DataFrame(got), expected)
        assert "compared as text" not in err
    text = {name: pl.col(name).cast(pl.String) for name in ("user", "item")}
    got, err = _score(tmp_path, recs.with_columns(**text), truth.with_columns(**text),
                      ".parquet", ".parquet", capsys, "--score", "score")  # fmt: skip
    as_text = prm.evaluate(recs.with_columns(**text), truth.with_columns(**text), "ndcg@3",
                           score="score", per_user=True).sort("user")  # fmt: skip
    assert_frame_equal(pl.DataFrame(got), as_text)
    assert not pl.DataFrame(got).equals(expected)  # the sample's ties: the orders differ


def test_one_csv_truth_gives_the_number_of_the_parquet_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the case: items 2 and 10 tie, the truth is item 10; read as text the CSV put
    # "2" first (MRR 0.5), the Parquet truth 10 first (MRR 1.0)
    recs = pl.DataFrame({"user": [1, 1], "item": [2, 10], "score": [0.5, 0.5]})
    truth = pl.DataFrame({"user": [1], "item": [10]})
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    truth.write_csv(tmp_path / "truth.csv")
    recs.write_csv(tmp_path / "recs.csv")
    assert prm.evaluate(recs, truth, "mrr", score="score")["mrr"].item() == 1.0
    for pair in (("recs.parquet", "truth.parquet"), ("recs.parquet", "truth.csv"),
                 ("recs.csv", "truth.csv"), ("recs.csv", "truth.parquet")):  # fmt: skip
        files = [str(tmp_path / name) for name in pair]
        assert main(["evaluate", *files, "-m", "mrr", "--score", "score", "--format", "csv"]) == 0
        captured = capsys.readouterr()
        assert captured.out == "mrr\n1.0\n", pair
        assert captured.err == ""


def test_ids_that_are_no_plain_integers_stay_text_and_the_files_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "0010" is a code whose zeros matter, not the number 10: the ids are text in every
    # file, and a warning names the files whose formats decided it
    pl.DataFrame({"user": [1, 1], "item": [2, 10], "score": [0.5, 0.5]}).write_parquet(
        tmp_path / "recs.parquet"
    )
    (tmp_path / "truth.csv").write_text("user,item\n1,0010\n1,10\n")
    files = [str(tmp_path / "recs.parquet"), str(tmp_path / "truth.csv")]
    assert main(["evaluate", *files, "-m", "mrr", "--score", "score", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "mrr\n0.5\n"  # "2" before "10" as text
    assert (
        f"rankmetrics evaluate: warning: {files[0]} gives column 'item' as numbers, {files[1]} "
        "as text, e.g. '0010': its ids are compared as text in every file"
    ) in captured.err


def test_per_user_and_means_come_from_one_pass(tmp_path: Path) -> None:
    # --per-user computes the per-user parts once and aggregates them for the means:
    # both files must equal evaluate(per_user=True) and evaluate(), for every kind
    # of aggregation (mean, pooled, geometric mean, a group value, users left out)
    recs = pl.DataFrame({
        "model": ["a"] * 5 + ["b"] * 5,
        "user": ["1", "1", "2", "2", "3"] * 2,
        "item": ["x", "y", "x", "z", "w", "y", "x", "z", "x", "y"],
        "rank": [1, 2, 1, 2, 1] * 2,
    })  # fmt: skip
    truth = pl.DataFrame({"user": ["1", "2", "2", "4"], "item": ["y", "z", "w", "x"]})
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    metrics = ["map@2", "pooled_recall@2", "gm_map", "personalization@2", "mean_rank", "ndcg@1,2"]
    per_user, means = tmp_path / "per_user.parquet", tmp_path / "means.parquet"
    argv = ["evaluate", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet")]
    assert main([*argv, "-m", *metrics, "--by", "model", "--per-user", str(per_user),
                 "--output", str(means)]) == 0  # fmt: skip
    options = {"by": "model"}
    expected_per_user = prm.evaluate(recs, truth, metrics, per_user=True, **options)
    assert_frame_equal(pl.read_parquet(per_user), expected_per_user)
    assert_frame_equal(pl.read_parquet(means), prm.evaluate(recs, truth, metrics, **options))


# ---------------------------------------------------------------- grades left unused


@pytest.mark.parametrize(
    ("truth", "options", "warning"),
    [
        (
            "user,item,rel\n1,b,3\n2,a,1\n2,c,0\n",
            [],
            "rankmetrics evaluate: warning: {truth} has a column 'rel' (also 'relevance', "
            "'grade', 'label', 'score' are recognised names) but --relevance was not given: "
            "every truth row counts as relevant with grade 1; pass --relevance rel to use the "
            "grades\n",
        ),
        (
            "user,item,fold,clicks,note\n1,b,1,3,x\n2,a,1,1,y\n",
            ["--by", "fold"],
            "rankmetrics evaluate: warning: {truth} has a numeric column 'clicks' besides the "
            "ids but --relevance was not given: every truth row counts as relevant with grade "
            "1; pass --relevance clicks to use the grades\n",
        ),
        ("user,item,rel\n1,b,3\n2,a,1\n", ["--relevance", "rel"], ""),
        # no column that could be grades: text, or the by column
        ("user,item,fold,note\n1,b,1,x\n2,a,1,y\n", ["--by", "fold"], ""),
    ],
)
def test_a_truth_column_of_grades_without_relevance_warns_once(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    truth: str,
    options: list[str],
    warning: str,
) -> None:
    recs = "user,item,fold,rank\n1,a,1,1\n1,b,1,2\n2,a,1,1\n"
    (tmp_path / "recs.csv").write_text(recs)
    (tmp_path / "truth.csv").write_text(truth)
    argv = ["evaluate", str(tmp_path / "recs.csv"), str(tmp_path / "truth.csv")]
    assert main([*argv, "-m", "ndcg@10", "map", "--format", "csv", *options]) == 0
    assert capsys.readouterr().err == warning.format(truth=tmp_path / "truth.csv")


def test_the_python_api_never_guesses_grades() -> None:
    # the caller names the columns it means: a 'rel' column left out is no warning
    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1], "item": ["b"], "rel": [3]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert prm.evaluate(recs, truth, ["ndcg@10"])["ndcg@10"].to_list() == [
            pytest.approx(1 / math.log2(3))
        ]


def test_demo_offers_no_more_users_than_fit_in_memory(capsys: pytest.CaptureFixture[str]) -> None:
    # five million users took more than a 24 GB machine has: the largest size offered fits
    assert main(["demo", "--users", "5000000"]) == 2
    err = capsys.readouterr().err
    assert "--users: must be between 1 and 1,000,000 (a million users take about 6.5 GB" in err
    assert "got 5,000,000" in err
