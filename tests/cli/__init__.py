"""Tests of the ``rankmetrics`` command line."""
