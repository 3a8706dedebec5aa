"""Notebook 09, *Positions for long texts*: reading a text longer than the model's window.

Two ways to give every token of a long text the last ``W`` tokens as its context:

* :func:`recompute_logits` - for each token, run the model afresh on the window that ends there
  (positions ``0 .. W - 1`` every time): right for any model, ``W`` times the work;
* :func:`stream_logits` - one token at a time through a :class:`~attention_kit.scale.kvcache.KVCache`
  per layer that slides (keeps the last ``W`` tokens, and with ``sinks=k`` the first ``k`` too):
  each key is computed once, when its token arrives.

With RoPE or ALiBi the scores depend only on distances, so for a **one-layer** model the two are
the same numbers: a cached key depends on its own token only. With two layers they differ: the
second layer's cached keys were computed from first-layer states that attended to tokens which
have since left the window. With absolute (sinusoidal) positions a cached key would carry its old
position, so :func:`stream_logits` refuses them past the window.

Where does a sink stand? By default (``sink_positions="text"``) every key keeps the rotation of its
position in the text, the sink too: at token ``t`` the sink is ``t`` positions back, a distance no
training window had. StreamingLLM (Xiao et al. 2024) numbers the positions within the cache
instead: the sinks stand just before the window, whatever ``t`` is (``sink_positions="cache"``).
With RoPE only distances count, so that is the same as turning each sink key on to the position
right before the oldest key of the window, which is what :class:`_SinksBeforeWindow` does.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from ..decoder.block import decoder_forward
from ..decoder.tiny_lm import TinyLMConfig
from ..errors import ParameterError, ShapeError, check_count
from ..i18n import _
from ..learn.params import load_params
from ..relative.rope import rope
from ..scale.kvcache import KVCache

__all__ = ["stream_logits", "recompute_logits", "load_rope_lm"]


def _text(ids, config) -> np.ndarray:
    if not isinstance(config, TinyLMConfig):
        raise ParameterError(_("config must be the model's TinyLMConfig (load_params returns it)"))
    a = np.asarray(ids)
    if a.ndim != 1 or a.size == 0:
        raise ShapeError(_("ids has shape {shape}; give one text as token ids of shape (n,), n >= 1").format(shape=a.shape))
    if a.min() < 0 or a.max() >= config.vocab_size:
        raise ParameterError(_("token ids must lie in 0 .. {config_vocab_size_1}").format(config_vocab_size_1=config.vocab_size - 1))
    return a.astype(np.int64)


class _SinksBeforeWindow(KVCache):
    """A RoPE cache whose sinks stand right before the window (StreamingLLM's positions in the cache).

    The sink keys are stored rotated at their positions in the text (0, 1, ...); once the window has
    moved on, :attr:`keys` gives them turned on by as many positions as the gap to the window.
    """

    @property
    def keys(self) -> np.ndarray:
        k, s = super().keys, self._n_sink
        if not s or len(self) == s:
            return k
        gap = int(self.positions[s]) - s  # from the first place after the sinks to the window's oldest key
        if gap <= 0:
            return k
        k = k.copy()  # ([h,] n, d): turn the sinks on by `gap`, as if they stood just before the window
        k[..., : self._n_sink, :] = rope(k[..., : self._n_sink, :], np.full(self._n_sink, float(gap)))
        return k


def stream_logits(params: dict, config: TinyLMConfig, ids, *, window: int | None = None,
                  sinks: int = 0, sink_positions: str = "text") -> np.ndarray:
    """The logits at every token of a text read one token at a time through sliding KV caches.

    Parameters
    ----------
    ids : int array, shape (n,)
    window : int, optional
        Tokens the caches keep (``config.context`` when None).
    sinks : int
        The first ``sinks`` tokens are kept too, for ever.
    sink_positions : {"text", "cache"}
        With RoPE: ``"text"`` keeps each sink at its position in the text (0, 1, ...), ``"cache"``
        puts the sinks right before the window, as StreamingLLM numbers positions within the cache.

    Returns
    -------
    logits : ndarray, shape (n, vocab_size)
        Row ``t`` predicts token ``t + 1`` from the tokens the caches held at ``t``.
    """
    ids = _text(ids, config)
    W = config.context if window is None else check_count(window, "window")
    if config.positions not in ("rope", "alibi", None) and len(ids) > W:
        raise ParameterError(_("a model with {config_positions!r} positions adds each token's absolute "
                             "position to it: once the window slides its cached keys are stale. Use "
                             "recompute_logits, or a model with positions='rope' or 'alibi'").format(config_positions=config.positions))
    if sink_positions not in ("text", "cache"):
        raise ParameterError(_("sink_positions must be 'text' or 'cache', got {sink_positions!r}").format(sink_positions=sink_positions))
    if sink_positions == "cache" and config.positions != "rope":
        raise ParameterError(_("sink_positions='cache' turns the sink keys on with RoPE: give a model with "
                             "positions='rope'"))
    h, d = config.n_heads, config.d_model // config.n_heads
    kind = _SinksBeforeWindow if sink_positions == "cache" else KVCache
    caches = [kind(d, d, n_heads=h, window=W, sinks=sinks) for _ in range(config.n_layers)]
    out = np.empty((len(ids), config.vocab_size))
    for t, tok in enumerate(ids):
        out[t] = decoder_forward(params, np.array([[tok]]), start=t, caches=caches,
                                 positions=config.positions)[0][0, -1]
    return out


def recompute_logits(params: dict, config: TinyLMConfig, ids, *, window: int | None = None) -> np.ndarray:
    """The logits at every token, each from the last ``window`` tokens run afresh (positions from 0).

    Returns
    -------
    logits : ndarray, shape (n, vocab_size)
    """
    ids = _text(ids, config)
    W = config.context if window is None else check_count(window, "window")
    out = np.empty((len(ids), config.vocab_size))
    first = decoder_forward(params, ids[None, :W], positions=config.positions)[0][0]  # (min(n, W), V)
    out[: len(first)] = first
    if len(ids) > W:  # every later window at once, as a batch: row t is the window ending at t
        starts = np.arange(1, len(ids) - W + 1)
        windows = ids[starts[:, None] + np.arange(W)]  # (n - W, W)
        out[W:] = decoder_forward(params, windows, positions=config.positions)[0][:, -1]
    return out


def load_rope_lm(layers: int = 1) -> tuple[dict, TinyLMConfig, dict]:
    """Notebook 06's rhyme model with ``positions="rope"`` and 1 or 2 layers, as shipped in
    ``attention_kit/data/tiny_lm_rope{layers}.npz`` (trained with RoPE positions by the course's repository):
    ``(params, config, meta)``, ``meta["history"]`` the logged (step, training loss, held-out loss)."""
    if layers not in (1, 2):
        raise ParameterError(_("the shipped RoPE models have 1 or 2 layers, not {layers!r}").format(layers=layers))
    with resources.as_file(resources.files("attention_kit").joinpath(f"data/tiny_lm_rope{layers}.npz")) as f:
        return load_params(f, TinyLMConfig)
