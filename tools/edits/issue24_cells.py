"""The cells of notebook 08 (read by tools/edits/issue24.py): ``(kind, source, tags)``."""

# ruff: noqa: E501

CELLS = []


def md(source, *tags):
    CELLS.append(("md", source, tags))


def code(source, *tags):
    CELLS.append(("code", source, tags))


md(r"""
# 08 · What trained heads do: induction heads and attention sinks

Notebook 03 built heads by hand, and notebook 06 found one head of a trained model that reads a name. Research
since then has found two things that trained attention does again and again, in models of every size: **induction
heads**, two heads in two layers that together continue a pattern seen earlier in the context, and **attention
sinks**, heads that park the weight they do not need on the first token. Both appear in models small enough to
train here in numpy, and this notebook trains them, watches the mechanism appear, and checks it with numbers.

← Previous: [07 · Attention at scale](07_attention_at_scale.ipynb) · Next: [09 · Positions for long texts](09_long_context.ipynb).

It builds on causal self-attention and heads ([notebooks 02](02_self_attention.ipynb) and
[03](03_multi_head_attention.ipynb)), on training a decoder by backpropagation and on ablating a head
([notebooks 05](05_how_attention_learns.ipynb) and [06](06_tiny_language_model.ipynb)), and on the sliding
window of [notebook 07](07_attention_at_scale.ipynb), section 5.

**What you'll learn**

- a task that no model looking at one token can solve, and why a model of **two** attention layers solves it
  while one layer cannot;
- what an **induction head** is, how to find it with a **prefix-matching score**, and how ablation shows the
  **previous-token head** it depends on;
- that the circuit forms suddenly, in a **phase change** of the loss, and what the heads look like before,
  during and after;
- why accuracy alone cannot tell you the mechanism: the same task with a fixed period is solved another way;
- **attention sinks**: why a softmax that must sum to 1 puts its spare weight on the first token, and why a
  sliding window that drops that token breaks the model (StreamingLLM).

**What you'll need**

- notebooks 02–03 (causal attention, heads) and 06 (a decoder, `replace_heads`); notebook 07's sliding window;
- about 90 minutes.
""")

code(r"""
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import attention_kit as ak
from attention_kit.check import heads as check
from attention_kit.heads import diagnostics as D
from attention_kit.heads.model import init_attention_only, run
from attention_kit.heads.tasks import LETTERS, bigram_backcopy, names, repeated_sequences
from attention_kit.heads.trained import held_out, load_trained, train_recipe
from attention_kit.learn.layers import cross_entropy
from attention_kit.plotting import WEIGHTS_CMAP, head_grid, heatmap

np.set_printoptions(precision=3, suppress=True)
rng = np.random.default_rng(0)
""")

md(r"""
## 1. A task that needs two layers

A sequence of 24 tokens from a vocabulary of 16 (written A to P) is a random **segment** of $p$ different tokens,
repeated until the sequence is full. The **period** $p$ is drawn anew for every sequence, from 4 to 12. The
first $p$ tokens cannot be predicted (they are random); every later one can, by one rule: *find the earlier
occurrence of the current token and copy the token that followed it*, "… A B … A → B".
""")

code(r"""
ids, targets, repeated = repeated_sequences(np.random.default_rng(3), 3)   # (3, 24) each
for s, t, r in zip(ids, targets, repeated):
    period = 24 - int(r.sum()) + 1                                   # targets 0..p-2 are not repeats
    print(f"period {period:2d}:", " ".join(names(s)), names(t[-1:])[0])
    print(" " * 11 + "  " * period + "^ " * (24 - period + 1) + " <- predictable")
""")

md(r"""
`targets[:, i]` is the token after `ids[:, i]`, and `repeated[:, i]` is True where that next token lies in a
repeat. A **bigram** model, which sees only the current token, cannot do better than chance on the repeats: after
an A, every other letter is equally likely, since the segment is a random arrangement. Counting over many
sequences shows it:
""")

code(r"""
big_ids, big_targets, big_rep = repeated_sequences(np.random.default_rng(1), 20000)
counts = np.zeros((16, 16))
np.add.at(counts, (big_ids[big_rep], big_targets[big_rep]), 1)     # what follows each token, in the repeats
best_bigram = (counts.max(axis=1) / counts.sum(axis=1)).max()     # the best a bigram model can hope for
print(f"after any token, the most frequent next token follows it {best_bigram:.2f} of the time (1/15 = {1/15:.2f})")
assert best_bigram < 0.085 and not counts[np.arange(16), np.arange(16)].any()   # a token never follows itself
""")

md(r"""
### The model: attention only

The model is the decoder of notebook 06 stripped to its attention: no MLP, no layer norm. Each token $t_i$ at
position $i$ starts as the sum of a token embedding and a **learned** position embedding, and each layer adds
what its heads write:

$$
x_i^{(0)} = E_{t_i} + P_i, \qquad
x^{(\ell + 1)} = x^{(\ell)} + \sum_{h} A^{\ell,h}\, x^{(\ell)} W_V^{\ell,h} W_O^{\ell,h}, \qquad
\text{logits} = x^{(L)} W_\text{out},
$$

with $E$ $(16, 32)$, $P$ $(24, 32)$, per head $W_Q, W_K, W_V$ $(32, 16)$ and $W_O$ $(16, 32)$, the causal
weights $A^{\ell,h} = \mathrm{softmax}\big(x^{(\ell)} W_Q (x^{(\ell)} W_K)^\top / 4\big)$ $(24, 24)$, and
$W_\text{out}$ $(32, 16)$. It is Elhage et al.'s (2021) "attention-only transformer", the model in which
induction heads were first described. `run(params, ids)` is `ak`'s one decoder with `positions="learned"`;
below, one layer written out by hand gives the same logits.
""")

