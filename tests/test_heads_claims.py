"""The numbers notebook 08 (what trained heads do) states in its prose, recomputed from
attention_kit.heads and the shipped models, so that a change to the models or the code that moves one
fails here. The notebook prints what a learner reads; this file holds the thresholds behind it."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.heads import diagnostics as D
from attention_kit.heads.model import init_attention_only, run
from attention_kit.heads.tasks import repeated_sequences
from attention_kit.heads.trained import held_out, load_trained, train_recipe
from attention_kit.learn.layers import cross_entropy

PROBE = np.array([3, 9, 14, 1, 7, 12, 5] * 4)[:24]                       # the notebook's probe: period 7


@pytest.fixture(scope="module")
def models():
    return {name: load_trained(name) for name in ("one_layer", "induction", "fixed_period", "sinks")}


@pytest.fixture(scope="module")
def induction(models):
    params2 = models["induction"][0]
    ids_h, targets_h, rep_h = held_out("induction")
    seen_h = D.seen_before(ids_h)
    logits, saved = run(params2, ids_h)
    return dict(params=params2, ids=ids_h, targets=targets_h, rep=rep_h, seen=seen_h,
                boundary=rep_h & ~seen_h, first=~rep_h, logits=logits, saved=saved)


def test_section_1_the_rule_answers_queries_from_the_period_on():
    ids, targets, repeated = repeated_sequences(np.random.default_rng(3), 3)
    for r, sb in zip(repeated, D.seen_before(ids), strict=True):
        period = 24 - int(r.sum()) + 1
        np.testing.assert_array_equal(np.flatnonzero(sb), np.arange(period, 24))


def test_section_1_a_bigram_model_is_at_chance_on_the_repeats():
    big_ids, big_targets, big_rep = repeated_sequences(np.random.default_rng(1), 20000)
    counts = np.zeros((16, 16))
    np.add.at(counts, (big_ids[big_rep], big_targets[big_rep]), 1)
    assert (counts.max(axis=1) / counts.sum(axis=1)).max() < 0.085
    assert not counts[np.arange(16), np.arange(16)].any()              # a token never follows itself


def test_section_1_1_the_live_steps_are_the_shipped_logs_first_steps(models):
    for name in ("one_layer", "induction"):
        live = train_recipe(name, steps=50)[2]
        np.testing.assert_allclose(live.losses, models[name][2]["losses"][:50], rtol=1e-6)


def smooth(losses, width=25):
    return losses[: len(losses) // width * width].reshape(-1, width).mean(axis=1)


def test_section_1_1_the_loss_falls_suddenly_for_two_layers_only(models):
    s1, s2 = smooth(models["one_layer"][2]["losses"]), smooth(models["induction"][2]["losses"])
    steps25 = 25 * np.arange(1, len(s2) + 1)
    drops = s2[:-6] - s2[6:]
    k = int(np.argmax(drops))
    assert (steps25[k], steps25[k + 6]) == (200, 350) and drops.max() > 1.0
    assert (s1[:-6] - s1[6:])[4:].max() < 0.5


def test_section_1_1_accuracy_where_the_rule_applies_and_at_the_boundary(models, induction):
    d = induction
    assert (d["boundary"].sum(axis=1) == 1).all() and not (d["seen"] & d["first"]).any()
    assert d["seen"].sum() == 8178
    n_right = int(((d["logits"].argmax(axis=-1) == d["targets"]) & d["seen"]).sum())
    assert n_right == d["seen"].sum() - 1
    logits1 = run(models["one_layer"][0], d["ids"])[0]
    assert D.accuracy(logits1, d["targets"], d["seen"]) <= 0.5
    assert 0.7 < D.accuracy(d["logits"], d["targets"], d["boundary"]) < 0.85


def test_section_1_1_the_bayes_optimal_guess_on_the_first_segment(induction):
    d = induction
    _, i_b = np.nonzero(d["boundary"])
    q_b = 1 / (12 - np.maximum(4, i_b + 1) + 1)
    assert (q_b > (1 - q_b) / (15 - i_b)).all()                        # Bayes ranks the restart first there
    b_first, i_first = np.nonzero(d["first"])
    restart = np.where(i_first + 1 >= 4, 1 / (12 - np.maximum(4, i_first + 1) + 1), 0.0)
    bayes = -np.log((1 - restart) / (15 - i_first)).mean()
    no_restart = np.log(15 - i_first).mean()
    model_loss = cross_entropy(d["logits"], np.where(d["first"], d["targets"], -1))[0]
    assert no_restart < bayes < np.log(16) < model_loss
    probs = np.exp(d["logits"][b_first, i_first])
    probs /= probs.sum(axis=1, keepdims=True)
    in_context = np.zeros_like(probs, dtype=bool)
    for r, (b, i) in enumerate(zip(b_first, i_first, strict=True)):
        in_context[r, d["ids"][b, : i + 1]] = True
    on_first_token = probs[np.arange(len(b_first)), d["ids"][b_first, 0]]
    assert (probs * in_context).sum(axis=1).mean() - on_first_token.mean() > 0.1


def test_section_2_the_probe_and_its_stripes(models, induction):
    params2, _, meta2 = models["induction"]
    np.testing.assert_array_equal(PROBE, meta2["probe"])
    _, saved = run(params2, PROBE)
    w10 = saved["weights"][1][0, 0]
    assert w10[10].argmax() == 4                                       # the second B looks at the H after the first B
    back = np.arange(24) - w10.argmax(axis=1)
    assert (back[7:14] == 6).all() and (back[14:21] == 13).all() and (back[21:23] == 20).all() and back[23] == 13
    assert (w10[7:23].argmax(axis=1) <= 7).all()                       # always a key after the first copy: 1..7


def test_section_2_the_heads_scores(induction):
    d = induction
    ws = d["saved"]["weights"]
    prefix = [D.prefix_matching_score(w, d["ids"]) for w in ws]
    prev_all = [D.previous_token_score(w) for w in ws]
    prev_early = [D.previous_token_score(w, queries=range(1, 13)) for w in ws]
    prev_late = [D.previous_token_score(w, queries=range(13, 24)) for w in ws]
    same = (d["ids"][:, :, None] == d["ids"][:, None, :]) & np.tri(24, dtype=bool)
    same_token = [(w * same[:, None]).sum(axis=-1)[..., 1:].mean(axis=(0, 2)) for w in ws]
    assert prefix[1][0] >= 0.8 and prefix[1].max() >= 0.95
    assert prev_early[0][0] >= 0.8 and prev_late[0][0] < 0.2 and prev_all[0][0] < 0.6 and same_token[0][1] > 0.9
    w00 = ws[0][:, 0]
    on_prev = np.array([w00[:, i, i - 1].mean() for i in range(1, 24)])
    assert on_prev[:12].min() >= 0.7 and 0.2 < on_prev[12] < 0.35 and on_prev[13:].max() < 0.2


def test_section_2_the_induction_head_reads_keys_up_to_12_and_key_0_when_nothing_matches(induction):
    d = induction
    w10 = d["saved"]["weights"][1][:, 0]
    match = D.prefix_match_mask(d["ids"])
    first = match & (np.cumsum(match, axis=-1) == 1)
    multi = match.sum(axis=-1) >= 2
    assert w10[:, 13:, :13].sum(axis=-1).mean() > 0.99
    assert 0.5 < (w10 * first).sum(axis=-1)[multi].mean() < 0.7
    assert (w10 * match)[..., :13].sum(axis=-1)[multi].mean() > 0.99
    nothing = ~match.any(axis=-1) & (np.arange(24) > 0)
    assert w10[..., 0][nothing].mean() > 0.95
    direct = D.head_direct_logits(d["params"], d["saved"], 1, 0)
    tok0 = np.broadcast_to(d["ids"][:, :1], d["ids"].shape)
    assert (direct.argmax(axis=-1) == tok0)[nothing].mean() > 0.75
    lift0 = (np.take_along_axis(direct, tok0[..., None], axis=-1)[..., 0] - direct.mean(axis=-1))[nothing].mean()
    assert lift0 > 0.5


def test_section_2_both_layer_1_heads_make_the_boundary_guess(induction):
    d = induction
    means = D.head_means(d["params"], d["ids"], positions="learned")
    acc_b = {}
    for head in ((1, 0), (1, 1)):
        logits = run(d["params"], d["ids"], replace_heads=D.mean_ablation(means, [head]))[0]
        acc_b[head] = (D.accuracy(logits, d["targets"], d["boundary"]), D.accuracy(logits, d["targets"], d["seen"]))
    assert acc_b[(1, 0)][0] < 0.3                                      # without the induction head: 0.10
    assert 0.25 < acc_b[(1, 1)][0] < 0.5 and acc_b[(1, 1)][1] > 0.99   # without head 1: 0.37, the rule still applies


def test_section_2_1_ablations(models, induction):
    d = induction
    acc1 = D.accuracy(run(models["one_layer"][0], d["ids"])[0], d["targets"], d["seen"])
    means = D.head_means(d["params"], d["ids"], positions="learned")
    ablated = {}
    for heads in ([(0, 0)], [(0, 1)]):
        logits, sv = run(d["params"], d["ids"], replace_heads=D.mean_ablation(means, heads))
        ablated[heads[0]] = (D.accuracy(logits, d["targets"], d["seen"]),
                             D.prefix_matching_score(sv["weights"][1], d["ids"])[0])
    for reads in ("k", "q", "v"):
        logits, weights = D.path_ablation(d["params"], d["ids"], means, (0, 0), reads)
        ablated[reads] = (D.accuracy(logits, d["targets"], d["seen"]), D.prefix_matching_score(weights[1], d["ids"])[0])
    assert ablated[(0, 0)][0] <= acc1 and ablated[(0, 0)][1] < 0.2
    assert min(ablated[(0, 1)]) > 0.8
    assert max(ablated["k"]) < 0.2
    assert min(ablated["q"] + ablated["v"]) > 0.95


def test_section_2_1_composition_scores(models):
    params2, cfg2, _ = models["induction"]
    fresh = init_attention_only(cfg2, rng=np.random.default_rng(0))
    k_trained = np.array([[D.composition_scores(params2, (0, a), (1, b))["K"] for b in range(2)] for a in range(2)])
    k_fresh = np.array([[D.composition_scores(fresh, (0, a), (1, b))["K"] for b in range(2)] for a in range(2)])
    baseline = D.composition_baseline(32, 16, rng=np.random.default_rng(0), samples=2000)
    z = (k_trained - baseline.mean()) / baseline.std()
    assert (k_trained[0] > k_trained[1]).all() and z[0].min() > 4.5 and np.abs(z[1]).max() < 1.5
    assert abs(baseline.mean() - 32 ** -0.5) < 0.01 and np.abs(k_fresh - baseline.mean()).max() < 2 * baseline.std()


def test_section_2_2_the_phase_change(models):
    meta2 = models["induction"][2]
    st = meta2["snap_steps"]
    prev00, pm10 = meta2["snap_prev_early"][:, 0], meta2["snap_prefix"][:, 2]
    i150, i400 = (int(np.flatnonzero(st == s)[0]) for s in (150, 400))
    j0, j1 = (int(np.flatnonzero(st == s)[0]) for s in (200, 350))
    assert prev00[i150] < 0.3 and pm10[i150] < 0.3 and prev00[i400] > 0.8 and pm10[i400] > 0.9
    assert min((x[j1] - x[j0]) / (x[i400] - x[i150]) for x in (prev00, pm10)) > 0.6
    snap00 = meta2["snap_probe"][i150, 0, 0].astype(float)
    assert (np.diag(snap00)[1:4] > 0.7).all() and snap00[4:].max(axis=1).mean() < 0.5


def fixed_period_accuracy(params_f, period):
    ids, targets, _ = repeated_sequences(np.random.default_rng(period), 512, periods=(period, period))
    return D.accuracy(run(params_f, ids)[0], targets, D.seen_before(ids))


def test_section_3_the_fixed_period_model(models, induction):
    params_f = models["fixed_period"][0]
    ids_f, targets_f, rep_f = held_out("fixed_period")
    logits_f, saved_f = run(params_f, ids_f)
    assert D.accuracy(logits_f, targets_f, rep_f) > 0.99
    assert D.accuracy(logits_f, targets_f, rep_f & ~D.seen_before(ids_f)) > 0.99
    assert D.previous_token_score(saved_f["weights"][0], queries=range(1, 13)).max() < 0.3
    means_f = D.head_means(params_f, ids_f, positions="learned")
    abl_f = [D.accuracy(run(params_f, ids_f, replace_heads=D.mean_ablation(means_f, heads))[0], targets_f, rep_f)
             for heads in ([(0, 0)], [(0, 1)], [(0, 0), (0, 1)])]
    assert min(abl_f[:2]) > 0.9 and 0.7 < abl_f[2] < 0.9
    pm_f = D.prefix_matching_score(saved_f["weights"][1], ids_f)
    assert int(np.argmax(pm_f)) == 0 and pm_f[0] > 0.9 and pm_f[1] < 0.1
    ids6, targets6, _ = repeated_sequences(np.random.default_rng(6), 512, periods=(6, 6))
    seen6 = D.seen_before(ids6)
    assert D.accuracy(run(induction["params"], ids6)[0], targets6, seen6) > 0.9
    assert D.accuracy(run(params_f, ids6)[0], targets6, seen6) < 0.5
    probe6 = np.array([3, 9, 14, 1, 7, 12] * 4)
    w6 = [run(p, probe6)[1]["weights"][1][0] for p in (induction["params"], params_f)]
    back_v = np.arange(24) - w6[0][0].argmax(axis=1)
    back_f = np.arange(24) - w6[1][0].argmax(axis=1)
    assert set(back_v[6:]) == {5, 11, 17}
    assert set(back_f[7:]) == {7, 15} and (np.flatnonzero(back_f == 15) == np.arange(15, 22)).all()


def test_section_3_the_fixed_period_model_works_only_for_periods_that_divide_8(models):
    params_f = models["fixed_period"][0]
    acc = {p: fixed_period_accuracy(params_f, p) for p in (2, 3, 4, 5, 6, 7, 9, 10, 12)}
    assert acc[4] > 0.7 and acc[2] > 0.6                               # 0.85 and 0.72
    assert max(acc[p] for p in (3, 5, 6, 7, 9, 10, 12)) < 0.05        # 0.00 each


@pytest.fixture(scope="module")
def sinks(models):
    params_s, cfg_s, _ = models["sinks"]
    ids_s, targets_s, trig_s = held_out("sinks")
    logits_s, saved_s = run(params_s, ids_s)
    return dict(params=params_s, cfg=cfg_s, ids=ids_s, targets=targets_s, trig=trig_s, logits=logits_s, saved=saved_s)


def test_section_4_the_sink_forms_and_writes_a_constant(sinks):
    s = sinks
    w_s = s["saved"]["weights"][0]
    fresh_s = init_attention_only(s["cfg"], rng=np.random.default_rng(0))
    assert D.sink_mass(run(fresh_s, s["ids"])[1]["weights"][0], queries=~s["trig"])[0] < 0.2
    assert D.sink_mass(w_s, queries=~s["trig"])[0] > 0.8
    b, i = np.nonzero(s["trig"])
    assert w_s[b, 0, i, i - 1].mean() > 0.8
    p = s["params"]
    x_s = p["E"][s["ids"]] + p["P"][:24]
    writes = x_s @ p["l0.attn.W_v"][0] @ p["l0.attn.W_o"]
    assert np.abs(writes[:, 0] - writes[:, 0].mean(axis=0)).max() < 1e-12
    size0, size_rest = np.linalg.norm(writes[:, 0], axis=-1).mean(), np.linalg.norm(writes[:, 1:], axis=-1).mean()
    assert size0 < 0.5 * size_rest
    logit_writes = writes @ p["W_out"]
    spans = logit_writes.max(axis=-1) - logit_writes.min(axis=-1)
    assert 4.5 < spans[:, 0].mean() < 5.5 and spans[:, 1:].mean() > 2 * spans[:, 0].mean()


def test_section_4_1_a_window_needs_the_sink(sinks):
    s = sinks
    windows = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24]

    def window_loss(W, k):
        return cross_entropy(run(s["params"], s["ids"][:256], window=W, sinks=k)[0], s["targets"][:256])[0]

    loss_no = np.array([window_loss(W, 0) for W in windows])
    loss_sink = np.array([window_loss(W, 1) for W in windows])
    full_256 = loss_no[-1]
    rise = {W: loss_no[windows.index(W)] - full_256 for W in (2, 4, 12, 20)}
    assert 1.3 < rise[2] and 0.85 < rise[4] < 1 and 0.25 < rise[12] < 0.4 and 0.05 < rise[20] < 0.1
    assert loss_no[3] > full_256 + 0.5 and np.abs(loss_sink[1:] - full_256).max() < 0.05   # with the sink: W >= 2
    assert 2.2 < loss_sink[0] < 2.35                                   # W = 1: 2.28, a trigger loses its previous token
    trig = s["trig"][:256]
    for W, acc_range in ((1, (0.0, 0.1)), (2, (0.95, 1.0))):           # Exercise 3's answer: 0.07 and 0.97
        logits = run(s["params"], s["ids"][:256], window=W, sinks=1)[0]
        assert acc_range[0] <= D.accuracy(logits, s["targets"][:256], trig) <= acc_range[1]
    on_trig = [cross_entropy(run(s["params"], s["ids"][:256], window=W, sinks=1)[0],
                             np.where(trig, s["targets"][:256], -1))[0] for W in (2, 1)]
    assert on_trig[0] < 0.2 and 2.8 < on_trig[1] < 3.3                # about 0.16, then about 3 nats
    off_trig = [cross_entropy(run(s["params"], s["ids"][:256], window=W, sinks=1)[0],
                              np.where(trig, -1, s["targets"][:256]))[0] for W in (2, 1)]
    assert 0 < off_trig[1] - off_trig[0] < 0.02                        # the other queries: about 0.01 nats


def test_exercise_2_the_failing_queries(induction):
    rng_x = np.random.default_rng(2)
    order = np.argsort(rng_x.random((512, 16)), axis=1)
    seqs = np.concatenate([order[:, :10], order[:, 10 + np.arange(15) % 4]], axis=1)
    ids_x, targets_x = seqs[:, :24], seqs[:, 1:]
    assert (D.seen_before(ids_x) == (np.arange(24) >= 14)).all()
    acc_by_query = (run(induction["params"], ids_x)[0].argmax(axis=-1) == targets_x).mean(axis=0)
    assert [i for i in range(14, 24) if acc_by_query[i] < 0.5] == [16, 17, 20, 21]
    assert acc_by_query[[16, 17, 20, 21]].max() < 0.4 and np.delete(acc_by_query[14:], [2, 3, 6, 7]).min() > 0.9


@pytest.mark.slow                                                      # the widgets: about 3 s
def test_try_this_the_four_answers_on_the_explorers():
    """The "Check what you found" cell's answers (section 5), from explorers of their own."""
    from attention_kit.widgets import HeadExplorer, PhaseChangeViewer

    viewer = PhaseChangeViewer(step=150)
    formed = {}
    for step in range(150, 325, 25):                                   # 1: the stripes do not lag
        viewer.controls["step"].value = step
        formed[step] = (viewer.state["accuracy"], viewer.state["previous_token"], viewer.state["prefix_matching"])
    first_acc = min(s for s, v in formed.items() if v[0] > 0.5)
    assert first_acc == min(s for s, v in formed.items() if min(v[1:]) > 0.5) == 225

    demo = HeadExplorer("induction", tokens="D J O B H M F D J O B H M", layer=1, head=0)
    demo.set_tokens("A B C D E F G H I J K L M N A B C D E F G H I J")  # 2: period 14 works
    hits = (demo.state["predicted"][14:-1] == demo.state["ids"][15:]).mean()
    assert demo.state["scores"][2] > 0.8 and hits > 0.8

    demo.controls["model"].value = "fixed_period"                      # 3: period 4 divides 8
    demo.set_tokens("A B C D A B C D A B C D A B C D A B C D A B C D")
    back_4 = np.arange(24) - demo.state["weights"].argmax(axis=1)
    assert set(back_4[7:]) <= {7, 15} and (demo.state["predicted"][7:-1] == demo.state["ids"][8:]).all()
    assert (demo.state["predicted"][4:7] != demo.state["ids"][5:8]).all()    # queries 4-6: no key 7 back, missed

    demo.controls["model"].value = "sinks"                             # 4: the trigger looks back
    demo.set_tokens("<s> c d e f T1 g h")
    w = demo.state["weights"]
    assert [i for i in range(1, 8) if w[i, 0] < 0.5] == [5] and w[5].argmax() == 4
