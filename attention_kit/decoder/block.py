"""Notebooks 06 and 07: the decoder block, written once, and the decoder built from it.

A decoder-only Transformer is a token embedding (plus positions), ``n_layers`` identical blocks
and a read-out. Each block is pre-norm, with both sub-layers on a residual path::

    X = X + attention(layer_norm_1(X))      # causal: position i sees positions 0..i
    X = X + mlp(layer_norm_2(X))

:func:`block_forward` is the only place a block is written, and :func:`decoder_forward` the only
place the blocks are stacked. Notebook 06's language model (:mod:`attention_kit.decoder.tiny_lm`)
trains through them and generates through them with and without a KV cache; notebook 07's
random-weight decoder (:class:`attention_kit.TinyDecoder`) runs through them too. What differs is
an argument, never a copy:

* **which pieces a model has**, read from its parameters (:mod:`attention_kit.learn.params`): no
  ``l{l}.ln1.g`` means no layer norms, no ``l{l}.mlp.W1`` no MLP (notebook 07's decoder is
  attention only), no ``lnf.g`` no final norm, no ``b_out`` no output bias;
* **the attention variant**, read from the weights' shapes: ``l{l}.attn.W_k`` with fewer heads than
  ``W_q`` is grouped-query attention (multi-query with one head), else multi-head; ``window``
  makes it a sliding window (give the caches the same window), ``sinks`` keeps the first tokens
  visible to every query as well (StreamingLLM's attention sinks, notebook 08);
* **the position scheme**: ``positions="sinusoidal"`` (Vaswani et al., added to the embeddings),
  ``"learned"`` (a trained table ``P`` (max_len, d_model) added to the embeddings, as in GPT-2;
  notebook 08), ``"rope"`` (every head's queries and keys rotated at their positions, Su et al.
  2021), ``"alibi"`` (a penalty linear in the distance added to the scores, Press et al. 2022; the
  paper's slopes unless ``slopes=`` gives one per head; notebook 09) or ``None``; ``start`` is the
  position of the first token given;
* **the cache**: ``caches``, one :class:`~attention_kit.scale.kvcache.KVCache` per layer, runs the
  new token only, appends its keys and values and attends with its query alone.

``count``, when given, is called with the multiply-adds of every matrix product, computed from the
shapes multiplied (notebook 07 counts the work of generation this way).
"""

from __future__ import annotations

import numpy as np

from ..errors import (
    ParameterError,
    ShapeError,
    as_float_array,
    check_arrays,
    check_finite,
    check_mask,
    door,
)
from ..i18n import _
from ..learn import layers as L
from ..learn.backward import multi_head_backward
from ..mechanism.masks import causal_mask
from ..mechanism.multi_head_attention import MultiHeadParams, multi_head_forward
from ..mechanism.positions import sinusoidal_positions
from ..relative.alibi import alibi_bias, alibi_slopes
from ..relative.rope import rope, rope_rotation
from ..scale.grouped_query import GroupedQueryParams, grouped_query_attention
from ..scale.sliding_window import sliding_window_mask

__all__ = ["POSITIONS", "attention_params", "n_layers_of", "block_forward", "block_backward",
           "decoder_forward", "decoder_backward"]

#: The position schemes :func:`decoder_forward` knows.
POSITIONS = ("sinusoidal", "learned", "rope", "alibi", None)


def _check_attention_params(params: dict, l: int):
    W = {w: params[f"l{l}.attn.{w}"] for w in ("W_q", "W_k", "W_v", "W_o")}
    if np.shape(W["W_k"])[0] >= np.shape(W["W_q"])[0]:
        MultiHeadParams(**W)  # the constructor's checks and messages
    return (params, l), {}


@door(_check_attention_params)
def attention_params(params: dict, l: int) -> MultiHeadParams | GroupedQueryParams:
    """Layer ``l``'s attention weights (views, no copy): grouped-query when ``W_k`` has fewer heads."""
    W = {w: params[f"l{l}.attn.{w}"] for w in ("W_q", "W_k", "W_v", "W_o")}
    if W["W_k"].shape[0] < W["W_q"].shape[0]:
        return GroupedQueryParams(**W)
    return MultiHeadParams.unchecked(**W)