code(r"""
params1, cfg1, meta1 = load_trained("one_layer")                       # 1 layer of 2 heads, trained (section 1.1)
print(cfg1)
x = params1["E"][ids[0]] + params1["P"][:24]                           # (24, 32): token + position
causal = np.tril(np.ones((24, 24), dtype=bool))
out = x.copy()
for h in range(2):
    q, k, v = (x @ params1[f"l0.attn.{w}"][h] for w in ("W_q", "W_k", "W_v"))   # (24, 16) each
    s = np.where(causal, q @ k.T / np.sqrt(16), -np.inf)                # (24, 24), the future masked
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    out += a @ v @ params1["l0.attn.W_o"][16 * h:16 * (h + 1)]         # what head h writes, (24, 32)
logits_by_hand = out @ params1["W_out"]                                # (24, 16)
np.testing.assert_allclose(logits_by_hand, run(params1, ids[0])[0][0], atol=1e-10)
print("the loop and ak's decoder give the same logits")
""")

md(r"""
### 1.1 Train one layer and two layers

`ak.train_decoder` is the training loop of the course from here on: it takes the parameters, a function that
makes a fresh batch from a random generator, and the number of steps, and runs Adam (learning rate 0.003) through
the one decoder's forward and backward passes. `train_recipe` calls it with each model's settings: 64 fresh
sequences a step, seed 0. Here both models train for 50 steps live; the models shipped with the course were
trained the same way for 800 (`make heads`), and their logs start with exactly these losses.
""")

code(r"""
LIVE = 50
bar = widgets.IntProgress(value=0, max=2 * LIVE, description="training")
clock = widgets.Label("")
display(widgets.HBox([bar, clock]))
t0 = time.perf_counter()


def progress(offset):
    def show(step, loss):
        bar.value = offset + step
        clock.value = f"{time.perf_counter() - t0:.1f} s"
    return show


live = {name: train_recipe(name, steps=LIVE, callback=progress(k * LIVE))[2]
        for k, name in enumerate(["one_layer", "induction"])}
params2, cfg2, meta2 = load_trained("induction")
for name, meta in (("one_layer", meta1), ("induction", meta2)):
    np.testing.assert_allclose(live[name].losses, meta["losses"][:LIVE], rtol=1e-6)
    print(f"{name:9s}: loss {live[name].losses[0]:.2f} at step 1, {live[name].losses[-10:].mean():.2f} "
          f"around step {LIVE}; the same {LIVE} losses as the shipped log")
""")

md(r"""
After 50 steps neither model predicts the repeats yet. The shipped logs go on to step 800. The two-layer model's
loss stays on a plateau, then **falls suddenly**; the one-layer model's never does:
""")

code(r"""
def smooth(losses, width=25):                                          # the mean of every 25 steps
    return losses[: len(losses) // width * width].reshape(-1, width).mean(axis=1)


s1, s2 = smooth(meta1["losses"]), smooth(meta2["losses"])               # (32,) each
steps25 = 25 * np.arange(1, len(s2) + 1)
drops = s2[:-6] - s2[6:]                                               # the fall over 150 steps, from each start
k = int(np.argmax(drops))
print(f"two layers: the loss falls by {drops[k]:.1f} nats between steps {25 * k} and {25 * (k + 6)}; "
      f"one layer: by at most {(s1[:-6] - s1[6:])[4:].max():.1f} nats in any 150 steps after step 100")
assert drops[k] > 1.0 and (s1[:-6] - s1[6:])[4:].max() < 0.5

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6), layout="constrained")
ax1.plot(steps25, s1, label="one layer", color="#E69F00")
ax1.plot(steps25, s2, label="two layers", color="#0072B2")
ax1.plot(np.arange(1, LIVE + 1), live["induction"].losses, color="k", lw=0.8, label=f"two layers, live ({LIVE} steps)")
ax1.axvspan(25 * k, 25 * (k + 6), color="#0072B2", alpha=0.12, label="the sudden drop")
ax1.set(xlabel="training step", ylabel="training loss (nats)", title="Loss: a plateau, then a sudden drop")
ax1.legend()
acc_steps, acc2 = meta2["snap_steps"], meta2["snap_acc"]
ax2.plot(acc_steps, acc2, "o-", ms=3, color="#0072B2", label="two layers")
ids_h, targets_h, rep_h = held_out("induction")                        # 512 fixed sequences
acc1 = D.accuracy(run(params1, ids_h)[0], targets_h, rep_h)
ax2.axhline(acc1, color="#E69F00", label="one layer, after 800 steps")
ax2.set(xlabel="training step", ylabel="accuracy on the repeats", ylim=(0, 1.02),
        title="Held-out accuracy where the next token is predictable")
ax2.legend(loc="lower right")
plt.show()
""")

md(r"""
On 512 held-out sequences, the accuracy on the repeats and the loss on each part of the sequence:
""")

