"""Exercise checkers for notebook 08 (what trained heads do).

Every checker prints one line, ``✓ ...`` or ``✗ ...`` with a hint aimed at the usual mistake, and
returns True or False. The learner's exceptions are reported, never raised. Each compares with
recorded data: the public cases, their right answers and the outputs of the usual mistakes.

* ``prefix_matching(fn)``: ``fn(w, ids) -> float``, one head's prefix-matching score from its
  weights ``w`` (n, n) and the tokens ``ids`` (n,). Names a mistake only when it explains the
  answer on every case: the earlier copy itself instead of the token after it, queries without such
  a key counted (an immediate repeat "A A" among them), a query right after a copy of its own token
  left out though it has keys, the weights read by columns, keys at or after the query, the previous
  token, an average over (query, key) pairs.
* ``failing_queries(answer)``: a prediction, the queries 14 .. 23 where the two-layer model fails
  on a prefix of 10 tokens followed by a repeated segment of 4; a list, tuple, set or array of whole
  numbers in any order. Catches the predicted tokens' positions instead of the queries, the earlier
  copy's position instead of the key after it, a second copy taken to help, queries that work.
* ``sink_window_mask(fn)``: ``fn(n, window, sinks) -> bool ndarray (n, n)``, the sliding-window mask
  that keeps the first ``sinks`` tokens; catches sinks that see the future, a window one too wide or
  too narrow, a window shrunk by the sinks, the sinks forgotten, a window without the causal limit,
  the polarity reversed, a list or an integer array.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from . import close, not_attempted, not_done, prediction, quietly, report, report_failure, try_call
from .general import array_answer
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["quietly", "prefix_matching", "failing_queries", "sink_window_mask"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")


def _call(fn, *args):
    out, err = try_call(fn, *args)
    if err:
        return None, err
    if out is Ellipsis:
        return None, _(STUB)
    return out, None


# ---------------------------------------------------------------- prefix matching

#: The usual mistakes of the prefix-matching score, in the order they are tried, and their hints.
_PREFIX_HINTS = {
    "copy": N_("you summed the weight on the earlier copy of the token itself; an induction head looks one step "
               "further, at the token that FOLLOWED the earlier copy"),
    "not causal": N_("your match also counts keys at or after the query: then the query's own position counts "
                     "as an \"earlier\" copy, and almost every query seems to have one. An earlier copy lies "
                     "before the query, and so does the key after it, in the sum and in choosing the queries"),
    "diagonal": N_("your match counts the query itself as a key: after an immediate repeat \"A A\", the second "
                   "A's own position follows a copy of A. The keys that count lie strictly before the query"),
    "all": N_("you averaged over every query; average only over the queries that have a key right after an "
              "earlier copy of its token (the others have nothing to match, and would pull the score down)"),
    "not first": N_("you averaged over every query but the first; only the queries that have a key right after "
                    "an earlier copy of its token count"),
    "seen": N_("you averaged over every query whose token occurred before; only those that have a key right "
               "after an earlier copy of its token count. In an immediate repeat \"A A\" the second A has an "
               "earlier copy, but no earlier key follows it: it has nothing to match"),
    "repeat": N_("you left out a query that comes right after a copy of its own token (the second A of \"A A\"), "
                 "though it has keys right after an earlier copy of its token. Whatever stands just before it, a "
                 "query counts whenever such a key exists"),
    "columns": N_("you read the weights by column: row i of w holds query i's weights over the keys, so a "
                  "query's weight on its keys lies along its row"),
    "previous": N_("that is the weight on the previous token: the prefix-matching score counts the weight on "
                   "the keys right after an earlier occurrence of the query's token, wherever they are"),
    "pairs": N_("you averaged over matching (query, key) pairs: the score is one number per query (its total "
                "weight on such keys), and each query that has one counts once, however many keys it has"),
}


@reference
def _prefix_score(w, match, rows):
    """Sum of ``w`` on ``match`` per query, averaged over ``rows`` (bool (n,))."""
    return float((w * match).sum(axis=1)[rows].mean()) if rows.any() else 0.0


@reference
def _prefix_variants(w, ids) -> tuple[float, dict]:
    from ..heads.diagnostics import prefix_match_mask

    n = len(ids)
    match = prefix_match_mask(ids)[0]  # (n, n)
    has = match.any(axis=1)
    copy = (ids[:, None] == ids[None, :]) & np.tri(n, k=-1, dtype=bool)  # the earlier copy itself
    prev = np.eye(n, k=-1, dtype=bool)
    anywhere = np.zeros((n, n), dtype=bool)  # no causal limit: key j may lie at or after query i
    anywhere[:, 1:] = ids[:, None] == ids[None, :-1]
    with_self = anywhere & np.tri(n, dtype=bool)  # j <= i: the query itself counted as a key
    s = _prefix_score
    wrong = {
        "copy": s(w, copy, copy.any(axis=1)),
        "not causal": s(w, anywhere, anywhere.any(axis=1)),
        "diagonal": s(w, with_self, with_self.any(axis=1)),
        "all": s(w, match, np.ones(n, dtype=bool)),
        "not first": s(w, match, np.arange(n) > 0),
        "seen": s(w, match, copy.any(axis=1)),
        "repeat": s(w, match, has & ~np.r_[False, ids[1:] == ids[:-1]]),
        "columns": s(w.T, match, has),
        "previous": s(w, prev, has),
        "pairs": float((w * match).sum() / max(int(match.sum()), 1)),
    }
    return s(w, match, has), wrong


@recorded
def _prefix_table() -> dict:
    """The cases (random causal weights on sequences with repeats, two with immediate repeats "5 5",
    the second of which has a key right after an earlier 5),
    the right score of each and each usual mistake's."""
    rng = np.random.default_rng(8)
    cases = []
    for ids in ([3, 1, 4, 5, 3, 1, 4, 5, 3, 1], [2, 7, 2, 7, 2, 9, 0], [6, 0, 1, 6, 1, 0, 6, 0, 1],
                [5, 5, 2, 5, 2, 7, 5],
                # the second 5 of "5 5" comes right after a copy of itself and has a key (2, after the first 5)
                [5, 2, 5, 5, 7, 2]):
        n = len(ids)
        sc = rng.normal(0, 1.5, (n, n))
        sc[np.triu_indices(n, 1)] = -np.inf  # causal
        w = np.exp(sc - sc.max(axis=1, keepdims=True))
        cases.append((w / w.sum(axis=1, keepdims=True), np.array(ids)))
    variants = [_prefix_variants(w, ids) for w, ids in cases]
    return {"cases": cases, "want": [v[0] for v in variants],
            "wrong": {k: [v[1][k] for v in variants] for k in _PREFIX_HINTS}}


