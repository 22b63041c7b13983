"""OTTO scored on item lists, and one evaluation for the score and the per-id table.

The reference is a plain-Python reading of OTTO's published evaluator: split
each cell on whitespace, cut the predictions at 20 (a repeat keeps its slot),
count the distinct truth items found, and pool sum(hits) / sum(min(20, |truth|))
over the sessions of each type.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics.kaggle as kaggle
from polars_rankmetrics import cli
from polars_rankmetrics.kaggle import PRESETS, SubmissionWarning, score_submission

TYPES = ("clicks", "carts", "orders")


def _reference(sub: dict[str, list[str]], sol: dict[str, list[str]]) -> tuple[float, dict]:
    """OTTO's evaluator in plain Python: per id (hits, min(20, |truth|)), then the score."""
    per_id = {}
    for user, truth in sol.items():
        if not truth:
            continue
        top = sub.get(user, [])[:20]
        per_id[user] = (len(set(top) & set(truth)), min(20, len(set(truth))))
    score = 0.0
    for kind, weight in PRESETS["otto"].weights:
        rows = [v for u, v in per_id.items() if u.endswith("_" + kind)]
        den = sum(d for _, d in rows)
        score += weight * (sum(h for h, _ in rows) / den if den else 0.0)
    return score, per_id


def _csv(rows: dict[str, str], ending: bytes = b"\n") -> bytes:
    lines = [b"session_type,labels"] + [f"{u},{c}".encode() for u, c in rows.items()]
    return ending.join(lines) + ending


items_st = st.lists(st.sampled_from(["1", "2", "3", "10", "01", "007", "7", "9" * 30]), max_size=25)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions=st.lists(st.tuples(items_st, items_st), min_size=1, max_size=6),
    spacing=st.sampled_from([" ", "  ", " \t"]),
    ending=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    pad=st.booleans(),
)
def test_otto_matches_a_plain_python_evaluator(
    sessions: list[tuple[list[str], list[str]]], spacing: str, ending: bytes, pad: bool
) -> None:
    sub, sol = {}, {}
    for n, (predicted, truth) in enumerate(sessions):
        user = f"{n}_{TYPES[n % 3]}"
        sub[user], sol[user] = predicted, truth
    if not any(sol.values()):
        sol["99_orders"] = ["1"]
    # trailing spaces and odd spacing in the cells; ids compare as text ("01" is not "1")
    padded = " " if pad else ""
    sub_text = {u: padded + spacing.join(v) + padded for u, v in sub.items()}
    sol_text = {u: " ".join(v) for u, v in sol.items()}
    expected, per_id = _reference(sub, sol)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score, table = kaggle._score(
            _csv(sub_text, ending), _csv(sol_text), None, preset="otto", unknown_ids="warn"
        )
    said = [str(w.message) for w in caught]
    assert all(w.category is SubmissionWarning for w in caught)
    assert any("have no row in the submission" in m for m in said) == ("99_orders" in sol)
    repeats = any(len(set(v[:20])) < len(v[:20]) for v in sub.values())
    assert any("more than once" in m for m in said) == repeats
    assert score == pytest.approx(expected, abs=1e-15)
    got = {u: (h, d) for u, _, h, d, _ in table.iter_rows()}
    assert got == per_id
    assert table["user"].to_list() == sorted(per_id)


def test_duplicates_error_names_the_line_and_item() -> None:
    sub = _csv({"1_clicks": "5 6 5", "2_clicks": "1 1"})
    with pytest.raises(
        ValueError,
        match=r"<submission bytes>, line 2: submission item '5' listed twice for this id: "
        r"'1_clicks,5 6 5' \(1 more line",
    ):
        score_submission(sub, sub, preset="otto", duplicates="error")


def test_quoted_cells_empty_predictions_and_huge_ids() -> None:
    huge = "123456789012345678901234567890"
    sub = b'session_type,labels\n"1_clicks","' + huge.encode() + b' 7"\n2_orders,\n'
    sol = _csv({"1_clicks": f"{huge} 007", "2_orders": "4"})
    score, table = kaggle._score(sub, sol, None, preset="otto", unknown_ids="ignore")
    # clicks: 1 of 2 (007 is not 7); orders: 0 of 1
    assert table.rows() == [("1_clicks", "clicks", 1, 2, 0.5), ("2_orders", "orders", 0, 1, 0.0)]
    assert score == pytest.approx(0.10 * 0.5)


