"""Notebook 06, *A tiny language model*.

A tiny decoder-only language model in numpy: token embedding plus sinusoidal positions, a few
pre-norm Transformer blocks (causal multi-head attention and a GELU MLP, each behind a layer norm
and on a residual path), a final layer norm and the projection to the vocabulary.

Parameters are a flat dict ``{name: ndarray}`` (:mod:`attention_kit.learn.params`: what
``optim.Adam`` updates in place and what ``save_params`` writes). The model itself is
:func:`attention_kit.decoder.block.decoder_forward`, the one decoder of the course; this module gives
it its sizes, checks what a learner passes in, and generates text with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..errors import ParameterError, ShapeError, check_count, check_positive
from ..i18n import N_, _
from ..learn.layers import check_targets, cross_entropy
from ..learn.params import load_params
from ..scale.kvcache import KVCache
from .block import POSITIONS, attention_params, decoder_backward, decoder_forward

__all__ = ["TinyLMConfig", "init_tiny_lm", "lm_forward", "lm_backward", "lm_loss_and_grads",
           "attention_params", "head_weights", "next_token_probs", "generate", "generate_with_cache",
           "load_pretrained", "count_parameters"]


@dataclass(frozen=True)
class TinyLMConfig:
    """Sizes of the model. ``context`` is the longest sequence it reads (the window it was trained
    on); ``positions`` is its position scheme (:data:`attention_kit.decoder.block.POSITIONS`)."""

    vocab_size: int
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 64
    context: int = 16
    positions: str | None = "sinusoidal"

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "context"):
            check_count(getattr(self, name), name)
        if self.positions not in POSITIONS:
            raise ParameterError(_("positions must be one of {positions}, got {positions2!r}").format(positions=POSITIONS, positions2=self.positions))
        if self.d_model % self.n_heads:
            raise ParameterError(_("d_model = {d_model} is not divisible by n_heads = {n_heads}; "
                                 "choose n_heads among the divisors of d_model").format(d_model=self.d_model, n_heads=self.n_heads))


def init_tiny_lm(config: TinyLMConfig, *, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Fresh parameters: normal weights (variance 1 / fan-in), layer norms at scale 1 and shift 0."""
    c = config
    d, h, dh = c.d_model, c.n_heads, c.d_model // c.n_heads
    p = {"E": rng.normal(0, 1.0, (c.vocab_size, d))}
    for l in range(c.n_layers):
        p |= {f"l{l}.ln1.g": np.ones(d), f"l{l}.ln1.b": np.zeros(d)}
        for w in ("W_q", "W_k", "W_v"):
            p[f"l{l}.attn.{w}"] = rng.normal(0, d ** -0.5, (h, d, dh))  # (h, d_model, d_head)
        p[f"l{l}.attn.W_o"] = rng.normal(0, d ** -0.5, (d, d)) / np.sqrt(2 * c.n_layers)
        p |= {f"l{l}.ln2.g": np.ones(d), f"l{l}.ln2.b": np.zeros(d),
              f"l{l}.mlp.W1": rng.normal(0, d ** -0.5, (d, c.d_ff)), f"l{l}.mlp.b1": np.zeros(c.d_ff),
              f"l{l}.mlp.W2": rng.normal(0, c.d_ff ** -0.5, (c.d_ff, d)) / np.sqrt(2 * c.n_layers),
              f"l{l}.mlp.b2": np.zeros(d)}
    p |= {"lnf.g": np.ones(d), "lnf.b": np.zeros(d),
          "W_out": rng.normal(0, d ** -0.5, (d, c.vocab_size)), "b_out": np.zeros(c.vocab_size)}
    return p


def count_parameters(params: dict) -> dict[str, int]:
    """Number of scalars per piece: embedding, each layer's attention / MLP / norms, output."""
    counts: dict[str, int] = {}
    for name, a in params.items():
        piece = {"E": "embedding", "W_out": "output", "b_out": "output"}.get(name)
        if piece is None:
            parts = name.split(".")
            piece = "final norm" if parts[0] == "lnf" else f"layer {parts[0][1:]} {parts[1]}"
        counts[piece] = counts.get(piece, 0) + int(a.size)
    return counts


def _ids(ids, config: TinyLMConfig) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim == 1:
        arr = arr[None]  # (1, n)
    if arr.ndim != 2:
        raise ShapeError(_("ids has shape {shape} but (n,) or (batch, n) token ids were expected").format(shape=arr.shape))
    if arr.shape[1] > config.context:
        raise ShapeError(_("the sequence has {shape_1} tokens but the model reads at most "
                         "{config_context}; keep the last {config_context} (ids[..., -{config_context}:])").format(shape_1=arr.shape[1], config_context=config.context))
    return arr


def lm_forward(params: dict, config: TinyLMConfig, ids, *, causal: bool = True,
               positions: bool = True, residual: bool = True, replace_heads: dict | None = None):
    """Logits of the next token at every position.

    Parameters
    ----------
    ids : int array, shape (n,) or (batch, n)
    causal, positions, residual : bool
        Switch off the causal mask, the positional encoding or the residual paths (experiments).
    replace_heads : dict, optional
        ``{(layer, head): vector of shape (d_head,)}``: that head's output is replaced by the vector at
        every position before ``W_o`` (an ablation: zeros, or the head's mean output). Forward only;
        the cache then does not suit :func:`lm_backward`.

    Returns
    -------
    logits : ndarray, shape (batch, n, vocab_size)
    cache : dict
        What :func:`lm_backward` needs; ``cache["weights"][l]`` is layer l's attention weights,
        shape (batch, h, n, n).
    """
    return decoder_forward(params, _ids(ids, config), positions=config.positions if positions else None,
                           causal=causal, residual=residual, replace_heads=replace_heads)