@plain_numpy()
def prefix_matching(fn) -> bool:
    """Check ``fn(w, ids) -> float``: one head's prefix-matching score (w (n, n), ids (n,)).

    The answer is compared on every case first; a usual mistake is named only when it explains the
    answer on every case (two mistakes can agree on one sequence).
    """
    if not_done(fn):
        return not_attempted(_("no answer yet: define my_prefix_matching(w, ids) and pass it in"))
    t = _prefix_table()
    cases, got = t["cases"], []
    for w, ids in cases:
        out, err = _call(fn, w.copy(), ids.copy())
        if err:
            stub = _(STUB)
            return report_failure(err if err == stub else _("for ids = {ids}: {problem}").format(
                ids=ids.tolist(), problem=err), stub=stub)
        try:
            got.append(float(np.asarray(out, dtype=float).reshape(())))
        except Exception:  # the learner's object: never raise
            return report(False, _("return one number (a float), got {kind} {shape}: one score for the head, over all "
                                   "its queries").format(kind=type(out).__name__, shape=getattr(out, 'shape', '')))
    bad = [k for k, right in enumerate(t["want"]) if not close(got[k], right)]
    if not bad:
        return report(True, _("the prefix-matching score: for each query with a key right after an earlier copy, the "
                              "weight on such keys, averaged over those queries"))
    first = bad[0]
    ids = cases[first][1]
    for name, hint in _PREFIX_HINTS.items():
        if all(close(got[k], t["wrong"][name][k]) for k in range(len(cases))):
            return report(False, _("for ids = {ids}: {problem}").format(ids=ids.tolist(), problem=_(hint)))
    return report(False, _("for ids = {ids}: expected {want}, got {got}. Work through this sequence by hand: which "
                           "queries have a key right after an earlier copy of their token, which keys are those, "
                           "and how much weight does each query put on them?").format(
                               ids=ids.tolist(), want=f"{t['want'][first]:.4f}", got=f"{got[first]:.4f}"))


