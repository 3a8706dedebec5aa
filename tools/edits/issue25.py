"""Issue 25: write notebook 09 (positions for long texts), and point notebook 07's closing text to it.

    python tools/edits/issue25.py          # rewrites notebooks/09_long_context.ipynb; edits 07; safe to run twice

Notebook 09 is written whole from the cells below (a new notebook: the script is its source), with
fixed cell ids; then ``make notebooks NB=notebooks/09_long_context.ipynb`` executes it. In notebook 07
only the Markdown cell before the cached generation and the rotary check change (found by text).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NB09 = ROOT / "notebooks" / "09_long_context.ipynb"
NB07 = ROOT / "notebooks" / "07_attention_at_scale.ipynb"

CELLS: list[tuple[str, str, tuple[str, ...]]] = []


def md(text: str, *tags: str) -> None:
    CELLS.append(("markdown", text.strip("\n"), tags))


def code(text: str, *tags: str) -> None:
    CELLS.append(("code", text.strip("\n"), tags))


md(r"""
# 09 · Positions for long texts: RoPE, ALiBi, length extrapolation and a cache that slides

Notebook 04 added a position vector to every token; notebook 07 then had to stop its KV cache at the end of
the 16-token window, because every cached key carried its old absolute position. Today's models (Llama,
Mistral, Qwen, Gemma) put positions into the *scores* instead, so that only distances count. This notebook
builds the two best-known ways to do that, trains the same small model with each, tests it on texts longer
than it was trained on, and lets a cache slide past the window.

← Previous: PREVIOUS · Next: none yet.

It builds on the sinusoidal encoding and its rotations ([notebook 04](04_masks_and_positions.ipynb)), the
tiny language model and its one decoder block ([notebook 06](06_tiny_language_model.ipynb)), and the KV
cache and sliding windows ([notebook 07](07_attention_at_scale.ipynb)).

**What you'll learn**

- **RoPE** (rotary position embeddings): rotate each pair of features of a query and a key by an angle
  proportional to its position; the score then depends on the two positions only through $m - n$;
- **ALiBi** (attention with linear biases): subtract from each score a penalty proportional to the distance,
  one slope per head;
- an experiment: the same model trained at length 24 with sinusoidal positions, RoPE and ALiBi, evaluated at
  24, 48, 96 and 192 tokens;
- a **KV cache that slides**: generation past the training window, exact for one layer and not for two, and
  what keeping the first token (an *attention sink*) changes.

**What you'll need**

- notebook 04's rotation of the sinusoidal encoding, notebook 06's language model, notebook 07's KV cache;
- $\cos$ and $\sin$ of a sum, and a rotation matrix in 2-D;
- about 65–80 minutes: 35 to read and run, 10 for the explorer, 20–32 for the 4 exercises.
""")

code(r"""
import matplotlib.pyplot as plt
import numpy as np

import attention_kit as ak
from attention_kit.check import long_context as check
from attention_kit.learn import block, tiny_lm
from attention_kit.learn.layers import cross_entropy
from attention_kit.learn.lm_training import rhyme_stream
from attention_kit.learn.training import train_decoder
from attention_kit.long import extrapolation, streaming

np.set_printoptions(precision=3, suppress=True)
rng = np.random.default_rng(0)
""")

md(r"""
## 1. RoPE: rotate the query and the key, not the token

Notebook 04 found that the sinusoidal encoding turns pair $i$ of features at the angular frequency
$\theta_i = 10000^{-2i/d}$, so that moving $k$ positions on is a rotation by the angles $k\theta_i$. Su et
al. (2021, *RoFormer*) use that rotation directly. Nothing is added to the token; instead, after the
projections, the query $q$ of the token at position $m$ and the key $k$ of the token at position $n$ (each a
row of $d$ features, one head) are rotated pair by pair:

$$
\begin{pmatrix} q'_{2i} \\ q'_{2i+1} \end{pmatrix} =
\begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
\begin{pmatrix} q_{2i} \\ q_{2i+1} \end{pmatrix},
\qquad i = 0, \dots, d/2 - 1,
$$

and the same for $k$ with its own position $n$. Write $R(\alpha)$ for the rotation by $\alpha$, pair by
pair. Since $R(\alpha)^\top = R(-\alpha)$ and $R(\alpha)R(\beta) = R(\alpha + \beta)$,

$$
q'_m \cdot k'_n = \big(R(m\theta) q\big)^\top R(n\theta) k = q^\top R\big((n - m)\theta\big)\, k :
$$

