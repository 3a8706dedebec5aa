"""Notebook 08's tasks and diagnostics (attention_kit.heads), each on an input whose answer is
known: hand-made attention weights, a plain loop, or a model whose head is set by hand."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.errors import ParameterError, ShapeError
from attention_kit.heads import diagnostics as D
from attention_kit.heads.model import AttnOnlyConfig, init_attention_only, run
from attention_kit.heads.tasks import (
    BOS,
    TRIGGERS,
    bigram_backcopy,
    bigram_table,
    repeated_sequences,
)
from attention_kit.learn.params import load_params, save_params


def test_repeated_sequences_repeat_a_segment_of_distinct_tokens():
    ids, targets, rep = repeated_sequences(np.random.default_rng(0), 50, length=24, vocab=16, periods=(4, 12))
    np.testing.assert_array_equal(ids[:, 1:], targets[:, :-1])
    for s, t, r in zip(ids, targets, rep, strict=True):
        full = np.append(s, t[-1])
        p = next(k for k in range(2, 17) if (full[k:] == full[:-k]).all())  # the period, by search
        assert 4 <= p <= 12 and len(set(full[:p])) == p
        np.testing.assert_array_equal(r, np.arange(1, 25) >= p)
    fixed = repeated_sequences(np.random.default_rng(0), 5, periods=(8, 8))[2]
    assert (fixed.sum(axis=1) == 24 - 7).all()
    with pytest.raises(ParameterError, match="periods"):
        repeated_sequences(np.random.default_rng(0), 5, periods=(1, 30))


def test_bigram_backcopy_copies_after_a_trigger_and_draws_from_the_table_elsewhere():
    table = bigram_table(16, seed=0)
    np.testing.assert_allclose(table.sum(axis=1), 1)
    assert not table[:, BOS].any()
    ids, targets, copies = bigram_backcopy(np.random.default_rng(1), 400, length=24, table=table)
    assert (ids[:, 0] == BOS).all() and not np.isin(ids[:, 1], TRIGGERS).any()
    np.testing.assert_array_equal(copies, np.isin(ids, TRIGGERS))
    b, i = np.nonzero(copies)
    np.testing.assert_array_equal(targets[b, i], ids[b, i - 1])
    assert 0.05 < copies.mean() < 0.15  # two triggers at 1/20 each, no two in a row
    # elsewhere the next token follows the table: count the transitions out of the commonest token
    a = np.bincount(ids[~copies & (ids != BOS)]).argmax()
    sel = (ids == a) & ~copies
    freq = np.bincount(targets[sel], minlength=16) / sel.sum()
    assert np.abs(freq - table[a]).max() < 0.05


def test_previous_token_and_sink_scores_on_hand_made_weights():
    n = 5
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1  # query 0 can only see itself
    sink = np.zeros((n, n))
    sink[:, 0] = 1
    w = np.stack([prev, sink])  # (h=2, n, n)
    np.testing.assert_allclose(D.previous_token_score(w), [1.0, 0.25])  # the sink head: only query 1 hits i-1 = 0
    np.testing.assert_allclose(D.sink_mass(w), [0.25, 1.0])
    np.testing.assert_allclose(D.previous_token_score(w, queries=slice(2, 5)), [1.0, 0.0])
    np.testing.assert_allclose(D.previous_token_score(w, queries=[0, 1]), [1.0, 1.0])  # query 0 left out
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    np.testing.assert_allclose(D.sink_mass(uniform), np.mean(1 / np.arange(2, n + 1)))
    only = np.array([[True, False, True, False, False]])
    np.testing.assert_allclose(D.sink_mass(uniform, queries=only), [1 / 3])
    with pytest.raises(ShapeError):
        D.previous_token_score(np.ones(3))


def test_prefix_matching_score_counts_the_token_after_the_earlier_copy():
    ids = np.array([5, 6, 7, 5, 6, 7, 5])  # period 3: query i >= 3 should look at i - 2
    m = D.prefix_match_mask(ids)[0]
    for i in range(7):  # a plain loop
        for j in range(7):
            assert m[i, j] == (0 < j < i and ids[j - 1] == ids[i])
    induction = np.zeros((7, 7))
    for i in range(7):
        induction[i, i - 2 if i >= 3 else 0] = 1
    prev = np.eye(7, k=-1)
    prev[0, 0] = 1
    score = D.prefix_matching_score(np.stack([induction, prev]), ids)
    np.testing.assert_allclose(score, [1.0, 0.0])
    half = 0.5 * induction + 0.5 * prev
    np.testing.assert_allclose(D.prefix_matching_score(half, ids), [0.5])
    with pytest.raises(ParameterError, match="no token repeats"):
        D.prefix_matching_score(prev, np.arange(7))


def _induction_model():
    """A hand-set two-layer circuit: layer 0 copies the previous token, layer 1 matches it."""
    V, n, big = 6, 8, 30.0
    cfg = AttnOnlyConfig(vocab=V, d_model=3 * V + n, n_heads=(1, 1), d_head=V + n, max_len=n)
    d = cfg.d_model
    p = {k: np.zeros_like(v) for k, v in init_attention_only(cfg, rng=np.random.default_rng(0)).items()}
    tok, prev_tok, pos = slice(0, V), slice(V, 2 * V), slice(3 * V, 3 * V + n)
    p["E"][:, tok] = np.eye(V)
    p["P"][:, pos] = np.eye(n)
    # layer 0: query at position i looks for position i - 1 (positions in the d_head), writes its token
    p["l0.attn.W_q"][0, pos, :n] = big * np.eye(n, k=-1) * np.sqrt(V + n)  # e_i -> big e_{i-1}
    p["l0.attn.W_k"][0, pos, :n] = np.eye(n)
    p["l0.attn.W_v"][0, tok, :V] = np.eye(V)
    p["l0.attn.W_o"][:V, prev_tok] = np.eye(V)
    # layer 1: query token a matches keys whose previous token is a; copies their token to the output
    p["l1.attn.W_q"][0, tok, :V] = big * np.eye(V) * np.sqrt(V + n)
    p["l1.attn.W_k"][0, prev_tok, :V] = np.eye(V)
    p["l1.attn.W_v"][0, tok, :V] = np.eye(V)
    p["l1.attn.W_o"][:V, 2 * V:3 * V] = np.eye(V)
    p["W_out"] = np.zeros((d, V))
    p["W_out"][2 * V:3 * V] = np.eye(V)
    return p


def test_the_diagnostics_find_a_hand_set_induction_circuit():
    p = _induction_model()
    ids = np.array([[0, 1, 2, 3, 1, 2, 3, 1], [4, 2, 5, 3, 2, 5, 3, 2]])  # a first token that never recurs
    targets = np.roll(ids, -1, axis=1)
    rep = np.zeros(ids.shape, dtype=bool)
    rep[:, 4:7] = True  # the tokens after a repeat (the last target is wrapped around: left out)
    logits, saved = run(p, ids)
    assert D.previous_token_score(saved["weights"][0])[0] > 0.99
    assert D.prefix_matching_score(saved["weights"][1], ids)[0] > 0.99
    assert D.accuracy(logits, targets, rep) == 1.0
    # mean-ablating the previous-token head breaks the induction head downstream
    ablated, _ = run(p, ids, replace_heads=D.mean_ablation(D.head_means(p, ids, positions="learned"), [(0, 0)]))
    assert D.accuracy(ablated, targets, rep) < 0.5
    comp = D.composition_scores(p, (0, 0), (1, 0))
    assert comp["K"] > 0.3 and comp["Q"] == 0 and comp["V"] == 0
    with pytest.raises(ParameterError, match="earlier layer"):
        D.composition_scores(p, (1, 0), (0, 0))
    with pytest.raises(ParameterError, match="no mean"):
        D.mean_ablation({}, [(0, 0)])


def test_head_means_average_each_head_over_batch_and_positions():
    p = init_attention_only(AttnOnlyConfig(vocab=5, d_model=8, n_heads=(2,), d_head=4, max_len=6),
                            rng=np.random.default_rng(0))
    ids = np.random.default_rng(1).integers(0, 5, (3, 6))
    means = D.head_means(p, ids, positions="learned")
    _, saved = run(p, ids)
    X = p["E"][ids] + p["P"]  # (3, 6, 8)
    w = saved["weights"][0]  # (3, 2, 6, 6)
    for h in range(2):
        out = w[:, h] @ (X @ p["l0.attn.W_v"][h])  # (3, 6, 4): one head written out
        np.testing.assert_allclose(means[(0, h)], out.mean(axis=(0, 1)), atol=1e-12)


def test_the_config_saves_and_loads(tmp_path):
    cfg = AttnOnlyConfig(vocab=5, d_model=8, n_heads=(1, 2), d_head=4, max_len=6)
    p = init_attention_only(cfg, rng=np.random.default_rng(0))
    save_params(tmp_path / "m.npz", p, cfg, losses=np.arange(3.0))
    q, cfg2, meta = load_params(tmp_path / "m.npz", AttnOnlyConfig)
    assert cfg2 == cfg and set(q) == set(p) and meta["losses"].shape == (3,)
    with pytest.raises(ParameterError, match="one number per layer"):
        AttnOnlyConfig(n_heads=2)


def test_seen_before_marks_the_queries_an_induction_rule_can_answer():
    ids = np.array([[5, 6, 7, 5, 6, 7, 5], [1, 2, 3, 4, 1, 1, 0]])
    want = np.array([[ids[b, i] in ids[b, :i] for i in range(7)] for b in range(2)])  # a plain loop
    np.testing.assert_array_equal(D.seen_before(ids), want)
    np.testing.assert_array_equal(D.seen_before(ids[0]), want[:1])  # one sequence: (1, n)
    rs, _, rep = repeated_sequences(np.random.default_rng(0), 50, periods=(4, 12))
    period = 25 - rep.sum(axis=1)  # rep is True from query p - 1 on
    np.testing.assert_array_equal(D.seen_before(rs), np.arange(24)[None] >= period[:, None])
    boundary = rep & ~D.seen_before(rs)  # query p - 1: the next token repeats, its own token is new
    np.testing.assert_array_equal(np.argmax(boundary, axis=1), period - 1)
    assert (boundary.sum(axis=1) == 1).all()
    with pytest.raises(ShapeError):
        D.seen_before(np.zeros((2, 3, 4), dtype=int))


def test_head_direct_logits_sum_with_the_embeddings_path_to_the_logits():
    cfg = AttnOnlyConfig(vocab=6, d_model=8, n_heads=(2, 3), d_head=4, max_len=7)
    p = init_attention_only(cfg, rng=np.random.default_rng(2))
    ids = np.random.default_rng(3).integers(0, 6, (2, 7))
    logits, saved = run(p, ids)
    total = (p["E"][ids] + p["P"][:7]) @ p["W_out"]  # (2, 7, 6): the direct path of the embeddings
    for l, h in ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2)):
        total += D.head_direct_logits(p, saved, l, h)
    np.testing.assert_allclose(total, logits, atol=1e-10)
    # one head written out by hand: its weights times its values, times its rows of W_o, times W_out
    x = p["E"][ids] + p["P"][:7]
    by_hand = saved["weights"][0][:, 1] @ (x @ p["l0.attn.W_v"][1]) @ p["l0.attn.W_o"][4:8] @ p["W_out"]
    np.testing.assert_allclose(D.head_direct_logits(p, saved, 0, 1), by_hand, atol=1e-10)
    with pytest.raises(ParameterError, match="no head 2"):
        D.head_direct_logits(p, saved, 0, 2)
    _, ablated = run(p, ids, replace_heads={(1, 0): np.zeros(4)})
    with pytest.raises(ParameterError, match="replace_heads"):
        D.head_direct_logits(p, ablated, 1, 0)


def test_composition_baseline_is_about_one_over_root_d_and_matches_the_scores_of_fresh_models():
    base = D.composition_baseline(32, 16, rng=np.random.default_rng(0), samples=400)
    assert base.shape == (400,) and abs(base.mean() - 32 ** -0.5) < 0.01 and 0.005 < base.std() < 0.03
    cfg = AttnOnlyConfig(vocab=16, d_model=32, n_heads=(1, 1), d_head=16, max_len=8)
    fresh = [D.composition_scores(init_attention_only(cfg, rng=np.random.default_rng(s)), (0, 0), (1, 0))["K"]
             for s in range(400)]  # the same distribution, drawn through the model's initialisation
    assert abs(np.mean(fresh) - base.mean()) < 0.005  # both about 0.18 +- 0.012: a sampling difference only
    # one sample by hand: |W_QK W_OV^T|_F / (|W_QK|_F |W_OV|_F) of the first draw
    rng = np.random.default_rng(5)
    q, k, v0, _ = rng.normal(size=(4, 32, 16))
    o0, _ = rng.normal(size=(2, 16, 32))
    QK, OV = q @ k.T, v0 @ o0
    want = np.linalg.norm(QK @ OV.T) / np.linalg.norm(QK) / np.linalg.norm(OV)
    np.testing.assert_allclose(D.composition_baseline(32, 16, rng=np.random.default_rng(5), samples=1)[0], want)
    for kind in ("Q", "V"):
        assert abs(D.composition_baseline(32, 16, rng=np.random.default_rng(1), samples=200, kind=kind).mean()
                   - 32 ** -0.5) < 0.02
    with pytest.raises(ParameterError, match="kind"):
        D.composition_baseline(32, 16, rng=np.random.default_rng(0), kind="X")


def test_composition_scores_equal_elhage_et_al_s_column_convention():
    """Elhage et al. (2021) write W_Q as (d_head, d_model) and vectors as columns: W_QK = W_Q^T W_K,
    W_OV = W_O W_V, K-composition |W_QK W_OV'|. The row convention gives the same scores."""
    p = init_attention_only(AttnOnlyConfig(n_heads=(1, 1)), rng=np.random.default_rng(4))
    QK_rows, OV_rows = D.head_matrices(p, 1, 0)
    Wq, Wk = p["l1.attn.W_q"][0].T, p["l1.attn.W_k"][0].T  # (d_head, d_model): their layout
    Wv0, Wo0 = p["l0.attn.W_v"][0].T, p["l0.attn.W_o"][:16].T  # (d_head, d_model), (d_model, d_head)
    QK_cols, OV0_cols = Wq.T @ Wk, Wo0 @ Wv0
    np.testing.assert_allclose(QK_cols, QK_rows, atol=1e-12)  # the same bilinear form
    np.testing.assert_allclose(OV0_cols, D.head_matrices(p, 0, 0)[1].T, atol=1e-12)  # the transpose
    theirs = np.linalg.norm(QK_cols @ OV0_cols) / np.linalg.norm(QK_cols) / np.linalg.norm(OV0_cols)
    np.testing.assert_allclose(D.composition_scores(p, (0, 0), (1, 0))["K"], theirs)


