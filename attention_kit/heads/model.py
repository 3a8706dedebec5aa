"""Notebook 08, *What trained heads do*.

Attention-only decoders: token embedding plus a learned position table, ``n_layers`` blocks of
causal multi-head attention on the residual stream (no MLP, no layer norm) and a read-out. It is
the model of Elhage et al. (2021, "A Mathematical Framework for Transformer Circuits") in which
induction heads were found, and it runs through the course's one decoder,
:func:`attention_kit.decoder.block.decoder_forward`, with ``positions="learned"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decoder.block import decoder_forward
from ..errors import ParameterError, ShapeError, check_count
from ..i18n import N_, _

__all__ = ["AttnOnlyConfig", "init_attention_only", "run"]


@dataclass(frozen=True)
class AttnOnlyConfig:
    """Sizes of an attention-only decoder; ``n_heads`` is one number per layer (or one for all)."""

    vocab: int = 16
    d_model: int = 32
    n_heads: tuple = (2, 2)
    d_head: int = 16
    max_len: int = 24

    def __post_init__(self):
        heads = self.n_heads
        if isinstance(heads, (int, np.integer)) and not isinstance(heads, bool):
            raise ParameterError(_("n_heads is one number per layer: give a tuple, e.g. (2, 2) for two layers of 2 heads"))
        object.__setattr__(self, "n_heads", tuple(check_count(h, N_("each layer's n_heads")) for h in heads))
        if not self.n_heads:
            raise ParameterError(_("n_heads is empty: give one number per layer, e.g. (2, 2)"))
        for name in ("vocab", "d_model", "d_head", "max_len"):
            check_count(getattr(self, name), name)

    @property
    def n_layers(self) -> int:
        return len(self.n_heads)


def init_attention_only(config: AttnOnlyConfig, *, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh parameters: ``E``, ``P`` and ``W_out`` normal, the attention weights with variance 1 / fan-in."""
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(_("rng must be a numpy Generator; make one with np.random.default_rng(seed)"))
    c = config
    d, dh = c.d_model, c.d_head
    p = {"E": rng.normal(0, 1.0, (c.vocab, d)), "P": rng.normal(0, 1.0, (c.max_len, d))}
    for l, h in enumerate(c.n_heads):
        for w in ("W_q", "W_k", "W_v"):
            p[f"l{l}.attn.{w}"] = rng.normal(0, d ** -0.5, (h, d, dh))  # (h, d_model, d_head)
        p[f"l{l}.attn.W_o"] = rng.normal(0, (h * dh) ** -0.5, (h * dh, d))  # (h d_head, d_model)
    p["W_out"] = rng.normal(0, d ** -0.5, (d, c.vocab))
    return p


def run(params: dict, ids, **forward):
    """Logits (batch, n, vocab) and the saved forward (``["weights"][l]``: (batch, h, n, n)).

    ``ids`` is (n,) or (batch, n); ``forward`` goes to :func:`decoder_forward` (``window=``,
    ``sinks=``, ``replace_heads=``); positions are the learned ones.
    """
    ids = np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None]  # (1, n)
    if ids.ndim != 2 or ids.shape[1] == 0:
        raise ShapeError(_("ids has shape {ids_shape}; give token ids of shape (n,) or (batch, n), n >= 1").format(ids_shape=ids.shape))
    return decoder_forward(params, ids, positions="learned", **forward)