the score depends on the positions only through their difference $m - n$. A tiny example by hand: the
pair $q = (1, 0)$ at position $m = 1$, where $\theta_0 = 1$, becomes $(\cos 1, \sin 1) \approx (0.540, 0.841)$.
Below, RoPE one pair at a time in a loop, then `ak.rope`, which rotates a whole array of rows
$(\dots, n, d)$ at once.
""")

code(r"""
def rope_loop(x, m, base=10000.0):
    "RoPE for one vector x (d,) at position m, one pair of features at a time."
    d = len(x)
    out = np.empty(d)
    for i in range(d // 2):
        angle = m * base ** (-2 * i / d)                   # m * theta_i
        c, s = np.cos(angle), np.sin(angle)
        out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s
        out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c
    return out


print("(1, 0) at position 1:", rope_loop(np.array([1.0, 0.0]), 1))
q, k = rng.normal(size=(2, 8))                              # one head's query and key, d = 8
np.testing.assert_allclose(ak.rope(q[None], [5])[0], rope_loop(q, 5), rtol=0, atol=1e-12)

X = rng.normal(size=(6, 8))                                 # 6 tokens at positions 0..5, rows = tokens
np.testing.assert_allclose(ak.rope(X), np.array([rope_loop(x, m) for m, x in enumerate(X)]), atol=1e-12)
print("ak.rope equals the loop, row by row, to 1e-12")

for m, n in ((7, 3), (107, 103), (10_007, 10_003)):
    s = ak.rope(q[None], [m])[0] @ ak.rope(k[None], [n])[0]
    print(f"m = {m:6d}, n = {n:6d}, m - n = {m - n}: score {s:+.4f}")
    assert abs(s - ak.rope(q[None], [4])[0] @ k) < 1e-9      # the same as the query at 4, the key at 0
assert abs(ak.rope(q[None], [7])[0] @ ak.rope(k[None], [3])[0]
           - ak.rope(q[None], [7])[0] @ ak.rope(k[None], [4])[0]) > 0.01
print("only the difference m - n reaches the score; and the lengths stay:",
      np.isclose(np.linalg.norm(ak.rope(q[None], [123])), np.linalg.norm(q)))
""")

md(r"""
The rotation is notebook 04's. Rotate the pair $(1, 0)$ of every pair of features by RoPE at position $m$:
the result is $(\cos m\theta_i, \sin m\theta_i)$, the two columns of notebook 04's sinusoidal encoding
of position $m$ (which stores $\sin$ first). The encoding *is* a rotating clock hand per pair; RoPE turns
the query's and the key's own hands by those angles instead of adding the clock to the token.
""")

code(r"""
d = 8
unit = np.tile([1.0, 0.0], d // 2)                          # (1, 0) in every pair
P = ak.sinusoidal_positions(40, d)                          # notebook 04: (positions, d)
for m in (0, 3, 39):
    r = ak.rope(unit[None], [m])[0]
    np.testing.assert_allclose(r[0::2], P[m, 1::2], atol=1e-12)   # cos m theta_i
    np.testing.assert_allclose(r[1::2], P[m, 0::2], atol=1e-12)   # sin m theta_i
print("RoPE of (1, 0) at position m is notebook 04's encoding of m, pair by pair (to 1e-12)")

fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), layout="constrained")
for ax, i, shown in zip(axes, (0, 1), ((0, 1, 2, 15), (0, 5, 10, 15)), strict=True):
    pts = np.array([ak.rope(unit[None], [m])[0][2 * i: 2 * i + 2] for m in range(16)])   # (16, 2)
    ax.plot(pts[:, 0], pts[:, 1], "-", color="#cccccc", zorder=0)
    ax.scatter(pts[:, 0], pts[:, 1], c=np.arange(16), cmap="viridis", zorder=1)
    for m in shown:
        ax.annotate(f"m = {m}", pts[m], textcoords="offset points", xytext=(6, 4), fontsize=9)
    ax.set_aspect("equal")
    ax.set_xlim(-1.35, 1.35)
    ax.set_ylim(-1.35, 1.35)
    ax.axhline(0, color="#999999", linewidth=0.8)
    ax.axvline(0, color="#999999", linewidth=0.8)
    theta = 10000 ** (-2 * i / d)
    ax.set_title(f"pair {i} (θ_{i} = {theta:.2f} rad per position):\n(1, 0) rotated at positions 0 to 15")
    ax.set_xlabel(f"feature {2 * i}")
    ax.set_ylabel(f"feature {2 * i + 1}")
plt.show()
""")

md(r"""
Pair 0 turns by one radian per position and comes round every $2\pi \approx 6.3$ positions; pair 1 turns
ten times more slowly (and pair 3 of these eight features a thousand times). Fast pairs tell neighbours
apart; slow pairs still change over long distances.

### 1.1 Interactive: a query and a key, rotated

`RopeExplorer` draws one pair of features of a query at position $m$ and a key at position $n$ (random
vectors, $d = 16$), rotated by RoPE, with the key's place at every position 0 to 64 as grey dots. On the
right, the whole score of the query at $m$ against the key at every position $n'$.
""")

code(r"""
from attention_kit.widgets import RopeExplorer

explorer = RopeExplorer(m=8, n=5, pair=0)
explorer
""")

md(r"""
**Try this**

