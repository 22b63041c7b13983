"""The overlap diagnostic shared by the command line and the API (``_pipeline.overlap.key_overlap``)."""

from __future__ import annotations

import polars as pl
import pytest

from polars_rankmetrics import cli
from polars_rankmetrics._pipeline.overlap import key_overlap


@pytest.mark.parametrize("lazy", [False, True])
def test_counts_and_examples(lazy: bool) -> None:
    left = pl.DataFrame({"user": ["1", "2", "3", "3"], "item": ["a", "b", "c", "d"]})
    right = pl.DataFrame({"user": ["2", "3", "4"], "item": ["x", "y", "z"]})
    if lazy:
        left, right = left.lazy(), right.lazy()  # type: ignore[assignment]
    found = key_overlap(left, right, ["user", "item"])
    user, item = found.columns
    assert (user.n_left, user.n_right, user.n_matched) == (3, 3, 2)
    assert (user.left_only_example, user.right_only_example) == ("1", "4")
    assert (item.n_left, item.n_right, item.n_matched) == (4, 3, 0)
    assert found.poor  # no item matches
    assert "0 of 4 item id(s) of recs and of 3 of truth match" in found.message


def test_good_overlap_is_not_poor() -> None:
    frame = pl.DataFrame({"user": [1, 2, 3]})
    found = key_overlap(frame, frame, "user")
    assert not found.poor
    assert found.columns[0].share == 1.0


def test_dtype_mismatch_is_compared_as_text() -> None:
    found = key_overlap(pl.DataFrame({"user": [1, 2]}), pl.DataFrame({"user": ["1", "2"]}), "user")
    assert found.columns[0].n_matched == 2


@pytest.mark.parametrize(
    ("left", "right", "hint"),
    [(["123", "7"], ["00123", "007"], True), (["123"], ["456"], False), (["0"], ["000"], True)],
)
def test_leading_zero_hint(left: list[str], right: list[str], hint: bool) -> None:
    found = key_overlap(pl.DataFrame({"user": left}), pl.DataFrame({"user": right}), "user")
    assert found.poor
    assert ("without leading zeros" in found.message) == hint


def test_every_command_module_has_the_two_functions() -> None:
    # adding a command is one module with add() and run(), plus one entry in COMMANDS
    names = set()
    for module in cli.COMMANDS:
        assert callable(module.add)
        assert callable(module.run)
        names.add(module.__name__.rsplit(".", 1)[1])
    assert names == {"demo", "evaluate", "kaggle", "trec", "compare", "fuse", "gate"}
    assert set(cli.build_parser()._subparsers._group_actions[0].choices) == names  # type: ignore[union-attr]