code(r"""
print(f"{'model':10s} {'accuracy on the repeats':>24s} {'loss on the repeats':>20s} {'loss on the first segment':>26s}")
acc = {}
for name, p in (("one layer", params1), ("two layers", params2)):
    logits = run(p, ids_h)[0]
    acc[name] = D.accuracy(logits, targets_h, rep_h)
    on_rep = cross_entropy(logits, np.where(rep_h, targets_h, -1))[0]    # -1: not counted
    on_first = cross_entropy(logits, np.where(rep_h, -1, targets_h))[0]
    print(f"{name:10s} {acc[name]:24.2f} {on_rep:20.2f} {on_first:26.2f}")
assert acc["two layers"] >= 0.9 and acc["one layer"] <= 0.6
""")

md(r"""
The two-layer model predicts almost every repeat; the one layer gets about 4 in 10, more than a bigram's 1 in 15
(how it gets there is a question of its own), but it cannot do what the rule asks: find the earlier copy *and*
read the token after it. On the first segment both do badly: those tokens are random.

(These are the shipped models, seed 0. Seed 1 of the same recipes, `python tools/train_heads.py --seed 1
--summary`, gives about 0.98 and 0.41, and the same heads as below; `tests/test_heads_trained.py` holds seed 1 to this
notebook's bounds for the one- and two-layer models and the sink model.)

## 2. Inside the two-layer model

The four heads on one **probe** sequence, a segment of 7 tokens repeated. Rows are queries, columns keys, as in
every heatmap of the course:
""")

code(r"""
probe = np.array([3, 9, 14, 1, 7, 12, 5] * 4)[:24]                    # D J O B H M F, repeated: period 7
np.testing.assert_array_equal(probe, meta2["probe"])
_, saved = run(params2, probe)
w_probe = np.stack([saved["weights"][l][0, h] for l in range(2) for h in range(2)])   # (4 heads, 24, 24)
assert w_probe[2, 10].argmax() == 4                                    # the second B looks at the H after the first B
fig, axes, _ = head_grid(w_probe, query_labels=names(probe), key_labels=names(probe), ncols=2,
                         titles=[f"layer {l} head {h}" for l in range(2) for h in range(2)])
fig.set_size_inches(10, 9.5)
plt.show()
""")

md(r"""
**Layer 1, head 0** draws a stripe $p - 1 = 6$ places left of the diagonal: the query at the second B (position 10)
looks at position 4, the H that *followed the first B*. That is an **induction head**: it attends to the token
after the earlier copy of the current token, and copies it. **Layer 0, head 0** draws the stripe just below the
diagonal, the previous token, but only for the first dozen queries. Layer 0 head 1 looks at the same token: the
query itself and its earlier copies.

Two scores measure this over the 512 held-out sequences. The **previous-token score** is the mean weight of query
$i$ on key $i - 1$. The **prefix-matching score** (Olsson et al., 2022) is, for each query whose token occurred
before, the total weight on the keys right *after* an earlier occurrence, averaged over those queries.
""")

code(r"""
_, saved_h = run(params2, ids_h)
prev_all = [D.previous_token_score(w) for w in saved_h["weights"]]                   # (2,) per layer
prev_early = [D.previous_token_score(w, queries=range(1, 13)) for w in saved_h["weights"]]
prev_late = [D.previous_token_score(w, queries=range(13, 24)) for w in saved_h["weights"]]
prefix = [D.prefix_matching_score(w, ids_h) for w in saved_h["weights"]]
same = (ids_h[:, :, None] == ids_h[:, None, :]) & np.tri(24, dtype=bool)   # (512, 24, 24): key j has query i's token
same_token = [(w * same[:, None]).sum(axis=-1)[..., 1:].mean(axis=(0, 2)) for w in saved_h["weights"]]
print(f"{'head':13s} {'previous-token':>15s} {'... queries 1-12':>17s} {'... 13-23':>10s} {'same token':>11s} {'prefix-matching':>16s}")
for l in range(2):
    for h in range(2):
        print(f"layer {l} head {h} {prev_all[l][h]:15.2f} {prev_early[l][h]:17.2f} {prev_late[l][h]:10.2f} "
              f"{same_token[l][h]:11.2f} {prefix[l][h]:16.2f}")
assert prefix[1][0] >= 0.8 and prefix[1].max() >= 0.95
assert prev_early[0][0] >= 0.8 and prev_late[0][0] < 0.2 and prev_all[0][0] < 0.6 and same_token[0][1] > 0.9
""")

md(r"""
Layer 1 head 0 is an induction head (0.99), and head 1 partly (0.77). Layer 0 head 0 is a previous-token head
(0.85) **on queries 1 to 12 only**; averaged over every query it scores about 0.5, well short of the clean
previous-token head of Elhage et al. Why only there? Think about which keys the induction head reads. With a
period $p \le 12$, the *first* copy of every token lies in positions $0..p-1$, so the token after it lies in
$1..p \le 12$. If the induction head always reads the earliest copy, it only needs "my previous token was X"
at keys 1 to 12, and layer 0 has no reason to compute it anywhere else. The induction head's weights confirm it:
""")