1. Move **query position m** and **key position n** up by the same amount (8 → 20 and 5 → 17): both
   vectors turn, the angle between them does not, and the score stays $+0.69$.
2. Move only **m**: the curve on the right slides along without changing its shape. It is one function of
   $m - n'$.
3. Set **feature pair i** to 7, the slowest: over 64 positions it turns by less than a tenth of a radian.
   Pair 0 spins round ten times. The slow pairs are the ones that still see a difference between distance
   40 and distance 50.
4. Set **n** equal to **m**, anywhere: the score is always $q \cdot k / \sqrt{d}$, the score without positions.
""")

md(r"""
### Check what you found

The "try this" list, checked in code on a second explorer (so the one above stays as you left it).
""")

code(r"""
demo = RopeExplorer(m=8, n=5, pair=0)
s0 = demo.state["scores"][5]
with demo.hold():
    demo.controls["m"].value, demo.controls["n"].value = 20, 17
assert abs(demo.state["scores"][17] - s0) < 1e-12                          # 1. same distance, same score
shifted = demo.state["scores"]                                              # query at 20
np.testing.assert_allclose(shifted[12:], RopeExplorer(m=8, n=5).state["scores"][:-12], atol=1e-12)  # 2.
assert 64 * demo.theta[7] < 0.1 and 64 * demo.theta[0] / (2 * np.pi) > 10   # 3. slow and fast pairs
same = [RopeExplorer(m=m, n=m).state["scores"][m] for m in (0, 30, 64)]
np.testing.assert_allclose(same, demo.q @ demo.k / 4, atol=1e-12)           # 4. n = m: q . k / sqrt(16)
print(f"score at distance 3: {s0:+.2f} wherever the pair stands; at distance 0 always q . k / 4")
""", "explorer-check")

md(r"""
### 1.2 RoPE in the one decoder block

`block.decoder_forward(params, ids, positions="rope")` rotates every head's queries and keys at their
positions inside the one multi-head attention (`ak.multi_head_forward(..., rope=positions)`), and its
backward rotates the gradients back: $R(\alpha)$ is orthogonal, so the gradient of $R(\alpha) x$ with
respect to $x$ is $R(-\alpha)$ applied to the incoming gradient (`ak.rope_backward`; `tests/test_long.py`
checks every parameter's gradient against finite differences). Because only distances reach the scores,
a RoPE model gives the same logits whether its text starts at position 0 or 1,000; a sinusoidal one does not.
""")

code(r"""
cfg_r = tiny_lm.TinyLMConfig(vocab_size=20, d_model=16, n_heads=2, n_layers=2, d_ff=32, context=8,
                             positions="rope")
p_r = tiny_lm.init_tiny_lm(cfg_r, rng=np.random.default_rng(1))          # random weights
ids = rng.integers(0, 20, size=(1, 8))
for scheme in ("rope", "sinusoidal"):
    at_0 = block.decoder_forward(p_r, ids, positions=scheme)[0]
    at_1000 = block.decoder_forward(p_r, ids, positions=scheme, start=1000)[0]
    moved = np.abs(at_0 - at_1000).max()
    print(f"{scheme:10s}: the same 8 tokens at positions 0-7 or 1000-1007:",
          "the same logits (to 1e-9)" if moved < 1e-9 else "different logits")
    assert (moved < 1e-9) == (scheme == "rope")
""")

md(r"""
## 2. ALiBi: a penalty for distance

Press, Smith and Lewis (2022, *Train Short, Test Long*) rotate nothing and add nothing to the tokens. Each
head $h$ subtracts from its scores a penalty proportional to the distance between the query at $i$ and the
key at $j$:

$$
s_{h,ij} = \frac{q_i \cdot k_j}{\sqrt{d}} - m_h\,(i - j), \qquad j \le i,
$$

with one fixed slope $m_h$ per head: the geometric sequence $2^{-8/H}, 2^{-16/H}, \dots, 2^{-8}$ for $H$ heads
(for 8 heads $\tfrac12, \tfrac14, \dots, \tfrac1{256}$). A head with a large slope looks at its neighbours; a
small slope lets a head see far back. By hand, for the slope $\tfrac12$ the row of query $i = 3$ over keys
$0..3$ is $(-1.5, -1, -0.5, 0)$. `ak.alibi_bias(slopes, n)` gives the biases $-m_h |i - j|$, shape
$(H, n, n)$ (the causal mask hides $j > i$).
""")

code(r"""
slopes = ak.alibi_slopes(8)
print("the paper's slopes for 8 heads:", slopes)
np.testing.assert_array_equal(slopes, 2.0 ** -np.arange(1, 9))
bias = ak.alibi_bias(slopes, 8)                              # (8 heads, 8 queries, 8 keys)
print("head 0 (slope 1/2), query 3:", bias[0, 3, :4])
np.testing.assert_array_equal(bias[0, 3, :4], [-1.5, -1, -0.5, 0])

causal = ak.causal_mask(8)
fig, axes = plt.subplots(1, 4, figsize=(11, 3.2), layout="constrained")
for ax, h in zip(axes, (0, 2, 4, 7), strict=True):
    im = ax.imshow(np.where(causal, bias[h], np.nan), cmap="viridis_r", vmin=bias[h].min() * (1 + 1e-9), vmax=0)
    ax.set_title(f"head {h}: slope 1/{2 ** (h + 1)}")
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.set_xticks(range(8))
    ax.set_yticks(range(8))
    fig.colorbar(im, ax=ax, shrink=0.8)
fig.suptitle("ALiBi's biases -m (i - j), each head on its own colour scale (blank: masked)")
plt.show()
""")

md(r"""
Inside the block, `positions="alibi"` adds these biases to every layer's scores, after the scaling and
before the softmax (`ak.multi_head_forward(..., bias=...)`); the mask still blocks what it blocks, and the
backward pass is that of attention itself, since a constant added to the scores passes their gradient
through unchanged. With all scores $q \cdot k$ equal, what is left is the penalty: the weights fall by the
factor $e^{-m_h}$ per step back.
""")

code(r"""
n = 6
X0 = np.zeros((n, 8))                                        # every q . k = 0
params_h = ak.init_multi_head(8, 2, rng=np.random.default_rng(2))
_, w, _ = ak.multi_head_forward(X0, X0, params_h, ak.causal_mask(n), bias=ak.alibi_bias([1.0, 0.0], n))
print("head with slope 1, last query:", np.round(w[0, -1], 3))
print("head with slope 0, last query:", np.round(w[1, -1], 3))
np.testing.assert_allclose(w[0, -1, 1:] / w[0, -1, :-1], np.e, rtol=1e-12)   # each step back: / e
np.testing.assert_allclose(w[1, -1], 1 / n)                                     # no penalty: uniform
assert (w[:, ~ak.causal_mask(n)] == 0).all()
print("the future gets weight 0 exactly; slope 1 divides the weight by e per step back")
""")

md(r"""
## 3. The experiment: train at 24 tokens, test at 192

**The task** is notebook 08's repeated random sequences: a segment of 4 to 12 distinct tokens (out of 64),
repeated to the end. After the first repeat every next token is predictable: find where the current token
occurred before, and copy what followed it (an induction head needs a head that looks one token back and
one that matches content). Nothing here depends on the absolute position, so a model that learned the task
at length 24 *could* do it at any length.

**The model** is notebook 08's attention-only decoder, two layers of two heads ($d_\text{model} = 32$,
$d_\text{head} = 16$), trained for 1,500 Adam steps on batches of 32 sequences of 24 tokens, the same seed
and batches for every scheme; only the position scheme differs: sinusoidal positions added to the
embeddings, RoPE, ALiBi with the paper's slopes (for 2 heads $2^{-4}$ and $2^{-8}$), and ALiBi with the slopes
$1$ and $0$ (one head that sees its neighbours, one with no penalty at all). Then each model predicts fresh
sequences of 24, 48, 96 and 192 tokens, and we count the predictable tokens it gets right.

