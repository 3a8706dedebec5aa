"""Notebook 07, *Attention at scale*.

Tiled attention in the manner of FlashAttention: blocks of queries against blocks of keys.

Plain attention builds the whole ``(n_q, n_k)`` score matrix. Tiled attention never does: for each
block of ``block_q`` queries it walks over the blocks of ``block_k`` keys, computes only that
``(block_q, block_k)`` tile of scores, and folds it into a running maximum ``m``, a running sum
``l`` and an unnormalised output ``acc`` with the online-softmax update (:mod:`.online`)::

    m_new = max(m, rowmax(S_tile))          alpha = exp(m - m_new)
    P     = exp(S_tile - m_new)             l_new = alpha * l + rowsum(P)
    acc   = alpha * acc + P @ V_tile

and divides by ``l`` once at the end of the row block. Every old term is rescaled by the same
``alpha``, so the result equals ``softmax(Q K^T / sqrt(d_k)) V`` up to rounding (Dao et al. 2022,
FlashAttention; this loop order, queries outside, is FlashAttention-2's). Memory: the output, the
per-row ``m`` and ``l``, and one tile: ``O(n d + block_q block_k)`` instead of ``O(n^2)``.

A tile whose mask is all False contributes nothing and is **skipped** (not computed, and counted
as skipped): with ``causal=True`` that is every tile above the diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError, check_count, check_finite, check_mask
from ..i18n import N_, _
from ..mechanism.attention import check_qkv, check_scale
from ..mechanism.kernels import OVERFLOW_BOUND
from .online import check_block, online_step

__all__ = ["TileCounts", "TileStep", "tiled_attention", "tiled_trace", "tile_counts"]


@dataclass(frozen=True)
class TileCounts:
    """How many tiles a tiled attention visited.

    Attributes
    ----------
    total : int
        ``ceil(n_q / block_q) * ceil(n_k / block_k)``.
    computed : int
        Tiles with at least one allowed (query, key) pair.
    skipped : int
        Tiles whose mask is all False: never computed.
    """

    total: int
    computed: int
    skipped: int


@dataclass(frozen=True)
class TileStep:
    """The state of one block of query rows after one tile (see :func:`tiled_trace`).

    Attributes
    ----------
    q_block, k_block : int
        The tile's position in the grid of blocks.
    rows, cols : tuple of int
        ``(start, stop)`` of its query rows and key columns.
    skipped : bool
        The tile was entirely masked and not computed.
    m, l : ndarray, shape (stop - start,)
        Running maximum and sum of the tile's query rows after this tile.
    out : ndarray, shape (stop - start, d_v)
        Partial output ``acc / l`` of those rows (zeros where nothing was allowed yet).
    """

    q_block: int
    k_block: int
    rows: tuple[int, int]
    cols: tuple[int, int]
    skipped: bool
    m: np.ndarray
    l: np.ndarray
    out: np.ndarray


def _window(window) -> int | None:
    return None if window is None else check_count(window, "window", example="4096 (query i sees keys "
                                                                      "i - window + 1 .. i)")


def _tile_mask(r0, r1, c0, c1, causal, window, mask):
    """The tile's boolean mask (..., r1 - r0, c1 - c0), None when every pair is allowed,
    or False when no pair is (the tile is skipped). Never builds more than one tile."""
    if causal or window is not None:
        if c0 > r1 - 1 or (window is not None and c1 - 1 <= r0 - window):
            return False  # every key is in the future of every query, or too far back
        full = c1 - 1 <= r0 and (window is None or c0 > r1 - 1 - window)
        idx = None
        if not full:
            d = np.arange(r0, r1)[:, None] - np.arange(c0, c1)[None, :]  # (rows, cols): i - j
            idx = d >= 0 if window is None else (d >= 0) & (d < window)
    else:
        idx = None
    if mask is not None:
        blk = mask[..., r0:r1, c0:c1]
        idx = blk if idx is None else blk & idx
    if idx is not None and not idx.any():
        return False
    return idx


def _setup(Q, K, V, mask, block_q, block_k, causal, window, scale):
    Q, K, V = check_qkv(Q, K, V)
    bq, bk = check_block(block_q, "block_q"), check_block(block_k, "block_k")
    window = _window(window)
    if window is not None:
        causal = True  # a sliding window looks back only
    n_q, n_k = Q.shape[-2], K.shape[-2]
    try:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ShapeError(_("the batch dimensions of Q {Q_shape}, K {K_shape} and V {V_shape} do not "
                         "broadcast; give them the same leading shape").format(Q_shape=Q.shape, K_shape=K.shape, V_shape=V.shape)) from None
    if mask is not None:
        full = batch + (n_q, n_k)
        m = check_mask(mask, full)
        mask = np.broadcast_to(m, m.shape[:-2] + (n_q, n_k)) if m.ndim >= 2 else np.broadcast_to(m, (n_q, n_k))
    s = check_scale(scale, Q.shape[-1])
    dt = np.result_type(Q, K, V)
    Qs = (Q * Q.dtype.type(s)).astype(dt, copy=False)
    # Cauchy-Schwarz bound on |q . k|, as in scaled_dot_product_attention: below it no tile overflows
    with np.errstate(over="ignore", invalid="ignore"):
        bound = float(np.sqrt(np.max(np.einsum("...i,...i->...", Qs, Qs)))
                      * np.sqrt(np.max(np.einsum("...i,...i->...", K, K))))
    check_tiles = not bound < OVERFLOW_BOUND
    return Qs, K.astype(dt, copy=False), V.astype(dt, copy=False), mask, bq, bk, bool(causal), window, batch, check_tiles


def _row_blocks(Qs, K, V, mask, bq, bk, causal, window, batch, check_tiles):
    """Yield, for every tile in order, ``(i, j, rows, cols, skipped, last, m, l, acc)``: ``last``
    marks the row block's last tile; ``m``, ``l``, ``acc`` are the live running state of the tile's
    query rows (copy them to keep them)."""
    n_q, n_k, d_v = Qs.shape[-2], K.shape[-2], V.shape[-1]
    for i, r0 in enumerate(range(0, n_q, bq)):
        r1 = min(r0 + bq, n_q)
        m = np.full(batch + (r1 - r0,), -np.inf, dtype=Qs.dtype)  # (..., rows)
        l = np.zeros(batch + (r1 - r0,), dtype=Qs.dtype)  # (..., rows)
        acc = np.zeros(batch + (r1 - r0, d_v), dtype=Qs.dtype)  # (..., rows, d_v)
        q = Qs[..., r0:r1, :]  # (..., rows, d_k)
        for j, c0 in enumerate(range(0, n_k, bk)):
            c1 = min(c0 + bk, n_k)
            last = c1 == n_k
            tmask = _tile_mask(r0, r1, c0, c1, causal, window, mask)
            if tmask is False:
                yield i, j, (r0, r1), (c0, c1), True, last, m, l, acc
                continue
            with np.errstate(over="ignore", invalid="ignore"):
                S = q @ np.swapaxes(K[..., c0:c1, :], -1, -2)  # (..., rows, cols): one tile of scores
            if check_tiles:
                check_finite(S, N_("the scores Q K^T / sqrt(d_k)"))
            if tmask is not None:
                S = np.where(tmask, S, -np.inf)  # blocked pairs add exp(-inf) = 0
            m, l, alpha, P = online_step(m, l, S)  # (..., rows), (..., rows), (..., rows), (..., rows, cols)
            acc = alpha[..., None] * acc + P @ V[..., c0:c1, :]  # (..., rows, d_v)
            yield i, j, (r0, r1), (c0, c1), False, last, m, l, acc


def _normalise(acc: np.ndarray, l: np.ndarray) -> np.ndarray:
    """``acc / l`` row by row; a row with nothing allowed (l = 0) gives zeros, as in softmax."""
    return acc / np.where(l == 0, 1.0, l)[..., None]


def tiled_attention(Q, K, V, mask=None, *, block_q: int = 64, block_k: int = 64, causal: bool = False,
                    window: int | None = None, scale: float | None = None):
    """``softmax(Q K^T / sqrt(d_k)) V`` one tile at a time, never holding the ``(n_q, n_k)`` scores.

    Parameters
    ----------
    Q : ndarray, shape (..., n_q, d_k)
    K : ndarray, shape (..., n_k, d_k)
    V : ndarray, shape (..., n_k, d_v)
    mask : bool array, broadcastable to (..., n_q, n_k), optional
        True means "may attend". (An explicit mask is itself ``n_q x n_k``; ``causal`` and
        ``window`` build each tile's mask on the fly instead.)
    block_q, block_k : int >= 1
        Queries and keys per tile. They need not divide ``n_q`` and ``n_k``.
    causal : bool
        Query i sees keys 0..i (as ``causal_mask(n_q, n_k)``); tiles above the diagonal are skipped.
    window : int, optional
        Sliding window: query i sees keys ``i - window + 1 .. i`` only (implies ``causal``).
    scale : float, optional
        Defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
        Equal to ``scaled_dot_product_attention(Q, K, V, mask)[0]`` up to rounding; a query that
        may attend to nothing gets a zero row.
    counts : TileCounts
        Tiles in all, computed and skipped.
    """
    Qs, K, V, mask, bq, bk, causal, window, batch, check_tiles = _setup(
        Q, K, V, mask, block_q, block_k, causal, window, scale)
    out = np.empty(batch + (Qs.shape[-2], V.shape[-1]), dtype=Qs.dtype)  # (..., n_q, d_v)
    total = skipped = 0
    for _i, _j, (r0, r1), _cols, was_skipped, last, _m, l, acc in _row_blocks(
            Qs, K, V, mask, bq, bk, causal, window, batch, check_tiles):
        total += 1
        skipped += was_skipped
        if last:
            out[..., r0:r1, :] = _normalise(acc, l)  # (..., rows, d_v)
    return out, TileCounts(total=total, computed=total - skipped, skipped=skipped)


def tiled_trace(Q, K, V, mask=None, *, block_q: int = 4, block_k: int = 4, causal: bool = False,
                window: int | None = None, scale: float | None = None) -> list[TileStep]:
    """Every step of :func:`tiled_attention` on one (unbatched) sequence, in the order computed.

    Takes the same arguments as :func:`tiled_attention` with ``Q`` ``(n_q, d_k)``, ``K``
    ``(n_k, d_k)``, ``V`` ``(n_k, d_v)``. Returns one :class:`TileStep` per tile (skipped tiles
    included), holding copies of the tile's rows' running ``m``, ``l`` and partial output.
    """
    Qs, K, V, mask, bq, bk, causal, window, batch, check_tiles = _setup(
        Q, K, V, mask, block_q, block_k, causal, window, scale)
    if batch:
        raise ShapeError(_("tiled_trace follows one sequence: Q must be (n_q, d_k), got batch dimensions {batch}; "
                         "pick one sequence, e.g. Q[0], K[0], V[0]").format(batch=batch))
    return [TileStep(i, j, rows, cols, sk, m.copy(), l.copy(), _normalise(acc, l))
            for i, j, rows, cols, sk, _, m, l, acc in _row_blocks(Qs, K, V, mask, bq, bk, causal, window,
                                                               batch, check_tiles)]


def tile_counts(n_q: int, n_k: int, *, block_q: int, block_k: int, causal: bool = False,
                window: int | None = None) -> TileCounts:
    """The tiles that :func:`tiled_attention` computes and skips, without any attention.

    Counts from the same per-tile test as the attention itself, for causal and sliding-window
    masks (whose tiles can be decided from their positions alone).
    """
    n_q, n_k = check_count(n_q, "n_q"), check_count(n_k, "n_k")
    bq, bk = check_block(block_q, "block_q"), check_block(block_k, "block_k")
    window = _window(window)
    causal = bool(causal) or window is not None
    total = skipped = 0
    for r0 in range(0, n_q, bq):
        for c0 in range(0, n_k, bk):
            total += 1
            skipped += _tile_mask(r0, min(r0 + bq, n_q), c0, min(c0 + bk, n_k), causal, window, None) is False
    return TileCounts(total=total, computed=total - skipped, skipped=skipped)
