"""attention_kit: the checked numpy reference behind the attention course.

One convention, everywhere: **rows are tokens**.

* ``X`` has shape ``(n, d_model)``: one row per token.
* ``Q = X @ W_q`` with ``W_q`` of shape ``(d_model, d_k)`` (a row vector times a matrix).
* Attention weights have shape ``(n_q, n_k)``: one row per query, one column per key, and each
  row sums to 1.
* Multi-head tensors are ``(h, n, d_head)``.
* Leading batch dimensions ``(...)`` are accepted by the score functions, softmax,
  ``scaled_dot_product_attention``, ``self_attention`` and ``multi_head_attention``.
* float32 and float64 keep their dtype; integer input is promoted to float64. Mixed inputs follow
  numpy's promotion: float32 tokens with float64 weights give float64 (make the weights float32,
  e.g. ``init_multi_head(..., dtype=np.float32)``, to stay in float32).
* Masks are boolean and **True means "may attend"** (PyTorch's ``scaled_dot_product_attention``
  polarity). A query whose mask row is all False gets all-zero weights, never NaN.

The survey of Brauwers & Frasincar writes vectors as *columns* (``K = W_K F``, ``F`` of shape
``(d_f, n_f)``). The same computation in rows is ``K = F.T @ W_K.T``; the notebooks show both.
"""

from .decoder.tiny_decoder import DecoderConfig, TinyDecoder
from .errors import (
    AttentionError,
    EmptySequenceError,
    MaskDtypeError,
    MaskError,
    NonFiniteError,
    ParameterError,
    ShapeError,
    UnknownNameError,
)
from .learn.backward import (
    multi_head_attention_backward,
    numerical_gradient,
    relative_error,
    scaled_dot_product_attention_backward,
    softmax_backward,
)
from .mechanism.alignment import ALIGNMENTS, align, hard_align, local_align, soft_align, softmax
from .mechanism.attention import (
    attend,
    general_attention,
    scaled_dot_product_attention,
    self_attention,
)
from .mechanism.masks import causal_mask, padding_mask, window_mask
from .mechanism.multi_head_attention import (
    MultiHeadParams,
    init_multi_head,
    merge_heads,
    multi_head_attention,
    multi_head_forward,
    split_heads,
)
from .mechanism.positions import position_frequencies, position_rotation, sinusoidal_positions
from .mechanism.scores import (
    ACTIVATIONS,
    SCORES,
    ScoreSpec,
    activated_general_score,
    additive_score,
    biased_general_score,
    concat_score,
    cosine_score,
    default_score_params,
    dot_score,
    general_score,
    scaled_dot_score,
    score,
)
from .relative.alibi import alibi_bias, alibi_slopes
from .relative.rope import rope, rope_backward, rope_frequencies, rope_rotation
from .scale.grouped_query import (
    GroupedQueryParams,
    from_multi_head,
    grouped_query_attention,
    init_grouped_query,
    to_multi_head,
)
from .scale.kvcache import MODEL_SHAPES, KVCache, kv_cache_bytes
from .scale.online import online_softmax, online_step, online_trace
from .scale.sliding_window import receptive_field, sliding_window_mask
from .scale.tiled import TileCounts, TileStep, tile_counts, tiled_attention, tiled_trace

__version__ = "0.1.0"

__all__ = [
    "ACTIVATIONS", "ALIGNMENTS", "SCORES", "ScoreSpec",
    "AttentionError", "EmptySequenceError", "MaskDtypeError", "MaskError", "NonFiniteError",
    "ParameterError", "ShapeError", "UnknownNameError",
    "MultiHeadParams", "activated_general_score", "additive_score", "align", "attend",
    "biased_general_score", "causal_mask", "concat_score", "cosine_score", "default_score_params",
    "dot_score", "general_attention", "general_score", "hard_align", "init_multi_head",
    "local_align", "merge_heads", "multi_head_attention", "multi_head_forward", "padding_mask", "position_frequencies",
    "position_rotation", "scaled_dot_product_attention",
    "scaled_dot_score", "score", "self_attention", "sinusoidal_positions", "soft_align", "softmax", "split_heads", "window_mask",
    # attention at scale (notebook 07)
    "DecoderConfig", "GroupedQueryParams", "KVCache", "MODEL_SHAPES", "TileCounts", "TileStep", "TinyDecoder",
    "from_multi_head", "grouped_query_attention", "init_grouped_query", "kv_cache_bytes",
    "online_softmax", "online_step", "online_trace", "receptive_field", "sliding_window_mask",
    "tile_counts", "tiled_attention", "tiled_trace", "to_multi_head",
]
# the backward pass (notebook 05); the optimisers are in attention_kit.learn.optim
__all__ += ["multi_head_attention_backward", "numerical_gradient", "relative_error",
            "scaled_dot_product_attention_backward", "softmax_backward"]

# what trained heads do (notebook 08), and the training loop of notebooks 08 on
from .decoder.training import TrainingLog, train_decoder  # noqa: E402
from .heads.diagnostics import prefix_matching_score, previous_token_score, sink_mass  # noqa: E402
from .heads.model import AttnOnlyConfig, init_attention_only  # noqa: E402

__all__ += ["AttnOnlyConfig", "TrainingLog", "init_attention_only", "prefix_matching_score",
            "previous_token_score", "sink_mass", "train_decoder"]

# positions for long texts (notebook 09)
__all__ += ["alibi_bias", "alibi_slopes", "rope", "rope_backward", "rope_frequencies", "rope_rotation"]

# accessibility (issue 34): in a notebook, every figure shown carries a text alternative
from .accessible import describe_figure, describe_figures  # noqa: E402
from .accessible import install as _install_figure_descriptions  # noqa: E402

_install_figure_descriptions()
__all__ += ["describe_figure", "describe_figures"]