Training all of them takes minutes, so `tools/train_extrapolation.py` did it, for the seeds 0, 1 and 2, and
stored the results and seed 0's weights in the package. First, to see that the stored runs are the runs the
code makes: every scheme's first 50 steps again, here, and their losses against the stored ones.
""")

code(r"""
stored = extrapolation.load_extrapolation()
for scheme in stored["schemes"]:
    params = extrapolation.init_model(0)                     # seed 0's model, and seed 0's batches
    log = train_decoder(params, extrapolation.batch, steps=50, lr=extrapolation.TRAINING["lr"], seed=0,
                        **extrapolation.SCHEMES[scheme])
    i = stored["schemes"].index(scheme)
    np.testing.assert_allclose(log.losses, stored["first_losses"][i], rtol=0, atol=1e-6)
print("the first 50 losses of every scheme equal the stored ones (to 1e-6)")
""")

md(r"""
The stored table: the accuracy on the predictable tokens, the mean over the three seeds (and the lowest and
highest), at each length.
""")

code(r"""
acc, lengths = stored["accuracy"], stored["lengths"]        # (scheme, seed, length)
print(f"{'scheme':12s}" + "".join(f"{f'length {n}':>20s}" for n in lengths))
for s, scheme in enumerate(stored["schemes"]):
    cells = [f"{a.mean():.2f} ({a.min():.2f}-{a.max():.2f})" for a in acc[s].T]
    print(f"{scheme:12s}" + "".join(f"{c:>20s}" for c in cells))
""")

code(r"""
fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
for s, scheme in enumerate(stored["schemes"]):
    a = acc[s]
    label = {"alibi": "alibi, the paper's slopes (1/16, 1/256)", "alibi 1, 0": "alibi, slopes 1 and 0"}.get(scheme, scheme)
    ax.plot(lengths, a.mean(axis=0), "o-", label=label, color=ak.plotting.OKABE_ITO[s])
    ax.fill_between(lengths, a.min(axis=0), a.max(axis=0), alpha=0.2, color=ak.plotting.OKABE_ITO[s])
