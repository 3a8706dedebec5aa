"""The notebook-08 checkers accept right answers and name the usual mistakes."""

import numpy as np
import pytest
from test_check_masks_positions import STUB, _line, _raises  # (tests/ is on sys.path)

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
    assert _line(capsys).startswith("✓")


def _variant(kind):
    def f(w, ids):
        n = len(ids)
        if kind == "copy":  # the earlier copy itself
            m = (ids[:, None] == ids[None, :]) & np.tri(n, k=-1, dtype=bool)
            return float((w * m).sum(axis=1)[m.any(axis=1)].mean())
        m = np.zeros((n, n), dtype=bool)
        m[:, 1:] = (ids[:, None] == ids[None, :-1]) & np.tri(n, k=-1, dtype=bool)[:, 1:]
        if kind == "all":
            return float((w * m).sum(axis=1).mean())
        if kind == "columns":
            return float((w.T * m).sum(axis=1)[m.any(axis=1)].mean())
        if kind == "previous":
            return float(w[np.arange(1, n), np.arange(n - 1)][m.any(axis=1)[1:]].mean())
        if kind == "pairs":
            return float(w[m].mean())
        return 0.5
    return f


@pytest.mark.parametrize("kind, hint", [("copy", "FOLLOWED the earlier copy"), ("all", "average only over"),
                                        ("columns", "by column"), ("previous", "previous token"),
                                        ("pairs", "(query, key) pairs"), ("other", "expected")])
def test_prefix_matching_names_the_mistake(kind, hint, capsys):
    assert not chk.prefix_matching(_variant(kind))
    out = _line(capsys)
    assert out.startswith("✗") and hint in out, out


def test_prefix_matching_stub_errors_and_library_use(capsys):
    assert not chk.prefix_matching(lambda w, ids: ...)
    assert _line(capsys) == STUB
    assert not chk.sink_window_mask(lambda n, w, s: ...)
    assert _line(capsys) == STUB
    assert not chk.prefix_matching(_raises)
    assert "RuntimeError" in _line(capsys)
    assert not chk.prefix_matching(lambda w, ids: np.ones(3))
    assert "one number" in _line(capsys)
    assert not chk.prefix_matching(...)
    assert "no answer yet" in _line(capsys)
    from attention_kit.heads.diagnostics import prefix_matching_score
    assert not chk.prefix_matching(lambda w, ids: float(prefix_matching_score(w, ids)[0]))
    assert "attention_kit" in _line(capsys)


# ---------------------------------------------------------------- most harmful head


def test_most_harmful_head(capsys):
    assert chk.most_harmful_head((0, 0))
    assert _line(capsys).startswith("✓")
    for answer, hint in (((1, 0), "BOTH"), ((1, 1), "weaker"), ((0, 1), "same token"), ((2, 0), "layers 0 and 1"),
                         ("L0", "pair")):
        assert not chk.most_harmful_head(answer)
        assert hint in _line(capsys)
    assert not chk.most_harmful_head(...)
    assert "no answer yet" in _line(capsys)
    with graded_hints():
        assert not chk.most_harmful_head((1, 0))
    out = _line(capsys)
    assert "layer 0 head 0" not in out and "BOTH" not in out


# ---------------------------------------------------------------- sink window mask


def mask_loop(n, window, sinks):
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1):
            m[i, j] = i - j < window or j < sinks
    return m


def test_sink_window_mask_accepts_a_loop(capsys):
    assert chk.sink_window_mask(mask_loop)
    assert _line(capsys).startswith("✓")


@pytest.mark.parametrize("wrong, hint", [
    (lambda n, w, s: np.tri(n, dtype=bool) & ~np.tri(n, k=-w, dtype=bool) | (np.arange(n) < s)[None, :],
     "BEFORE them"),
    (lambda n, w, s: mask_loop(n, w + 1, s), "one too wide"),
    (lambda n, w, s: mask_loop(n, w - 1, s) if w > 1 else mask_loop(n, w, s), "one too narrow"),
    (lambda n, w, s: mask_loop(n, w, 0), "sinks are missing"),
    (lambda n, w, s: ~mask_loop(n, w, s), "swapped"),
    (lambda n, w, s: mask_loop(n, w, s).astype(int), "boolean"),
    (lambda n, w, s: mask_loop(n, w, s)[:-1], "shape"),
])
def test_sink_window_mask_names_the_mistake(wrong, hint, capsys):
    assert not chk.sink_window_mask(wrong)
    out = _line(capsys)
    assert out.startswith("✗") and hint in out, out
