"""The notebook-08 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest
from test_check_masks_positions import STUB, boom, one_line  # (tests/ is on sys.path)

from attention_kit.check import graded_hints
from attention_kit.check import heads as chk

# ---------------------------------------------------------------- prefix matching


def prefix_loop(w, ids):
    """Reference written with loops, independently of attention_kit."""
    sums = []
    for i in range(len(ids)):
        keys = [j for j in range(1, i) if ids[j - 1] == ids[i]]
        if keys:
            sums.append(sum(w[i, j] for j in keys))
    return float(np.mean(sums))


def prefix_vectorised(w, ids):
    match = (ids[:, None] == ids[None, :-1]) & np.tri(len(ids), k=-1, dtype=bool)[:, 1:]
    has = match.any(axis=1)
    return float((w[:, 1:] * match).sum(axis=1)[has].mean())


@pytest.mark.parametrize("right", [prefix_loop, prefix_vectorised])
def test_prefix_matching_accepts_right_answers(right, capsys):
    assert chk.prefix_matching(right)
    assert one_line(capsys).startswith("✓")


def _variant(kind):
    def f(w, ids):
        n = len(ids)
        if kind == "copy":  # the earlier copy itself
            m = (ids[:, None] == ids[None, :]) & np.tri(n, k=-1, dtype=bool)
            return float((w * m).sum(axis=1)[m.any(axis=1)].mean())
        m = np.zeros((n, n), dtype=bool)
        m[:, 1:] = (ids[:, None] == ids[None, :-1]) & np.tri(n, k=-1, dtype=bool)[:, 1:]
        if kind == "not causal":  # keys at or after the query count as "after an earlier copy"
            m = np.zeros((n, n), dtype=bool)
            m[:, 1:] = ids[:, None] == ids[None, :-1]
            return float((w * m).sum(axis=1)[m.any(axis=1)].mean())
        if kind == "diagonal":  # j <= i: the query itself counted as a key
            m = np.zeros((n, n), dtype=bool)
            m[:, 1:] = ids[:, None] == ids[None, :-1]
            m &= np.tri(n, dtype=bool)
            return float((w * m).sum(axis=1)[m.any(axis=1)].mean())
        if kind == "seen":  # every query whose token occurred before, with a key after a copy or not
            seen = np.array([ids[i] in ids[:i] for i in range(n)])
            return float((w * m).sum(axis=1)[seen].mean())
        if kind == "all":
            return float((w * m).sum(axis=1).mean())
        if kind == "not first":  # every query but query 0
            return float((w * m).sum(axis=1)[1:].mean())
        if kind == "columns":
            return float((w.T * m).sum(axis=1)[m.any(axis=1)].mean())
        if kind == "previous":
            return float(w[np.arange(1, n), np.arange(n - 1)][m.any(axis=1)[1:]].mean())
        if kind == "pairs":
            return float(w[m].mean())
        return 0.5
    return f


@pytest.mark.parametrize("kind, hint", [("copy", "FOLLOWED the earlier copy"), ("all", "averaged over every query;"),
                                        ("not first", "every query but the first"),
                                        ("not causal", "at or after the query"), ("diagonal", "query itself"),
                                        ("seen", "whose token occurred before"),
                                        ("columns", "by column"), ("previous", "previous token"),
                                        ("pairs", "(query, key) pairs"), ("other", "by hand")])
def test_prefix_matching_names_the_mistake(kind, hint, capsys):
    assert not chk.prefix_matching(_variant(kind))
    out = one_line(capsys)
    assert out.startswith("✗") and hint in out, out
    assert "ids[j - 1]" not in out and "j < i" not in out and "axis" not in out, out  # the idea, not the line


def test_prefix_matching_cases_include_an_immediate_repeat():
    """Without an "A A" case, counting key i (j <= i) or every query whose token occurred before would pass."""
    cases = chk._prefix_table()["cases"]
    assert any((ids[1:] == ids[:-1]).any() for _, ids in cases)
    for kind in ("diagonal", "seen"):
        f = _variant(kind)
        assert any(not np.isclose(f(w, ids), prefix_loop(w, ids)) for w, ids in cases), kind


def test_prefix_matching_table_is_the_loop():
    """The recorded right answers are the loop's, and every recorded mistake differs from them somewhere."""
    t = chk._prefix_table()
    assert np.allclose(t["want"], [prefix_loop(w, ids) for w, ids in t["cases"]])
    for name, values in t["wrong"].items():
        assert not np.allclose(values, t["want"]), name


