"""Files read by their path (Polars' reader on the file, never its bytes) read like bytes.

The byte readers are the reference: every line ending, blank lines, byte-order
marks, quoting, odd spacing and every refusal must come out the same when the
same content is given as a path (the lean path) as when given as bytes.
"""

from __future__ import annotations

import functools
import gzip
import random
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_rankmetrics import _kaggle_csv, _textfiles, trec
from polars_rankmetrics._textfiles import direct_path
from polars_rankmetrics.kaggle import read_solution, read_submission
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run

ENDINGS = {"lf": b"\n", "crlf": b"\r\n", "cr": b"\r"}

RUN = [b"q2 Q0 d1 1 0.5 r", b"", b"q1 Q0 d2 1 0.9 r", b"q1 Q0 d3 2 0.9 r extra text",
       b"q1 Q0 d1 3 0.1 r"]  # fmt: skip
QRELS = [b"q1 0 d1 1", b"q1 0 d2 0", b"", b"q2 0 d1 -2", b"q2 0 d9#3" + b"7" * 30 + b" 12"]
WIDE = [b"id,items", b'"0012","0002 0001"', b"u,", b'"a,b",x', b"  u2 ,A  B  ", b"u3,x y x"]


def _file(tmp_path: Path, lines: list[bytes], ending: bytes, *, bom: bool = False) -> Path:
    path = tmp_path / "file.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + ending.join(lines) + ending)
    return path