# ---------------------------------------------------------------- where the circuit fails

#: The exercise's sequences: a prefix of 10 distinct tokens, then a segment of 4 other tokens repeated.
PREFIX, SEGMENT = 10, 4
_QUERIES = range(PREFIX + SEGMENT, 24)  # 14 .. 23: the queries whose token occurred before


@recorded(answers=True)  # a prediction's answers: sealed, withheld by PREDICTIONS=record
def _failing_table() -> dict:
    """The queries of the exercise's sequences that the shipped two-layer model gets right less than
    half the time (measured on 512 draws), and the sets the usual mistakes give."""
    from ..heads.model import run
    from ..heads.trained import load_trained

    params, _, _ = load_trained("induction")
    order = np.argsort(np.random.default_rng(5).random((512, 16)), axis=1)  # random distinct tokens
    seqs = np.concatenate([order[:, :PREFIX], order[:, PREFIX + np.arange(15) % SEGMENT]], axis=1)
    acc = (run(params, seqs[:, :24])[0].argmax(axis=-1) == seqs[:, 1:]).mean(axis=0)  # (24,)
    failing = sorted(int(i) for i in _QUERIES if acc[i] < 0.5)
    return {"failing": failing, "works": sorted(set(_QUERIES) - set(failing)),
            "tokens": sorted(k + 1 for k in failing),  # the positions of the tokens they predict
            "copy_high": sorted(k for k in failing if k % SEGMENT == (PREFIX + 3) % SEGMENT),  # the copy above 12
            "first_repeat": sorted(k for k in failing if k < PREFIX + 2 * SEGMENT)}


def _listed(queries) -> str:
    q = sorted(queries)
    if len(q) < 2:
        return str(q[0])
    return _("{items} and {last}").format(items=", ".join(str(k) for k in q[:-1]), last=q[-1])


_GRADED_FAILS = N_("for each query from 14 to 23, list the keys right after the earlier copies of its token; "
                   "then ask where layer 0 head 0 writes \"my previous token was X\" (section 2's plot of its "
                   "weight on key i - 1). The induction head can only find a key that carries it")


def _whole_numbers(answer):
    """``answer`` as a list of ints, or the reason it is not one (bools, floats and strings are refused)."""
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__iter__"):
        return None, _("give a list of query positions such as [14, 15], got {kind} {answer}").format(
            kind=type(answer).__name__, answer=repr(answer))
    try:
        items = list(answer)
    except Exception:  # the learner's object: never raise
        return None, _("give a list of query positions such as [14, 15], got {kind}").format(kind=type(answer).__name__)
    odd = [k for k in items if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer))]
    if odd:
        return None, _("give the query positions as whole numbers (ints) such as [14, 15], got {value}").format(
            value=repr(odd[0]))
    got = [int(k) for k in items]
    if len(set(got)) != len(got):
        return None, _("list each query position once, got {got}").format(got=sorted(got))
    return got, None


