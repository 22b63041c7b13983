"""A slow, plain-Python textbook of every measure trec_eval 10.0 prints.

Written from trec_eval's C sources (``m_*.c``, ``meas_*.c``, ``form_res_rels.c``,
``get_qrels.c``, ``get_trec_results.c``, ``trec_eval.c``; usnistgov/trec_eval,
version 10.0), read for their definitions, with lists, dicts and loops only and
never from the package's code. It is the independent oracle of the package's
``trec_eval``: ``test_trec_measures.py`` checks that this module prints every
line of trec_eval's own expected outputs, and that the package agrees with it
on generated runs.

Conventions taken from the C sources:

- ranking: score descending, ties by document id descending (byte order); the
  rank column of the run is ignored;
- each retrieved document gets a relevance code: its qrels grade when judged
  with a grade >= 0, ``UNJUDGED`` (-2) when the qrels list it with a negative
  grade (in the pool, not judged), ``NONPOOL`` (-1) when the qrels do not list it;
- relevant means code >= the relevance level (``-l``, default 1); ``num_rel``
  counts qrels grades >= 0 and >= the level;
- queries: those of the qrels (byte order) that the run has; with ``-c`` every
  qrels query, a missing one ranked as one unjudged document
  (``ceci_nest_pas_un_docno``), after which ``num_ret``, ``utility``,
  ``relstring``, ``unj`` and ``rbp_resid`` are reset, as trec_eval does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

NONPOOL = -1
UNJUDGED = -2
MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001
BOGUS_DOCNO = "ceci_nest_pas_un_docno"

# the measure table, in trec_eval's print order, with each family's kind
CUT_LONG = "cut_long"  # one value per integer cutoff: P_5, P_10 ...
CUT_DOUBLE = "cut_double"  # one value per real cutoff: iprec_at_recall_0.10 ...
P_DOUBLE = "p_double"  # one value, real parameters in the name: utility_2,-1,0,0
P_PAIR = "p_pair"  # one value, name=value parameters: ndcg_1=3,2=9
SINGLE = "single"
TABLE: dict[str, tuple[str, tuple[float, ...] | None]] = {
    "runid": (SINGLE, None),
    "num_q": (SINGLE, None),
    "num_ret": (SINGLE, None),
    "num_rel": (SINGLE, None),
    "num_rel_ret": (SINGLE, None),
    "map": (SINGLE, None),
    "gm_map": (SINGLE, None),
    "Rprec": (SINGLE, None),
    "bpref": (SINGLE, None),
    "recip_rank": (SINGLE, None),
    "iprec_at_recall": (CUT_DOUBLE, (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    "P": (CUT_LONG, (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "relstring": (P_DOUBLE, (10.0,)),
    "recall": (CUT_LONG, (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "infAP": (SINGLE, None),
    "gm_bpref": (SINGLE, None),
    "Rprec_mult": (CUT_DOUBLE, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility": (P_DOUBLE, (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": (P_DOUBLE, (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    "binG": (SINGLE, None),
    "G": (P_PAIR, None),
    "dcg": (P_PAIR, None),
    "ideal_dcg": (P_PAIR, None),
    "ndcg": (P_PAIR, None),
    "ndcg_rel": (P_PAIR, None),
    "Rndcg": (P_PAIR, None),
    "ndcg_cut": (CUT_LONG, (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "map_cut": (CUT_LONG, (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "relative_P": (CUT_LONG, (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "success": (CUT_LONG, (1, 5, 10)),
    "set_P": (SINGLE, None),
    "set_relative_P": (SINGLE, None),
    "set_recall": (SINGLE, None),
    "set_map": (SINGLE, None),
    "set_F": (P_DOUBLE, (1.0,)),
    "num_nonrel_judged_ret": (SINGLE, None),
    "rbp": (P_PAIR, None),
    "rbp_resid": (P_PAIR, None),
    "unj": (CUT_LONG, (5, 10, 20)),
}
NICKNAMES = {
    "official": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ],
    "all_trec": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ],
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}
GEOMETRIC = {"gm_map", "gm_bpref"}


def c_atol(text: str) -> int:
    """C ``atol``: the leading integer of the text, 0 if none."""
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def c_atof(text: str) -> float:
    """C ``atof``: the leading real number of the text, 0.0 if none."""
    match = re.match(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", text)
    return float(match.group(1)) if match else 0.0


def c_lround(value: float) -> int:
    """C ``lround``: nearest integer, halves away from zero."""
    return math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)


@dataclass
class Measure:
    """A requested measure family, its parameters and the names it prints."""

    family: str
    raw: str | None = None  # the parameter text after the first '.'
    values: list[float] = field(default_factory=list)
    pairs: list[tuple[str, float]] = field(default_factory=list)

    def names(self) -> list[str]:
        kind = TABLE[self.family][0]
        if kind == CUT_LONG:
            return [f"{self.family}_{int(v)}" for v in self.values]
        if kind == CUT_DOUBLE:
            return [f"{self.family}_{v:3.2f}" for v in self.values]
        return [self.family if self.raw is None else f"{self.family}_{self.raw}"]


def measures_from_args(args: Sequence[str] | None) -> list[Measure]:
    """trec_eval's ``-m`` handling: nicknames, parameters (first one given wins)."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args or ["official"]:
        name, dot, raw = arg.partition(".")
        if dot:
            if not raw:
                raise ValueError(f"improper measure in parameter {name!r}")
            params.setdefault(name, raw)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in TABLE:
            marked.add(name)
        else:
            raise ValueError(f"illegal measure {arg!r}")
    chosen = []
    for family, (kind, default) in TABLE.items():
        if family not in marked:
            continue
        raw = params.get(family)
        measure = Measure(family, raw if kind in (P_DOUBLE, P_PAIR) else None)
        if kind == CUT_LONG:
            cuts = sorted(c_atol(p) for p in raw.split(",")) if raw else list(default or ())
            if cuts[0] <= 0 or len(set(cuts)) < len(cuts):
                raise ValueError(f"bad cutoffs for {family}")
            measure.values = [float(c) for c in cuts]
        elif kind == CUT_DOUBLE:
            cuts_f = sorted(c_atof(p) for p in raw.split(",")) if raw else list(default or ())
            if len(set(cuts_f)) < len(cuts_f):
                raise ValueError(f"duplicate cutoffs for {family}")
            measure.values = cuts_f
        elif kind == P_DOUBLE:
            measure.values = [c_atof(p) for p in raw.split(",")] if raw else list(default or ())
        elif kind == P_PAIR and raw:
            for part in raw.split(","):
                key, eq, value = part.partition("=")
                if not eq:
                    raise ValueError(f"malformed pair parameters in {raw!r}")
                measure.pairs.append((key, c_atof(value)))
        chosen.append(measure)
    return chosen