code(r"""
w10 = saved_h["weights"][1][:, 0]                                      # layer 1 head 0, (512, 24, 24)
late_on_early = w10[:, 13:, :13].sum(axis=-1).mean()                  # queries 13-23: weight on keys 0-12
match = D.prefix_match_mask(ids_h)                                    # (512, 24, 24): keys after an earlier copy
first = match & (np.cumsum(match, axis=-1) == 1)                       # ... only the earliest one
has = match.any(axis=-1)
on_first = (w10 * first).sum(axis=-1)[has].mean()
parked = D.sink_mass(w10[:, None], queries=~has)[0]                   # queries with no earlier copy
print(f"queries 13-23 of the induction head put {late_on_early:.2f} of their weight on keys 0-12; "
      f"over all repeats, {on_first:.2f} goes to the key after the *earliest* copy")
print(f"queries whose token has not occurred before put {parked:.2f} of their weight on the first token")
assert late_on_early > 0.95 and on_first > 0.7 and parked > 0.9

fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
w00 = saved_h["weights"][0][:, 0]
ax.plot(range(1, 24), [w00[:, i, i - 1].mean() for i in range(1, 24)], "o-", ms=4, color="#0072B2")
ax.axvline(12.5, color="grey", ls="--")
ax.text(12.7, 0.9, "beyond every period's\nfirst copy", fontsize=9, va="top")
ax.set(xlabel="query position i", ylabel="weight on key i - 1", ylim=(0, 1),
       title="Layer 0 head 0: a previous-token head where the induction head reads")
plt.show()
""")

md(r"""
(The last line is the top-left column of the heatmap: where it has nothing to copy, the induction head parks its
weight on the first token. Section 4 is about exactly that.)

So this model builds the circuit of Elhage et al., but thriftily: a previous-token head only where it is used.
An average over all queries, the usual way to score a head, would have called it a weak, smeared
previous-token head; it is a sharp one, at the positions that matter. (With one head in layer 0 instead of two,
seed 0 gives the same picture: 0.81 on queries 1–12. A task whose first copy can sit anywhere, say behind a random
prefix of varying length, would need the stripe everywhere: a question to try with `ak.train_decoder`.)

### 2.1 Ablation: which head does the induction head need?

If the induction head finds "the token after my earlier copy" through what layer 0 head 0 writes, removing
that head must break it. **Mean-ablation** (notebook 06) replaces a head's output, at every position, by its
mean over the held-out set: the head still adds its average, but no longer anything that depends on the input.
""")

code(r"""
means = D.head_means(params2, ids_h, positions="learned")            # {(layer, head): mean output (16,)}
print(f"{'mean-ablated':16s} {'accuracy on the repeats':>24s} {'layer 1 head 0 prefix-matching':>32s}")
ablated = {}
for heads in ([], [(0, 0)], [(0, 1)]):
    logits, sv = run(params2, ids_h, replace_heads=D.mean_ablation(means, heads))
    ablated[tuple(heads)] = D.accuracy(logits, targets_h, rep_h)
    label = ", ".join(f"L{l}H{h}" for l, h in heads) or "nothing"
    pm_after = D.prefix_matching_score(sv["weights"][1], ids_h)[0]
    print(f"{label:16s} {ablated[tuple(heads)]:24.2f} {pm_after:32.2f}")
assert ablated[((0, 0),)] <= acc["one layer"] and ablated[((0, 1),)] > 0.8 and pm_after > 0.8
assert D.prefix_matching_score(run(params2, ids_h, replace_heads=D.mean_ablation(means, [(0, 0)]))[1]["weights"][1],
                               ids_h)[0] < 0.2
""")

md(r"""
Without layer 0 head 0 the model falls *below* the one-layer model, and the induction head's stripe is gone
(its prefix-matching score drops from 0.99 to 0.13): the induction head finds its key
through what the previous-token head wrote there. This is **K-composition** in Elhage et al.'s words: a head of
layer 0 changes what the *keys* of a head of layer 1 are. Elhage et al. also measure it from the weights alone,
$\lVert W_{QK}^{1} (W_{OV}^{0})^\top \rVert_F / (\lVert W_{QK}^{1} \rVert_F \lVert W_{OV}^{0} \rVert_F)$
(`D.composition_scores`). Here that score barely separates the pairs (trained 0.18–0.24, at initialisation
0.17–0.19): most directions of these matrices are ones the model never uses, so the weight-only score drowns in
them, while the ablation tests the path itself.
""")

code(r"""
fresh = init_attention_only(cfg2, rng=np.random.default_rng(0))
k_trained = np.array([[D.composition_scores(params2, (0, a), (1, b))["K"] for b in range(2)] for a in range(2)])
k_fresh = np.array([[D.composition_scores(fresh, (0, a), (1, b))["K"] for b in range(2)] for a in range(2)])
print("K-composition, layer 0 head (rows) into layer 1 head (columns):")
print("trained:\n", np.round(k_trained, 2), "\nat initialisation:\n", np.round(k_fresh, 2))
assert k_trained[0, 0] == k_trained.max() and k_trained.max() - k_fresh.max() < 0.1
""")

md(r"""
### 2.2 The phase change

During training, a snapshot of the model was taken every 25 steps; the shipped log keeps, for each, the held-out
accuracy, the heads' scores, and the four heads' patterns on the probe. The two scores rise **together**, during the loss's drop:
""")

