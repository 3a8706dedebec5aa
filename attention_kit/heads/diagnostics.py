"""Notebook 08, *What trained heads do*.

Small measurements of what a head does, each with an answer known on hand-made weights.

Attention weights are ``(batch, h, n, n)`` (what :func:`attention_kit.decoder.block.decoder_forward`
saves in ``saved["weights"][l]``); a score is one number per head, averaged over the batch and the
queries it applies to.

* :func:`previous_token_score`: the weight query i puts on key i - 1.
* :func:`prefix_matching_score`: the weight query i puts on the tokens that *followed* an earlier
  occurrence of its own token (Olsson et al. 2022's induction score): "... A B ... A" -> B.
* :func:`sink_mass`: the weight on the first token (Xiao et al. 2024's attention sink).
* :func:`head_means` and :func:`mean_ablation`: replace a head's output by its mean (an ablation
  that keeps the average signal, unlike zeroing it).
* :func:`path_ablation`: a head mean-ablated only where later layers build their queries, keys or
  values (which path of a composition the model uses).
* :func:`composition_scores`: Elhage et al.'s (2021) Q-, K- and V-composition between a head of
  one layer and a head of a later layer, read from the weights alone.
* :func:`composition_baseline`: the same scores for random matrices of the same shapes and rank, the
  yardstick a trained score is read against.
* :func:`head_direct_logits`: what one head's output adds to the logits by the direct path
  (its output times ``W_out``), in a model without MLP or final layer norm.
* :func:`seen_before`: the queries whose own token occurred earlier, the only ones an induction rule
  ("... A B ... A -> B") can answer.
* :func:`accuracy`: greedy next-token accuracy where a mask says the target counts.
"""

from __future__ import annotations

import numpy as np

from ..decoder.block import decoder_forward
from ..errors import ParameterError, ShapeError
from ..i18n import _

__all__ = ["previous_token_score", "prefix_match_mask", "prefix_matching_score", "sink_mass",
           "head_means", "mean_ablation", "path_ablation", "head_matrices", "composition_scores", "composition_baseline",
           "head_direct_logits", "seen_before", "accuracy"]


def _weights(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.ndim == 2:
        w = w[None, None]  # (1, 1, n, n): one head, one sequence
    elif w.ndim == 3:
        w = w[None]  # (1, h, n, n)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ShapeError(_("weights has shape {w_shape}; give self-attention weights (n, n), (h, n, n) "
                         "or (batch, h, n, n), e.g. saved['weights'][layer]").format(w_shape=w.shape))
    if w.shape[-1] < 2:
        raise ShapeError(_("the sequence has one token: a score needs at least two"))
    return w


def previous_token_score(weights, *, queries=None) -> np.ndarray:
    """Mean weight of query i on key i - 1, over queries 1 .. n-1 and the batch: shape (h,).

    ``queries``, optional: the query positions to average over (a slice, a list, or a bool (n,)),
    e.g. ``range(1, 13)``; query 0 has no previous token and is always left out.
    """
    w = _weights(weights)
    n = w.shape[-1]
    keep = np.zeros(n, dtype=bool)
    keep[np.arange(n) if queries is None else queries] = True
    keep[0] = False
    if not keep.any():
        raise ParameterError(_("no query left to average over (query 0 has no previous token)"))
    i = np.flatnonzero(keep)
    return w[..., i, i - 1].mean(axis=(0, 2))  # (batch, h, k) -> (h,)


def _batched_ids(ids) -> np.ndarray:
    """Token ids as ``(batch, n)``: one sequence ``(n,)`` becomes a batch of one."""
    ids = np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None]
    if ids.ndim != 2:
        raise ShapeError(_("ids has shape {ids_shape}; give token ids (n,) or (batch, n)").format(ids_shape=ids.shape))
    return ids


def prefix_match_mask(ids) -> np.ndarray:
    """``(batch, n, n)``: True at key j < i when ``ids[j - 1] == ids[i]`` (j follows an earlier copy of token i)."""
    ids = _batched_ids(ids)
    n = ids.shape[1]
    m = np.zeros((ids.shape[0], n, n), dtype=bool)
    m[:, :, 1:] = ids[:, :, None] == ids[:, None, :-1]  # query i, key j: ids[i] == ids[j - 1]
    return m & np.tri(n, k=-1, dtype=bool)  # only earlier keys, j < i