def n_layers_of(params: dict) -> int:
    """How many blocks the parameters hold (``l0.attn.W_q``, ``l1.attn.W_q``, ...)."""
    n = 0
    while f"l{n}.attn.W_q" in params:
        n += 1
    return n


def _norm(X: np.ndarray, params: dict, name: str):
    """Layer norm ``name`` if the model has one, else X itself (and no cache)."""
    if f"{name}.g" not in params:
        return X, None
    return L.layer_norm.unchecked(X, params[f"{name}.g"], params[f"{name}.b"])


def _counting(count):
    """``np.matmul`` that reports the multiply-adds of each product to ``count``."""
    def matmul(a, b):
        out = a @ b
        count(int(np.prod(out.shape[:-1])) * a.shape[-1] * b.shape[-1])  # (batch) x rows x inner x columns
        return out
    return matmul


def _attention(A: np.ndarray, p, mask, cache, count, replace=None, pos=None, rotate=False, slopes=None):
    """Self-attention of the rows A (..., n, d_model): output, weights and the backward's cache.

    ``replace`` ``{head: vector (d_v,)}`` puts the vector in place of those heads' outputs before
    ``W_o`` (an ablation; forward only: the backward's cache is then None). ``pos`` (n,) are the
    rows' positions in the text, ``rotate`` applies RoPE at them, ``slopes`` (h,) ALiBi's penalty.
    """
    h, d_model, d_k = p.W_q.shape
    h_kv, d_v = p.W_k.shape[0], p.W_v.shape[2]
    rows = int(np.prod(A.shape[:-1]))
    if replace and (cache is not None or isinstance(p, GroupedQueryParams)):
        raise ParameterError(_("replace_heads works on multi-head attention without a cache"))
    if cache is not None:  # one new token: project it, append its k and v, attend over the cache
        x = A.reshape(d_model)  # (d_model,)
        q = np.einsum("d,hde->he", x, p.W_q)  # (h, d_k)
        k = np.einsum("d,hde->he", x, p.W_k)  # (h_kv, d_k)
        v = np.einsum("d,hde->he", x, p.W_v)  # (h_kv, d_v)
        if rotate:  # RoPE: each key is rotated once, at its absolute position, and cached so
            q, k = rope(q[:, None], pos)[:, 0], rope(k[:, None], pos)[:, 0]
        cache.append(k, v)
        bias = None if slopes is None else alibi_bias(slopes, 1, len(cache), positions_q=pos,
                                                      positions_k=cache.positions)[:, 0]  # (h, n_k)
        heads, w = cache.attend(q, matmul=np.matmul if count is None else _counting(count), bias=bias)  # (h, d_v), (h, n_k)
        out = (heads.reshape(-1) @ p.W_o).reshape(A.shape)  # (h*d_v,) @ (h*d_v, d_model)
        n_k, saved = 0, None  # (the cache counted its two products itself)
    elif isinstance(p, GroupedQueryParams):
        if rotate or slopes is not None:
            raise ParameterError(_("RoPE and ALiBi are written for multi-head attention here (or with a "
                                 "KV cache); use positions='sinusoidal' or None with grouped-query weights"))
        out, w = grouped_query_attention(A, A, p, mask)
        n_k, saved = A.shape[-2], None
    else:
        n_k = A.shape[-2]
        bias = None if slopes is None else alibi_bias(slopes, n_k, positions_q=pos, positions_k=pos)  # (h, n, n)
        out, w, saved = multi_head_forward.unchecked(A, A, p, mask, rotation=rope_rotation(pos) if rotate else None, bias=bias)
        if replace:
            concat = saved.concat.copy()  # (..., n, h*d_v): the heads side by side
            for head, vec in replace.items():
                concat[..., head * d_v:(head + 1) * d_v] = np.broadcast_to(vec, (d_v,))
            out, saved = concat @ p.W_o, None  # (..., n, d_model)
    if count is not None:
        count(rows * d_model * (h * d_k + h_kv * (d_k + d_v)))  # the Q, K and V projections
        count(rows * h * n_k * (d_k + d_v))  # the scores q . k and the weighted sum of the v (no cache)
        count(rows * h * d_v * d_model)  # W_o
    return out, w, saved