def test_prefix_matching_stub_errors_and_library_use(capsys):
    assert not chk.prefix_matching(lambda w, ids: ...)
    assert one_line(capsys) == STUB
    assert not chk.sink_window_mask(lambda n, w, s: ...)
    assert one_line(capsys) == STUB
    assert not chk.prefix_matching(boom)
    assert "RuntimeError" in one_line(capsys)
    assert not chk.prefix_matching(lambda w, ids: np.ones(3))
    assert "one number" in one_line(capsys)
    assert not chk.prefix_matching(...)
    assert "no answer yet" in one_line(capsys)
    from attention_kit.heads.diagnostics import prefix_matching_score
    assert not chk.prefix_matching(lambda w, ids: float(prefix_matching_score(w, ids)[0]))
    assert "attention_kit" in one_line(capsys)


def prefix_skips_repeats(w, ids):
    """Trial 3, V3: every query right after a copy of its own token ("A A") left out, keys or not."""
    vals = []
    for i in range(len(ids)):
        if i > 0 and ids[i - 1] == ids[i]:
            continue
        keys = [j for j in range(1, i) if ids[j - 1] == ids[i]]
        if keys:
            vals.append(sum(w[i, j] for j in keys))
    return float(np.mean(vals))


def test_prefix_matching_query_after_a_copy_of_itself_with_keys_counts(capsys):
    """Trial 3, V3: skipping the second A of "A A" even when it has keys right after an earlier A
    passed (no public case had such a query); the hint names the idea, not the condition."""
    cases = chk._prefix_table()["cases"]
    assert any(not np.isclose(prefix_skips_repeats(w, ids), prefix_loop(w, ids)) for w, ids in cases)
    assert not chk.prefix_matching(prefix_skips_repeats)
    out = one_line(capsys)
    assert out.startswith("✗") and "right after a copy of its own token" in out, out
    assert "ids[i - 1]" not in out and "==" not in out, out


# ---------------------------------------------------------------- where the circuit fails


def test_the_failing_queries_are_what_the_shipped_model_does():
    """The checker's answer, measured as the notebook's solution measures it (and on other draws)."""
    from attention_kit.heads import diagnostics as D
    from attention_kit.heads.model import run
    from attention_kit.heads.trained import load_trained

    params, _, _ = load_trained("induction")
    for seed in (2, 8):
        rng = np.random.default_rng(seed)
        order = np.argsort(rng.random((512, 16)), axis=1)  # (512, 16): random distinct tokens
        seqs = np.concatenate([order[:, :chk.PREFIX], order[:, chk.PREFIX + np.arange(15) % chk.SEGMENT]], axis=1)
        ids, targets = seqs[:, :24], seqs[:, 1:]
        assert (D.seen_before(ids) == (np.arange(24) >= 14)).all()  # queries 14..23 have an earlier copy
        acc = (run(params, ids)[0].argmax(axis=-1) == targets).mean(axis=0)  # (24,) per query
        failing = chk._failing_table().open()["failing"]
        assert [i for i in range(14, 24) if acc[i] < 0.5] == failing
        assert acc[failing].max() < 0.4 and np.delete(acc[14:], [2, 3, 6, 7]).min() > 0.9


@pytest.mark.parametrize("right", [[16, 17, 20, 21], (21, 20, 17, 16), {16, 17, 20, 21}, np.array([16, 17, 20, 21])])
def test_failing_queries_accepts_the_answer_in_any_order_and_container(right, capsys):
    assert chk.failing_queries(right)
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, hint", [
    ([17, 18, 21, 22], "query i predicts token i + 1"),
    ([17, 21], "where the earlier copy itself lies"),
    ([], "some queries do fail"),
    (list(range(14, 24)), "query 14, for one,"),
    ([16, 17], "some later queries fail too"),
    ([16, 17, 20, 21, 22], "query 22 works"),
    ([16, 20, 21], "query 17 fails too"),
    ([14, 15, 18, 19, 22, 23], "queries that succeed"),
    ([23, 22, 19, 18, 15, 14], "query 14 works"),
    ([15, 19], "query 15 works"),
    ([3, 16, 17, 20, 21], "queries 14 to 23"),
    ([16.0, 17.0, 20.0, 21.0], "whole numbers"),
    ((0.7, 0.2), "whole numbers"),
    ([True, False], "whole numbers"),
    ("16 17 20 21", "list of query positions"),
    (16, "list of query positions"),
    ([16, 16, 17, 20, 21], "once"),
])
def test_failing_queries_names_the_mistake(wrong, hint, capsys):
    assert not chk.failing_queries(wrong)
    out = one_line(capsys)
    assert out.startswith("✗") and hint in out, out