def prefix_matching_score(weights, ids) -> np.ndarray:
    """Per head, the weight on the keys of :func:`prefix_match_mask`, summed per query: shape (h,).

    Averaged over the queries (and sequences) that have such a key: the repeated part of a repeated
    sequence. 1 means every such query looks only at "the token after my earlier copy".
    """
    w = _weights(weights)
    m = prefix_match_mask(ids)  # (batch, n, n)
    if m.shape[0] != w.shape[0] or m.shape[-1] != w.shape[-1]:
        raise ShapeError(_("ids has shape {np_shape_ids} but the weights are for {w_shape_0} sequences "
                         "of {w_shape_1} tokens; pass the ids the weights were computed on").format(np_shape_ids=np.shape(ids), w_shape_0=w.shape[0], w_shape_1=w.shape[-1]))
    has = m.any(axis=-1)  # (batch, n): queries with an earlier copy
    if not has.any():
        raise ParameterError(_("no token repeats in ids: the prefix-matching score needs a repeated token"))
    per_query = (w * m[:, None]).sum(axis=-1)  # (batch, h, n)
    return (per_query * has[:, None]).sum(axis=(0, 2)) / has.sum()  # (h,)


def sink_mass(weights, *, queries=None) -> np.ndarray:
    """Mean weight on key 0 per head, over queries 1 .. n-1 (query 0 can see only key 0): shape (h,).

    ``queries`` (batch, n) bool, optional: average over those queries only (e.g. the non-triggers).
    """
    w = _weights(weights)
    keep = np.ones(w.shape[:1] + w.shape[-2:-1], dtype=bool) if queries is None else np.asarray(queries, dtype=bool)
    if keep.shape != (w.shape[0], w.shape[-1]):
        raise ShapeError(_("queries has shape {keep_shape} but ({w_shape_0}, {w_shape_1}) was expected").format(keep_shape=keep.shape, w_shape_0=w.shape[0], w_shape_1=w.shape[-1]))
    keep = keep.copy()
    keep[:, 0] = False
    if not keep.any():
        raise ParameterError(_("no query left to average over (query 0 is always left out)"))
    return (w[..., 0] * keep[:, None]).sum(axis=(0, 2)) / keep.sum()  # (h,)


def head_means(params: dict, ids, **forward) -> dict:
    """``{(layer, head): mean output (d_head,)}`` of every head over the batch ``ids`` and its positions."""
    _, saved = decoder_forward(params, np.atleast_2d(ids), **forward)
    means = {}
    for l, (_, att, *_rest) in enumerate(saved["layers"]):
        h, d_v = att.params.W_v.shape[0], att.params.W_v.shape[2]
        concat = att.concat.reshape(-1, h, d_v)  # (batch*n, h, d_v)
        means |= {(l, k): concat[:, k].mean(axis=0) for k in range(h)}
    return means


def mean_ablation(means: dict, heads) -> dict:
    """The ``replace_heads`` argument that mean-ablates ``heads`` (a list of ``(layer, head)``)."""
    heads = list(heads)
    missing = [x for x in heads if x not in means]
    if missing:
        raise ParameterError(_("no mean for {missing}; the model's heads are {sorted_means}").format(missing=missing, sorted_means=sorted(means)))
    return {x: means[x] for x in heads}


