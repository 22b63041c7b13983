"""``python -m polars_rankmetrics.cli``: the same as ``rankmetrics``."""

import sys

from polars_rankmetrics.cli import main

sys.exit(main())
