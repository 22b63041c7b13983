"""The one evaluation plan on ``LazyFrame``, one idea per module.

Private: the public faces are :mod:`polars_rankmetrics.evaluate`,
:mod:`polars_rankmetrics.ranking` and :mod:`polars_rankmetrics.trec`. Nothing is
re-exported here; import each name from its module.

* ``parse``: metric strings (``"ndcg@10"``, ``"map@5,10"``, ``"fbeta(beta=2)@5"``)
  into :class:`~polars_rankmetrics._pipeline.parse.MetricSpec`;
* ``inputs``: what the plan reads: frame kinds, column roles, the specs of
  recs and truth, each metric's request;
* ``checks``: what is refused: the schemas of both frames and the data checks
  on their rows, the cut, the lists and the hit rows;
* ``rank_cut``: positions from scores or given ranks, ties, repeats, and the
  cut to the largest cutoff;
* ``truth``: the truth per user: relevant rows labeled, m_u, the ideal DCG;
* ``hits``: the hits table (relevant items within the cut), its packed join
  key, and the judged rows trec_eval's measures read;
* ``kernel``: the per-user partial sums the requested measures declare;
* ``population``: which users count (users without recs or truth, judged
  users, strict user sets; groups only the recs have);
* ``lists``: the measures of the lists themselves beside the per-user parts;
* ``aggregate``: each metric combined over users, the means the same to the
  last bit in every run (fixed point);
* ``overlap``: whether recs and truth share their ids (the id-overlap probe
  and its warnings);
* ``plan``: the orchestration of one ``evaluate`` / ``per_user_parts`` call;
* ``trec_eval``: trec_eval's measures over a run and qrels (``-m`` parsing,
  averages, the printed layout); the per-query plan its measure families fill
  is :mod:`polars_rankmetrics._measures._trec_plan`, beside the families.

The keyword options every face reads are declared in
:mod:`polars_rankmetrics.options` (with :mod:`polars_rankmetrics.conventions`,
the only public modules the engine imports: declarations that import nothing
else of the package).
"""