def _check_block(X, params: dict, l: int, *, mask=None, cache=None, **rest):
    """A learner's call of :func:`block_forward`: block ``l`` exists, X is finite with the
    model's width in its last axis, and a mask is boolean with one row and column per token."""
    layers = n_layers_of(params)
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or not 0 <= l < layers:
        which = (_("0 (the model has one block)") if layers == 1 else
                 _("a block's number, 0 to {last}").format(last=layers - 1))
        raise ParameterError(_("l must be {which}, got {l!r}").format(which=which, l=l))
    X = as_float_array(X, "X")
    d_model = np.shape(params[f"l{l}.attn.W_q"])[-2]  # (h, d_model, d_k) or (d_model, ...)
    if X.ndim < 2 or X.shape[-1] != d_model:
        hint = _(" (did you pass the column layout (d, n)? Use X.T)") if X.ndim == 2 and X.shape[0] == d_model else ""
        raise ShapeError(_("X must have shape (..., n, {d_model}): one row per token, {d_model} "
                         "numbers each (the model's d_model), but it has shape {X_shape}{hint}").format(d_model=d_model, X_shape=X.shape, hint=hint))
    check_finite(X, "X")
    if mask is not None:
        if cache is not None:
            raise ParameterError(_("give no mask with a cache: the new token sees every cached one"))
        mask = check_mask(mask, (X.shape[-2], X.shape[-2]))
    return (X, params, l), dict(rest, mask=mask, cache=cache)


@door(_check_block)
def block_forward(X, params: dict, l: int, *, mask=None, cache=None, residual: bool = True,
                  count=None, replace_heads: dict | None = None, positions: str | None = None,
                  start: int = 0, slopes=None):
    """Block ``l``: ``X + attention(ln1(X))``, then ``X + mlp(ln2(X))``.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
        With a ``cache``, the one new token, shape (1, 1, d_model) or (1, d_model).
    params : dict
        The model's parameters; block ``l``'s names start with ``l{l}.``.
    mask : bool array, shape (n, n), optional
        True means "may attend" (no mask with a cache: the new token sees every cached one).
    cache : KVCache, optional
    residual : bool
        False drops both residual paths (an experiment of notebook 06).
    count : callable, optional
        Called with the multiply-adds of each matrix product.
    replace_heads : dict, optional
        ``{head: vector of shape (d_head,)}``: those heads' outputs replaced by the vector at every
        position before ``W_o`` (an ablation, notebook 06; forward only).
    positions : str, optional
        ``"rope"`` rotates the queries and keys, ``"alibi"`` adds ``slopes``' penalty to the scores
        (notebook 09); any other scheme was added to the embeddings and changes nothing here.
    start : int
        Position of the first row of X in the text.
    slopes : ndarray, shape (h,), optional
        ALiBi's slopes (with ``positions="alibi"``).

    Returns
    -------
    X : ndarray, shape of X
    weights : ndarray, shape (..., h, n, n_k)
    saved : tuple
        What :func:`block_backward` needs: the caches of ``(ln1, attention, ln2, mlp)``, then
        ``l`` and ``residual``; ``saved[1]`` is the attention's ``MultiHeadCache``.
    """
    A_in, c1 = _norm(X, params, f"l{l}.ln1")  # (..., n, d)
    p = attention_params.unchecked(params, l)
    pos = np.arange(start, start + X.shape[-2], dtype=float)  # (n,) the rows' positions in the text
    if positions == "alibi" and slopes is None:
        slopes = alibi_slopes(p.W_q.shape[0])
    att, w, ca = _attention(A_in, p, mask, cache, count, replace_heads, pos, positions == "rope",
                            slopes if positions == "alibi" else None)
    X = X + att if residual else att
    c2 = cm = None
    if f"l{l}.mlp.W1" in params:
        M_in, c2 = _norm(X, params, f"l{l}.ln2")
        m, cm = L.mlp.unchecked(M_in, *(params[f"l{l}.mlp.{w}"] for w in ("W1", "b1", "W2", "b2")))  # (..., n, d)
        if count is not None:
            count(int(np.prod(M_in.shape[:-1])) * M_in.shape[-1] * params[f"l{l}.mlp.W1"].shape[1] * 2)
        X = X + m if residual else m
    return X, w, (c1, ca, c2, cm, l, residual)


