"""Notebook 06, *A tiny language model*.

A tiny decoder-only language model in numpy: token embedding plus sinusoidal positions, a few
pre-norm Transformer blocks (causal multi-head attention and a GELU MLP, each behind a layer norm
and on a residual path), a final layer norm and the projection to the vocabulary.

Parameters are a flat dict ``{name: ndarray}`` (what ``optim.Adam`` updates in place and what
``save_params`` writes). Every piece's forward and backward comes from :mod:`attention_kit.learn.layers`
and :mod:`attention_kit.learn.backward`; this module only wires them together.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from importlib import resources

import numpy as np

from ..errors import ParameterError, ShapeError
from ..mechanism.masks import causal_mask
from ..mechanism.multi_head_attention import MultiHeadParams
from ..mechanism.positions import sinusoidal_positions
from ..scale.kvcache import KVCache
from . import layers as L
from .backward import multi_head_backward, multi_head_forward

__all__ = ["TinyLMConfig", "init_tiny_lm", "lm_forward", "lm_backward", "lm_loss_and_grads",
           "attention_params", "head_weights", "next_token_probs", "generate", "generate_with_cache",
           "save_params", "load_params",
           "load_pretrained", "count_parameters"]


@dataclass(frozen=True)
class TinyLMConfig:
    """Sizes of the model. ``context`` is the longest sequence it reads."""

    vocab_size: int
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 64
    context: int = 16

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "context"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ParameterError(f"{name} must be a positive whole number, got {v!r}")
        if self.d_model % self.n_heads:
            raise ParameterError(f"d_model = {self.d_model} is not divisible by n_heads = {self.n_heads}; "
                                 "choose n_heads among the divisors of d_model")


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


def attention_params(params: dict, l: int) -> MultiHeadParams:
    """Layer ``l``'s attention weights as a ``MultiHeadParams`` (views: no copy)."""
    return MultiHeadParams(W_q=params[f"l{l}.attn.W_q"], W_k=params[f"l{l}.attn.W_k"],
                           W_v=params[f"l{l}.attn.W_v"], W_o=params[f"l{l}.attn.W_o"])


def _ids(ids, config: TinyLMConfig) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim == 1:
        arr = arr[None]  # (1, n)
    if arr.ndim != 2:
        raise ShapeError(f"ids has shape {arr.shape} but (n,) or (batch, n) token ids were expected")
    if arr.shape[1] > config.context:
        raise ShapeError(f"the sequence has {arr.shape[1]} tokens but the model reads at most "
                         f"{config.context}; keep the last {config.context} (ids[..., -{config.context}:])")
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
    c = config
    ids = _ids(ids, c)
    n = ids.shape[1]
    X, c_emb = L.embed(ids, params["E"])  # (B, n, d)
    if positions:
        X = X + sinusoidal_positions(n, c.d_model)  # (n, d), the same for every sequence
    mask = causal_mask(n) if causal else None  # (n, n), every head and sequence
    layers, weights = [], []
    for l in range(c.n_layers):
        A_in, c1 = L.layer_norm(X, params[f"l{l}.ln1.g"], params[f"l{l}.ln1.b"])  # (B, n, d)
        att, w, ca = multi_head_forward(A_in, A_in, attention_params(params, l), mask)  # (B, n, d), (B, h, n, n)
        if replace_heads:
            att = _replaced(ca.concat, params[f"l{l}.attn.W_o"], replace_heads, l, c)
        X = X + att if residual else att
        M_in, c2 = L.layer_norm(X, params[f"l{l}.ln2.g"], params[f"l{l}.ln2.b"])
        m, cm = L.mlp(M_in, params[f"l{l}.mlp.W1"], params[f"l{l}.mlp.b1"],
                      params[f"l{l}.mlp.W2"], params[f"l{l}.mlp.b2"])  # (B, n, d)
        X = X + m if residual else m
        layers.append((c1, ca, c2, cm))
        weights.append(w)
    F, cf = L.layer_norm(X, params["lnf.g"], params["lnf.b"])  # (B, n, d)
    logits = F @ params["W_out"] + params["b_out"]  # (B, n, V)
    cache = {"emb": c_emb, "layers": layers, "final": (cf, F), "weights": weights,
             "residual": residual, "n_layers": c.n_layers}
    return logits, cache


def _replaced(concat, W_o, replace_heads: dict, l: int, c: TinyLMConfig) -> np.ndarray:
    """The attention output with some heads' outputs replaced: (B, n, h*d_head) @ (h*d_head, d_model)."""
    dh = c.d_model // c.n_heads
    concat = concat.copy()  # (B, n, h*d_head)
    for (layer, head), vec in replace_heads.items():
        if layer == l:
            concat[..., head * dh:(head + 1) * dh] = np.broadcast_to(vec, (dh,))
    return concat @ W_o  # (B, n, d_model)