def test_failing_queries_graded_hints_do_not_state_the_answer(capsys):
    assert not chk.failing_queries(...)
    assert "no answer yet" in one_line(capsys)
    for wrong in ([17, 18, 21, 22], [17, 21], [], list(range(14, 24)), [16, 17], [16, 17, 20, 21, 22], [16, 20],
                  [14, 15, 18, 19, 22, 23], [15, 19]):
        with graded_hints():
            assert not chk.failing_queries(wrong)
        out = one_line(capsys)
        assert out.startswith("✗") and not any(str(q) in out for q in (16, 17, 20, 21, 22)), out


# ---------------------------------------------------------------- sink window mask


def mask_loop(n, window, sinks):
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1):
            m[i, j] = i - j < window or j < sinks
    return m


def test_sink_window_mask_accepts_a_loop(capsys):
    assert chk.sink_window_mask(mask_loop)
    assert one_line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, hint", [
    (lambda n, w, s: np.tri(n, dtype=bool) & ~np.tri(n, k=-w, dtype=bool) | (np.arange(n) < s)[None, :],
     "BEFORE them"),
    (lambda n, w, s: mask_loop(n, w + 1, s), "one too wide"),
    (lambda n, w, s: mask_loop(n, w - 1, s) if w > 1 else mask_loop(n, w, s), "one too narrow"),
    (lambda n, w, s: mask_loop(n, w, 0), "sinks are missing"),
    (lambda n, w, s: ~mask_loop(n, w, s), "swapped"),
    (lambda n, w, s: mask_loop(n, max(w - s, 1), s), "IN ADDITION"),
    (lambda n, w, s: ~mask_loop(n, w, s) & np.tri(n, dtype=bool), "inside the causal part"),
    (lambda n, w, s: (np.abs(np.arange(n)[:, None] - np.arange(n)) < w) | (np.arange(n) < s), "into the future"),
    (lambda n, w, s: mask_loop(n, w, s).astype(int), "boolean"),
    (lambda n, w, s: mask_loop(n, w, s)[:-1], "shape"),
    (lambda n, w, s: mask_loop(n, w, s).tolist(), "numpy array"),
    (lambda n, w, s: tuple(mask_loop(n, w, s)), "numpy array"),
    (lambda n, w, s: mask_loop(n, 3, 1), "three questions"),  # one size hard-coded
    (lambda n, w, s: mask_loop(n, w, 1), "three questions"),  # one number of sinks hard-coded
    (lambda n, w, s: mask_loop(n, 3, s), "three questions"),  # one window hard-coded
])
def test_sink_window_mask_names_the_mistake(wrong, hint, capsys):
    assert not chk.sink_window_mask(wrong)
    out = one_line(capsys)
    assert out.startswith("✗") and hint in out, out
    assert "<=" not in out and "astype" not in out and "i - j" not in out, out  # the idea, not the line


def test_sink_window_mask_table_is_the_loop():
    """The recorded masks are the loop's; a window shrunk by the sinks is told so, not "one too narrow"."""
    t = chk._mask_table()
    for (n, w, s), want in zip(chk.MASK_CASES, t["want"], strict=True):
        assert want.dtype == np.bool_ and np.array_equal(want, mask_loop(n, w, s))
    assert len({n for n, _, _ in chk.MASK_CASES}) > 1 and len({w for _, w, _ in chk.MASK_CASES}) > 1
    assert len({s for _, _, s in chk.MASK_CASES}) > 2  # no sinks, one, and more than one