ax.axvline(24, color="#999999", linestyle="--", linewidth=1)
ax.text(25, 0.05, "trained at 24", color="#666666")
ax.set_xscale("log", base=2)
ax.set_xticks(lengths, [str(n) for n in lengths])
ax.set_ylim(0, 1.02)
ax.set_xlabel("length of the test sequences (tokens)")
ax.set_ylabel("accuracy on the predictable tokens")
ax.set_title("Trained at 24 tokens, tested longer (mean and range of 3 seeds)")
ax.legend()
plt.show()
""")

code(r"""
# The shipped weights (seed 0, stored in float32) give the stored accuracies again, here:
for scheme in stored["schemes"]:
    i = stored["schemes"].index(scheme)
    for n in (24, 96):
        a = extrapolation.accuracy(stored["params"][scheme], scheme, n)
        assert abs(a - acc[i, 0, list(lengths).index(n)]) < 0.02, (scheme, n, a)
print("seed 0's shipped weights reproduce its row of the table at 24 and 96 tokens (within 0.02)")

A = {name: acc[stored["schemes"].index(name)] for name in stored["schemes"]}   # (seed, length) each
SEEDS = "seeds 0, 1 and 2"
# what the text below claims, checked on every seed:
for name in ("sinusoidal", "rope", "alibi 1, 0"):
    assert (A[name][:, 0] > 0.9).all()                                    # learned at 24 tokens
assert (A["alibi"] < 0.6).all()                                           # the paper's slopes: not learned
assert (A["alibi 1, 0"][:, 1:] > 0.95).all()                              # still right at 48 to 192
for name in ("sinusoidal", "rope"):
    assert (np.diff(A[name], axis=1) < 0.02).all()                        # falling as the length grows
    assert (A[name][:, -1] < 0.75).all() and (A[name][:, -1] > 0.5).all()  # at 192: 0.5 to 0.75
    assert (A["alibi 1, 0"][:, -1] > A[name][:, -1] + 0.2).all()
assert np.abs(A["rope"].mean(0) - A["sinusoidal"].mean(0)).max() < 0.1   # rotary no better than sinusoidal here
print(f"claims below hold on {SEEDS}")
""")

md(r"""
**What it shows.** In distribution (24 tokens) sinusoidal positions, RoPE and ALiBi with the slopes 1 and 0
all learn the task. Longer texts separate them. ALiBi with a steep and a flat head stays right to 192 tokens,
eight times the training length (its accuracy even rises; a longer sequence has a larger share of tokens
past its first repeat). The sinusoidal and the rotary models lose accuracy step by step as the texts grow, to
between 0.5 and 0.75 at 192, by similar amounts. Press et al. (2022) found, for language models, that
sinusoidal positions degrade soon past the training length, rotary ones later and ALiBi least. ALiBi's lead
is reproduced here; rotary's lead over sinusoidal is not: on this task and model the two are about equal.

**The paper's slopes did not learn the task** in 1,500 steps. With two heads they are $2^{-4}$ and $2^{-8}$:
both heads see almost no difference between the token one back and the token ten back, and the task needs a
head that finds exactly the previous token. The paper used 8 to 16 heads, whose first slope, $\tfrac12$ or
$\tfrac1{\sqrt 2}$, is steep. The slopes are a design choice that the task has to fit.

**What it does not show.** One small task, one model size, three seeds. Sinusoidal positions do not fail
at once here: a linear map of the encodings can find relative offsets (notebook 04), and this model finds
some of them at unseen positions too. Language models, longer training and bigger models behave
differently (Press et al. measure the perplexity of language models with hundreds of millions of
parameters); and methods that *stretch* RoPE for longer texts (position interpolation, YaRN) are not tried
here. Why the two fall, as far as this shows: with sinusoidal positions, every position past 23 adds a
vector the model never saw; with RoPE, every distance past 23 turns the slow pairs to angles no training
example had.
""")

md(r"""
## 4. The cache that slides

Notebook 07's cached generation stopped at the window's end: its model adds absolute positions to the
tokens, so every cached key goes stale when the window moves. Here is notebook 06's rhyme model again,
same sizes, data, seed and training (`tools/train_tiny_lm.py --positions rope`), but with `positions="rope"`, once with one
layer and once with two. With RoPE a key is rotated **once**, at its absolute position, when its token
arrives, and `ak.KVCache(..., window=16)` keeps the last 16 keys and values (a rolling buffer). The query of
token $t$ is rotated at $t$; the scores see only distances, so nothing in the cache needs redoing when the
oldest token leaves. `tiny_lm.generate_with_cache` then writes past the window:
""")

code(r"""
rope1, cfg1, meta1 = streaming.load_rope_lm(1)
rope2, cfg2, meta2 = streaming.load_rope_lm(2)
meta06 = tiny_lm.load_pretrained()[2]                                    # notebook 06's sinusoidal model
print(f"held-out loss after training: RoPE, one layer {meta1['history'][-1, 2]:.2f}; two layers "
      f"{meta2['history'][-1, 2]:.2f}; notebook 06's sinusoidal model {meta06['history'][-1, 2]:.2f}")
