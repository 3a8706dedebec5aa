"""Notebook 03 (multi-head attention), exercise 4: the layers whose parameters the checker
``check.multi_head.n_parameters`` counts, as data.

``PARAMETER_LAYERS`` lists them, ``(d_model, n_heads, d_head, bias)``; ``parameter_counts()`` is the
sealed ``@recorded`` table of their counts, the ✓ texts (templates and their fields) and the usual
wrong counts with their hints.
"""

from __future__ import annotations

from ..i18n import N_
from .recorded import recorded, reference

__all__ = ["PARAMETER_LAYERS", "parameter_counts"]

#: The layers ``n_parameters`` knows, ``(d_model, n_heads, d_head, bias)``: the exercise's T5-11B
#: layer (heads together wider than d_model), and section 5's layers (h * d_head = d_model).
PARAMETER_LAYERS = ((1024, 128, 128, False), (512, 8, 64, False), (512, 8, 64, True),
                    (8, 2, 4, False), (6, 3, 2, True))


@reference
def _count(d_model: int, n_heads: int, d_head: int, bias: bool) -> int:
    """Counted from the shapes, without building the arrays (T5-11B's layer has 67 million)."""
    width = n_heads * d_head
    return 4 * d_model * width + ((3 * width + d_model) if bias else 0)


@reference
def _count_mistakes(d: int, h: int, dh: int, bias: bool) -> list[tuple[int, str]]:
    qkv_b, o_b = (3 * dh, d) if bias else (0, 0)  # biases of one head's q, k, v; bias of W_o
    wrong = [
        (h * 3 * d * dh + h * qkv_b, N_("you forgot the output projection W_o, shape (h*d_v, d_model)")),
        (4 * d * d if h * dh != d else None,
         N_("4 d_model^2 holds only when the heads together are d_model wide; here h*d_head is not d_model: "
            "count each matrix from its shape")),
        (4 * d * d + 4 * d if h * dh != d else None,
         N_("the formula of section 5 assumes h*d_head = d_model; count each matrix of this layer from its shape")
         if bias else
         N_("the formula of section 5 assumes h*d_head = d_model and biases; count each matrix of this layer from "
            "its shape")),
        (4 * d * h * dh + 4 * d if not bias else None, N_("this layer has no biases; count only the weight matrices")),
        (4 * d * h * dh if bias else None, N_("you forgot the biases: each projection has one bias per output column")),
        (4 * d * h * dh + 3 * h * dh if bias else None,
         N_("you forgot the output bias b_o, one number per output feature (d_model)")),
        (4 * d * h * dh + d if bias else None,
         N_("you forgot the biases of the heads: b_q, b_k and b_v have d_head entries per head")),
        (4 * d * h * dh + 3 * h * d + d if bias else None,
         N_("each head's biases have d_head entries, not d_model: b_q[l] matches the columns of W_q[l]")),
        (h * 3 * (d * d + (d if bias else 0)) + d * d + o_b if dh != d else None,
         N_("each head projects to d_head columns, not d_model: one head's W_q is d_model x d_head")),
        (h * (3 * d * dh + qkv_b + dh * d + o_b) if h > 1 else None,
         N_("all heads share one W_o (h*d_v x d_model) and one b_o: you counted it once per head")),
        (h * (4 * d * d + (4 * d if bias else 0)) if h > 1 else None,
         N_("each head projects to d_head columns, and all heads share one W_o")),
        (3 * d * dh + qkv_b + h * dh * d + o_b if h > 1 else None,
         N_("you counted W_q, W_k, W_v of one head only; there are h of them")),
        (3 * d * dh + qkv_b + dh * d + o_b if h > 1 else None,
         N_("you counted one head only (and its share of W_o); there are h heads")),
    ]
    return [(w, hint) for w, hint in wrong if w is not None]


@recorded(sealed=True)  # one fixed answer per layer: the table is those answers, sealed
def parameter_counts() -> dict:
    """Per layer of ``PARAMETER_LAYERS``: the count, the ✓ text and the usual mistakes' counts."""
    out = {}
    for d, h, dh, bias in PARAMETER_LAYERS:
        want = _count(d, h, dh, bias)
        # the ✓ text in parts, (template, fields), translated where it is shown
        ok = [(N_("{want} parameters: W_q, W_k, W_v are {d} x {width} in total, W_o is {width} x {d}"),
               {"want": f"{want:,}", "d": d, "width": h * dh})]
        if bias:
            ok.append((N_(", plus {biases} biases"), {"biases": f"{3 * h * dh + d:,}"}))
        if h * dh == d:
            ok.append((N_("; the head count does not change it"), {}))
        out[(d, h, dh, bias)] = {"want": want, "ok": ok, "wrong": _count_mistakes(d, h, dh, bias)}
    return out
