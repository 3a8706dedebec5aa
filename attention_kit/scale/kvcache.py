"""Notebook 07, *Attention at scale*.

The KV cache of causal decoding, and its size.

A model that writes text one token at a time would, naively, recompute the keys and values of the
whole prefix for every new token. Under a causal mask the keys and values of the old tokens never
change, so they can be kept: the cache stores them, each step appends the new token's key and value
and attends with the new token's query alone. Row ``t`` of full causal attention over the prefix
is exactly what that one query computes (:meth:`KVCache.attend`).

A cache with a ``window`` is a rolling buffer: it keeps the last ``window`` tokens (and, with
``sinks=k``, the first ``k`` tokens too, the "attention sinks" of Xiao et al. 2024). Which absolute
positions it still holds is :attr:`KVCache.positions` (notebook 09 rotates each key once at its
position with RoPE, and ALiBi's penalty is computed from these positions).

The price is memory, ``2 (K and V) x layers x kv_heads x d_head x bytes`` per token
(:func:`kv_cache_bytes`); multi-query and grouped-query attention (:mod:`.gqa`) shrink it by
sharing each key/value head between several query heads, and a sliding window caps it.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, ShapeError, as_float_array, check_count, check_finite
from ..i18n import _
from ..mechanism.alignment import softmax
from ..mechanism.attention import check_scale

__all__ = ["KVCache", "kv_cache_bytes", "MODEL_SHAPES"]

# Shapes of a few published decoder-only models, from their released configuration files
# (config.json on the Hugging Face hub): layers, query heads, key/value heads, d_head, "context" (the
# largest position the configuration allows, max_position_embeddings: for Llama 2 and Falcon also the
# context they were trained with; Mistral 7B was trained with 8,192 tokens and allows 32,768),
# and the sliding window (None: every earlier token is attended to, and cached). Mistral 7B v0.1
# attends to the last W = 4096 tokens and keeps a rolling buffer of W tokens per layer (Jiang et al.
# 2023, section 2: an 8x smaller cache at a 32k-token sequence).
MODEL_SHAPES = {
    "Llama 2 7B": {"layers": 32, "heads": 32, "kv_heads": 32, "d_head": 128, "context": 4096, "window": None},
    "Llama 2 70B": {"layers": 80, "heads": 64, "kv_heads": 8, "d_head": 128, "context": 4096, "window": None},
    "Mistral 7B": {"layers": 32, "heads": 32, "kv_heads": 8, "d_head": 128, "context": 32768, "window": 4096},
    "Falcon 7B": {"layers": 32, "heads": 71, "kv_heads": 1, "d_head": 64, "context": 2048, "window": None},
}


def kv_cache_bytes(n_tokens: int, *, layers: int, kv_heads: int, d_head: int,
                   bytes_per_value: int = 2, window: int | None = None) -> int:
    """Bytes of the keys and values cached for ``n_tokens`` tokens of one sequence.

    ``2 * layers * kv_heads * d_head * bytes_per_value`` per token: one key and one value vector of
    ``d_head`` numbers per key/value head per layer. ``bytes_per_value`` is 2 for float16 and
    bfloat16, 4 for float32, 8 for float64. With a sliding ``window`` the cache is a rolling buffer
    of the last ``window`` tokens: ``min(n_tokens, window)`` tokens are cached.
    """
    n = int(n_tokens)
    if n < 0:
        raise ParameterError(_("n_tokens must be >= 0, got {n_tokens!r}").format(n_tokens=n_tokens))
    if window is not None:
        n = min(n, check_count(window, "window"))
    for name, v in (("layers", layers), ("kv_heads", kv_heads), ("d_head", d_head),
                    ("bytes_per_value", bytes_per_value)):
        check_count(v, name)
    return 2 * layers * kv_heads * d_head * bytes_per_value * n


class KVCache:
    """Keys and values of the tokens seen so far, for one layer of causal decoding.

    Parameters
    ----------
    d_k, d_v : int
        Width of each key and of each value.
    n_heads : int, optional
        Number of key/value heads. Without it, keys are ``(n, d_k)``; with it, ``(h, n, d_k)``.
    window : int, optional
        Keep only the last ``window`` tokens (a rolling buffer, for sliding-window attention).
    sinks : int
        With a window, also keep the first ``sinks`` tokens for ever (notebook 09), as the mask
        ``sliding_window_mask`` with sinks does: key ``j`` stays while ``j < sinks`` or it is one
        of the last ``window``.
    dtype : numpy dtype
        float64 (default) or float32.

    Attributes
    ----------
    keys : ndarray, shape ([h,] n, d_k)
        The cached keys, oldest first (a view).
    values : ndarray, shape ([h,] n, d_v)
    nbytes : int
        Bytes of the cached keys and values.
    positions : ndarray of int, shape (n,)
        The position in the text of each cached token, oldest first.
    """

    def __init__(self, d_k: int, d_v: int, *, n_heads: int | None = None, window: int | None = None,
                 sinks: int = 0, dtype=np.float64, capacity: int = 16):
        self.d_k, self.d_v = check_count(d_k, "d_k"), check_count(d_v, "d_v")
        self.lead = () if n_heads is None else (check_count(n_heads, "n_heads"),)
        self.window = None if window is None else check_count(window, "window", example="4096")
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ParameterError(_("dtype must be float32 or float64, got {dtype}").format(dtype=self.dtype))
        cap = check_count(capacity, "capacity")
        self._K = np.empty(self.lead + (cap, self.d_k), self.dtype)  # ([h,] capacity, d_k)
        self._V = np.empty(self.lead + (cap, self.d_v), self.dtype)  # ([h,] capacity, d_v)
        self._start = self._stop = 0
        self.seen = 0  # tokens appended so far (also those a window has dropped)
        self.sinks = check_count(sinks, "sinks", minimum=0)
        if self.sinks and self.window is None:
            raise ParameterError(_("sinks are kept beside a sliding window: give window= too "
                                 "(without a window every token is kept anyway)"))
        self._sink_K = np.empty(self.lead + (self.sinks, self.d_k), self.dtype)  # the first tokens, kept
        self._sink_V = np.empty(self.lead + (self.sinks, self.d_v), self.dtype)
        self._n_sink = 0

    def __len__(self) -> int:
        return self._n_sink + self._stop - self._start

    def _both(self, sink: np.ndarray, rolling: np.ndarray) -> np.ndarray:
        if not self._n_sink:
            return rolling
        return np.concatenate([sink[..., : self._n_sink, :], rolling], axis=-2)

    @property
    def keys(self) -> np.ndarray:
        return self._both(self._sink_K, self._K[..., self._start : self._stop, :])

    @property
    def values(self) -> np.ndarray:
        return self._both(self._sink_V, self._V[..., self._start : self._stop, :])

    @property
    def positions(self) -> np.ndarray:
        rolling = self._stop - self._start
        return np.concatenate([np.arange(self._n_sink), np.arange(self.seen - rolling, self.seen)])

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.values.nbytes

    def _rows(self, x, name: str, d: int) -> np.ndarray:
        """``x`` as ``([h,] t, d)``: one token ``([h,] d)`` gets a token axis."""
        x = as_float_array(x, name)
        want = self.lead + (d,)
        if x.shape == want:
            x = x[..., None, :]  # ([h,] 1, d)
        if x.ndim != len(want) + 1 or x.shape[:-2] != self.lead or x.shape[-1] != d or x.shape[-2] == 0:
            tok = "(t, " if not self.lead else f"({self.lead[0]}, t, "
            raise ShapeError(_("{name} has shape {shape} but {want} (one token) or {tok}{d}) (t tokens) "
                             "was expected for this cache (d = {d}").format(name=name, shape=x.shape, want=want, tok=tok, d=d)
                             + (_(", {h} heads)").format(h=self.lead[0]) if self.lead else _(")")))
        check_finite(x, name)
        return x

    def append(self, k, v) -> None:
        """Add the key(s) and value(s) of one token, ``([h,] d)``, or of ``t`` tokens, ``([h,] t, d)``."""
        k, v = self._rows(k, "k", self.d_k), self._rows(v, "v", self.d_v)
        if k.shape[-2] != v.shape[-2]:
            raise ShapeError(_("k holds {k_shape_2} tokens but v holds {v_shape_2}; give one value per key").format(k_shape_2=k.shape[-2], v_shape_2=v.shape[-2]))
        s = min(k.shape[-2], self.sinks - self._n_sink)  # the first tokens ever seen become sinks
        if s:
            self._sink_K[..., self._n_sink : self._n_sink + s, :] = k[..., :s, :]
            self._sink_V[..., self._n_sink : self._n_sink + s, :] = v[..., :s, :]
            self._n_sink += s
            self.seen += s
            k, v = k[..., s:, :], v[..., s:, :]
        t = k.shape[-2]
        if t == 0:
            return
        if self.window is not None and t > self.window:  # only the last `window` of them can stay
            self.seen += t - self.window
            k, v, t = k[..., -self.window:, :], v[..., -self.window:, :], self.window
        cap = self._K.shape[-2]
        if self._stop + t > cap:  # make room: drop what the window no longer needs, move to the front, grow
            if self.window is not None:
                self._start = min(self._stop, max(self._start, self._stop + t - self.window))
            live = self._stop - self._start
            new_cap = max(cap, 2 * (live + t))
            K = np.empty(self.lead + (new_cap, self.d_k), self.dtype)
            V = np.empty(self.lead + (new_cap, self.d_v), self.dtype)
            K[..., :live, :] = self._K[..., self._start : self._stop, :]
            V[..., :live, :] = self._V[..., self._start : self._stop, :]
            self._K, self._V, self._start, self._stop = K, V, 0, live
        self._K[..., self._stop : self._stop + t, :] = k
        self._V[..., self._stop : self._stop + t, :] = v
        self._stop += t
        self.seen += t
        if self.window is not None and self._stop - self._start > self.window:
            self._start = self._stop - self.window

    def attend(self, q, *, scale: float | None = None, matmul=np.matmul, bias=None):
        """Attention of the newest token's query over every cached key: one row of causal attention.

        Parameters
        ----------
        q : ndarray, shape (d_k,) or (h_q, d_k)
            The newest token's query; with key/value heads, one per query head. ``h_q`` may be a
            multiple of the cache's heads (grouped-query attention): query heads
            ``g * j .. g * j + g - 1`` share key/value head ``j``, with ``g = h_q / h``.
        scale : float, optional
            Multiplies the scores; ``1 / sqrt(d_k)`` when None.
        matmul : callable, optional
            Does the two matrix products, the scores ``q K^T`` and the weighted sum ``a V``
            (``np.matmul``; :class:`.TinyDecoder` passes its counting product).
        bias : ndarray, shape ([h_q,] n), optional
            Added to the scaled scores before the softmax (ALiBi's penalty over
            :attr:`positions`, notebook 09).

        Returns
        -------
        output : ndarray, shape ([h_q,] d_v)
        weights : ndarray, shape ([h_q,] n)
            Over the cached tokens, oldest first.
        """
        if len(self) == 0:
            raise ShapeError(_("the cache is empty: append the new token's k and v before attending with its q"))
        q = as_float_array(q, "q")
        h = self.lead[0] if self.lead else None
        ok = q.shape == (self.d_k,) if h is None else (q.ndim == 2 and q.shape[1] == self.d_k and q.shape[0] % h == 0)
        if not ok:
            want = f"({self.d_k},)" if h is None else _("(h_q, {d_k}) with h_q a multiple of the {h} key/value heads").format(d_k=self.d_k, h=h)
            raise ShapeError(_("q has shape {q_shape} but {want} was expected: the newest token's query only").format(q_shape=q.shape, want=want))
        Q = q[None, :] if h is None else q.reshape(h, q.shape[0] // h, self.d_k)  # (1, d_k) or (h, g, d_k)
        Q = Q * Q.dtype.type(check_scale(scale, self.d_k))
        S = matmul(Q, np.swapaxes(self.keys, -1, -2))  # (1, d_k) @ (d_k, n) or (h, g, d_k) @ (h, d_k, n)
        if bias is not None:
            b = as_float_array(bias, "bias")
            if b.shape != q.shape[:-1] + (len(self),):
                raise ShapeError(_("bias has shape {b_shape} but {want} was expected: "
                                 "one bias per query head and cached key").format(b_shape=b.shape, want=q.shape[:-1] + (len(self),)))
            check_finite(b, "bias")
            S = S + b.reshape(S.shape)
        w = softmax(S)  # (.., 1 or g, n)
        out = matmul(w, self.values)  # (.., 1 or g, n) @ (.., n, d_v) -> (.., 1 or g, d_v)
        return out.reshape(q.shape[:-1] + (self.d_v,)), w.reshape(q.shape[:-1] + (len(self),))