# ------------------------------------------------------------------ one query


@dataclass
class Query:
    """One query's ranked relevance codes and judgement statistics (RES_RELS)."""

    codes: list[int]  # relevance code of each retrieved document, rank order
    rel_levels: dict[int, int]  # judged documents per grade >= 0
    num_rel: int
    level: int
    num_docs_in_coll: int = 0

    @property
    def num_ret(self) -> int:
        return len(self.codes)

    def relevant(self, code: int) -> bool:
        return code >= self.level

    @property
    def num_rel_ret(self) -> int:
        return sum(1 for c in self.codes if c >= 0 and self.relevant(c))

    @property
    def num_rel_levels(self) -> int:
        present = [g for g, n in self.rel_levels.items() if n]
        return max(present) + 1 if present else 0


def rank_documents(docs: Iterable[tuple[str, float]]) -> list[str]:
    """Score descending, ties by document id descending (byte order)."""
    by_docno = sorted(docs, key=lambda d: d[0].encode(), reverse=True)
    return [d for d, _ in sorted(by_docno, key=lambda d: -d[1])]


def make_query(judged: dict[str, int], docs: list[tuple[str, float]], level: int) -> Query:
    codes = []
    for docno in rank_documents(docs):
        grade = judged.get(docno)
        codes.append(NONPOOL if grade is None else UNJUDGED if grade < 0 else grade)
    levels: dict[int, int] = {}
    for grade in judged.values():
        if grade >= 0:
            levels[grade] = levels.get(grade, 0) + 1
    num_rel = sum(n for g, n in levels.items() if g >= level)
    return Query(codes, levels, num_rel, level)