code(r"""
st = meta2["snap_steps"]                                               # (33,): 0, 25, ..., 800
prev00 = meta2["snap_prev_early"][:, 0]                                # layer 0 head 0, queries 1-12
pm10 = meta2["snap_prefix"][:, 2]                                      # layer 1 head 0
fig, ax = plt.subplots(figsize=(9, 3.6), layout="constrained")
ax.plot(st, prev00, "o-", ms=3, label="layer 0 head 0: previous-token score (queries 1-12)", color="#009E73")
ax.plot(st, pm10, "o-", ms=3, label="layer 1 head 0: prefix-matching score", color="#CC79A7")
ax.plot(st, meta2["snap_acc"], "o-", ms=3, label="accuracy on the repeats", color="#0072B2")
ax.axvspan(25 * k, 25 * (k + 6), color="#0072B2", alpha=0.12)
ax.set(xlabel="training step", ylim=(0, 1.02), title="Both heads form during the drop of the loss (shaded)")
ax.legend(loc="center right", fontsize=9)
plt.show()
i150, i250, i400 = (int(np.flatnonzero(st == s)[0]) for s in (150, 250, 400))
print(f"step 150: previous-token {prev00[i150]:.2f}, prefix-matching {pm10[i150]:.2f}; "
      f"step 250: {prev00[i250]:.2f}, {pm10[i250]:.2f}; step 400: {prev00[i400]:.2f}, {pm10[i400]:.2f}")
assert prev00[i150] < 0.3 and pm10[i150] < 0.3 and prev00[i400] > 0.8 and pm10[i400] > 0.9
""")

code(r"""
fig, axes = plt.subplots(2, 3, figsize=(11, 7.4), layout="constrained")
for col, i in enumerate((i150, i250, i400)):
    for row, (l, h) in enumerate(((0, 0), (1, 0))):
        ax = axes[row, col]
        im = ax.imshow(meta2["snap_probe"][i, l, h].astype(float), cmap=WEIGHTS_CMAP, vmin=0, vmax=1)
        ax.set_xticks(range(24), names(probe), fontsize=6)
        ax.set_yticks(range(24), names(probe), fontsize=6)
        ax.set_title(f"step {st[i]}: layer {l} head {h}")
fig.supxlabel("keys")
fig.supylabel("queries")
fig.colorbar(im, ax=axes, shrink=0.6, label="attention weight")
plt.show()
""")

md(r"""
Before the drop (step 150) both heads spread their weight; during it (step 250) the previous-token stripe and
the induction stripe appear together; after it (step 400) both are sharp. Olsson et al. (2022) saw the same in
large models: induction heads form in a narrow window of training, in step with a visible bump in the loss, and
the ability to continue a pattern in context appears with them.

## 3. A trap: the same accuracy by another route

Train the same two-layer model on sequences whose period is **always 8**. Then the answer at position $i \ge 8$
is simply the token at position $i - 7$, and learned positions can point there directly, with no previous-token
head at all:
""")

code(r"""
params_f, _, _ = load_trained("fixed_period")
ids_f, targets_f, rep_f = held_out("fixed_period")                     # period 8
logits_f, saved_f = run(params_f, ids_f)
acc_f = D.accuracy(logits_f, targets_f, rep_f)
prev_f = D.previous_token_score(saved_f["weights"][0], queries=range(1, 13))
means_f = D.head_means(params_f, ids_f, positions="learned")
abl_f = [D.accuracy(run(params_f, ids_f, replace_heads=D.mean_ablation(means_f, [(0, h)]))[0], targets_f, rep_f)
         for h in range(2)]
print(f"accuracy on the repeats {acc_f:.2f}; layer 0's previous-token scores {np.round(prev_f, 2)}; "
      f"accuracy with layer 0 head 0 or 1 mean-ablated: {abl_f[0]:.2f}, {abl_f[1]:.2f}")
assert acc_f > 0.99 and prev_f.max() < 0.3 and min(abl_f) > 0.9
""")

md(r"""
A perfect score, no previous-token head, and nothing in layer 0 that it needs. Now give both models sequences of
period 6, which the fixed-period model never saw:
""")

code(r"""
ids6, targets6, rep6 = repeated_sequences(np.random.default_rng(6), 512, periods=(6, 6))
acc6 = {name: D.accuracy(run(p, ids6)[0], targets6, rep6) for name, p in (("varying period", params2), ("period 8", params_f))}
print({k: round(v, 2) for k, v in acc6.items()})
assert acc6["varying period"] > 0.9 and acc6["period 8"] < 0.5

probe6 = np.array([3, 9, 14, 1, 7, 12] * 4)                            # period 6
w6 = [run(p, probe6)[1]["weights"][1][0] for p in (params2, params_f)]  # layer 1, (2 heads, 24, 24)
h_f = int(np.argmax(D.prefix_matching_score(saved_f["weights"][1], ids_f)))
fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), layout="constrained")
heatmap(w6[0][0], ax=axes[0], cbar=False, query_labels=names(probe6), key_labels=names(probe6),
        title="varying period, layer 1 head 0: 5 back")
heatmap(w6[1][h_f], ax=axes[1], cbar=False, query_labels=names(probe6), key_labels=names(probe6),
        title=f"period 8 only, layer 1 head {h_f}: still 7 back")
for ax in axes:
    ax.tick_params(labelsize=6)
plt.show()
""")

md(r"""
The fixed-period model's layer-1 head keeps looking 7 places back, the right place only for period 8: it learned
a **position** rule, not "find the earlier copy". Both models are near perfect on their own task; only their heads, and
data they were not trained on, tell them apart. What accuracy does not tell you is *how*.

## 4. Attention sinks

The second behaviour shows up in almost every trained language model: many heads put most of their weight on
the **first token**, whatever it is (Xiao et al., 2023). Guo et al. (2024) reproduce it in a one-layer,
one-head model with a task of two kinds of tokens, **Bigram-Backcopy**: every sequence starts with a token
`<s>`, then each next token is drawn from a fixed table of bigram probabilities given the current one, except
after a **trigger** (`T1` or `T2`), where the next token *copies the token before the trigger*. Only the
queries at a trigger need to look back; every other query's answer is in its own token.
""")

