"""Notebook 09, *Positions for long texts*: the length-extrapolation experiment.

One task whose answer depends on relative position, the same small model trained at one length
with each position scheme, then evaluated on longer texts (Press et al. 2022 did this with
language models and perplexity).

The task is notebook 08's repeated random sequences (:func:`attention_kit.heads.tasks.repeated_sequences`):
a random segment of 4 to 12 distinct tokens repeated to the end. Once the current token has
occurred before, the next token is predictable by looking back to that occurrence and copying
what followed it (an induction head: a head that finds "the token one back" and one that matches
content). The first token of the first repeat is not: its input token is new (:func:`predictable`
tells the two apart, and :func:`accuracy` scores them separately). Nothing in it depends on the absolute position, so a model that learned it at length 24
*could* do it at any length; whether it does depends on how it was told about positions.

The model is notebook 08's attention-only decoder (two layers of two heads, ``d_model = 32``)
without its table of learned positions; :data:`SCHEMES` says what each run passes to
:func:`attention_kit.decoder.block.decoder_forward`. A training script of the course's
repository (not shipped in a student edition) trains them all and writes
``attention_kit/data/extrapolation.npz`` (:func:`load_extrapolation`).
"""

from __future__ import annotations

from importlib import resources

import numpy as np
from threadpoolctl import threadpool_limits

from ..decoder.block import decoder_forward
from ..errors import ParameterError, ShapeError, check_count
from ..heads.model import AttnOnlyConfig, init_attention_only
from ..heads.tasks import repeated_sequences
from ..i18n import _
from ..relative.rope import rope
from ..scale.sliding_window import sliding_window_mask

__all__ = ["SCHEMES", "TASK", "MODEL", "TRAINING", "init_model", "batch", "predictable", "accuracy",
           "rope_scores", "rope_logits_at", "load_extrapolation"]

#: What each scheme passes to decoder_forward. "alibi" uses the paper's slopes (for 2 heads
#: 2^-4 and 2^-8); "alibi 1, 0" one steep head (slope 1) and one without any penalty.
SCHEMES = {
    "sinusoidal": {"positions": "sinusoidal"},
    "rope": {"positions": "rope"},
    "alibi": {"positions": "alibi"},
    "alibi 1, 0": {"positions": "alibi", "slopes": (1.0, 0.0)},
}
#: The task: vocabulary, training length, the range of the repeated segment's length.
TASK = {"vocab": 64, "length": 24, "periods": (4, 12)}
#: The model (notebook 08's attention-only decoder, its learned positions left out).
MODEL = AttnOnlyConfig(vocab=TASK["vocab"], d_model=32, n_heads=(2, 2), d_head=16, max_len=TASK["length"])
#: Training: Adam steps, learning rate, batch size.
TRAINING = {"steps": 1500, "lr": 3e-3, "batch": 32}


def init_model(seed: int) -> dict[str, np.ndarray]:
    """Fresh parameters of :data:`MODEL`, without the learned position table (no scheme uses it)."""
    params = init_attention_only(MODEL, rng=np.random.default_rng(seed))
    del params["P"]
    return params


def batch(rng: np.random.Generator, length: int = TASK["length"], size: int = TRAINING["batch"]):
    """A training batch ``(ids, targets)``, both (size, length)."""
    ids, targets, _ = repeated_sequences(rng, size, length=length, vocab=TASK["vocab"],
                                         periods=TASK["periods"])
    return ids, targets