def hits_at(q: Query, k: int) -> int:
    return sum(1 for c in q.codes[:k] if q.relevant(c))


def average_precision(q: Query, k: int | None = None) -> float:
    total, found = 0.0, 0
    for i, code in enumerate(q.codes[:k]):
        if q.relevant(code):
            found += 1
            total += found / (i + 1)
    return total / q.num_rel if found else 0.0


def bpref(q: Query) -> float:
    num_nonrel = sum(n for g, n in q.rel_levels.items() if g < q.level)
    nonrel_seen, total = 0, 0.0
    for code in q.codes:
        if code < 0:
            continue
        if code < q.level:
            nonrel_seen += 1
        elif nonrel_seen:
            total += 1 - min(nonrel_seen, q.num_rel) / min(num_nonrel, q.num_rel)
        else:
            total += 1.0
    return total / q.num_rel if q.num_rel else total


def inf_ap(q: Query) -> float:
    rel_seen = nonrel_seen = unjudged_seen = 0
    total = 0.0
    for j, code in enumerate(q.codes):
        if code == NONPOOL:
            continue
        if code == UNJUDGED:
            unjudged_seen += 1
            continue
        if code < q.level:
            nonrel_seen += 1
            continue
        rel_seen += 1
        if j == 0:
            total += 1.0
        else:
            above = rel_seen - 1 + nonrel_seen + unjudged_seen
            share = (rel_seen - 1 + INFAP_EPSILON) / (
                rel_seen - 1 + nonrel_seen + 2 * INFAP_EPSILON
            )
            total += 1 / (j + 1) + (j / (j + 1)) * (above / j) * share
    return total / q.num_rel if q.num_rel else total


def interpolated_precision(q: Query, rel_count: int) -> float:
    """Max precision at or below the rel_count-th relevant document (trec_eval's loop)."""
    precisions = []
    found = 0
    for i, code in enumerate(q.codes):
        if q.relevant(code):
            found += 1
            precisions.append((found, found / (i + 1)))
    if rel_count > q.num_rel_ret:
        return 0.0
    if not precisions:
        return q.num_rel_ret / q.num_ret if q.num_ret else math.nan
    wanted = max(rel_count, 1)
    return max(p for n, p in precisions if n >= wanted)


def precision_at(q: Query, k: int) -> float:
    return hits_at(q, k) / k


def rprec_mult(q: Query, fraction: float) -> float:
    cutoff = int(fraction * q.num_rel + 0.9)
    return hits_at(q, cutoff) / cutoff if cutoff > 0 else 0.0


@dataclass
class Gains:
    """trec_eval's gain table: (grade, gain, judged count), sorted by gain ascending."""

    levels: list[tuple[int, float, int]]

    def gain(self, code: int) -> float:
        for grade, gain, _ in self.levels:
            if grade == code:
                return gain
        return 0.0

    def ideal(self) -> list[float]:
        """The ideal ranking's gains: judged documents by gain descending, while > 0."""
        out: list[float] = []
        for _, gain, count in reversed(self.levels):
            if count == 0:
                continue
            if gain <= 0:
                break
            out.extend([gain] * count)
        return out


def setup_gains(q: Query, pairs: list[tuple[str, float]]) -> Gains:
    given: dict[int, float] = {}
    for key, value in pairs:
        if re.fullmatch(r"[+-]?\d+", key):
            given.setdefault(int(key), value)
    levels = [(g, v, 0) for g, v in given.items()]
    for grade in range(q.num_rel_levels):
        count = q.rel_levels.get(grade, 0)
        if grade in given:
            levels = [(g, v, count if g == grade else n) for g, v, n in levels]
        else:
            levels.append((grade, float(grade), count))
    # trec_eval orders by gain (its comparator truncates the difference to an
    # integer; exact order here, which differs only for gains less than 1 apart)
    return Gains(sorted(levels, key=lambda t: t[1]))