code(r"""
params_s, cfg_s, meta_s = load_trained("sinks")                       # 1 layer, 1 head, 500 steps
ids_s, targets_s, trig_s = held_out("sinks")                           # trig_s: the query is a trigger
print(" ".join(names(ids_s[2], "backcopy")))
logits_s, saved_s = run(params_s, ids_s)
w_s = saved_s["weights"][0]                                            # (512, 1, 24, 24)
fresh_s = init_attention_only(cfg_s, rng=np.random.default_rng(0))     # the same model before training
sink_trained = D.sink_mass(w_s, queries=~trig_s)[0]
sink_fresh = D.sink_mass(run(fresh_s, ids_s)[1]["weights"][0], queries=~trig_s)[0]
b, i = np.nonzero(trig_s)                                              # every trigger query
prev_at_trigger = w_s[b, 0, i, i - 1].mean()
print(f"weight on the first token, queries that are not triggers: {sink_fresh:.2f} at initialisation, "
      f"{sink_trained:.2f} trained")
print(f"trigger queries: {prev_at_trigger:.2f} on the token before them, "
      f"{D.sink_mass(w_s, queries=trig_s)[0]:.2f} on the first; copies right: {D.accuracy(logits_s, targets_s, trig_s):.2f}")
assert sink_fresh < 0.2 and sink_trained > 0.8 and prev_at_trigger > 0.8
""")

code(r"""
k_show = 2
fig, ax = plt.subplots(figsize=(7.5, 7), layout="constrained")
heatmap(w_s[k_show, 0], ax=ax, query_labels=names(ids_s[k_show], "backcopy"),
        key_labels=names(ids_s[k_show], "backcopy"),
        title="The trained head: a column on <s>, and a step back at each trigger")
ax.tick_params(labelsize=7)
plt.show()
""")

md(r"""
**Why the first token?** The weights of a query must sum to 1: a softmax has no way to say "nothing here". A
query that needs nothing from the others has to put its weight *somewhere*, and the cheapest place is a key
whose contribution is always the same, so that the read-out can learn to ignore it. The first token is exactly
that: it is `<s>` at position 0 in every sequence, so what the head writes when it looks there, $x_0 W_V W_O$, is
one fixed vector, the same in every sequence: a **no-op**. Every other key writes something that changes with
the sequence, noise for a query that wants nothing.
""")

code(r"""
x_s = params_s["E"][ids_s] + params_s["P"][:24]                        # (512, 24, 32)
writes = x_s @ params_s["l0.attn.W_v"][0] @ params_s["l0.attn.W_o"]    # (512, 24, 32): what each key would write
spread0 = np.abs(writes[:, 0] - writes[:, 0].mean(axis=0)).max()
size0, size_rest = np.linalg.norm(writes[:, 0], axis=-1).mean(), np.linalg.norm(writes[:, 1:], axis=-1).mean()
print(f"what key 0 writes: the same vector in all 512 sequences (it varies below 1e-12), "
      f"{size0 / size_rest:.1f} times the size of what the other keys write")
assert spread0 < 1e-12 and size0 < 0.5 * size_rest
""")

md(r"""
### 4.1 StreamingLLM: keep the first token in the window

Notebook 07's sliding window lets a query see only the last $W$ tokens, and the KV cache then keeps only $W$
tokens per layer. Xiao et al. (2023) found that this breaks trained models as soon as the first token leaves the
window, and that keeping the first few tokens (the **sinks**) as well repairs it: **StreamingLLM**.
`ak.sliding_window_mask(n, W, sinks=k)` is the window with the first $k$ tokens always visible:
""")

code(r"""
print(ak.sliding_window_mask(8, 3, sinks=1).astype(int))
""")

code(r"""
full_loss = cross_entropy(logits_s, targets_s)[0]
windows = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24]


def window_loss(W, sinks):
    return cross_entropy(run(params_s, ids_s[:256], window=W, sinks=sinks)[0], targets_s[:256])[0]


loss_no = np.array([window_loss(W, 0) for W in windows])
loss_sink = np.array([window_loss(W, 1) for W in windows])
full_256 = loss_no[-1]                                                 # a window of 24 sees everything
print(f"loss with every token visible: {full_loss:.2f}; window of 4 without the first token: "
      f"{cross_entropy(run(params_s, ids_s, window=4)[0], targets_s)[0]:.2f}; "
      f"window of 4 plus the first token: {cross_entropy(run(params_s, ids_s, window=4, sinks=1)[0], targets_s)[0]:.2f}")
assert loss_no[3] > full_256 + 0.5 and np.abs(loss_sink[1:] - full_256).max() < 0.05   # with the sink: any W >= 2

fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
ax.plot(windows, loss_no, "o-", ms=3, label="sliding window", color="#D55E00")
ax.plot(windows, loss_sink, "o-", ms=3, label="sliding window + the first token", color="#009E73")
ax.axhline(full_256, color="k", ls=":", label="every token visible")
ax.set(xlabel="window W (tokens)", ylabel="held-out loss (nats), 256 sequences", title="A window that drops the sink breaks the model")
ax.legend()
plt.show()
""")

md(r"""
With the first token kept, a window of 2 is as good as the whole context (the triggers only need the token
before them); without it, the loss rises by almost a nat, because the queries that parked their weight on `<s>`
now spread it over tokens that write noise. In a streaming model that
means: per layer, cache the last $W$ tokens **and** the first one, $W + 1$ in all (notebook 07's rolling cache
plus one slot). What this toy does not show: Xiao et al. keep the first **four** tokens of large models, and found
that replacing them by line breaks works as well, so it is their position more than their content that makes them
sinks; they also propose pre-training with one dedicated, learnable sink token.
""")


