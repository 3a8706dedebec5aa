"""Notebook 07, *Attention at scale*.

A tiny causal decoder with random weights, to generate with and without a KV cache.

Nothing here is trained: the point is the cost of generating one token at a time. The model is
an embedding table ``E`` (vocab, d_model) plus sinusoidal positions, ``n_layers`` residual layers
of causal grouped-query attention (:mod:`.grouped_query`), and logits ``h W_out`` with a random
unembedding ``W_out`` (d_model, vocab); the next token is the argmax. The layers are
:mod:`attention_kit.decoder.block`'s blocks, with attention only. :meth:`TinyDecoder.generate` runs it two ways:

* ``cache=False``: every step runs the whole prefix through every layer (what a forward pass
  does), ``O(n d^2 + n^2 d)`` multiply-adds for the n-th token;
* ``cache=True``: every step runs only the new token, appends its keys and values to a
  :class:`.KVCache` per layer and attends with its query alone, ``O(d^2 + n d)``.

Every matrix product is counted (the block's ``count`` argument), so the multiply-adds of each step
are *counted* from the shapes actually multiplied, not taken from a formula; with the cache that
includes the two products :meth:`.KVCache.attend` performs (the scores and the weighted sum), which
it does through the counting product it is given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..errors import ParameterError, check_count
from ..i18n import _
from ..scale.grouped_query import init_grouped_query
from ..scale.kvcache import KVCache
from .block import decoder_forward

__all__ = ["DecoderConfig", "TinyDecoder"]


@dataclass(frozen=True)
class DecoderConfig:
    """Sizes of a :class:`TinyDecoder`; ``max_len`` is the longest sequence (prompt plus new tokens)."""

    vocab: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    n_layers: int = 2
    max_len: int = 256

    def __post_init__(self):
        for name in ("vocab", "d_model", "n_heads", "n_kv_heads", "n_layers", "max_len"):
            check_count(getattr(self, name), name)


class TinyDecoder:
    """A random-weight causal decoder: embeddings, grouped-query attention layers, logits.

    It runs through :func:`attention_kit.decoder.block.decoder_forward`, the same decoder as
    notebook 06's language model, with attention-only blocks (no layer norms, no MLP).

    Parameters
    ----------
    vocab, d_model, n_heads, n_kv_heads, n_layers : int
    rng : numpy.random.Generator
    max_len : int
        Longest sequence (prompt plus generated tokens).

    Attributes
    ----------
    config : DecoderConfig
    params : dict
        ``E`` (vocab, d_model), ``l{l}.attn.W_q`` (h, d_model, d_k), ``W_k`` / ``W_v``
        (h_kv, d_model, d), ``W_o`` (h d_v, d_model), and ``W_out`` (d_model, vocab): the
        convention of :mod:`attention_kit.learn.params`, so ``save_params`` writes it.
    madds : int
        Multiply-adds counted so far (reset by :meth:`generate` at every step).
    """

    def __init__(self, vocab: int, d_model: int, n_heads: int, n_kv_heads: int, *, n_layers: int = 2,
                 rng: np.random.Generator, max_len: int = 256):
        if not isinstance(rng, np.random.Generator):
            raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
        c = self.config = DecoderConfig(vocab, d_model, n_heads, n_kv_heads, n_layers, max_len)
        self.params = {"E": rng.normal(0, 1, (c.vocab, c.d_model)),  # (vocab, d_model)
                       "W_out": rng.normal(0, 1 / np.sqrt(c.d_model), (c.d_model, c.vocab))}  # (d_model, vocab)
        for l in range(c.n_layers):
            p = init_grouped_query(c.d_model, c.n_heads, c.n_kv_heads, rng=rng)
            self.params |= {f"l{l}.attn.{w}": getattr(p, w) for w in ("W_q", "W_k", "W_v", "W_o")}
        self.madds = 0

    def _count(self, madds: int) -> None:
        self.madds += madds

    def forward(self, tokens) -> np.ndarray:
        """Logits ``(n, vocab)`` of every position, the whole prefix through every layer (no cache)."""
        t = self._tokens(tokens)
        return decoder_forward(self.params, t[None], count=self._count)[0][0]  # (n, vocab)

    def _tokens(self, tokens) -> np.ndarray:
        c = self.config
        t = np.asarray(tokens)
        if t.ndim != 1 or t.size == 0 or t.dtype.kind not in "iu" or (t < 0).any() or (t >= c.vocab).any():
            raise ParameterError(_("tokens must be a non-empty 1-D list of ints in 0..{c_vocab_1}, got {tokens!r}").format(c_vocab_1=c.vocab - 1, tokens=tokens))
        if t.size > c.max_len:
            raise ParameterError(_("{t_size} tokens is more than max_len = {c_max_len}; make the decoder with a larger max_len").format(t_size=t.size, c_max_len=c.max_len))
        return t

    def _step_cached(self, token: int, pos: int, caches: list[KVCache]) -> np.ndarray:
        """Logits (vocab,) of the newest token, with its keys and values appended to the caches."""
        return decoder_forward(self.params, np.array([[token]]), start=pos, caches=caches,
                               count=self._count)[0][0, -1]

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
        c = self.config
        if len(t) + n_new > c.max_len:
            raise ParameterError(_("prompt ({len_t}) + n_new ({n_new}) exceeds max_len = {c_max_len}").format(len_t=len(t), n_new=n_new, c_max_len=c.max_len))
        caches = [KVCache(self.params[f"l{l}.attn.W_k"].shape[2], self.params[f"l{l}.attn.W_v"].shape[2],
                          n_heads=c.n_kv_heads) for l in range(c.n_layers)]
        logits, madds, seconds = [], [], []
        if cache:  # the prompt fills the caches first (not counted: both ways read the prompt once)
            for pos, tok in enumerate(t[:-1]):
                self._step_cached(tok, pos, caches)
        # one BLAS thread: these matrices are small, and on a shared machine (2 cores, Binder) a
        # second thread waiting for a busy core made a step 30 times slower from n = 42 on
        with threadpool_limits(limits=1, user_api="blas"):
            for _step in range(n_new):
                self.madds = 0
                t0 = clock()
                z = self._step_cached(t[-1], len(t) - 1, caches) if cache else self.forward(t)[-1]
                seconds.append(clock() - t0)
                madds.append(self.madds)
                logits.append(z)
                t.append(int(np.argmax(z)))
        return t, np.array(logits), madds, seconds