def block_backward(dX, saved) -> tuple[np.ndarray, dict]:
    """``dL/dX`` of the block's input and the gradients of its parameters, from ``dL/d(output)``."""
    c1, ca, c2, cm, l, residual = saved
    if ca is None:
        raise ParameterError(_("the backward pass is written for multi-head attention without a cache "
                             "(and without replace_heads); run the block that way to train it"))
    g: dict[str, np.ndarray] = {}
    if cm is not None:
        dM_in, *dmlp = L.mlp_backward(dX, cm)
        g |= dict(zip((f"l{l}.mlp.{w}" for w in ("W1", "b1", "W2", "b2")), dmlp, strict=True))
        if c2 is not None:
            dM_in, g[f"l{l}.ln2.g"], g[f"l{l}.ln2.b"] = L.layer_norm_backward(dM_in, c2)
        dX = dX + dM_in if residual else dM_in  # the residual path passes dX straight through
    dq, dkv, ga = multi_head_backward.unchecked(ca, dX)
    g |= {f"l{l}.attn.{w}": getattr(ga, w) for w in ("W_q", "W_k", "W_v", "W_o")}
    dA_in = dq + dkv  # the normed rows are both the queries and the keys/values: used twice
    if c1 is not None:
        dA_in, g[f"l{l}.ln1.g"], g[f"l{l}.ln1.b"] = L.layer_norm_backward(dA_in, c1)
    return (dX + dA_in if residual else dA_in), g


def _check_decoder(params: dict, ids, *, positions: str | None = "sinusoidal", slopes=None, **switches):
    """The checks of :func:`decoder_forward`: the weights (numbers, all finite), the token ids (in the
    vocabulary), the position scheme and the slopes; what the blocks get from here is checked."""
    if positions not in POSITIONS:
        raise ParameterError(_("positions must be one of {positions}, got {positions2!r}").format(positions=POSITIONS, positions2=positions))
    check_arrays(params)
    if slopes is not None:
        if positions != "alibi":
            raise ParameterError(_("slopes are ALiBi's: pass positions='alibi' with them (not {positions!r})").format(positions=positions))
        slopes = as_float_array(slopes, "slopes").reshape(-1)
        if slopes.size != params["l0.attn.W_q"].shape[0]:
            raise ShapeError(_("give one slope per head: {value}, not {slopes_size}").format(value=params['l0.attn.W_q'].shape[0], slopes_size=slopes.size))
    ids = L.token_ids(ids, np.shape(params["E"])[0])
    return (params, ids), dict(switches, positions=positions, slopes=slopes)


