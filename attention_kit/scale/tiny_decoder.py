"""Notebook 07, *Attention at scale*.

A tiny causal decoder with random weights, to generate with and without a KV cache.

Nothing here is trained: the point is the cost of generating one token at a time. The model is
an embedding table ``E`` (vocab, d_model) plus sinusoidal positions, ``n_layers`` residual layers
of causal grouped-query attention (:mod:`.gqa`), and logits ``h U`` with a random unembedding ``U`` (d_model, vocab); the next token is the
argmax. :meth:`TinyDecoder.generate` runs it two ways:

* ``cache=False``: every step runs the whole prefix through every layer (what a forward pass
  does), ``O(n d^2 + n^2 d)`` multiply-adds for the n-th token;
* ``cache=True``: every step runs only the new token, appends its keys and values to a
  :class:`.KVCache` per layer and attends with its query alone, ``O(d^2 + n d)``.

Every matrix product goes through one counter, so the multiply-adds of each step are *counted*
from the shapes actually multiplied, not taken from a formula; with the cache that includes the two
products :meth:`.KVCache.attend` performs (the scores and the weighted sum), which it does through
the counter it is given.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import ParameterError, check_count
from ..mechanism.alignment import softmax
from ..mechanism.masks import causal_mask
from ..mechanism.positions import sinusoidal_positions
from .grouped_query import GroupedQueryParams, init_grouped_query
from .kvcache import KVCache

__all__ = ["TinyDecoder"]


class TinyDecoder:
    """A random-weight causal decoder: embeddings, grouped-query attention layers, logits.

    Parameters
    ----------
    vocab, d_model, n_heads, n_kv_heads, n_layers : int
    rng : numpy.random.Generator
    max_len : int
        Longest sequence (prompt plus generated tokens).

    Attributes
    ----------
    madds : int
        Multiply-adds counted so far (reset by :meth:`generate` at every step).
    """

    def __init__(self, vocab: int, d_model: int, n_heads: int, n_kv_heads: int, *, n_layers: int = 2,
                 rng: np.random.Generator, max_len: int = 256):
        if not isinstance(rng, np.random.Generator):
            raise ParameterError("rng must be a numpy Generator; make one with np.random.default_rng(seed)")
        self.vocab, self.d_model = check_count(vocab, "vocab"), check_count(d_model, "d_model")
        self.max_len = check_count(max_len, "max_len")
        self.E = rng.normal(0, 1, (self.vocab, self.d_model))  # (vocab, d_model)
        self.U = rng.normal(0, 1 / np.sqrt(self.d_model), (self.d_model, self.vocab))  # (d_model, vocab)
        self.P = sinusoidal_positions(self.max_len, self.d_model)  # (max_len, d_model)
        self.layers: list[GroupedQueryParams] = [
            init_grouped_query(self.d_model, n_heads, n_kv_heads, rng=rng)
            for _ in range(check_count(n_layers, "n_layers"))]
        self.madds = 0

    def _mm(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a @ b``, counting its multiply-adds: (batch) x rows x inner x columns."""
        out = a @ b
        self.madds += int(np.prod(out.shape[:-1])) * a.shape[-1] * b.shape[-1]
        return out

    def _project(self, p: GroupedQueryParams, Xl: np.ndarray):
        """Q (h, n, d_k) scaled by 1/sqrt(d_k), K (h_kv, n, d_k), V (h_kv, n, d_v) of rows Xl (n, d_model)."""
        Q = self._mm(Xl, p.W_q) / np.sqrt(p.W_q.shape[2])  # (n, d_model) @ (h, d_model, d_k) -> (h, n, d_k)
        return Q, self._mm(Xl, p.W_k), self._mm(Xl, p.W_v)  # (h_kv, n, d_k), (h_kv, n, d_v)

    def _mix(self, p: GroupedQueryParams, heads: np.ndarray) -> np.ndarray:
        """Concatenate the heads (h, n, d_v) -> (n, h * d_v), then W_o."""
        h, n, d_v = heads.shape
        return self._mm(heads.transpose(1, 0, 2).reshape(n, h * d_v), p.W_o)  # (n, d_model)

    def forward(self, tokens) -> np.ndarray:
        """Logits ``(n, vocab)`` of every position, the whole prefix through every layer (no cache)."""
        t = self._tokens(tokens)
        n = len(t)
        X = self.E[t] + self.P[:n]  # (n, d_model)
        C = causal_mask(n)
        for p in self.layers:
            Q, K, V = self._project(p, X)
            g = p.group
            Qg = Q.reshape(p.n_kv_heads, g, n, -1)  # (h_kv, g, n, d_k): query heads grouped by their K/V head
            S = self._mm(Qg, np.swapaxes(K, -1, -2)[:, None])  # (h_kv, g, n, n)
            A = softmax(S, mask=C)
            heads = self._mm(A, V[:, None]).reshape(p.n_heads, n, -1)  # (h, n, d_v)
            X = X + self._mix(p, heads)  # residual
        return self._mm(X, self.U)  # (n, vocab)

    def _tokens(self, tokens) -> np.ndarray:
        t = np.asarray(tokens)
        if t.ndim != 1 or t.size == 0 or t.dtype.kind not in "iu" or (t < 0).any() or (t >= self.vocab).any():
            raise ParameterError(f"tokens must be a non-empty 1-D list of ints in 0..{self.vocab - 1}, got {tokens!r}")
        if t.size > self.max_len:
            raise ParameterError(f"{t.size} tokens is more than max_len = {self.max_len}; make the decoder with a larger max_len")
        return t

    def _step_cached(self, token: int, pos: int, caches: list[KVCache]) -> np.ndarray:
        """Logits (vocab,) of the newest token, with its keys and values appended to the caches."""
        x = (self.E[token] + self.P[pos])[None, :]  # (1, d_model)
        for p, cache in zip(self.layers, caches, strict=True):
            q, k, v = self._project(p, x)  # (h, 1, d_k), (h_kv, 1, d_k), (h_kv, 1, d_v)
            cache.append(k, v)
            out, _ = cache.attend(q[:, 0], scale=1.0, matmul=self._mm)  # q is already scaled; (h, d_v): its 2 products counted
            x = x + self._mix(p, out[:, None, :])  # (1, d_model), residual
        return self._mm(x, self.U)[0]  # (vocab,)

    def generate(self, prompt, n_new: int, *, cache: bool, clock=time.perf_counter):
        """Greedy generation of ``n_new`` tokens after ``prompt``.

        ``clock`` times each step (``time.perf_counter``, or ``time.process_time`` for CPU time).

        Returns
        -------
        tokens : list of int
            The prompt followed by the generated tokens.
        logits : ndarray, shape (n_new, vocab)
            The logits each new token was chosen from.
        madds : list of int
            Multiply-adds counted for each new token.
        seconds : list of float
            Time of each new token's step by ``clock`` (the prompt's pass through the caches is
            not included).
        """
        t = [int(x) for x in self._tokens(prompt)]
        n_new = check_count(n_new, "n_new")
        if len(t) + n_new > self.max_len:
            raise ParameterError(f"prompt ({len(t)}) + n_new ({n_new}) exceeds max_len = {self.max_len}")
        caches = [KVCache(p.W_k.shape[2], p.W_v.shape[2], n_heads=p.n_kv_heads) for p in self.layers]
        logits, madds, seconds = [], [], []
        if cache:  # the prompt fills the caches first (not counted: both ways read the prompt once)
            for pos, tok in enumerate(t[:-1]):
                self._step_cached(tok, pos, caches)
        for _ in range(n_new):
            self.madds = 0
            t0 = clock()
            z = self._step_cached(t[-1], len(t) - 1, caches) if cache else self.forward(t)[-1]
            seconds.append(clock() - t0)
            madds.append(self.madds)
            logits.append(z)
            t.append(int(np.argmax(z)))
        return t, np.array(logits), madds, seconds