def lm_backward(params: dict, cache: dict, dlogits) -> dict[str, np.ndarray]:
    """Gradients of every parameter, given ``dL/dlogits`` of shape (batch, n, vocab_size)."""
    g: dict[str, np.ndarray] = {}
    cf, F = cache["final"]
    d = F.shape[-1]
    g["W_out"] = F.reshape(-1, d).T @ dlogits.reshape(-1, dlogits.shape[-1])  # (d, V)
    g["b_out"] = dlogits.reshape(-1, dlogits.shape[-1]).sum(axis=0)  # (V,)
    dX, g["lnf.g"], g["lnf.b"] = L.layer_norm_backward(dlogits @ params["W_out"].T, cf)  # (B, n, d)
    res = cache["residual"]
    for l in reversed(range(cache["n_layers"])):
        c1, ca, c2, cm = cache["layers"][l]
        dM_in, g[f"l{l}.mlp.W1"], g[f"l{l}.mlp.b1"], g[f"l{l}.mlp.W2"], g[f"l{l}.mlp.b2"] = \
            L.mlp_backward(dX, cm)
        dX_mlp, g[f"l{l}.ln2.g"], g[f"l{l}.ln2.b"] = L.layer_norm_backward(dM_in, c2)
        dX = dX + dX_mlp if res else dX_mlp  # the residual path passes dX straight through
        dq, dkv, ga = multi_head_backward(ca, dX)
        for w in ("W_q", "W_k", "W_v", "W_o"):
            g[f"l{l}.attn.{w}"] = getattr(ga, w)
        dX_att, g[f"l{l}.ln1.g"], g[f"l{l}.ln1.b"] = L.layer_norm_backward(dq + dkv, c1)  # used twice
        dX = dX + dX_att if res else dX_att
    g["E"] = L.embed_backward(dX, cache["emb"])  # positions are fixed: no gradient
    return g


def lm_loss_and_grads(params: dict, config: TinyLMConfig, ids, targets, **switches):
    """Mean next-token cross-entropy of a batch and the gradient of every parameter."""
    logits, cache = lm_forward(params, config, ids, **switches)
    loss, ce = L.cross_entropy(logits, np.asarray(targets).reshape(logits.shape[:-1]))
    return loss, lm_backward(params, cache, L.cross_entropy_backward(ce))


def head_weights(params: dict, config: TinyLMConfig, ids, **switches) -> list[np.ndarray]:
    """Every layer's attention weights for one sequence: a list of arrays of shape (h, n, n)."""
    _, cache = lm_forward(params, config, ids, **switches)
    return [w[0] for w in cache["weights"]]


def next_token_probs(params: dict, config: TinyLMConfig, ids, *, temperature: float = 1.0,
                     **switches) -> np.ndarray:
    """``softmax(logits / temperature)`` of the token after the last one, shape (vocab_size,)."""
    t = float(temperature)
    if not (np.isfinite(t) and t > 0):
        raise ParameterError(f"temperature must be a positive number, got {temperature!r}; "
                             "use generate(..., temperature=0) for greedy decoding")
    ids = np.asarray(ids)[-config.context:]
    z = lm_forward(params, config, ids, **switches)[0][0, -1] / t  # (V,)
    e = np.exp(z - z.max())
    return e / e.sum()


def _check_n_new(n_new) -> None:
    if isinstance(n_new, bool) or not isinstance(n_new, (int, np.integer)) or n_new < 0:
        raise ParameterError(f"n_new must be a whole number >= 0, got {n_new!r}")


def generate(params: dict, config: TinyLMConfig, ids, n_new: int, *, temperature: float = 0.0,
             rng: np.random.Generator | None = None) -> np.ndarray:
    """Append ``n_new`` tokens, one at a time: the most likely one when ``temperature == 0``
    (greedy), else a sample from ``softmax(logits / temperature)`` drawn with ``rng``.

    Returns the whole sequence, shape (n + n_new,).
    """
    _check_n_new(n_new)
    if temperature != 0 and not isinstance(rng, np.random.Generator):
        raise ParameterError("sampling with a temperature needs rng=np.random.default_rng(seed)")
    seq = [int(i) for i in np.asarray(ids).reshape(-1)]
    for _ in range(n_new):
        if temperature == 0:
            logits = lm_forward(params, config, np.array(seq[-config.context:]))[0][0, -1]
            seq.append(int(np.argmax(logits)))
        else:
            p = next_token_probs(params, config, np.array(seq), temperature=temperature)
            seq.append(int(rng.choice(len(p), p=p)))
    return np.array(seq, dtype=np.int64)