@prediction
def failing_queries(answer) -> bool:
    """Check the prediction ``answer``: the queries 14 .. 23 at which the two-layer model gets the next token
    right less than half the time, on a prefix of 10 distinct tokens followed by a segment of 4 repeated."""
    if not_done(answer):
        return not_attempted(_("no answer yet: set my_failing_queries to a list of query positions from 14 to 23 "
                               "(possibly empty), then run the cell again"))
    got, err = _whole_numbers(answer)
    if err:
        return report(False, err)
    outside = sorted(k for k in got if k not in _QUERIES)
    if outside:
        return report(False, _("the question is about queries 14 to 23, whose token occurred before; got {got}. "
                               "Queries 0 to 13 have no earlier copy: no induction head can answer them").format(got=outside))
    have = set(got)
    t = _failing_table().open()
    fail, works = set(t["failing"]), set(t["works"])
    advice = _(_GRADED_FAILS)
    if have == fail:
        return report(True, _("queries {queries}: every earlier copy of their token is followed by a key above 12, where "
                              "layer 0 writes no \"my previous token was X\", so the induction head cannot find it. The "
                              "model gets them right less than 0.4 of the time, the others more than 0.9").format(
                                  queries=_listed(fail)))
    if have == set(t["tokens"]):
        return report(False, _("those are the positions of the tokens to be predicted: query i predicts token "
                               "i + 1. Give the queries"), graded=_("query i predicts token i + 1: give the queries, "
                                                                    "not the tokens they predict"))
    if have == set(t["copy_high"]):
        return report(False, _("you looked at where the earlier copy itself lies; the induction head reads the key "
                               "right AFTER it, and that key is the one that must carry \"my previous token was X\""),
                      graded=_("the induction head attends to the key right after the earlier copy, not the copy "
                               "itself. {advice}").format(advice=advice))
    if not have:
        return report(False, _("some queries do fail: the previous-token head writes \"my previous token was X\" "
                               "only at keys 1 to 12, and here some tokens' earlier copies are followed only by keys "
                               "above 12"), graded=advice)
    if have == set(_QUERIES):
        return report(False, _("most queries still work: query {query}, for one, has an earlier copy followed by a key "
                               "of at most 12, which carries what the previous-token head wrote").format(query=min(works)),
                      graded=_("not every query fails. {advice}").format(advice=advice))
    if not have & fail:  # only queries that work, e.g. the complement of the answer
        more = (_("You listed the queries that succeed; the question asks for those that fail")
                if have == works else _("None of your queries fails"))
        return report(False, _("query {query} works: its token has an earlier copy followed by a key of at most 12, "
                               "where the previous-token head wrote \"my previous token was X\". {more}").format(
                                   query=min(have), more=more),
                      graded=_("none of your queries fails: each has a copy the induction head can find. "
                               "{advice}").format(advice=advice))
    first_repeat = set(t["first_repeat"])
    if first_repeat and have == first_repeat:
        return report(False, _("some later queries fail too: a token that occurred twice before does not help "
                               "when both copies are followed by keys above 12"),
                      graded=_("a second earlier copy helps only if the key after it is one the previous-token head "
                               "wrote to. {advice}").format(advice=advice))
    if have >= fail:
        return report(False, _("query {query} works: its token has an earlier copy followed by a key of at most 12, "
                               "where the previous-token head wrote \"my previous token was X\"").format(
                                   query=min(have - fail)),
                      graded=_("one of your queries has a copy the induction head can find. {advice}").format(
                          advice=advice))
    return report(False, _("query {query} fails too: every earlier copy of its token is followed by a key above 12, "
                           "where layer 0 writes no previous token").format(query=min(fail - have)), graded=advice)


# ---------------------------------------------------------------- the sink-keeping window

#: The public cases ``(n, window, sinks)``: several sizes, windows and numbers of sinks (none among them).
MASK_CASES = ((8, 3, 1), (10, 4, 2), (6, 2, 0), (5, 8, 1))

#: A case's failure: the case, then what went wrong there.
_CASE = N_("for n = {n}, window = {window}, sinks = {sinks}: {problem}")

#: The usual mistakes of the sink-keeping mask, in the order they are tried, and their hints.
_MASK_HINTS = {
    "sinks see the future": N_("the sinks are visible to queries that come BEFORE them too: a sink is still a key, "
                               "and a causal mask never lets a query see a key after itself"),
    "minus sinks": N_("your window shrinks when there are sinks: the first `sinks` keys come IN ADDITION to the "
                      "last `window` keys, they do not take places in the window"),
    "too wide": N_("the window is one too wide: count the keys a query sees in its window, itself included: there "
                   "are exactly `window` of them"),
    "too narrow": N_("the window is one too narrow: count the keys a query sees in its window, itself included: "
                     "there are exactly `window` of them"),
    "no sinks": N_("the sinks are missing: every query must also see the first `sinks` tokens"),
    "swapped inside": N_("True and False are swapped inside the causal part: True means \"may attend\""),
    "swapped": N_("True and False are swapped: True means \"may attend\""),
    "future window": N_("your window reaches into the future: in a causal model no query sees a key after itself"),
}


