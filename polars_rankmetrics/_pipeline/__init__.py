"""The one evaluation plan on ``LazyFrame``, one idea per module.

Private: the public faces are :mod:`polars_rankmetrics.evaluate`,
:mod:`polars_rankmetrics.ranking` and :mod:`polars_rankmetrics.trec`. Nothing is
re-exported here; import each name from its module.

* ``aggregate``: the means over users, the same to the last bit in every run
  (fixed point);
* ``overlap``: whether recs and truth share their ids (the id-overlap probe
  and its warnings);
* ``trec_eval``: trec_eval's measures over a run and qrels (``-m`` parsing,
  averages, the printed layout);
* ``trec_plan``: the per-query plan that trec_eval's measure families fill.
"""