def generate_with_cache(params: dict, config: TinyLMConfig, ids, n_new: int) -> tuple[np.ndarray, np.ndarray]:
    """Greedy generation like :func:`generate`, but one token at a time through a
    :class:`~attention_kit.scale.kvcache.KVCache` per layer: each step runs only the newest token
    through the layers and attends with its query alone over the cached keys and values.

    The model adds absolute (sinusoidal) positions to its input, so once the text is longer than
    ``config.context`` the window :func:`generate` reads slides and every token changes position:
    no cached key would be right any more. So here the prompt plus the new tokens must fit in the
    context.

    Returns
    -------
    seq : int array, shape (n + n_new,)
        The prompt and the new tokens (the same as ``generate(params, config, ids, n_new)``).
    logits : ndarray, shape (n_new, vocab_size)
        The logits each new token was chosen from.
    """
    seq = [int(i) for i in _ids(ids, config)[0]]
    _check_n_new(n_new)
    if len(seq) + n_new > config.context:
        raise ParameterError(f"{len(seq)} prompt tokens + {n_new} new ones is more than the "
                             f"{config.context} the model reads: with absolute positions the cache "
                             "holds only while nothing slides out of the window")
    h, d = config.n_heads, config.d_model // config.n_heads
    caches = [KVCache(d, d, n_heads=h) for _ in range(config.n_layers)]
    P = sinusoidal_positions(config.context, config.d_model)  # (context, d_model)

    def step(token: int, pos: int) -> np.ndarray:  # the newest token's logits, (vocab,)
        x = params["E"][token] + P[pos]  # (d_model,)
        for l, cache in enumerate(caches):
            a, _ = L.layer_norm(x[None], params[f"l{l}.ln1.g"], params[f"l{l}.ln1.b"])  # (1, d)
            p = attention_params(params, l)
            q, k, v = (np.einsum("d,hde->he", a[0], W) for W in (p.W_q, p.W_k, p.W_v))  # (h, d) each
            cache.append(k, v)
            heads, _ = cache.attend(q)  # (h, d): one row of causal attention per head
            x = x + heads.reshape(-1) @ p.W_o
            m_in, _ = L.layer_norm(x[None], params[f"l{l}.ln2.g"], params[f"l{l}.ln2.b"])
            m, _ = L.mlp(m_in, params[f"l{l}.mlp.W1"], params[f"l{l}.mlp.b1"],
                         params[f"l{l}.mlp.W2"], params[f"l{l}.mlp.b2"])
            x = x + m[0]
        f, _ = L.layer_norm(x[None], params["lnf.g"], params["lnf.b"])
        return f[0] @ params["W_out"] + params["b_out"]

    for pos, tok in enumerate(seq[:-1]):  # the prompt fills the caches
        step(tok, pos)
    logits = []
    for _ in range(n_new):
        z = step(seq[-1], len(seq) - 1)
        logits.append(z)
        seq.append(int(np.argmax(z)))
    return np.array(seq, dtype=np.int64), np.array(logits).reshape(n_new, -1)


def save_params(path, params: dict, config: TinyLMConfig, **meta) -> None:
    """Write parameters (float32), the config and any extra arrays ``meta`` to one ``.npz``."""
    arrays = {f"param/{k}": np.asarray(v, dtype=np.float32) for k, v in params.items()}
    arrays |= {f"config/{k}": np.array(v) for k, v in asdict(config).items()}
    arrays |= {f"meta/{k}": np.asarray(v) for k, v in meta.items()}
    np.savez_compressed(path, **arrays)


def load_params(path) -> tuple[dict, TinyLMConfig, dict]:
    """Read what :func:`save_params` wrote: ``(params as float64, config, meta)``."""
    with np.load(path) as z:
        params = {k[6:]: z[k].astype(np.float64) for k in z.files if k.startswith("param/")}
        config = TinyLMConfig(**{k[7:]: int(z[k]) for k in z.files if k.startswith("config/")})
        meta = {k[5:]: z[k] for k in z.files if k.startswith("meta/")}
    return params, config, meta


def load_pretrained() -> tuple[dict, TinyLMConfig, dict]:
    """The weights shipped in the package (``attention_kit/data/tiny_lm.npz``, made by
    ``tools/train_tiny_lm.py``)."""
    with resources.as_file(resources.files("attention_kit").joinpath("data/tiny_lm.npz")) as f:
        return load_params(f)
