"""Notebook 08, *What trained heads do*.

Small measurements of what a head does, each with an answer known on hand-made weights.

Attention weights are ``(batch, h, n, n)`` (what :func:`attention_kit.learn.block.decoder_forward`
saves in ``saved["weights"][l]``); a score is one number per head, averaged over the batch and the
queries it applies to.

* :func:`previous_token_score`: the weight query i puts on key i - 1.
* :func:`prefix_matching_score`: the weight query i puts on the tokens that *followed* an earlier
  occurrence of its own token (Olsson et al. 2022's induction score): "... A B ... A" -> B.
* :func:`sink_mass`: the weight on the first token (Xiao et al. 2023's attention sink).
* :func:`head_means` and :func:`mean_ablation`: replace a head's output by its mean (an ablation
  that keeps the average signal, unlike zeroing it).
* :func:`composition_scores`: Elhage et al.'s (2021) Q-, K- and V-composition between a head of
  one layer and a head of a later layer, read from the weights alone.
* :func:`accuracy`: greedy next-token accuracy where a mask says the target counts.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError
from ..learn.block import decoder_forward

__all__ = ["previous_token_score", "prefix_match_mask", "prefix_matching_score", "sink_mass",
           "head_means", "mean_ablation", "head_matrices", "composition_scores", "accuracy"]


def _weights(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.ndim == 2:
        w = w[None, None]  # (1, 1, n, n): one head, one sequence
    elif w.ndim == 3:
        w = w[None]  # (1, h, n, n)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ShapeError(f"weights has shape {w.shape}; give self-attention weights (n, n), (h, n, n) "
                         "or (batch, h, n, n), e.g. saved['weights'][layer]")
    if w.shape[-1] < 2:
        raise ShapeError("the sequence has one token: a score needs at least two")
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
        raise ParameterError("no query left to average over (query 0 has no previous token)")
    i = np.flatnonzero(keep)
    return w[..., i, i - 1].mean(axis=(0, 2))  # (batch, h, k) -> (h,)


def prefix_match_mask(ids) -> np.ndarray:
    """``(batch, n, n)``: True at key j < i when ``ids[j - 1] == ids[i]`` (j follows an earlier copy of token i)."""
    ids = np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None]
    if ids.ndim != 2:
        raise ShapeError(f"ids has shape {ids.shape}; give token ids (n,) or (batch, n)")
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
        raise ShapeError(f"ids has shape {np.shape(ids)} but the weights are for {w.shape[0]} sequences "
                         f"of {w.shape[-1]} tokens; pass the ids the weights were computed on")
    has = m.any(axis=-1)  # (batch, n): queries with an earlier copy
    if not has.any():
        raise ParameterError("no token repeats in ids: the prefix-matching score needs a repeated token")
    per_query = (w * m[:, None]).sum(axis=-1)  # (batch, h, n)
    return (per_query * has[:, None]).sum(axis=(0, 2)) / has.sum()  # (h,)


def sink_mass(weights, *, queries=None) -> np.ndarray:
    """Mean weight on key 0 per head, over queries 1 .. n-1 (query 0 can see only key 0): shape (h,).

    ``queries`` (batch, n) bool, optional: average over those queries only (e.g. the non-triggers).
    """
    w = _weights(weights)
    keep = np.ones(w.shape[:1] + w.shape[-2:-1], dtype=bool) if queries is None else np.asarray(queries, dtype=bool)
    if keep.shape != (w.shape[0], w.shape[-1]):
        raise ShapeError(f"queries has shape {keep.shape} but ({w.shape[0]}, {w.shape[-1]}) was expected")
    keep = keep.copy()
    keep[:, 0] = False
    if not keep.any():
        raise ParameterError("no query left to average over (query 0 is always left out)")
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
        raise ParameterError(f"no mean for {missing}; the model's heads are {sorted(means)}")
    return {x: means[x] for x in heads}


def head_matrices(params: dict, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """``(W_QK, W_OV)``, each (d_model, d_model): ``x_q W_QK x_k^T`` is the head's score of key x_k
    for query x_q (before the 1/sqrt(d_k)), and ``x W_OV`` what it writes for a key x it attends to."""
    key = f"l{layer}.attn.W_q"
    if key not in params or not 0 <= head < params[key].shape[0]:
        raise ParameterError(f"no head {head} in layer {layer}")
    W_q, W_k, W_v = (params[f"l{layer}.attn.{w}"][head] for w in ("W_q", "W_k", "W_v"))  # (d, d_head) each
    d_v = W_v.shape[1]
    W_o = params[f"l{layer}.attn.W_o"][head * d_v:(head + 1) * d_v]  # (d_head, d_model)
    return W_q @ W_k.T, W_v @ W_o


def composition_scores(params: dict, earlier: tuple, later: tuple) -> dict[str, float]:
    """Elhage et al.'s composition scores of head ``earlier`` into head ``later`` (each ``(layer, head)``).

    ``|A B|_F / (|A|_F |B|_F)`` with ``B`` the earlier head's ``W_OV`` and ``A`` the later head's
    matrix that reads it: K-composition ``W_QK W_OV^T`` (the earlier head moves what the keys are),
    Q-composition ``W_OV W_QK`` (the queries), V-composition ``W_OV W_OV'`` (the values). Random
    matrices of size d give about ``1 / sqrt(d)``; a score well above it means the heads share a subspace.
    """
    if earlier[0] >= later[0]:
        raise ParameterError(f"head {earlier} must be in an earlier layer than head {later}")
    _, OV0 = head_matrices(params, *earlier)
    QK1, OV1 = head_matrices(params, *later)

    def score(a, b):
        return float(np.linalg.norm(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    return {"K": score(QK1, OV0.T), "Q": score(OV0, QK1), "V": score(OV0, OV1)}


def accuracy(logits, targets, where=None) -> float:
    """Greedy next-token accuracy (argmax of the logits) over the positions where ``where`` is True."""
    logits, targets = np.asarray(logits), np.asarray(targets)
    if logits.shape[:-1] != targets.shape:
        raise ShapeError(f"logits {logits.shape} and targets {targets.shape} do not match: one target per row of logits")
    hit = logits.argmax(axis=-1) == targets
    where = np.ones(targets.shape, dtype=bool) if where is None else np.asarray(where, dtype=bool)
    if not where.any():
        raise ParameterError("no position selected: where is all False")
    return float(hit[where].mean())