def predictable(ids: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which targets of repeated sequences can be predicted, and how: ``(induction, boundary)``,
    two boolean arrays shaped like ``ids`` (batch, length).

    ``induction``: the current token occurred before, so copying what followed it gives the target
    (positions ``i >= period``). ``boundary``: the first token of the first repeat (``i = period - 1``):
    the current token is new, so no induction rule can find the target; it is the sequence's first
    token again, which only a guess that the segment restarts gets right.
    """
    ids, targets = np.asarray(ids), np.asarray(targets)
    n = ids.shape[1]
    seen = (ids[:, :, None] == ids[:, None, :]) & np.tril(np.ones((n, n), bool), -1)[None]  # (b, n, n): j < i
    induction = seen.any(axis=2)  # (batch, length): token i occurred before
    boundary = ~induction & (targets == ids[:, :1])  # new token, and the next is the first again
    return induction, boundary


def rope_scores(q: np.ndarray, k: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """RoPE's scores ``q_i . R(-distances[i, j] theta) k_j`` (no ``1/sqrt(d)``) for any distances.

    ``q`` (..., n_q, d) are the queries at positions ``0 .. n_q - 1`` and ``k`` (..., n_k, d) the keys
    at ``0 .. n_k - 1``, before rotation; ``d`` even. With ``distances[i, j] = i - j`` this is
    ``rope(q) @ rope(k).T``; any other (n_q, n_k) array rotates each pair by the distance given there,
    which no choice of positions can do (notebook 09 replaces the distances never seen in training by
    seen ones). The pairs whose distance is ``i - j`` come from that one product; each other distance
    value ``delta`` costs one more product, ``rope(q, delta) @ k.T`` (a query turned by ``delta``
    meets a key at 0), so a few distinct replacements are cheap.
    """
    q, k, distances = np.asarray(q, float), np.asarray(k, float), np.asarray(distances, float)
    if q.shape[-1] != k.shape[-1] or q.shape[-1] % 2:
        raise ShapeError(_("q and k need the same even number of features, got {n_q} and {n_k}").format(
            n_q=q.shape[-1], n_k=k.shape[-1]))
    n_q, n_k = q.shape[-2], k.shape[-2]
    if distances.shape != (n_q, n_k):
        raise ShapeError(_("distances has shape {shape} but ({n_q}, {n_k}) was expected: one distance per query "
                           "(row) and key (column)").format(shape=distances.shape, n_q=n_q, n_k=n_k))
    true = np.subtract.outer(np.arange(n_q), np.arange(n_k))  # (n_q, n_k): i - j
    s = rope(q) @ np.swapaxes(rope(k), -1, -2)  # (..., n_q, n_k): the scores at the true distances
    other = distances != true
    k_t = np.swapaxes(k, -1, -2)  # (..., d, n_k)
    for delta in np.unique(distances[other]):
        where = other & (distances == delta)  # (n_q, n_k)
        s[..., where] = (rope(q, np.full(n_q, delta)) @ k_t)[..., where]
    return s


def rope_logits_at(params: dict, ids, distances: np.ndarray, *, mask: np.ndarray | None = None) -> np.ndarray:
    """Logits of one of this experiment's RoPE models (attention only, no norms, no MLP) when the
    query at ``i`` and the key at ``j`` are rotated by ``distances[i, j]`` instead of ``i - j``;
    everything else unchanged. ``ids`` (batch, n), ``distances`` (n, n); ``mask`` (n, n), True where
    a query may attend, is the causal mask unless given (a sliding window with sinks, say).

    With the true distances it gives :func:`decoder_forward`'s logits (the tests check it)."""
    if any(name.startswith(("l0.ln", "l0.mlp", "lnf")) for name in params):
        raise ParameterError("rope_logits_at is written for this experiment's attention-only models "
                             "(no layer norm, no MLP)")
    ids = np.asarray(ids)
    X = params["E"][ids]  # (B, n, d_model)
    n = X.shape[1]
    causal = np.tri(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)  # (n, n)
    for l in range(sum(name.endswith(".attn.W_q") for name in params)):
        W_q, W_k, W_v, W_o = (params[f"l{l}.attn.{w}"] for w in ("W_q", "W_k", "W_v", "W_o"))
        q, k, v = (np.einsum("bnd,hde->bhne", X, W) for W in (W_q, W_k, W_v))  # (B, h, n, d_head)
        s = np.where(causal, rope_scores(q, k, distances) / np.sqrt(q.shape[-1]), -np.inf)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)  # (B, h, n, n)
        heads = w @ v  # (B, h, n, d_head)
        X = X + np.concatenate(list(heads.transpose(1, 0, 2, 3)), axis=-1) @ W_o  # heads side by side
    return X @ params["W_out"]


def accuracy(params: dict, scheme: str, length: int, *, n: int = 128, seed: int = 123,
             positions: str = "induction", window: int | None = None, sinks: int = 0,
             distances=None) -> float:
    """Share of the predictable tokens that the model gets right, greedily, on ``n`` fresh
    sequences of ``length`` tokens.

    ``positions="induction"``: the targets induction can predict (the current token occurred
    before); ``"boundary"``: the first token of the first repeat only (see :func:`predictable`).
    ``window``: each query sees only the last ``window`` keys (no distance beyond ``window - 1``),
    and with ``sinks`` the first ``sinks`` tokens as well. ``distances`` (RoPE only): a function
    that takes the (length, length) array of true distances ``i - j`` and returns the distances
    to rotate by instead (:func:`rope_logits_at`), every key kept, or with ``window`` the keys the
    window and its sinks keep (notebook 09 turns the sinks by a distance seen in training).
    """
    if scheme not in SCHEMES:
        raise ParameterError(_("scheme must be one of {list_SCHEMES}, got {scheme!r}").format(list_SCHEMES=list(SCHEMES), scheme=scheme))
    if positions not in ("induction", "boundary"):
        raise ParameterError(_("positions must be 'induction' or 'boundary', got {positions!r}").format(positions=positions))
    if distances is not None and scheme != "rope":
        raise ParameterError(_("distances replaces RoPE's rotations: use it with scheme='rope'"))
    length, n = check_count(length, "length", minimum=TASK["periods"][1]), check_count(n, "n")
    ids, targets, _rest = repeated_sequences(np.random.default_rng(seed), n, length=length,
                                         vocab=TASK["vocab"], periods=TASK["periods"])
    with threadpool_limits(limits=1, user_api="blas"):
        if distances is None:
            logits = decoder_forward(params, ids, window=window, sinks=sinks, **SCHEMES[scheme])[0]
        else:
            true = np.subtract.outer(np.arange(length), np.arange(length))  # (length, length): i - j
            mask = None if window is None else sliding_window_mask(length, window, sinks=sinks)
            logits = rope_logits_at(params, ids, np.asarray(distances(true), dtype=float), mask=mask)
    where = predictable(ids, targets)[positions == "boundary"]
    return float((logits.argmax(axis=-1) == targets)[where].mean())


def load_extrapolation() -> dict:
    """What the training run wrote: ``params`` {scheme: weights of seed 0},
    ``lengths``, ``seeds``, ``accuracy`` (scheme, seed, length), ``losses`` (scheme, seed, steps)
    smoothed over ``every`` steps, and ``first_losses`` (scheme, first steps) of seed 0, exact."""
    with resources.as_file(resources.files("attention_kit").joinpath("data/extrapolation.npz")) as f:
        with np.load(f) as z:
            out = {k: z[k] for k in z.files if not k.startswith("param/")}
            params: dict = {s: {} for s in SCHEMES}
            for k in z.files:
                if k.startswith("param/"):
                    _, s, name = k.split("/", 2)
                    params[s][name] = z[k].astype(np.float64)
    out["schemes"] = [str(s) for s in out["schemes"]]
    out["params"] = params
    return out