def dcg_list(q: Query, gains: Gains) -> list[float]:
    """Cumulative DCG after each retrieved document."""
    out, total = [], 0.0
    for i, code in enumerate(q.codes):
        gain = gains.gain(code)
        if gain != 0:
            total += gain / math.log2(i + 2)
        out.append(total)
    return out


def ideal_dcg_list(ideal: list[float]) -> list[float]:
    out, total = [], 0.0
    for i, gain in enumerate(ideal):
        total += gain / math.log2(i + 2)
        out.append(total)
    return out


def ndcg_family(q: Query, measure: Measure) -> float:
    gains = setup_gains(q, measure.pairs)
    dcg = dcg_list(q, gains)
    ideal = gains.ideal()
    idcg = ideal_dcg_list(ideal)
    final_dcg = dcg[-1] if dcg else 0.0
    full_idcg = idcg[-1] if idcg else 0.0
    if measure.family == "dcg":
        return final_dcg
    if measure.family == "ideal_dcg":
        return full_idcg
    if measure.family == "ndcg":
        return final_dcg / full_idcg if full_idcg > 0 else 0.0
    n_pos = len(ideal)
    if measure.family == "ndcg_rel":
        if n_pos == 0:
            return 0.0
        total, rel_ret = 0.0, 0
        for i, code in enumerate(q.codes):
            if gains.gain(code) > 0:
                total += dcg[i] / idcg[min(i + 1, n_pos) - 1]
                rel_ret += 1
        total += (n_pos - rel_ret) * final_dcg / full_idcg
        return total / n_pos if total > 0 else 0.0
    if measure.family == "Rndcg":
        return rndcg(q, ideal, dcg, idcg)
    return g_measure(q, gains, ideal)


def rndcg(q: Query, ideal: list[float], dcg: list[float], idcg: list[float]) -> float:
    if q.num_rel == 0:
        return 0.0
    n, n_pos = q.num_ret, len(ideal)
    total, points = 0.0, 0
    # ndcg at each change of the ideal gain (the last positive grade ends at n_pos)
    for pos in range(2, n_pos + 2):
        after = ideal[pos - 1] if pos <= n_pos else 0.0
        if after != ideal[pos - 2] and idcg[pos - 2] > 0:
            total += dcg[min(pos - 1, n) - 1] / idcg[pos - 2] if min(pos - 1, n) else 0.0
            points += 1
    # trec_eval adds the end of the list when it lies past the ideal gains
    if n_pos + 1 < n and n_pos and idcg[-1] > 0:
        total += dcg[-1] / idcg[-1]
        points += 1
    return total / points if points else math.nan


def g_measure(q: Query, gains: Gains, ideal: list[float]) -> float:
    total_ideal = sum(ideal)
    cost = results = value = 0.0
    for i, code in enumerate(q.codes):
        gain = gains.gain(code)
        results += gain
        cost += max(ideal[i], 1.0) if i < len(ideal) else 1.0
        if gain != 0:
            value += gain / math.log2(2 + cost - results)
    return value / total_ideal if total_ideal > 0 else 0.0


def bin_g(q: Query) -> float:
    total, found = 0.0, 0
    for i, code in enumerate(q.codes):
        if q.relevant(code):
            found += 1
            total += 1 / math.log2(3 + i - found)
    return total / q.num_rel if found else 0.0


def ndcg_cut(q: Query, k: int) -> float:
    dcg = sum(c / math.log2(i + 2) for i, c in enumerate(q.codes[:k]) if c > 0)
    ideal = []
    for grade in range(q.num_rel_levels - 1, 0, -1):
        ideal.extend([grade] * q.rel_levels.get(grade, 0))
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
    return dcg / idcg if idcg > 0 else dcg