md(r"""
## 5. Interactive: explore the trained heads

**The phase change, step by step.** `PhaseChangeViewer` moves through the 33 snapshots of the two-layer model
(every 25 training steps). Top: the training loss and the held-out accuracy on the repeats, the black line at the
chosen step. Bottom: the four heads on the probe sequence (D J O B H M F, repeated), at that step.
""")

code(r"""
from attention_kit.widgets import HeadExplorer, PhaseChangeViewer

viewer = PhaseChangeViewer(step=150)
viewer
""")

md(r"""
**Any head, any sequence.** `HeadExplorer` runs one of the four trained models (**model**: `induction`,
`one_layer`, `fixed_period`, `sinks`) on the tokens you type (letters A–P; for `sinks` also `<s>`, `T1`, `T2`
and c–o; up to 24), and shows the chosen head's weights and four scores on that sequence: the mean weight on the
previous token, on keys holding the same token, on the keys right after an earlier copy (over the queries that
have one), and on the first token. Above the panels: the model's most likely next token after each position.
""")

code(r"""
explorer = HeadExplorer("induction", tokens="D J O B H M F D J O B H M", layer=1, head=0)
explorer
""")

md(r"""
**Try this**

1. In the phase-change viewer, move from step 150 to 300, 25 steps at a time. At which step do the stripes of
   layer 0 head 0 and layer 1 head 0 both appear? Does one come clearly before the other?
2. In the explorer, type a sequence that repeats with a period the model has never seen, such as
   `A B C D E F G H I J K L M N A B C D E F G H I J` (period 14). Does the induction head still find the earlier
   copy, and does the model still predict the repeats?
3. Pick the `fixed_period` model, layer 1, head 0, and type the period-6 probe `D J O B H M D J O B H M D J O B H M`.
   Where does the head look, and what does the model predict?
4. Pick the `sinks` model and type `<s> c d e f T1 g h`. Which query does *not* look at `<s>`, and why?
""")

md(r"""
### Check what you found

The "try this" list, replayed from code on explorers of their own (so the ones above stay as you left them).
Open it after you have tried them.
""", "collapsed-heading")

code(r"""
demo_v = PhaseChangeViewer(step=150)
formed = {}
for step in range(150, 325, 25):                                       # 1
    demo_v.controls["step"].value = step
    formed[step] = (demo_v.state["previous_token"], demo_v.state["prefix_matching"])
print("1. step: (previous-token, prefix-matching) =", {s: tuple(round(x, 2) for x in v) for s, v in formed.items()})
first_prev = min(s for s, v in formed.items() if v[0] > 0.5)
first_pm = min(s for s, v in formed.items() if v[1] > 0.5)
print(f"   both pass 0.5 within one snapshot of each other: step {first_prev} and step {first_pm}")
assert abs(first_prev - first_pm) <= 25

demo = HeadExplorer("induction", tokens="D J O B H M F D J O B H M", layer=1, head=0)
demo.set_tokens("A B C D E F G H I J K L M N A B C D E F G H I J")  # 2
p14 = demo.state["predicted"][14:-1]                                   # guesses for positions 15..23
hits = (p14 == demo.state["ids"][15:]).mean()
print(f"2. period 14: after-an-earlier-copy score {demo.state['scores'][2]:.2f}; repeats predicted {hits:.2f}")
assert demo.state["scores"][2] > 0.8 and hits > 0.8

demo.controls["model"].value = "fixed_period"                          # 3
demo.set_tokens("D J O B H M D J O B H M D J O B H M")
w = demo.state["weights"]
print(f"3. fixed period, layer 1 head 0: query 12 looks at key {w[12].argmax()} (7 back), "
      f"predictions right on the repeats: {(demo.state['predicted'][5:-1] == demo.state['ids'][6:]).mean():.2f}")
assert w[12].argmax() == 5

demo.controls["model"].value = "sinks"                                 # 4
demo.set_tokens("<s> c d e f T1 g h")
w = demo.state["weights"]
not_sink = [i for i in range(1, 8) if w[i, 0] < 0.5]
print(f"4. queries that do not look at <s>: {not_sink} (the trigger T1), looking at key {w[5].argmax()} (f)")
assert not_sink == [5] and w[5].argmax() == 4
""", "explorer-check")

md(r"""
## 6. Exercises

Each exercise has a checker that prints ✓ when your answer is right, or a hint aimed at the usual mistake.
""")

md(r"""
A worked solution follows each one, hidden: click the collapsed cell to see it.
""", "solution")

md(r"""
### Exercise 1: the prefix-matching score

Write `my_prefix_matching(w, ids)` in plain numpy, without attention_kit: one head's prefix-matching score from
its weights `w`, shape $(n, n)$ (row $i$ = query $i$), on the tokens `ids`, shape $(n,)$. For each query $i$
whose token occurred before, add up its weight on the keys $j < i$ that come right **after** an earlier
occurrence, that is `ids[j - 1] == ids[i]`; return the mean of those sums over those queries. The checker tries
three sequences with random causal weights.
""")

code(r"""
def my_prefix_matching(w, ids):
    return ...   # one number

ok = check.prefix_matching(my_prefix_matching)
""")