def lm_backward(params: dict, cache: dict, dlogits) -> dict[str, np.ndarray]:
    """Gradients of every parameter, given ``dL/dlogits`` of shape (batch, n, vocab_size)."""
    return decoder_backward(params, cache, dlogits)


def lm_loss_and_grads(params: dict, config: TinyLMConfig, ids, targets, **switches):
    """Mean next-token cross-entropy of a batch and the gradient of every parameter."""
    logits, cache = lm_forward(params, config, ids, **switches)  # the door: ids and weights checked
    targets = np.asarray(targets)
    if targets.ndim == 1 and targets.size == np.prod(logits.shape[:-1]):
        targets = targets.reshape(logits.shape[:-1])  # (batch, n) from a flat (batch * n,); any other
        # shape (a transposed (n, batch) too) goes to check_targets, which names the one it wants
    targets = check_targets(targets, logits.shape)
    loss, dlogits = cross_entropy.unchecked(logits, targets)  # the logits are the model's own
    return loss, decoder_backward(params, cache, dlogits)


def head_weights(params: dict, config: TinyLMConfig, ids, **switches) -> list[np.ndarray]:
    """Every layer's attention weights for one sequence: a list of arrays of shape (h, n, n)."""
    _, cache = lm_forward(params, config, ids, **switches)
    return [w[0] for w in cache["weights"]]


def next_token_probs(params: dict, config: TinyLMConfig, ids, *, temperature: float = 1.0,
                     **switches) -> np.ndarray:
    """``softmax(logits / temperature)`` of the token after the last one, shape (vocab_size,)."""
    t = check_positive(temperature, "temperature",
                       hint=N_("use generate(..., temperature=0) for greedy decoding"))
    ids = np.asarray(ids)[-config.context:]
    z = lm_forward(params, config, ids, **switches)[0][0, -1] / t  # (V,)
    e = np.exp(z - z.max())
    return e / e.sum()


def generate(params: dict, config: TinyLMConfig, ids, n_new: int, *, temperature: float = 0.0,
             rng: np.random.Generator | None = None) -> np.ndarray:
    """Append ``n_new`` tokens, one at a time: the most likely one when ``temperature == 0``
    (greedy), else a sample from ``softmax(logits / temperature)`` drawn with ``rng``.

    Returns the whole sequence, shape (n + n_new,).
    """
    check_count(n_new, "n_new", minimum=0)
    if temperature != 0 and not isinstance(rng, np.random.Generator):
        raise ParameterError(_("sampling with a temperature needs rng=np.random.default_rng(seed)"))
    seq = [int(i) for i in np.asarray(ids).reshape(-1)]
    for _step in range(n_new):
        if temperature == 0:
            logits = lm_forward(params, config, np.array(seq[-config.context:]))[0][0, -1]
            seq.append(int(np.argmax(logits)))
        else:
            p = next_token_probs(params, config, np.array(seq), temperature=temperature)
            seq.append(int(rng.choice(len(p), p=p)))
    return np.array(seq, dtype=np.int64)


def generate_with_cache(params: dict, config: TinyLMConfig, ids, n_new: int, *,
                        sinks: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Greedy generation like :func:`generate`, but one token at a time through a
    :class:`~attention_kit.scale.kvcache.KVCache` per layer: each step runs only the newest token
    through the layers and attends with its query alone over the cached keys and values.

    With sinusoidal positions the model adds absolute positions to its input, so once the text is
    longer than ``config.context`` the window :func:`generate` reads slides and every token changes
    position: no cached key would be right any more. So then the prompt plus the new tokens must
    fit in the context. With ``positions="rope"`` or ``"alibi"`` (notebook 09) the scores depend
    on distances only: the caches slide, keeping the last ``config.context`` tokens (plus the first
    ``sinks``), and generation goes on past the context.

    Returns
    -------
    seq : int array, shape (n + n_new,)
        The prompt and the new tokens (the same as ``generate(params, config, ids, n_new)``).
    logits : ndarray, shape (n_new, vocab_size)
        The logits each new token was chosen from.
    """
    seq = [int(i) for i in _ids(ids, config)[0]]
    check_count(n_new, "n_new", minimum=0)
    relative = config.positions in ("rope", "alibi")
    if len(seq) + n_new > config.context and not relative:
        raise ParameterError(_("{len_seq} prompt tokens + {n_new} new ones is more than the "
                             "{config_context} the model reads: with absolute positions the cache "
                             "holds only while nothing slides out of the window").format(len_seq=len(seq), n_new=n_new, config_context=config.context))
    h, d = config.n_heads, config.d_model // config.n_heads
    window = config.context if relative else None
    caches = [KVCache(d, d, n_heads=h, window=window, sinks=sinks) for _ in range(config.n_layers)]

    def step(token: int, pos: int) -> np.ndarray:  # the newest token's logits, (vocab,)
        return decoder_forward(params, np.array([[token]]), start=pos, caches=caches,
                               positions=config.positions)[0][0, -1]

    for pos, tok in enumerate(seq[:-1]):  # the prompt fills the caches
        step(tok, pos)
    logits = []
    for _step in range(n_new):
        z = step(seq[-1], len(seq) - 1)
        logits.append(z)
        seq.append(int(np.argmax(z)))
    return np.array(seq, dtype=np.int64), np.array(logits).reshape(n_new, -1)


def load_pretrained() -> tuple[dict, TinyLMConfig, dict]:
    """The weights shipped in the package (``attention_kit/data/tiny_lm.npz``, made by a training
    script of the course's repository)."""
    with resources.as_file(resources.files("attention_kit").joinpath("data/tiny_lm.npz")) as f:
        return load_params(f, TinyLMConfig)