def test_long_solution_scores_like_the_wide_one() -> None:
    sub = _csv({"1_clicks": "5 6", "1_carts": "8 9 10"})
    wide = _csv({"1_clicks": "6", "1_carts": "10 11 10"})
    long = b"session_type,labels\n1_clicks,6\n1_carts,10\n1_carts,11\n1_carts,10\n"
    from_wide = kaggle._score(sub, wide, None, preset="otto")
    from_long = kaggle._score(sub, long, None, preset="otto", solution_layout="long")
    assert from_long[0] == from_wide[0] == pytest.approx(0.10 * 1 + 0.30 * 1 / 2)
    assert from_long[1].equals(from_wide[1])


def test_unknown_submission_ids_are_ignored_and_warned() -> None:
    sub = _csv({"1_clicks": "5", "8_carts": "5", "9_carts": "5"})
    sol = _csv({"1_clicks": "5"})
    with pytest.warns(SubmissionWarning, match=r"2 id\(s\) are not in the solution .*'8_carts'"):
        assert score_submission(sub, sol, preset="otto") == pytest.approx(0.10)
    with pytest.raises(ValueError, match=r"unknown_ids='error'"):
        score_submission(sub, sol, preset="otto", unknown_ids="error")


def test_no_shared_id_warns_about_the_overlap() -> None:
    sub = _csv({f"{n}_clicks": "5" for n in range(20)})
    sol = _csv({"100_clicks": "5"})
    with pytest.warns(SubmissionWarning) as caught:
        assert score_submission(sub, sol, preset="otto") == 0.0
    assert any("share few ids: 0 of 20" in str(w.message) for w in caught)


# ---------------------------------------------------------------- JSONL labels


def _jsonl(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_jsonl_whole_floats_are_integers_and_fractions_are_refused() -> None:
    sub = _csv({"1_clicks": "5", "1_carts": "8 9", "2_orders": "3"})
    ints = _jsonl({"session": 1, "labels": {"clicks": 5, "carts": [9]}},
                  {"session": 2, "labels": {"orders": [3, 4]}})  # fmt: skip
    floats = _jsonl({"session": 1.0, "labels": {"clicks": 5.0, "carts": [9.0]}},
                    {"session": 2.0, "labels": {"orders": [3.0, 4.0]}})  # fmt: skip
    expected = 0.10 + 0.30 + 0.60 * 0.5
    assert score_submission(sub, ints, preset="otto") == pytest.approx(expected)
    assert score_submission(sub, floats, preset="otto") == pytest.approx(expected)
    bad = _jsonl({"session": 1, "labels": {"carts": [9.5, 2.0, 0.25]}})
    with pytest.raises(
        ValueError,
        match=r"<solution bytes>: a 'carts' label holds fractional numbers \(2 value\(s\), e.g. 9.5",
    ):
        score_submission(sub, bad, preset="otto")


def test_jsonl_session_on_two_lines_unites_its_labels(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(_jsonl({"session": 1, "labels": {"carts": [9]}},
                            {"session": 1, "labels": {"carts": [8]}}))  # fmt: skip
    sub = _csv({"1_carts": "8 9"})
    _, table = kaggle._score(sub, path, None, preset="otto")
    assert table.rows() == [("1_carts", "carts", 2, 2, 1.0)]


def test_jsonl_without_a_session_names_the_line() -> None:
    bad = _jsonl({"session": 1, "labels": {"carts": [9]}}, {"labels": {"carts": [8]}})
    with pytest.raises(ValueError, match=r"<solution bytes>, line 2: no 'session'"):
        score_submission(_csv({"1_carts": "9"}), bad, preset="otto")


# ---------------------------------------------------------------- one evaluation


def test_score_and_per_user_table_come_from_one_evaluation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    evaluate = kaggle.evaluate

    def counted(*args: object, **kwargs: object) -> pl.DataFrame:
        calls.append(1)
        return evaluate(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(kaggle, "evaluate", counted)
    (tmp_path / "sub.csv").write_bytes(b"id,items\na,X Y\nb,Y\nc,Z\n")
    (tmp_path / "sol.csv").write_bytes(b"id,items\na,Y\nb,Q\nc,Z W\n")
    out = tmp_path / "per_user.csv"
    argv = ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--metric", "map@12",
            "--per-user", str(out)]  # fmt: skip
    assert cli.main(argv) == 0
    assert len(calls) == 1
    table = pl.read_csv(out)
    # a: 1/2; b: 0; c: 1/2 (Z first of two relevant)
    assert table.rows() == [("a", 0.5), ("b", 0.0), ("c", 0.5)]
    assert capsys.readouterr().out == f"{table['map@12'].mean():.6f}\n"
    assert score_submission(tmp_path / "sub.csv", tmp_path / "sol.csv", "map@12") == (
        table["map@12"].mean()
    )