code(r"""
# Solution: the keys j with ids[j - 1] == ids[i] and j < i, summed per query, averaged over the queries that have one
def my_prefix_matching(w, ids):
    after_copy = np.zeros(w.shape, dtype=bool)            # (n, n)
    after_copy[:, 1:] = ids[:, None] == ids[None, :-1]    # query i, key j: ids[i] == ids[j - 1]
    after_copy &= np.tri(len(ids), k=-1, dtype=bool)      # earlier keys only
    has_copy = after_copy.any(axis=1)                     # queries whose token occurred before
    return float((w * after_copy).sum(axis=1)[has_copy].mean())

with check.quietly():          # silent: the assert fails if the answer is wrong
    assert check.prefix_matching(my_prefix_matching)
""", "solution")

md(r"""
### Exercise 2: which ablation breaks induction?

Section 2.1 mean-ablated the two heads of layer 0. Now think about all four heads of the two-layer model: which
**one** head's mean-ablation brings the accuracy on the repeats lowest? Set `my_most_harmful_head` to a pair
`(layer, head)`, then check your prediction against the measurement in the solution.
""")

code(r"""
my_most_harmful_head = ...   # (layer, head)

ok = check.most_harmful_head(my_most_harmful_head)
""")

code(r"""
# Solution: layer 0 head 0. Both layer-1 heads find their key through what it wrote; ablating the induction
# head itself leaves the other layer-1 head, a partial induction head.
my_most_harmful_head = (0, 0)

accuracy_without = {(l, h): D.accuracy(run(params2, ids_h, replace_heads=D.mean_ablation(means, [(l, h)]))[0],
                                       targets_h, rep_h) for l in range(2) for h in range(2)}
assert min(accuracy_without, key=accuracy_without.get) == my_most_harmful_head
assert accuracy_without[(1, 0)] > accuracy_without[(0, 0)] + 0.1
with check.quietly():
    assert check.most_harmful_head(my_most_harmful_head)
""", "solution")

md(r"""
### Exercise 3: a window that keeps the sinks

Write `my_sink_window_mask(n, window, sinks)` in plain numpy, without attention_kit: the boolean $(n, n)$ mask of
StreamingLLM, True where query $i$ may attend to key $j$. Query $i$ sees the last `window` keys up to itself,
$i - \text{window} + 1 \dots i$, and also the first `sinks` keys, but never a key after itself. (`sinks = 0`
gives notebook 07's sliding window.)
""")

code(r"""
def my_sink_window_mask(n, window, sinks):
    return ...   # bool array (n, n)

ok = check.sink_window_mask(my_sink_window_mask)
""")

code(r"""
# Solution: causal, and (within the window or one of the sinks)
def my_sink_window_mask(n, window, sinks):
    query_pos = np.arange(n)[:, None]                     # (n, 1)
    key_pos = np.arange(n)[None, :]                       # (1, n)
    return (key_pos <= query_pos) & ((query_pos - key_pos < window) | (key_pos < sinks))

with check.quietly():
    assert check.sink_window_mask(my_sink_window_mask)
""", "solution")

md(r"""
## Summary

- On repeated random sequences the next token can only be found in context: "… A B … A → B". A model of two
  attention layers learns it (accuracy above 0.9 on the repeats); one layer cannot (about 0.4).
- The two-layer model builds a circuit: a **previous-token head** in layer 0 writes "my previous token was A"
  into each position, and an **induction head** in layer 1 finds the key whose previous token equals its own
  token (K-composition) and copies it. Mean-ablating the previous-token head destroys induction.
- Here the previous-token head is sharp only at positions 1–12, where the induction head reads the earliest
  copy: a model computes what it uses, and an average score over all positions hides that.
- The circuit forms suddenly: the loss falls by more than a nat within 150 steps, while both heads' scores rise
  together.
- Perfect accuracy does not tell the mechanism: with a fixed period, a position rule gives the same score with no
  previous-token head, and fails on another period.
- A softmax must spend all its weight: heads with nothing to read park it on the first token, an **attention
  sink** whose value is a constant no-op. A sliding window that drops it breaks the model; keeping it
  (StreamingLLM) repairs the window.

## Further reading

- N. Elhage et al., *A Mathematical Framework for Transformer Circuits*, Transformer Circuits Thread, 2021,
  [transformer-circuits.pub/2021/framework](https://transformer-circuits.pub/2021/framework/index.html):
  attention-only models, previous-token and induction heads, Q-, K- and V-composition.
- C. Olsson et al., *In-context Learning and Induction Heads*, 2022,
  [arXiv:2209.11895](https://arxiv.org/abs/2209.11895): the prefix-matching score and the phase change.
- G. Xiao, Y. Tian, B. Chen, S. Han and M. Lewis, *Efficient Streaming Language Models with Attention Sinks*,
  ICLR 2024, [arXiv:2309.17453](https://arxiv.org/abs/2309.17453): attention sinks and StreamingLLM.
- T. Guo, D. Pai, Y. Bai, J. Jiao, M. I. Jordan and S. Mei, *Active-Dormant Attention Heads: Mechanistically
  Demystifying Extreme-Token Phenomena in LLMs*, 2024, [arXiv:2410.13835](https://arxiv.org/abs/2410.13835):
  the Bigram-Backcopy task of section 4.
- G. Reddy, *The mechanistic basis of data dependence and abrupt learning in an in-context classification
  task*, ICLR 2024, [arXiv:2312.03002](https://arxiv.org/abs/2312.03002): why induction heads form abruptly.
""")