def path_ablation(params: dict, ids, means: dict, head: tuple, reads) -> tuple[np.ndarray, list]:
    """Logits (batch, n, vocab) and every layer's weights (batch, h, n, n), with ``head`` mean-ablated
    only where the later layers build ``reads`` (some of ``"q"``, ``"k"``, ``"v"``).

    An attention-only model (learned positions, no MLP, no layer norm). The head's output minus its
    mean (``means``, from :func:`head_means`) is taken out of the stream that the layers after it read
    for their queries, keys or values, as ``reads`` says; everything else, the read-out included,
    sees the real stream. ``reads=()`` is the plain forward pass; ``reads=("q", "k", "v")`` differs
    from :func:`mean_ablation` only by the head's direct path to the logits. It tells which path of a
    composition (Elhage et al. 2021's Q-, K- or V-composition) the model depends on.
    """
    reads = set(reads)
    if not reads <= {"q", "k", "v"}:
        raise ParameterError(_("reads holds some of 'q', 'k', 'v'; got {sorted_reads}").format(sorted_reads=sorted(reads)))
    if "lnf.g" in params or any(k.endswith("mlp.W1") for k in params):
        raise ParameterError(_("path ablation is written for an attention-only model (no MLP, no layer norm)"))
    ids = _batched_ids(ids)
    layer, h_ab = head
    if tuple(head) not in means:
        raise ParameterError(_("no mean for {head}; the model's heads are {sorted_means}").format(head=head, sorted_means=sorted(means)))
    n = ids.shape[1]
    x = params["E"][ids] + params["P"][:n]  # (batch, n, d)
    delta = np.zeros_like(x)  # what the head wrote, minus its mean: taken out where `reads` say
    causal = np.tri(n, dtype=bool)
    weights = []
    for l in range(sum(1 for k in params if k.endswith(".attn.W_q"))):
        W_q, W_k, W_v = (params[f"l{l}.attn.{w}"] for w in ("W_q", "W_k", "W_v"))  # (h, d, d_head)
        W_o = params[f"l{l}.attn.W_o"]  # (h d_head, d)
        h, d_head = W_q.shape[0], W_q.shape[2]
        ins = {r: x - delta if r in reads else x for r in "qkv"}
        q, k, v = (np.einsum("bnd,hde->bhne", ins[r], W) for r, W in zip("qkv", (W_q, W_k, W_v), strict=True))
        s = np.where(causal, q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head), -np.inf)  # (batch, h, n, n)
        a = np.exp(s - s.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        weights.append(a)
        out = a @ v  # (batch, h, n, d_head)
        for j in range(h):
            x = x + out[:, j] @ W_o[j * d_head:(j + 1) * d_head]
        if l == layer:
            rows = W_o[h_ab * d_head:(h_ab + 1) * d_head]
            delta = (out[:, h_ab] - means[tuple(head)]) @ rows  # (batch, n, d)
    return x @ params["W_out"], weights


def head_matrices(params: dict, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """``(W_QK, W_OV)``, each (d_model, d_model), in the course's row convention (rows are tokens).

    ``W_QK = W_Q W_K^T``: ``x_q W_QK x_k^T`` is the head's score of key row x_k for query row x_q
    (before the 1/sqrt(d_k)); ``W_OV = W_V W_O``: ``x W_OV`` is what the head writes for a key x it
    attends to. Elhage et al. (2021) write vectors as columns, with ``W_Q`` of shape (d_head, d_model):
    their ``W_QK = W_Q^T W_K`` is the same matrix as this one (the score is ``x_q^T W_QK x_k``), and
    their ``W_OV = W_O W_V`` is the transpose of this one.
    """
    key = f"l{layer}.attn.W_q"
    if key not in params or not 0 <= head < params[key].shape[0]:
        raise ParameterError(_("no head {head} in layer {layer}").format(head=head, layer=layer))
    W_q, W_k, W_v = (params[f"l{layer}.attn.{w}"][head] for w in ("W_q", "W_k", "W_v"))  # (d, d_head) each
    d_v = W_v.shape[1]
    W_o = params[f"l{layer}.attn.W_o"][head * d_v:(head + 1) * d_v]  # (d_head, d_model)
    return W_q @ W_k.T, W_v @ W_o


def composition_scores(params: dict, earlier: tuple, later: tuple) -> dict[str, float]:
    """Elhage et al.'s composition scores of head ``earlier`` into head ``later`` (each ``(layer, head)``).

    ``|A B|_F / (|A|_F |B|_F)`` of the later head's matrix that reads and the earlier head's ``W_OV``
    (row convention, :func:`head_matrices`): K-composition ``W_QK W_OV^T`` (the earlier head changes
    what the keys are), Q-composition ``W_OV W_QK`` (the queries), V-composition ``W_OV W_OV'`` (the
    values). Elhage et al.'s column-convention products, ``W_QK W_OV``, ``W_QK^T W_OV`` and
    ``W_OV' W_OV``, are these or their transposes: the same scores. Random matrices of the same shapes
    score about ``1 / sqrt(d_model)`` (:func:`composition_baseline`); read a trained score against that.
    """
    if earlier[0] >= later[0]:
        raise ParameterError(_("head {earlier} must be in an earlier layer than head {later}").format(earlier=earlier, later=later))
    _QK0, OV0 = head_matrices(params, *earlier)
    QK1, OV1 = head_matrices(params, *later)
    return {"K": _composition(QK1, OV0.T), "Q": _composition(OV0, QK1), "V": _composition(OV0, OV1)}


def _composition(a, b) -> float:
    return float(np.linalg.norm(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def composition_baseline(d_model: int, d_head: int, *, rng: np.random.Generator, samples: int = 1000,
                         kind: str = "K") -> np.ndarray:
    """Composition scores of random heads: ``samples`` scores, shape (samples,).

    Each sample draws two heads' ``W_Q, W_K, W_V`` (d_model, d_head) and ``W_O`` (d_head, d_model) with
    normal entries, as :func:`attention_kit.heads.model.init_attention_only` does, and scores the
    earlier head's ``W_OV`` into the later head's ``W_QK`` (``kind="K"`` or ``"Q"``) or ``W_OV``
    (``"V"``): matrices of rank ``d_head``, the baseline of :func:`composition_scores`.
    """
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
    if kind not in ("K", "Q", "V"):
        raise ParameterError(_("kind must be 'K', 'Q' or 'V', got {kind!r}").format(kind=kind))
    out = np.empty(int(samples))
    for s in range(out.size):
        q, k, v0, v1 = rng.normal(size=(4, d_model, d_head))  # W_Q, W_K of the later head; W_V of each
        o0, o1 = rng.normal(size=(2, d_head, d_model))  # W_O of each head
        QK1, OV0, OV1 = q @ k.T, v0 @ o0, v1 @ o1  # (d_model, d_model) each
        a, b = {"K": (QK1, OV0.T), "Q": (OV0, QK1), "V": (OV0, OV1)}[kind]
        out[s] = _composition(a, b)
    return out


def head_direct_logits(params: dict, saved: dict, layer: int, head: int) -> np.ndarray:
    """What head ``(layer, head)`` adds to the logits by the direct path: shape (batch, n, vocab).

    Its output at every position (its part of the heads' concatenation times its rows of ``W_o``),
    times ``W_out``: the logits it would add if nothing after it read it. ``saved`` is the second
    output of :func:`attention_kit.heads.model.run` on the ids (without ``replace_heads``). In a model
    without MLP and final layer norm, the logits are the direct path of the embeddings plus these,
    summed over every head.
    """
    if "lnf.g" in params or any(k.endswith("mlp.W1") for k in params):
        raise ParameterError(_("direct logits are a sum only in an attention-only model (no MLP, no final layer norm)"))
    layers = saved.get("layers", [])
    if not 0 <= layer < len(layers) or layers[layer][1] is None:
        raise ParameterError(_("no saved attention for layer {layer}: run the model without replace_heads "
                             "(it has {len_layers} layers)").format(layer=layer, len_layers=len(layers)))
    W_o = params[f"l{layer}.attn.W_o"]  # (h d_head, d_model)
    h = params[f"l{layer}.attn.W_q"].shape[0]
    if not 0 <= head < h:
        raise ParameterError(_("no head {head} in layer {layer}: it has heads 0 .. {h_1}").format(head=head, layer=layer, h_1=h - 1))
    d_v = W_o.shape[0] // h
    concat = layers[layer][1].concat  # (batch, n, h d_v)
    part = slice(head * d_v, (head + 1) * d_v)
    return concat[..., part] @ W_o[part] @ params["W_out"]  # (batch, n, d_v) -> (batch, n, vocab)


def seen_before(ids) -> np.ndarray:
    """``(batch, n)`` bool: True at position i when ``ids[i]`` occurs at an earlier position.

    These are the queries an induction rule ("... A B ... A -> B") can answer: the token after the
    earlier copy is the guess. In a repeated sequence of period p they are i >= p; query p - 1 (the
    last token of the first segment) predicts the first repeated token but has nothing to look up.
    """
    ids = _batched_ids(ids)
    n = ids.shape[1]
    same = ids[:, :, None] == ids[:, None, :]  # (batch, n, n): query i, key j hold the same token
    return (same & np.tri(n, k=-1, dtype=bool)).any(axis=-1)  # only earlier keys, j < i


def accuracy(logits, targets, where=None) -> float:
    """Greedy next-token accuracy (argmax of the logits) over the positions where ``where`` is True."""
    logits, targets = np.asarray(logits), np.asarray(targets)
    if logits.shape[:-1] != targets.shape:
        raise ShapeError(_("logits {logits_shape} and targets {targets_shape} do not match: one target per row of logits").format(logits_shape=logits.shape, targets_shape=targets.shape))
    hit = logits.argmax(axis=-1) == targets
    where = np.ones(targets.shape, dtype=bool) if where is None else np.asarray(where, dtype=bool)
    if not where.any():
        raise ParameterError(_("no position selected: where is all False"))
    return float(hit[where].mean())