vocab = rhyme_stream()[1]
prompt = vocab.encode("humpty dumpty sat on a")
seq, _ = tiny_lm.generate_with_cache(rope1, cfg1, prompt, 40)          # 45 tokens, window 16
print(" ".join(vocab.decode(seq)).replace(" / ", " /\n"))
""")

md(r"""
**Is the sliding cache right?** The reference is to recompute, for every token, the model on the window
of the last 16 tokens from scratch, as a fresh text at positions 0 to 15 (`streaming.recompute_logits`): 16
times the work. `streaming.stream_logits` reads the same text one token at a time through the sliding
caches. On the first 200 tokens of the rhymes:
""")

code(r"""
stream_ids = vocab.encode(rhyme_stream()[0])[:200]
diff = {}
for name, (p, c) in {"one layer": (rope1, cfg1), "two layers": (rope2, cfg2)}.items():
    cached = streaming.stream_logits(p, c, stream_ids)
    fresh = streaming.recompute_logits(p, c, stream_ids)
    diff[name] = np.abs(cached - fresh).max(axis=1)               # (200,) per token
    assert diff[name][:16].max() < 1e-12                          # before anything leaves the window
np.testing.assert_array_less(diff["one layer"], 1e-12)
print("one layer: the sliding cache equals recomputing each window, to 1e-12, at every token")
print(f"two layers: equal for the first 16 tokens; after that the logits differ by up to "
      f"{diff['two layers'][16:].max():.1f} (median {np.median(diff['two layers'][16:]):.1f})")
assert np.median(diff["two layers"][16:]) > 0.05
""")

md(r"""
Why one layer is exact and two are not: in layer 1 a key is $R(t\theta)\,\mathrm{LN}(x_t) W_k$, a function of
its own token and position only, so the cached key is the key a fresh pass computes (and the scores see only
the distance). In layer 2 a key is computed from token $t$'s state *after* layer 1, and that state attended
to the 15 tokens before $t$. When the window moves on, a fresh pass would let token $t$'s layer-1 state see
only the tokens still in the window, so it would compute a different key; the cache keeps the old one. The
cached model is still a sound model (each layer-2 key reached further back when it was made), but it is not
the recomputed one. Real models with sliding windows (Mistral) cache this way too.

### 4.1 Longer than the training window, and a sink

What happens to the loss when the model reads the whole text at once, 200 tokens, instead of a 16-token
window? And with a window that also keeps the very first token, an *attention sink* (Xiao et al. 2024,
`ak.KVCache(..., window=16, sinks=1)`)? The mean next-token loss over tokens 16 to 199 of the rhymes. (The
models were trained on every 16-token window of these rhymes and know them by heart: through a window the
loss is close to 0. What matters is how far the other two ways move from it.)
""")

code(r"""
tg = stream_ids[1:]
rows = {}
for name, (p, c) in {"one layer": (rope1, cfg1), "two layers": (rope2, cfg2)}.items():
    full = block.decoder_forward(p, stream_ids[None, :-1], positions="rope")[0][0]   # all 199 at once
    ways = {"window 16 (sliding cache)": streaming.stream_logits(p, c, stream_ids[:-1]),
            "window 16 + 1 sink": streaming.stream_logits(p, c, stream_ids[:-1], sinks=1),
            "no window (all tokens)": full}
    rows[name] = {w: cross_entropy(z[None, 16:], tg[None, 16:])[0] for w, z in ways.items()}
print(f"{'':28s}{'one layer':>12s}{'two layers':>12s}")
for w in rows["one layer"]:
    print(f"{w:28s}" + "".join(f"{rows[n][w]:12.2f}" for n in rows))
for n in rows:
    assert rows[n]["no window (all tokens)"] > rows[n]["window 16 (sliding cache)"] + 0.2
    assert abs(rows[n]["window 16 + 1 sink"] - rows[n]["window 16 (sliding cache)"]) < 0.2
""")

md(r"""
Reading all 199 tokens at once is clearly worse than a 16-token window, for the text the models know by
heart: they never saw distances beyond 15 in training, and with RoPE every unseen distance is an unseen
rotation of the keys, while the attention spreads over many more words. A window keeps the model in the
conditions it was trained in, whatever the length of the text.

The sink changes little here. StreamingLLM's sinks matter in models that learned to park spare attention on
the first token of every training text (notebook 08); our model was trained on windows that start anywhere
in the rhymes, so its first token is nothing special, and keeping it neither helps nor hurts much.
""")

md(r"""
## 5. Exercises