@reference
def _mask(n, window, sinks):
    from ..scale.sliding_window import sliding_window_mask

    return sliding_window_mask(n, window, sinks=sinks) if window >= 1 else None


@recorded
def _mask_table() -> dict:
    """The right mask of each public case and the masks of the usual mistakes (None: not defined there)."""
    want, wrong = [], {k: [] for k in _MASK_HINTS}
    for n, window, sinks in MASK_CASES:
        causal, right = np.tri(n, dtype=bool), _mask(n, window, sinks)
        sink_cols = np.zeros((n, n), dtype=bool)
        sink_cols[:, :sinks] = True
        want.append(right)
        for name, value in (
                ("sinks see the future", _mask(n, window, 0) | sink_cols),
                ("minus sinks", _mask(n, window - sinks, sinks)),
                ("too wide", _mask(n, window + 1, sinks)),
                ("too narrow", _mask(n, window - 1, sinks)),
                ("no sinks", _mask(n, window, 0)),
                ("swapped inside", causal & ~right),
                ("swapped", ~right),
                ("future window", sink_cols | (np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) < window))):
            wrong[name].append(value)
    return {"want": want, "wrong": wrong}


@plain_numpy()
def sink_window_mask(fn) -> bool:
    """Check ``fn(n, window, sinks) -> bool ndarray (n, n)``: the causal sliding window that keeps the sinks."""
    if not_done(fn):
        return not_attempted(_("no answer yet: define my_sink_window_mask(n, window, sinks) and pass it in"))
    t = _mask_table()
    got = []
    for n, window, sinks in MASK_CASES:
        out, err = _call(fn, n, window, sinks)
        case = {"n": n, "window": window, "sinks": sinks}
        if err:
            stub = _(STUB)
            return report_failure(err if err == stub else _(_CASE).format(problem=err, **case), stub=stub)
        if (msg := array_answer(out)):
            return report(False, _(_CASE).format(problem=msg, **case))
        if not isinstance(out, np.ndarray):
            return report(False, _("for n = {n}, window = {window}, sinks = {sinks}: return a numpy array of booleans, "
                                   "got {kind}").format(kind=type(out).__name__, **case))
        if out.shape != (n, n):
            return report(False, _("for n = {n}, window = {window}, sinks = {sinks}: expected a mask of shape ({n}, "
                                   "{n}), got {got}").format(got=out.shape, **case))
        if out.dtype != np.bool_:
            return report(False, _("for n = {n}, window = {window}, sinks = {sinks}: return a boolean mask (True = may "
                                   "attend), got dtype {dtype}: each entry answers yes or no, and comparisons of "
                                   "positions already give such answers").format(dtype=out.dtype, **case))
        got.append(out)
    bad = [k for k, want in enumerate(t["want"]) if not np.array_equal(got[k], want)]
    if not bad:
        return report(True, _("the StreamingLLM mask: a causal window of the last `window` tokens plus the first "
                              "`sinks`"))
    first = bad[0]
    n, window, sinks = MASK_CASES[first]
    case = {"n": n, "window": window, "sinks": sinks}
    for name, hint in _MASK_HINTS.items():
        values = t["wrong"][name]
        if values[first] is not None and all(np.array_equal(got[k], t["want"][k] if v is None else v)
                                             for k, v in enumerate(values)):
            return report(False, _(_CASE).format(problem=_(hint), **case))
    want = t["want"][first]
    i, j = np.argwhere(got[first] != want)[0]
    return report(False, _("for n = {n}, window = {window}, sinks = {sinks}: mask[{i}, {j}] should be {want}. Ask "
                           "three questions about key {j} and query {i}: is the key in the query's future, is it "
                           "among the last `window` keys, is it one of the sinks?").format(
                               i=i, j=j, want=bool(want[i, j]), **case))