Reader = Callable[..., pl.DataFrame]


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize(
    ("reader", "lines", "kwargs"),
    [
        (read_trec_run, RUN, {}),
        (read_trec_run, RUN, {"ranks": "file"}),
        (read_trec_qrels, QRELS, {}),
        (read_submission, WIDE, {}),
        (read_solution, WIDE, {}),
    ],
)
def test_a_path_reads_like_its_bytes(
    reader: Reader,
    lines: list[bytes],
    kwargs: dict[str, str],
    ending: str,
    bom: bool,
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, lines, ENDINGS[ending], bom=bom)
    expected = reader(b"\n".join(lines) + b"\n", **kwargs)
    assert_frame_equal(reader(path, **kwargs), expected)
    # lone CRs and gzip take the byte path; plain files the lean one
    assert (direct_path(path) is None) == (ending == "cr")
    (tmp_path / "file.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert_frame_equal(reader(tmp_path / "file.gz", **kwargs), expected)


def test_huge_ids_and_values_stay_text(tmp_path: Path) -> None:
    qrels = read_trec_qrels(_file(tmp_path, [b"9" * 40 + b" 0 " + b"1" * 30 + b" 1"], b"\n"))
    assert qrels.rows() == [("9" * 40, "1" * 30, 1)]


@pytest.mark.parametrize(
    ("reader", "lines", "kwargs", "message"),
    [
        (read_trec_run, [b"q1 Q0 d1 1 0.5 r", b"q1 Q0 d2 2 0.4"], {}, r"line 2: expected at least 6"),
        (read_trec_run, [b"q1 Q0 d1 1 0.5 r", b"q1  d2 2 0.4 r"], {}, r"line 2: expected at least 6"),
        (read_trec_run, [b"q1 Q0 d1 1 x r"], {}, r"line 1: the score \(field 5\) is not a number"),
        (read_trec_run, [b"q1 Q0 d1 1 nan r"], {}, r"line 1: the score \(field 5\) is not a number"),
        (read_trec_run, [b"q1 Q0 d1 1 0.5 r", b"", b"q1 Q0 d1 2 0.4 r"], {},
         r"line 3: the same docno for this qid again \(first on line 1\)"),
        (read_trec_run, [b"q1 Q0 d1 0 0.5 r"], {"ranks": "file"},
         r"line 1: the rank \(field 4\) is not a positive integer of at most 64 bits"),
        (read_trec_run, [b"q1 Q0 d1 1 0.5 r", b"q1 Q0 d2 1 0.4 r"], {"ranks": "file"},
         r"line 2: the same rank again"),
        (read_trec_qrels, [b"q1 0 d1 1", b"q1 0 d2 1 5"], {}, r"line 2: expected 4 whitespace"),
        (read_trec_qrels, [b"q1 0 d1 1.5"], {}, r"line 1: the relevance \(field 4\) is not an int"),
        (read_trec_qrels, [b"q1 0 d1 1", b"q1 0 d1 0"], {}, r"line 2: the same docno for this qid"),
        (read_submission, [b"id,items", b'u1,"A B'], {}, r"line 2: malformed CSV quoting"),
        (read_submission, [b"id,items", b'u1,"A', b'B"'], {}, r"line 2: a quoted field runs over"),
        (read_submission, [b"id,items", b"u1,A", b"u2,A,B"], {}, r"line 3: expected 2 comma"),
        (read_submission, [b"id,items", b"u1,A B A"], {"duplicates": "error"},
         r"line 2: submission item 'A' listed twice"),
        (read_submission, [b"id,items", b" ,A"], {}, r"line 2: empty submission id"),
    ],
)  # fmt: skip
def test_a_bad_file_given_by_path_names_the_file_and_line(
    reader: Reader, lines: list[bytes], kwargs: dict[str, str], message: str, tmp_path: Path
) -> None:
    path = _file(tmp_path, lines, b"\n")
    with pytest.raises(ValueError, match=message) as raised:
        reader(path, **kwargs)
    assert str(raised.value).startswith(str(path))
    with pytest.raises(ValueError, match=message):
        reader(b"\n".join(lines) + b"\n", **kwargs)


def test_duplicates_first_from_a_path(tmp_path: Path) -> None:
    run = [b"q1 Q0 d1 1 0.5 r", b"q1 Q0 d1 2 0.9 r", b"q1 Q0 d2 3 0.4 r"]
    qrels = [b"q1 0 d1 1", b"q1 0 d1 0", b"q1 0 d2 2"]
    for reader, lines in ((read_trec_run, run), (read_trec_qrels, qrels)):
        got = reader(_file(tmp_path, lines, b"\r\n"), duplicates="first")
        assert_frame_equal(got, reader(b"\n".join(lines), duplicates="first"))
    assert read_trec_qrels(_file(tmp_path, qrels, b"\n"), duplicates="first").rows() == [
        ("q1", "d1", 1),
        ("q1", "d2", 2),
    ]


def test_wide_cells_listed_piece_by_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [b"id,items"] + [f"u{n},{n} {n + 1} {n}".encode() for n in range(7)] + [b"v,"]
    path = _file(tmp_path, lines, b"\n")
    whole = read_submission(path)
    monkeypatch.setattr(_kaggle_csv, "_pieces", functools.partial(_kaggle_csv._pieces, rows=2))
    assert_frame_equal(read_submission(path), whole)
    assert whole.height == 14
    # the first repeat is named, and the repeats of every piece are counted
    with pytest.raises(
        ValueError, match=r"line 2: submission item '0' listed twice .* \(6 more line\(s\)"
    ):
        read_submission(path, duplicates="error")


# Runs and qrels by path are parsed a piece of whole lines at a time (``PIECE`` bytes);
# with tiny pieces every line boundary is a piece boundary somewhere.
RUN_VARIANTS = {
    # queries out of qid order, each in trec_eval's order: put in order by slices
    "queries out of order": [b"q2 Q0 a 1 3 r", b"q2 Q0 b 2 2 r", b"q10 Q0 c 1 5 r",
                             b"q1 Q0 d 1 9 r", b"q1 Q0 e 2 1 r"],
    # equal scores in docno-descending order need no sort; ascending ones are sorted
    "ties in trec_eval's order": [b"q1 Q0 d9 1 0.5 r", b"q1 Q0 d3 2 0.5 r", b"q1 Q0 d1 3 0.2 r"],
    "ties against it": [b"q1 Q0 d1 1 0.5 r", b"q1 Q0 d3 2 0.5 r", b"q1 Q0 d9 3 0.5 r"],
    "score rising": [b"q1 Q0 d1 1 0.1 r", b"q1 Q0 d2 2 0.9 r", b"q2 Q0 d1 1 0.3 r"],
    "query split in two": [b"q1 Q0 d1 1 0.9 r", b"q2 Q0 d1 1 0.3 r", b"q1 Q0 d2 2 0.1 r"],
    "tags vary": [b"q1 Q0 d1 1 0.9 a", b"q1 Q0 d2 2 0.8 a", b"q1 Q0 d3 3 0.7 b",
                  b"q2 Q0 d1 1 0.9 b", b"q3 Q0 d2 1 0.9 a"],
    "blank lines": [b"", b"q1 Q0 d1 1 0.9 r", b"", b"", b"q2 Q0 d1 1 0.3 r", b""],
    # tabs, runs of spaces and trailing spaces take the general path
    "tabs": [b"q1\tQ0\td1\t1\t0.9\tr", b"q1 Q0 d2 2 0.8 r"],
    "runs of spaces": [b"q1  Q0 d1 1 0.9 r", b"q1 Q0 d2 2 0.8 r"],
    "trailing space": [b"q1 Q0 d1 1 0.9 r ", b"q1 Q0 d2 2 0.8 r"],
    "no-break space": ["q1 Q0\u00a0d1 1 0.9 r".encode(), b"q1 Q0 d2 2 0.8 r"],
}  # fmt: skip


@pytest.mark.parametrize("piece", [16, 1 << 20])
@pytest.mark.parametrize("variant", sorted(RUN_VARIANTS))
def test_run_pieces_read_like_bytes(
    variant: str, piece: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_textfiles, "PIECE", piece)
    lines = RUN_VARIANTS[variant]
    path = _file(tmp_path, lines, b"\n")
    for kwargs in ({}, {"ranks": "file"}):
        got, expected = read_trec_run(path, **kwargs), read_trec_run(path.read_bytes(), **kwargs)
        assert_frame_equal(got, expected)
        assert got["rank"].dtype == pl.UInt32
    assert (direct_path(path) is None) is False


def test_run_pieces_on_a_random_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # many queries in numeric (not string) order, rank order, some ties: slices and ties
    lines = [
        f"q{q} Q0 d{(q * 37 + r * 11) % 50} {r + 1} {10 - r // 2} run".encode()
        for q in range(30)
        for r in range(8)
    ]
    path = _file(tmp_path, lines, b"\n")
    monkeypatch.setattr(_textfiles, "PIECE", 64)
    got = read_trec_run(path, duplicates="first")
    assert_frame_equal(got, read_trec_run(path.read_bytes(), duplicates="first"))
    assert got["user"].is_sorted()
    # more queries out of place than slices allowed: gathered instead, the same frame
    monkeypatch.setattr(trec, "_MAX_SLICES", 1)
    assert_frame_equal(read_trec_run(path, duplicates="first"), got)


def test_a_tab_in_a_qrels_line_is_a_separator(tmp_path: Path) -> None:
    # "q1<TAB>0 d1 1 5" is five fields: refused, never read as qid "q1<TAB>0"
    path = _file(tmp_path, [b"q1 0 d0 1", b"q1\t0 d1 1 5"], b"\n")
    for source in (path, path.read_bytes()):
        with pytest.raises(ValueError, match=r"line 2: expected 4 whitespace-separated"):
            read_trec_qrels(source)


@pytest.mark.parametrize("content", [b"", b"\n", b"\n\n\n", b"\xef\xbb\xbf"])
def test_empty_and_blank_files_by_path(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    assert_frame_equal(read_trec_run(path), read_trec_run(content))
    assert read_trec_run(path).height == 0
    assert_frame_equal(read_trec_qrels(path), read_trec_qrels(content))


def test_qrels_pieces_read_like_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"q{n % 7} 0 d{n % 11} {n % 3 - 1}".encode() for n in range(90)] + [b""]
    path = _file(tmp_path, lines, b"\r\n", bom=True)
    monkeypatch.setattr(_textfiles, "PIECE", 40)
    expected = read_trec_qrels(b"\n".join(lines), duplicates="first")
    assert_frame_equal(read_trec_qrels(path, duplicates="first"), expected)
    with pytest.raises(ValueError, match=r"line 78: the same docno for this qid again"):
        read_trec_qrels(path)


# Kaggle CSV files by path are parsed a piece of whole lines at a time (``_kaggle_csv.PIECE``
# bytes, only the columns read kept); a piece the whole-file reader must judge (a quote, a
# ragged line, a bad header, bytes not UTF-8) sends the file to it.

LONG = [b"customer_id,prediction,score", b"0001,0706,1", b"0001, 0372 ,2", b"0001,0706,3",
        b"0002,0999,4", b"0003,0001,5", b"0003,0100,6"]  # fmt: skip


def _outcome(read: Callable[[], pl.DataFrame], path: Path) -> pl.DataFrame | str:
    try:
        return read()
    except ValueError as error:
        # bytes are named by what they are (<submission bytes>), a file by its path
        return re.sub(r"<\w+ bytes>", "<bytes>", str(error)).replace(str(path), "<bytes>")


def _same(reader: Reader, path: Path, **kwargs: object) -> None:
    data = path.read_bytes()
    by_path = _outcome(lambda: reader(path, **kwargs), path)
    by_bytes = _outcome(lambda: reader(data, **kwargs), path)
    if isinstance(by_bytes, str):
        assert by_path == by_bytes
    else:
        assert isinstance(by_path, pl.DataFrame)
        assert_frame_equal(by_path, by_bytes)


@pytest.mark.parametrize(("ending", "bom"), [("lf", False), ("crlf", True)])
def test_long_pieces_at_every_boundary(
    ending: str, bom: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, LONG, ENDINGS[ending], bom=bom)
    whole = read_submission(path.read_bytes(), layout="long")
    # the repeat of 0706 keeps its slot: 0372 is 2nd, and each id's ranks start at 1
    assert whole.rows() == [("0001", "0706", 1), ("0001", "0372", 2), ("0002", "0999", 1),
                            ("0003", "0001", 1), ("0003", "0100", 2)]  # fmt: skip
    graded = read_solution(path.read_bytes(), relevance="score")
    for piece in range(1, path.stat().st_size + 1):
        monkeypatch.setattr(_kaggle_csv, "PIECE", piece)
        assert_frame_equal(read_submission(path, layout="long"), whole)
        if piece % 8 == 1:
            assert _kaggle_csv._piece_cells(path, "submission", (None, None, None, ())) is not None
            assert_frame_equal(read_solution(path, relevance="score"), graded)


@pytest.mark.parametrize(
    ("name", "lines", "kwargs"),
    [
        ("quoted", [*LONG[:3], b'"0001","07,06",3'], {}),
        ("blank lines", [*LONG[:3], b"", *LONG[3:], b""], {}),
        ("a short line", [*LONG[:3], b"0001", *LONG[3:]], {}),
        ("a long line", [*LONG[:3], b"0001,1,2,3", *LONG[3:]], {}),
        ("header only", LONG[:1], {}),
        ("an empty item", [*LONG, b"0004,,7"], {"layout": "long"}),
        ("ids not together", [*LONG, b"0001,0555,7"], {}),
        ("a repeat", LONG, {"duplicates": "error"}),
        ("a bad grade", [*LONG, b"0004,0001,x"], {"relevance": "score"}),
        ("no such column", LONG, {"item": "predictions"}),
        ("an empty id", [*LONG, b",0001,1"], {}),
        ("not UTF-8", [*LONG, b"0004,\xff,1"], {}),
        ("wide", [b"id,items", b"u1,a b a", b"u2,", b"u3,  c\td "], {}),
        ("wide repeat", [b"id,items", b"u1,a b a", b"u2,b"], {"duplicates": "error"}),
    ],
)
@pytest.mark.parametrize("piece", [1, 9, 1 << 20])
def test_long_pieces_read_like_bytes(
    name: str,
    lines: list[bytes],
    kwargs: dict[str, object],
    piece: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_kaggle_csv, "PIECE", piece)
    path = _file(tmp_path, lines, b"\n")
    reader = read_solution if "relevance" in kwargs else read_submission
    _same(reader, path, **kwargs)


def test_long_piece_errors_name_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_kaggle_csv, "PIECE", 5)
    path = _file(tmp_path, [*LONG, b"0004,0001,x"], b"\r\n")
    with pytest.raises(ValueError, match=r"file\.txt, line 8: column 'score' is not a number"):
        read_solution(path, relevance="score")
    with pytest.raises(ValueError, match=r"line 4: .*listed again for this id \(first on line 2\)"):
        read_submission(path, layout="long", duplicates="error")
    # a quote anywhere sends the file to the whole-file reader, which reads the quoted comma
    quoted = _file(tmp_path, [*LONG, b'0004,"a,b",1'], b"\n")
    assert _kaggle_csv._piece_cells(quoted, "submission", (None, None, None, ())) is None
    assert read_submission(quoted, layout="long")["item"][-1] == "a,b"


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\xef\xbb\xbf", b"id,p", b"id,p\n"])
def test_empty_and_header_only_kaggle_files(
    content: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_kaggle_csv, "PIECE", 2)
    path = tmp_path / "file.csv"
    path.write_bytes(content)
    _same(read_submission, path)


def test_random_long_files_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ids together or not, repeats, spaces around values, empty grades, CRLF: path == bytes
    rng = random.Random(17)
    for _ in range(25):
        lines = [b"id,item,grade"]
        for _ in range(rng.randrange(0, 30)):
            user = rng.choice([b"u1", b"u2", b" u3", b"0004"])
            item = rng.choice([b"a", b"b", b"c ", b"d", b"007"])
            lines.append(user + b"," + item + b"," + rng.choice([b"1", b"0", b"2.5", b""]))
        path = _file(tmp_path, lines, rng.choice([b"\n", b"\r\n"]), bom=rng.random() < 0.3)
        monkeypatch.setattr(_kaggle_csv, "PIECE", rng.randrange(1, 40))
        for duplicates in ("first", "error"):
            _same(read_submission, path, layout="long", duplicates=duplicates)
        _same(read_solution, path, layout="long", relevance="grade")
