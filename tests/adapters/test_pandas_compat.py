"""pandas' own ``DataFrame.rank`` keeps working exactly as before the accessor.

``ORIGINAL`` is pandas' function as pandas defines it (on ``NDFrame``, which the
accessor never touches); ``test_pristine_pandas_defines_rank_on_ndframe``
checks in a fresh interpreter that it is what ``DataFrame.rank`` is before the
package is imported, and ``test_captured_before_import_matches_after`` compares
everything observable about ``df.rank`` captured before the import with the
same after it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import itertools
import pickle
import pydoc
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import numpy as np  # noqa: E402
from pandas.core.generic import NDFrame  # noqa: E402

import polars_rankmetrics  # noqa: E402, F401 - registers the accessor
from polars_rankmetrics import pandas as prm_pd  # noqa: E402
from tests._subprocess import assert_runs  # noqa: E402

ORIGINAL = NDFrame.__dict__["rank"]


@contextlib.contextmanager
def accessor_removed() -> Iterator[None]:
    """pandas exactly as without the package, for the duration of the block."""
    prm_pd.unregister()
    try:
        assert "rank" not in pd.DataFrame.__dict__
        yield
    finally:
        assert prm_pd.register()


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """The result of ``call``, or the type and message of what it raised."""
    try:
        return "ok", call()
    except Exception as exc:  # comparing failures is the point
        return "error", (type(exc), str(exc))


def assert_same_outcome(new: Callable[[], Any], old: Callable[[], Any]) -> None:
    got, expected = outcome(new), outcome(old)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] == expected[1]
    elif isinstance(expected[1], pd.DataFrame):
        assert type(got[1]) is type(expected[1])
        pd.testing.assert_frame_equal(got[1], expected[1], check_exact=True)
    else:
        pd.testing.assert_series_equal(got[1], expected[1], check_exact=True)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "f": [2.0, np.nan, 2.0, 1.0, 3.0, 2.0],
            "i": [5, 3, 3, 1, 5, 0],
            "s": ["b", None, "a", "b", "c", "a"],
            "t": pd.to_datetime(
                ["2024-01-02", None, "2024-01-01", "2024-01-02", None, "2024-01-01"]
            ),
            "c": pd.Categorical(
                ["lo", "hi", "lo", "mid", "hi", "lo"], ["lo", "mid", "hi"], ordered=True
            ),
            "g": ["x", "x", "y", "y", "y", "x"],
        },
        index=pd.Index([10, 11, 12, 13, 14, 15], name="row"),
    )


# --- the premise --------------------------------------------------------------------


def test_pristine_pandas_defines_rank_on_ndframe() -> None:
    assert_runs(
        """
        import sys
        import pandas as pd
        from pandas.core.generic import NDFrame
        assert "rank" not in pd.DataFrame.__dict__
        assert pd.DataFrame.rank is NDFrame.__dict__["rank"] is pd.Series.rank
        assert "polars_rankmetrics" not in sys.modules
        """
    )


def test_captured_before_import_matches_after() -> None:
    out = assert_runs(
        """
        import inspect, itertools, pickle, pydoc
        import numpy as np
        import pandas as pd

        df = pd.DataFrame({"a": [3.0, np.nan, 3.0, 1.0], "b": [1, 2, 2, 0], "s": list("badc")})
        combos = [
            dict(zip(("method", "ascending", "pct", "na_option", "axis", "numeric_only"), values))
            for values in itertools.product(
                ("average", "min", "max", "first", "dense"), (True, False), (False, True),
                ("keep", "top", "bottom"), (0, "columns"), (False, True),
            )
        ]

        def snapshot():
            results = []
            for kwargs in combos:
                try:
                    results.append(df.rank(**kwargs))
                except Exception as exc:
                    results.append((type(exc), str(exc)))
            return {
                "class": pd.DataFrame.rank,
                "series": pd.Series.rank,
                "results": results,
                "signature": inspect.signature(df.rank),
                "argspec": inspect.getfullargspec(df.rank),
                "doc": df.rank.__doc__,
                "help": pydoc.render_doc(df.rank),
                "class_help": pydoc.render_doc(pd.DataFrame.rank),
                "repr": repr(df.rank),
                "is_method": inspect.ismethod(df.rank),
                "transform": df.transform("rank", method="min"),
                "agg": df.agg("rank", numeric_only=True),
                "apply": df[["a", "b"]].apply(pd.DataFrame.rank),
                "groupby": df.groupby("s")[["a", "b"]].rank(),
                "pickled": pickle.loads(pickle.dumps(df.rank))(),
            }

        before = snapshot()
        import polars_rankmetrics  # noqa: F401
        after = snapshot()
        assert hasattr(df.rank, "evaluate")
        for key, old in before.items():
            new = after[key]
            if key == "results":
                for kwargs, o, n in zip(combos, old, new):
                    if isinstance(o, tuple):
                        assert o == n, (kwargs, o, n)
                    else:
                        pd.testing.assert_frame_equal(n, o, check_exact=True)
            elif isinstance(old, pd.DataFrame):
                pd.testing.assert_frame_equal(new, old, check_exact=True)
            elif key in ("class", "series"):
                assert new is old, key
            else:
                assert new == old, (key, old, new)
        print(len(combos))
        """
    )
    assert out.strip() == "240"


# --- df.rank(...) is pandas' rank ------------------------------------------------------

GRID = list(
    itertools.product(
        ("average", "min", "max", "first", "dense"),
        (True, False),
        (False, True),
        ("keep", "top", "bottom"),
        (0, 1, "index", "columns"),
        (False, True),
    )
)


@pytest.mark.parametrize(("method", "ascending", "pct", "na_option", "axis", "numeric_only"), GRID)
def test_every_argument_combination(
    frame: pd.DataFrame,
    method: str,
    ascending: bool,
    pct: bool,
    na_option: str,
    axis: int | str,
    numeric_only: bool,
) -> None:
    kwargs = {
        "method": method, "ascending": ascending, "pct": pct, "na_option": na_option,
        "axis": axis, "numeric_only": numeric_only,
    }  # fmt: skip
    assert_same_outcome(lambda: frame.rank(**kwargs), lambda: ORIGINAL(frame, **kwargs))


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),
        ((1,), {}),
        ((0, "min"), {"ascending": False}),
        ((0, "dense", True, "top", False, True), {}),
        ((), {"method": "bogus"}),
        ((), {"na_option": "middle"}),
        ((), {"axis": 2}),
        ((), {"unknown": 1}),
        ((0, "min", True, "keep", True, False, "extra"), {}),
    ],
)
def test_positional_and_invalid_arguments(
    frame: pd.DataFrame, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    assert_same_outcome(
        lambda: frame.rank(*args, **kwargs), lambda: ORIGINAL(frame, *args, **kwargs)
    )


def test_does_not_touch_the_frame(frame: pd.DataFrame) -> None:
    before = frame.copy(deep=True)
    frame.rank(method="dense", pct=True)
    frame.rank.evaluate  # noqa: B018 - attribute access alone must do nothing
    pd.testing.assert_frame_equal(frame, before)


# --- what df.rank looks like ---------------------------------------------------------


def test_signature_and_argspec(frame: pd.DataFrame) -> None:
    bound = types.MethodType(ORIGINAL, frame)  # what df.rank was before the import
    assert inspect.signature(frame.rank) == inspect.signature(bound)
    assert str(inspect.signature(frame.rank)) == str(inspect.signature(bound))
    assert inspect.getfullargspec(frame.rank) == inspect.getfullargspec(bound)
    assert list(inspect.signature(frame.rank).parameters) == [
        "axis", "method", "numeric_only", "na_option", "ascending", "pct",
    ]  # fmt: skip


def test_docstring_and_help(frame: pd.DataFrame) -> None:
    bound = types.MethodType(ORIGINAL, frame)
    assert frame.rank.__doc__ == ORIGINAL.__doc__
    assert inspect.getdoc(frame.rank) == inspect.getdoc(bound)
    assert pydoc.render_doc(frame.rank) == pydoc.render_doc(bound)
    assert "Compute numerical data ranks" in pydoc.render_doc(frame.rank)


def test_looks_like_a_bound_method(frame: pd.DataFrame) -> None:
    bound = types.MethodType(ORIGINAL, frame)
    method = frame.rank
    assert inspect.ismethod(method)
    assert inspect.isroutine(method)
    assert callable(method)
    assert method.__self__ is frame
    assert method.__name__ == "rank"
    assert method.__qualname__ == ORIGINAL.__qualname__
    assert method.__module__ == ORIGINAL.__module__
    assert method.__defaults__ == ORIGINAL.__defaults__
    assert repr(method) == repr(bound)
    assert not inspect.iscoroutinefunction(method)


def test_bound_method_equality_hash_pickle_copy(frame: pd.DataFrame) -> None:
    other = frame.copy()
    assert frame.rank == frame.rank
    assert hash(frame.rank) == hash(frame.rank)
    assert frame.rank != other.rank
    restored = pickle.loads(pickle.dumps(frame.rank))
    pd.testing.assert_frame_equal(restored(), ORIGINAL(frame))
    pd.testing.assert_frame_equal(copy.copy(frame.rank)(), ORIGINAL(frame))
    pd.testing.assert_frame_equal(copy.deepcopy(frame).rank(pct=True), ORIGINAL(frame, pct=True))


def test_metric_methods_are_discoverable(frame: pd.DataFrame) -> None:
    assert {"evaluate", "positions", "relevance"} <= set(dir(frame.rank))
    with pytest.raises(AttributeError, match="did you mean 'evaluate'"):
        frame.rank.evalute  # noqa: B018
    with pytest.raises(AttributeError):
        frame.rank.__no_such_dunder__  # noqa: B018
    assert not hasattr(frame.rank, "__wrapped__")  # inspect.unwrap(df.rank) is df.rank, as before
    assert inspect.unwrap(frame.rank) == frame.rank


# --- class-level access and pandas machinery ------------------------------------------


def test_class_level_is_pandas_function(frame: pd.DataFrame) -> None:
    assert pd.DataFrame.rank is ORIGINAL
    assert pd.DataFrame.rank.__get__(frame) == types.MethodType(ORIGINAL, frame)
    assert pydoc.render_doc(pd.DataFrame.rank) == pydoc.render_doc(ORIGINAL)
    pd.testing.assert_frame_equal(
        pd.DataFrame.rank(frame, method="min"), ORIGINAL(frame, method="min")
    )
    numeric = frame[["f", "i"]]
    pd.testing.assert_frame_equal(numeric.apply(pd.DataFrame.rank), numeric.apply(ORIGINAL))
    pd.testing.assert_frame_equal(
        numeric.pipe(pd.DataFrame.rank, pct=True), ORIGINAL(numeric, pct=True)
    )
    dense = functools.partial(pd.DataFrame.rank, method="dense")
    pd.testing.assert_frame_equal(dense(frame), ORIGINAL(frame, method="dense"))


def test_series_rank_untouched(frame: pd.DataFrame) -> None:
    series = frame["f"]
    assert pd.Series.rank is ORIGINAL
    assert "rank" not in pd.Series.__dict__
    assert series.rank.__func__ is ORIGINAL
    assert not hasattr(series.rank, "evaluate")


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda df: df.transform("rank"), id="transform"),
        pytest.param(
            lambda df: df.transform("rank", method="min", ascending=False), id="transform-kwargs"
        ),
        pytest.param(lambda df: df[["f", "i"]].transform("rank", axis=1), id="transform-axis1"),
        pytest.param(lambda df: df.agg("rank", numeric_only=True), id="agg"),
        pytest.param(lambda df: df.apply("rank", pct=True), id="apply-str"),
        pytest.param(lambda df: df.groupby("g").rank(), id="groupby-rank"),
        pytest.param(
            lambda df: df.groupby("g")["f"].rank(method="dense"), id="groupby-series-rank"
        ),
        pytest.param(
            lambda df: df.groupby("g")[["f", "i"]].transform("rank"), id="groupby-transform"
        ),
        pytest.param(lambda df: df[["f", "i"]].rolling(3).rank(), id="rolling"),
        pytest.param(lambda df: df[["f", "i"]].expanding().rank(), id="expanding"),
        pytest.param(lambda df: df["f"].rank(pct=True), id="series"),
        pytest.param(lambda df: df.T.rank(axis=1, numeric_only=False), id="transposed"),
    ],
)
def test_pandas_machinery_unaffected(
    frame: pd.DataFrame, call: Callable[[pd.DataFrame], Any]
) -> None:
    with accessor_removed():
        expected = outcome(lambda: call(frame))
    got = outcome(lambda: call(frame))
    assert got[0] == expected[0]
    if got[0] == "error":
        assert got[1] == expected[1]
    elif isinstance(got[1], pd.DataFrame):
        pd.testing.assert_frame_equal(got[1], expected[1])
    else:
        pd.testing.assert_series_equal(got[1], expected[1])


def test_column_named_rank(frame: pd.DataFrame) -> None:
    with_column = frame.assign(rank=[3, 2, 1, 1, 2, 3])
    assert inspect.ismethod(with_column.rank)
    assert with_column["rank"].tolist() == [3, 2, 1, 1, 2, 3]
    pd.testing.assert_frame_equal(with_column.rank(), ORIGINAL(with_column))


# --- subclasses -----------------------------------------------------------------------


class SubFrame(pd.DataFrame):
    @property
    def _constructor(self) -> type[SubFrame]:
        return SubFrame


class OwnRank(pd.DataFrame):
    def rank(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        return "own"


class SuperRank(pd.DataFrame):
    def rank(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return super().rank(*args, **kwargs)


def test_subclasses(frame: pd.DataFrame) -> None:
    sub = SubFrame(frame)
    result = sub.rank(method="min")
    assert type(result) is SubFrame
    pd.testing.assert_frame_equal(result, ORIGINAL(sub, method="min"))
    assert SubFrame.rank is ORIGINAL
    assert pydoc.render_doc(sub.rank) == pydoc.render_doc(types.MethodType(ORIGINAL, sub))
    assert hasattr(sub.rank, "evaluate")
    assert OwnRank(frame).rank() == "own"
    pd.testing.assert_frame_equal(
        SuperRank(frame).rank(pct=True), ORIGINAL(SuperRank(frame), pct=True)
    )


# --- registration ---------------------------------------------------------------------


def test_register_is_idempotent_and_unregister_restores(frame: pd.DataFrame) -> None:
    descriptor = pd.DataFrame.__dict__["rank"]
    assert prm_pd.register() is True
    assert pd.DataFrame.__dict__["rank"] is descriptor
    with accessor_removed():
        assert pd.DataFrame.rank is ORIGINAL
        assert frame.rank.__func__ is ORIGINAL
        assert not hasattr(frame.rank, "evaluate")
        prm_pd.unregister()  # twice: a no-op
    assert hasattr(frame.rank, "evaluate")


def test_import_emits_no_warning_and_is_idempotent() -> None:
    assert_runs(
        """
        import importlib, warnings
        import pandas as pd
        import polars_rankmetrics
        descriptor = pd.DataFrame.__dict__["rank"]
        importlib.reload(polars_rankmetrics)
        importlib.reload(importlib.import_module("polars_rankmetrics.pandas"))
        assert pd.DataFrame.__dict__["rank"] is descriptor
        assert pd.DataFrame().rank.evaluate
        """
    )


def test_import_does_not_import_pandas_but_registers_when_pandas_comes() -> None:
    assert_runs(
        """
        import sys
        import polars_rankmetrics
        assert "pandas" not in sys.modules, "importing the package imported pandas"
        import pandas as pd
        assert pd.DataFrame({"user": [1]}).rank.evaluate
        assert pd.DataFrame.rank is pd.core.generic.NDFrame.rank
        # the one-shot hook left no trace
        assert not [f for f in sys.meta_path if "polars_rankmetrics" in type(f).__module__]
        assert "polars_rankmetrics" not in type(pd.__loader__).__module__
        assert pd.__spec__.loader is pd.__loader__
        """
    )


def test_importing_the_adapter_first_registers_once() -> None:
    # The adapter's own `import pandas` fires the hook while the adapter is half-imported.
    assert_runs(
        """
        import sys
        from polars_rankmetrics import pandas as prm_pd
        import pandas as pd
        assert pd.DataFrame().rank.relevance
        assert prm_pd.register() is True
        assert not [f for f in sys.meta_path if "polars_rankmetrics" in type(f).__module__]
        """
    )


def test_probing_for_pandas_does_not_disarm_the_hook() -> None:
    assert_runs(
        """
        import importlib.util, sys
        import polars_rankmetrics
        assert importlib.util.find_spec("pandas") is not None
        assert "pandas" not in sys.modules
        import pandas as pd
        assert pd.DataFrame().rank.positions
        """
    )


@pytest.mark.parametrize(
    "replace",
    [
        pytest.param("pd.DataFrame.rank = lambda self, *a, **k: 'theirs'", id="lambda"),
        pytest.param(
            "import functools\n"
            "original = pd.DataFrame.rank\n"
            "@functools.wraps(original)\n"
            "def rank(self, *a, **k):\n"
            "    return original(self, *a, **k)\n"
            "pd.DataFrame.rank = rank",
            id="functools-wraps",
        ),
        pytest.param(
            "import warnings\n"
            "with warnings.catch_warnings():\n"
            "    warnings.simplefilter('ignore')\n"
            "    @pd.api.extensions.register_dataframe_accessor('rank')\n"
            "    class Theirs:\n"
            "        def __init__(self, df):\n"
            "            pass",
            id="pandas-accessor",
        ),
    ],
)
def test_replaced_rank_is_left_alone_with_one_warning(replace: str) -> None:
    out = assert_runs(
        "import warnings\nimport pandas as pd\n"
        + replace
        + textwrap.dedent(
            """
            theirs = pd.DataFrame.__dict__["rank"]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                import polars_rankmetrics
                from polars_rankmetrics import pandas as prm_pd
                assert prm_pd.register() is False
                assert prm_pd.register() is False
            assert pd.DataFrame.__dict__["rank"] is theirs
            assert len(caught) == 1, [str(w.message) for w in caught]
            assert caught[0].category is prm_pd.RankAccessorWarning
            prm_pd.unregister()  # not ours: leaves it
            assert pd.DataFrame.__dict__["rank"] is theirs
            print(caught[0].message)
            """
        )
    )
    assert "not pandas' own method" in out