def rbp(q: Query, measure: Measure) -> float:
    p = 0.9
    for key, value in measure.pairs:
        if key == "p":
            p = value
    gains = setup_gains(q, measure.pairs)
    # trec_eval rescales the gains to [0, 1] when any lies outside (its min and
    # max start uninitialised; 0 matches its printed results)
    low = min([0.0, *(g for _, g, _ in gains.levels)])
    high = max([0.0, *(g for _, g, _ in gains.levels)])
    if low < 0 or high > 1:
        gains = Gains([(c, (g - low) / (high - low), n) for c, g, n in gains.levels])
    if measure.family == "rbp":
        return (1 - p) * sum(gains.gain(c) * p**i for i, c in enumerate(q.codes))
    unjudged = [p**i for i, c in enumerate(q.codes) if c < 0]
    return p ** len(q.codes) + (1 - p) * sum(unjudged) if unjudged else 0.0


def relstring_of(q: Query, length: float) -> str:
    chars = []
    for code in q.codes[: max(min(int(length), q.num_ret), 0)]:
        if code > 9:
            chars.append(">")
        elif code >= 0:
            chars.append(str(code))
        elif code == NONPOOL:
            chars.append("-")
        elif code == UNJUDGED:
            chars.append(".")
        else:
            chars.append("<")
    return "".join(chars)


def query_values(q: Query, m: Measure) -> list[float | str]:
    """The values of one measure family for one query, one per printed name."""
    f, r, R, n = m.family, q.num_rel_ret, q.num_rel, q.num_ret  # noqa: N806 (trec_eval's R)
    single: dict[str, object] = {
        "num_q": 1.0,
        "num_ret": float(n),
        "num_rel": float(R),
        "num_rel_ret": float(r),
        "map": lambda: average_precision(q),
        "gm_map": lambda: math.log(max(average_precision(q), MIN_GEO_MEAN)),
        "Rprec": lambda: hits_at(q, min(n, R)) / R if min(n, R) else 0.0,
        "bpref": lambda: bpref(q),
        "gm_bpref": lambda: math.log(max(bpref(q), MIN_GEO_MEAN)),
        "recip_rank": lambda: next(
            (1 / (i + 1) for i, c in enumerate(q.codes) if q.relevant(c)), 0.0
        ),
        "infAP": lambda: inf_ap(q),
        "binG": lambda: bin_g(q),
        "set_P": lambda: r / n if n else 0.0,
        "set_relative_P": lambda: r / min(n, R) if n and R else 0.0,
        "set_recall": lambda: r / R if R else 0.0,
        "set_map": lambda: r * r / (n * R) if n and R else 0.0,
        "num_nonrel_judged_ret": lambda: float(
            sum(1 for c in q.codes if c >= 0 and not q.relevant(c))
        ),
    }
    if f in single:
        value = single[f]
        return [value() if callable(value) else value]  # type: ignore[list-item]
    cuts = [int(v) for v in m.values]
    if f == "P":
        return [precision_at(q, k) for k in cuts]
    if f == "recall":
        return [hits_at(q, k) / R if R else 0.0 for k in cuts]
    if f == "map_cut":
        return [average_precision(q, k) if R else 0.0 for k in cuts]
    if f == "relative_P":
        return [hits_at(q, k) / min(k, R) if R else 0.0 for k in cuts]
    if f == "success":
        return [1.0 if hits_at(q, k) else 0.0 for k in cuts]
    if f == "unj":
        return [sum(1 for c in q.codes[:k] if c < 0) / k for k in cuts]
    if f == "ndcg_cut":
        return [ndcg_cut(q, k) for k in cuts]
    if f == "iprec_at_recall":
        return [interpolated_precision(q, c_lround(v * R)) for v in m.values]
    if f == "Rprec_mult":
        return [rprec_mult(q, v) for v in m.values]
    if f == "11pt_avg":
        levels = sorted(m.values)
        return [sum(interpolated_precision(q, c_lround(v * R)) for v in levels) / len(levels)]
    if f == "utility":
        a, b, c, d = m.values
        return [a * r + b * (n - r) + c * (R - r) + d * (q.num_docs_in_coll + r - n - R)]
    if f == "set_F":
        if not r:
            return [0.0]
        precision, recall, beta = r / n, r / R, m.values[0]
        return [(beta + 1) * precision * recall / (beta * precision + recall)]
    if f == "relstring":
        return [relstring_of(q, m.values[0])]
    if f in ("rbp", "rbp_resid"):
        return [rbp(q, m)]
    return [ndcg_family(q, m)]


