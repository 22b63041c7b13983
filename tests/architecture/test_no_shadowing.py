"""No module is shadowed by a function of its own name.

``polars_rankmetrics.analysis.compare`` used to be both a module and, once the
package re-exported ``compare``, the function: ``prm.analysis.compare`` was
then the function, and the module could be reached only through
``sys.modules`` (documentation tools and type checkers stumble on that). Each
module's name in its package must be the module itself, or nothing.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "polars_rankmetrics"


def _module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            continue
        names.append(".".join(parts))
    return names


@pytest.mark.parametrize("name", _module_names())
def test_a_modules_name_in_its_package_is_the_module(name: str) -> None:
    if name.endswith("spark"):
        pytest.importorskip("pyspark")
    module = importlib.import_module(name)
    parent, _, leaf = name.rpartition(".")
    attribute = getattr(sys.modules[parent], leaf, module)
    assert attribute is module, (
        f"{parent}.{leaf} is {type(attribute).__name__} {attribute!r}, not the module {name}: "
        "rename the module (one idea per module, named for it) or the name that shadows it"
    )