def test_path_ablation_isolates_the_queries_keys_and_values_of_later_layers():
    cfg = AttnOnlyConfig(vocab=7, d_model=8, n_heads=(2, 2, 1), d_head=4, max_len=9)
    p = init_attention_only(cfg, rng=np.random.default_rng(5))
    ids = np.random.default_rng(6).integers(0, 7, size=(3, 9))
    means = D.head_means(p, ids, positions="learned")
    logits, saved = run(p, ids)
    plain, w = D.path_ablation(p, ids, means, (0, 1), ())
    np.testing.assert_allclose(plain, logits, atol=1e-10)  # nothing ablated: the model's forward pass
    for a, b in zip(w, saved["weights"], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    # ablated for every later read, the only difference from a full mean-ablation is the direct path
    full, _ = run(p, ids, replace_heads=D.mean_ablation(means, [(0, 1)]))
    every, w_every = D.path_ablation(p, ids, means, (0, 1), ("q", "k", "v"))
    direct = D.head_direct_logits(p, saved, 0, 1) - means[(0, 1)] @ p["l0.attn.W_o"][4:8] @ p["W_out"]
    np.testing.assert_allclose(every - direct, full, atol=1e-10)
    np.testing.assert_allclose(w_every[0], saved["weights"][0], atol=1e-12)  # its own layer is untouched
    # keys only: layer 1's queries and values read the real stream, so its weights change, not its values' path
    _, w_k = D.path_ablation(p, ids, means, (0, 1), ("k",))
    assert not np.allclose(w_k[1], saved["weights"][1])
    _, w_v = D.path_ablation(p, ids, means, (0, 1), ("v",))
    np.testing.assert_allclose(w_v[1], saved["weights"][1], atol=1e-12)  # values do not move the weights
    with pytest.raises(ParameterError, match="some of"):
        D.path_ablation(p, ids, means, (0, 1), ("x",))
    with pytest.raises(ParameterError, match="no mean"):
        D.path_ablation(p, ids, means, (3, 0), ("k",))