Each exercise has a checker that prints ✓ when your answer is right, or a hint aimed at the usual mistake.
""")

md("A worked solution follows each one, hidden: click the collapsed cell to see it.", "solution")

md(r"""
### Exercise 1: RoPE for one vector

Write `my_rope(x, m)` (in plain numpy, without attention_kit): the vector `x` of shape `(d,)` ($d$ even)
rotated by RoPE at position `m`: pair $i$, the features $(x_{2i}, x_{2i+1})$, turns by the angle
$m\,\theta_i$ with $\theta_i = 10000^{-2i/d}$. The checker tries $d$ = 2, 4, 8 and 16.
""")

code(r"""
def my_rope(x, m):
    return ...   # your code here: the rotated vector, shape (d,)

ok = check.rope_vector(my_rope)
""")

code(r"""
# Solution: one angle per pair, m * theta_i; the pair (a, b) becomes (a cos - b sin, a sin + b cos)
def my_rope(x, m):
    d = len(x)
    angle = m * 10000.0 ** (-np.arange(0, d, 2) / d)           # (d/2,) one angle per pair
    c, s = np.cos(angle), np.sin(angle)
    out = np.empty(d)
    out[0::2] = x[0::2] * c - x[1::2] * s
    out[1::2] = x[0::2] * s + x[1::2] * c
    return out

with check.quietly():          # silent: the assert fails if the answer is wrong
    assert check.rope_vector(my_rope)
""", "solution")

md(r"""
### Exercise 2: the score of a query and a key

Write `my_rope_score(q, k, m, n)` with your `my_rope`: the scaled score of the query `q` (shape `(d,)`) of
the token at position `m` against the key `k` of the token at position `n`. Then try it with `m` and `n`
both shifted by 100.
""")

code(r"""
def my_rope_score(q, k, m, n):
    return ...   # your code here: one number

ok = check.rope_score(my_rope_score)
""")

code(r"""
# Solution: rotate each at its own position, then the scaled dot product
def my_rope_score(q, k, m, n):
    return my_rope(q, m) @ my_rope(k, n) / np.sqrt(len(q))

with check.quietly():          # silent: the assert fails if the answer is wrong
    assert check.rope_score(my_rope_score)
""", "solution")

md(r"""
### Exercise 3: a row of ALiBi's biases

Write `my_alibi_row(slope, i)` (in plain numpy, without attention_kit): the biases that ALiBi adds to the
scores of the query at position `i` over the keys at positions $0, \dots, i$, for a head with slope `slope`;
shape `(i + 1,)`.
""")

code(r"""
def my_alibi_row(slope, i):
    return ...   # your code here, shape (i + 1,)

ok = check.alibi_row(my_alibi_row)
""")

code(r"""
# Solution: the penalty -m (i - j) for the key j; the query's own key (j = i) gets 0
def my_alibi_row(slope, i):
    return -slope * (i - np.arange(i + 1.0))

with check.quietly():          # silent: the assert fails if the answer is wrong
    assert check.alibi_row(my_alibi_row)
""", "solution")

md(r"""
### Exercise 4: what a cache with a sink keeps

A `KVCache(d_k, d_v, window=4, sinks=1)` has seen the tokens at positions 0, 1, ..., 9, in order. Predict,
without running it, the positions whose keys it holds now, as a list.
""")

code(r"""
answer = ...   # a list of positions

ok = check.cache_keeps(answer)
""")

code(r"""
# Solution: the first token (the sink) for ever, and beside it the last four, the newest included
answer = [0, 6, 7, 8, 9]

with check.quietly():          # silent: the assert fails if the answer is wrong
    assert check.cache_keeps(answer)
""", "solution")

md(r"""
## Summary

- RoPE rotates each pair of features of the query at position $m$ and the key at position $n$ by $m\theta_i$
  and $n\theta_i$: the score $q^\top R((n - m)\theta) k$ depends on the positions only through $m - n$, the
  lengths stay, and it is notebook 04's rotation put inside the score.
- ALiBi subtracts $m_h (i - j)$ from head $h$'s scores: a fixed slope per head, nothing learned, the mask and
  the backward pass unchanged.
- Trained at 24 tokens on a task that needs relative positions, a model with ALiBi (one steep and one flat
  head) stayed accurate at 192 tokens; sinusoidal and rotary models lost accuracy as texts grew, by similar
  amounts (Press et al. found rotary between the two); the paper's slopes, with only two heads, did not
  learn the task.
- With RoPE a key is rotated once, at its absolute position, and a KV cache can slide: for one layer it
  equals recomputing the window exactly; with two it differs, because deeper keys came from states that saw
  tokens since dropped.
- A window keeps a model in the conditions it was trained in; reading far more tokens than it was trained
  on raised the loss. An attention sink helps models that learned to use their first token, which ours did not.

## Further reading

