"""The exercises of a tiny language model, declared once: for each exercise of
notebook 06, its statement and checker, and its grader's part (hidden cases, reference, comparison,
the samples its tests try, honest styles); see ``declare.py``. Not graded on hidden cases: 06.3
(sampling: a right answer may draw from the generator in its own way, so no draw can be predicted)
and the predictions."""

from __future__ import annotations

from ..learn.layers import layer_norm
from . import tiny_lm
from .declare import Exercise, Grading, Hidden, draw_sizes, grades, same_shape_close
from .recorded import reference

EXERCISES = (
    Exercise("06.1", "layer norm", ("my_layer_norm",), tiny_lm.layer_norm),
    Exercise("06.2", "the mask at inference", ("last_changes", "earlier_change"), tiny_lm.mask_at_inference),
    Exercise("06.3", "sampling with a temperature", ("my_sample",), tiny_lm.sample),
    Exercise("06.4", "what head 2 looks at", ("head2_word",), tiny_lm.head_role,
             {"context": "humpty dumpty had a"}),
)


@reference
def layer_norm_cases(rng):
    """(X, gamma, beta, eps): a batch (b, n, d) with a small eps, not the in-class 1e-5; a batch with
    a large eps and a constant row (its variance is 0); one sentence (n, d). d is never the
    in-class 6, n never 4, b never 3."""
    b1, b2 = draw_sizes(rng, 1, 7, 2, avoid=(3,))
    n, n2, d = draw_sizes(rng, 2, 11, 3, avoid=(4, 6))
    d2 = int(rng.choice([3, 5, 7]))
    X1 = rng.normal(-1.0, 2.5, (b1, n, d))
    X2 = rng.normal(0.5, 4.0, (b2, int(rng.integers(2, 6)), d2))
    X2[int(rng.integers(b2)), 0] = 1.7  # a constant row: its variance is 0
    X3 = rng.normal(2.0, 0.5, (n2, d))
    eps = (float(10.0 ** rng.uniform(-7, -3)), float(rng.uniform(0.2, 2.0)), float(rng.choice([1e-6, 1e-3, 0.1])))
    return [(X, rng.normal(1.0, 0.3, X.shape[-1]), rng.normal(0.0, 0.5, X.shape[-1]), e)
            for X, e in zip((X1, X2, X3), eps, strict=True)]


@reference
def layer_norm_ref(X, gamma, beta, eps):
    return layer_norm(X, gamma, beta, eps=eps)[0]  # each row of the last axis, whatever stands in front


@grades("06.1")
def grading_layer_norm():
    return Grading(
        task='`my_layer_norm(X, gamma, beta, eps)` for `(n, d)` and a batch `(b, n, d)`, at two widths (d '
             "= 6 and d = 5: a width written in fails) (section 2's `layer_norm_loop` fails on the batch)",
        catches='mean and variance over the tokens instead of the features; a whole sequence taken as one '
                'row; no eps (a constant row gives NaN); eps = 1e-5 written in (the checker passes eps = 0.5 '
                'too); the row statistics without keepdims (a broadcast error, named as such); eps outside '
                'the square root; dividing by the variance instead of its square root; the unbiased variance; '
                'gamma and beta forgotten; a list; `X` changed in place',
        hidden=(Hidden(layer_norm_cases, layer_norm_ref, same_shape_close),),
        # section 2's row loop: on a batch a row is a whole sequence
        wrong={0: "def f(X, gamma, beta, eps=1e-5):\n    out = np.empty(X.shape)\n"
                  "    for i, x in enumerate(X):\n        out[i] = gamma * (x - x.mean()) / np.sqrt(x.var() + eps) + beta\n"
                  "    return out"},
        other_right={0: "def f(X, gamma, beta, eps=1e-5):\n    Z = X - X.mean(axis=-1, keepdims=True)\n"
                        "    return gamma * Z / np.sqrt((Z ** 2).mean(axis=-1, keepdims=True) + eps) + beta"},
        refused={0: "def f(X, gamma, beta, eps=1e-5):\n    mu = X.mean(-1, keepdims=True)\n"
                    "    return list(gamma * (X - mu) / np.sqrt(X.var(-1, keepdims=True) + eps) + beta)"},
        honest=(
            "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = X.mean(axis=-1, keepdims=True)\n"
            "    var = X.var(axis=-1, keepdims=True)\n    return gamma * (X - mu) / np.sqrt(var + eps) + beta",
            "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    std = np.sqrt(X.var(-1, keepdims=True) + eps)\n"
            "    return gamma * ((X - X.mean(-1, keepdims=True)) / std) + beta",
            "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = X.sum(axis=-1, keepdims=True) / X.shape[-1]\n"
            "    xc = X - mu\n    var = (xc ** 2).sum(axis=-1, keepdims=True) / X.shape[-1]\n"
            "    return xc / np.sqrt(var + eps) * gamma + beta",
            "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    mu = np.mean(X, axis=-1)[..., None]\n"
            "    sd = np.sqrt(np.mean((X - mu) ** 2, axis=-1)[..., None] + eps)\n    return (X - mu) / sd * gamma + beta",
            "def my_layer_norm(X, gamma, beta, eps=1e-5):\n    rows = X.reshape(-1, X.shape[-1])\n"
            "    centred = rows - np.mean(rows, axis=1, keepdims=True)\n"
            "    inv = 1.0 / np.sqrt(np.mean(centred * centred, axis=1, keepdims=True) + eps)\n"
            "    return (centred * inv * gamma + beta).reshape(X.shape)",
        ),
    )


# ---------------------------------------------------------------- 06.2 the mask at inference


@grades("06.2")
def guide_the_mask_at_inference():
    return Grading(
        task='predict what removing the causal mask at inference changes (True or False)',
        catches="believing the last position's prediction changes (its mask row already allows every key, so "
                "with one block it cannot); believing the earlier positions' predictions stay (they now read "
                'the words after them). The hints, in class too, ask which keys removing the mask adds, '
                'without stating the answer',
    )


# ---------------------------------------------------------------- 06.3 sampling with a temperature


@grades("06.3")
def guide_sampling_with_a_temperature():
    return Grading(
        task='`my_sample(logits, T, rng)`',
        catches='always the argmax; a generator created or re-seeded inside the function (the same token '
                'on every call, named as such, not as a wrong softmax); the temperature ignored; the '
                'logits multiplied by T; a number of tokens written in (the checker samples from 4 and '
                'from 6 logits); exp overflowing for logits of 1000 and −1000 (no max subtracted, or the '
                'first logit, the mean or the minimum); draws that ignore the given `rng` (the same seed run twice gives '
                'other tokens); a float or bool instead of an int',
    )


# ---------------------------------------------------------------- 06.4 what head 2 looks at


@grades("06.4")
def guide_what_head_2_looks_at():
    return Grading(
        task='read head 2\'s target from the widget, confirm in code (on "humpty dumpty had a": section 5 '
             'shows head 2 on the name only for Miss Muffet and for "jill came", so the name here is a '
             'prediction, not a reading of an output above)',
        catches="the previous word (head 1's target); any other word: read the last row; another context or "
                "head passed to the checker (refused: it knows the exercise's call only)",
    )