# ------------------------------------------------------------------ whole runs


def read_qrels(text: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        fields = line.split()
        if fields:
            qrels.setdefault(fields[0], {})[fields[2]] = int(fields[3])
    return qrels


def read_run(text: str) -> tuple[dict[str, list[tuple[str, float]]], str]:
    run: dict[str, list[tuple[str, float]]] = {}
    run_id = ""
    for line in text.splitlines():
        fields = line.split()
        if fields:
            run.setdefault(fields[0], []).append((fields[2], float(fields[4])))
            run_id = fields[5]
    return run, run_id


def trec_eval_rows(
    qrels: dict[str, dict[str, int]],
    run: dict[str, list[tuple[str, float]]],
    run_id: str,
    args: Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    level: int = 1,
) -> list[str]:
    """What trec_eval prints, as (name, query, value or text, family) rows."""
    measures = measures_from_args(args)
    lines: list[tuple[str, str, float | str, str]] = []
    sums: dict[str, float] = {}
    evaluated = 0
    for qid in sorted(qrels, key=str.encode):
        docs = run.get(qid)
        missing = docs is None
        if missing and not complete:
            continue
        q = make_query(qrels[qid], [(BOGUS_DOCNO, 1.0)] if missing else docs or [], level)
        evaluated += 1
        for m in measures:
            if m.family == "runid":
                continue
            values = query_values(q, m)
            for name, computed in zip(m.names(), values, strict=True):
                value = computed
                if missing and (
                    name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj")
                ):
                    value = 0.0  # trec_eval's clean-up after the stand-in ranking
                if missing and name == "relstring":
                    value = ""
                if isinstance(value, str):
                    if per_query:
                        lines.append((name, qid, value, m.family))
                    continue
                sums[name] = sums.get(name, 0.0) + value
                if per_query and m.family not in SUMMARY_ONLY:
                    lines.append((name, qid, value, m.family))
    if evaluated == 0:
        raise ValueError("no queries with both results and relevance info")
    num_q = len(qrels) if complete else evaluated
    for m in measures:
        if m.family == "runid":
            lines.append(("runid", "all", run_id, "runid"))
            continue
        if m.family == "relstring":
            continue
        for name in m.names():
            total = sums[name]
            if m.family == "num_q":
                value = float(num_q)
            elif m.family == "num_rel" and complete:
                value = float(sum(1 for q in qrels.values() for g in q.values() if g > 0))
            elif m.family in COUNTS:
                value = total
            elif m.family in GEOMETRIC:
                value = math.exp(total / num_q)
            else:
                value = total / num_q
            lines.append((name, "all", value, m.family))
    return lines


def trec_eval_lines(
    qrels: dict[str, dict[str, int]],
    run: dict[str, list[tuple[str, float]]],
    run_id: str,
    args: Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    level: int = 1,
) -> list[str]:
    """What trec_eval prints for these qrels and run, as a list of lines."""
    rows = trec_eval_rows(
        qrels, run, run_id, args, per_query=per_query, complete=complete, level=level
    )
    lines = []
    for name, qid, value, family in rows:
        if family == "runid":
            lines.append(f"{name:<22}\t{qid}\t{value}")
        elif isinstance(value, str):
            lines.append(f"{name:<22}\t{qid}\t'{value}'")
        else:
            lines.append(format_line(name, qid, value, family))
    return lines


def format_line(name: str, qid: str, value: float, family: str) -> str:
    shown = str(int(value)) if family in COUNTS else f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{shown}"