- J. Su, Y. Lu, S. Pan, A. Murtadha, B. Wen and Y. Liu, *RoFormer: Enhanced Transformer with Rotary Position
  Embedding*, 2021, [arXiv:2104.09864](https://arxiv.org/abs/2104.09864).
- O. Press, N. A. Smith and M. Lewis, *Train Short, Test Long: Attention with Linear Biases Enables Input Length
  Extrapolation*, ICLR 2022, [arXiv:2108.12409](https://arxiv.org/abs/2108.12409).
- G. Xiao, Y. Tian, B. Chen, S. Han and M. Lewis, *Efficient Streaming Language Models with Attention Sinks*,
  ICLR 2024, [arXiv:2309.17453](https://arxiv.org/abs/2309.17453).
- Stretching RoPE past its training length: S. Chen, S. Wong, L. Chen and Y. Tian, *Extending Context Window of
  Large Language Models via Positional Interpolation*, 2023, [arXiv:2306.15595](https://arxiv.org/abs/2306.15595);
  B. Peng, J. Quesnelle, H. Fan and E. Shippole, *YaRN: Efficient Context Window Extension of Large Language
  Models*, 2023, [arXiv:2309.00071](https://arxiv.org/abs/2309.00071).
- A. Q. Jiang et al., *Mistral 7B*, 2023, [arXiv:2310.06825](https://arxiv.org/abs/2310.06825): a sliding
  window and a rolling cache in a released model.
""")


def _previous() -> str:
    """The link to notebook 08 once it exists (issue 24 writes it), else to 07."""
    if (ROOT / "notebooks" / "08_what_heads_learn.ipynb").exists():
        return "[08 · What trained heads do](08_what_heads_learn.ipynb)"
    return "[07 · Attention at scale](07_attention_at_scale.ipynb)"


def build_09() -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    if NB09.exists():  # keep the stored outputs of unchanged code cells and the measured header time
        old = nbformat.read(NB09, as_version=4)
        old_by_id = {c.get("id"): c for c in old.cells}
    else:
        old_by_id = {}
    for k, (kind, text, tags) in enumerate(CELLS):
        cid = f"nb09-{k:02d}"
        if kind == "markdown":
            cell = nbformat.v4.new_markdown_cell(text.replace("PREVIOUS", _previous()), id=cid)
            prev = old_by_id.get(cid)
        else:
            cell = nbformat.v4.new_code_cell(text, id=cid)
            prev = old_by_id.get(cid)
            if prev is not None and prev.cell_type == "code" and prev.source == text:
                cell.outputs, cell.execution_count = prev.outputs, prev.execution_count
        if tags:
            cell.metadata["tags"] = list(tags)
        if kind == "markdown" and text.startswith("### Check what you found"):
            cell.metadata["jp-MarkdownHeadingCollapsed"] = True
        if "solution" in tags and kind == "code":
            cell.metadata["jupyter"] = {"source_hidden": True}
        nb.cells.append(cell)
    if old_by_id and "language_info" in old.metadata:
        nb.metadata["language_info"] = old.metadata["language_info"]
    nbformat.write(nb, NB09)


def edit_07() -> None:
    nb = nbformat.read(NB07, as_version=4)
    hits = [c for c in nb.cells if c.cell_type == "markdown" and "There is one limit. This model **adds**" in c.source]
    if len(hits) != 1:
        raise SystemExit(f"notebook 07: expected one cell with the KV cache's limit, found {len(hits)}")
    cell = hits[0]
    old = "The cell after the next one checks both halves."
    new = ("The cell after the next one checks both halves; [notebook 09](09_long_context.ipynb) builds "
           "RoPE and ALiBi into the model, trains with them and lets the cache slide past the window.")
    if new not in cell.source:
        if old not in cell.source:
            raise SystemExit("notebook 07: the sentence to extend is gone")
        cell.source = cell.source.replace(old, new)
    rope_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("def rope(x, pos, base=10000.0):")]
    for c in rope_cells:  # the rotation is ak.rope now (notebook 09); the check stays the same
        c.source = c.source.replace(
            '''def rope(x, pos, base=10000.0):                                  # rotary embedding of one vector x (d,)
    theta = pos * base ** (-np.arange(0, x.shape[-1], 2) / x.shape[-1])   # one angle per pair of features
    c, s = np.cos(theta), np.sin(theta)
    out = np.empty_like(x)
    out[0::2], out[1::2] = x[0::2] * c - x[1::2] * s, x[0::2] * s + x[1::2] * c
    return out
''',
            '''def rope(x, pos):                                                 # rotary embedding of one vector x (d,)
    return ak.rope(x[None], [pos])[0]                                # each pair turned by pos * theta_i (notebook 09)
''')
    nbformat.write(nb, NB07)


if __name__ == "__main__":
    build_09()
    if "--only-09" not in sys.argv:
        edit_07()
    print(f"wrote {NB09.relative_to(ROOT)}" + ("" if "--only-09" in sys.argv else f"; edited {NB07.relative_to(ROOT)}"))