@door(_check_decoder)
def decoder_forward(params: dict, ids, *, positions: str | None = "sinusoidal", start: int = 0,
                    causal: bool = True, window: int | None = None, sinks: int = 0, caches=None,
                    residual: bool = True, count=None, replace_heads: dict | None = None,
                    slopes=None):
    """Logits of the next token at every position: embedding, the blocks, final norm, read-out.

    Parameters
    ----------
    params : dict
        ``E`` (vocab, d_model), the blocks ``l0.`` ... , optionally ``lnf.g`` / ``lnf.b``, ``W_out``
        (d_model, vocab) and optionally ``b_out`` (vocab,).
    ids : int array, shape (batch, n)
        Token ids, already checked by the model (every id in the vocabulary).
    positions : {"sinusoidal", "learned", "rope", "alibi", None}
        ``"learned"`` adds rows ``start .. start + n - 1`` of ``params["P"]`` (max_len, d_model).
    start : int
        Position of ``ids[:, 0]`` (with a cache, how many tokens came before).
    causal : bool
        Mask the future (switch it off only to see why it is there).
    window : int, optional
        Sliding-window attention: each position sees the last ``window`` ones.
    sinks : int
        With ``window``: the first ``sinks`` positions stay visible to every query (StreamingLLM).
    caches : list of KVCache, optional
        One per block; then ``ids`` is the one new token, shape (1, 1).
    residual : bool
    count : callable, optional
        Called with the multiply-adds of each matrix product.
    replace_heads : dict, optional
        ``{(layer, head): vector of shape (d_head,)}``: an ablation (see :func:`block_forward`).
    slopes : array of h numbers, optional
        ALiBi's slope per head (``positions="alibi"``); the paper's, ``alibi_slopes(h)``, when None.

    Returns
    -------
    logits : ndarray, shape (batch, n, vocab)
    saved : dict
        What :func:`decoder_backward` needs; ``saved["weights"][l]`` is block l's attention
        weights, shape (batch, h, n, n_k), and ``saved["layers"][l]`` what block l saved.
    """
    X, c_emb = L.embed.unchecked(ids, params["E"])  # (B, n, d)
    B, n, d = X.shape
    if positions == "sinusoidal":
        X = X + sinusoidal_positions.unchecked(start + n, d)[start:]  # (n, d), the same for every sequence
    elif positions == "learned":
        X = X + _learned_positions(params, start, n)  # (n, d): rows start .. start + n - 1 of P
    mask = None
    if caches is None and window is not None:
        mask = sliding_window_mask(n, window, sinks=sinks)  # (n, n): causal, at most `window` back
    elif caches is None and causal:
        mask = causal_mask.unchecked(n, n)  # (n, n), for every head and sequence
    n_layers = n_layers_of(params)
    if caches is not None and len(caches) != n_layers:
        raise ParameterError(_("give one KVCache per block: {n_layers}, not {len_caches}").format(n_layers=n_layers, len_caches=len(caches)))
    blocks, weights = [], []
    for l in range(n_layers):
        replace = {h: v for (layer, h), v in (replace_heads or {}).items() if layer == l}
        X, w, saved = block_forward.unchecked(X, params, l, mask=mask, residual=residual, count=count,
                                    cache=None if caches is None else caches[l], replace_heads=replace,
                                    positions=positions, start=start, slopes=slopes)
        blocks.append(saved)
        weights.append(w)
    F, cf = _norm(X, params, "lnf")  # (B, n, d)
    logits = F @ params["W_out"]  # (B, n, V)
    if "b_out" in params:
        logits += params["b_out"]
    if count is not None:
        count(B * n * d * params["W_out"].shape[1])
    return logits, {"emb": c_emb, "layers": blocks, "final": (cf, F), "weights": weights,
                    "positions": (positions, start, n)}


def decoder_backward(params: dict, saved: dict, dlogits) -> dict[str, np.ndarray]:
    """Gradients of every parameter, given ``dL/dlogits`` of shape (batch, n, vocab)."""
    g: dict[str, np.ndarray] = {}
    cf, F = saved["final"]
    d, V = F.shape[-1], dlogits.shape[-1]
    g["W_out"] = F.reshape(-1, d).T @ dlogits.reshape(-1, V)  # (d, B*n) @ (B*n, V)
    if "b_out" in params:
        g["b_out"] = dlogits.reshape(-1, V).sum(axis=0)  # (V,)
    dX = dlogits @ params["W_out"].T  # (B, n, d)
    if cf is not None:
        dX, g["lnf.g"], g["lnf.b"] = L.layer_norm_backward(dX, cf)
    for block in reversed(saved["layers"]):
        dX, gb = block_backward(dX, block)
        g |= gb
    g["E"] = L.embed_backward(dX, saved["emb"])
    if "P" in params:  # learned positions: row start + i gets the gradient of position i, summed over the batch
        g["P"] = np.zeros_like(params["P"])
        positions, start, n = saved["positions"]
        if positions == "learned":
            g["P"][start:start + n] = dX.reshape(-1, n, dX.shape[-1]).sum(axis=0)  # (n, d)
    return g


def _learned_positions(params: dict, start: int, n: int) -> np.ndarray:
    """Rows ``start .. start + n - 1`` of the learned position table ``P`` (max_len, d_model)."""
    if "P" not in params:
        raise ParameterError(_('positions="learned" needs a table params["P"] of shape (max_len, d_model); '
                             'create it with the model (heads.init_attention_only) or use positions="sinusoidal"'))
    if start + n > params["P"].shape[0]:
        raise ParameterError(_("the model learned {params_P_shape_0} positions but position {start_n_1} "
                             "was asked for; give at most {params_P_shape_0_start} tokens").format(params_P_shape_0=params['P'].shape[0], start_n_1=start + n - 1, params_P_shape_0_start=params['P'].shape[0] - start))
    return params["P"][start:start + n]
