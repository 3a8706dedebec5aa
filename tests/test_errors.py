"""Bad input gets a clear error (issue 2, section 4): each case is checked for its class and message.

Every message must name the argument, the expected shape in the row convention, the shape received
and a likely fix; the ``match`` patterns below check the parts a learner needs.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import attention_kit as ak
import attention_kit.errors as errors


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def esc(s: str) -> str:
    return re.escape(s)


# ----------------------------------------------------------------------------------------------
# the error classes
# ----------------------------------------------------------------------------------------------


def test_every_error_class_is_a_builtin_value_or_type_error():
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, Exception) and c.__module__ == errors.__name__]
    assert len(classes) >= 8
    for cls in classes:
        if cls is ak.AttentionError:
            continue
        assert issubclass(cls, (ValueError, TypeError)), cls
        assert issubclass(cls, ak.AttentionError), cls
    assert issubclass(ak.MaskDtypeError, TypeError) and issubclass(ak.MaskDtypeError, ak.MaskError)
    assert issubclass(ak.EmptySequenceError, ak.ShapeError)


# ----------------------------------------------------------------------------------------------
# wrong ndim / shape, mismatched inner dimensions
# ----------------------------------------------------------------------------------------------


def test_vector_where_matrix_expected(rng):
    X, W = rng.normal(size=(5, 4)), rng.normal(size=(4, 3))
    with pytest.raises(ak.ShapeError, match=r"X has shape \(4,\) but \(n, d_model\) was expected.*X\[None, :\]"):
        ak.self_attention(X[0], W, W, W)
    with pytest.raises(ak.ShapeError, match=r"Q has shape \(4,\) but \(n_q, d_k\) was expected"):
        ak.scaled_dot_product_attention(X[0], X, X)


def test_scalar_and_3d_weights(rng):
    X, W = rng.normal(size=(5, 4)), rng.normal(size=(4, 3))
    with pytest.raises(ak.ShapeError, match=r"scalar"):
        ak.scaled_dot_product_attention(3.0, X, X)
    with pytest.raises(ak.ShapeError, match=r"W_q has shape \(1, 4, 3\) but \(d_model, d_k\).*multi_head_attention"):
        ak.self_attention(X, W[None], W, W)


def test_weight_with_wrong_number_of_rows(rng):
    X, W = rng.normal(size=(5, 4)), rng.normal(size=(4, 3))
    with pytest.raises(ak.ShapeError, match=r"W_q has shape \(6, 3\) but \(4, d_k\) was expected.*one row per input feature, 4"):
        ak.self_attention(X, rng.normal(size=(6, 3)), W, W)


def test_mismatched_inner_dimensions(rng):
    X = rng.normal(size=(5, 4))
    with pytest.raises(ak.ShapeError, match=r"Q has d_k = 4 but K has d_k = 3 \(Q \(5, 4\), K \(5, 3\)\).*same d_k"):
        ak.scaled_dot_product_attention(X, rng.normal(size=(5, 3)), X)
    with pytest.raises(ak.ShapeError, match=r"K has 5 keys but V has 6 values.*one row per key"):
        ak.scaled_dot_product_attention(X, X, rng.normal(size=(6, 4)))
    with pytest.raises(ak.ShapeError, match=r"W_q \(4, 3\) gives d_k = 3 but W_k \(4, 2\) gives d_k = 2"):
        ak.self_attention(X, rng.normal(size=(4, 3)), rng.normal(size=(4, 2)), X[:4])
    with pytest.raises(ak.ShapeError, match=r"Q has 2 features per query but K has 3.*d_q = d_k.*'general'"):
        ak.dot_score(rng.normal(size=(3, 2)), rng.normal(size=(4, 3)))
    with pytest.raises(ak.ShapeError, match=r"K has 5 keys but V has 3 values.*same number of rows"):
        ak.general_attention(X[0], X, X[:3])
    with pytest.raises(ak.ShapeError, match=r"W1 has shape \(3, 5\) but \(2, 5\) \(d_q, d_w\) was expected"):
        ak.additive_score(rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), rng.normal(size=(3, 5)),
                          rng.normal(size=(3, 5)), rng.normal(size=5))
    with pytest.raises(ak.ShapeError, match=r"X_q has shape \(5, 4\) but \(n, 8\) was expected.*must be 8 \(d_model\)"):
        ak.multi_head_attention(X, X, ak.init_multi_head(8, 2, rng=rng))
    with pytest.raises(ak.ShapeError, match=r"p has shape \(2,\) but one centre per query"):
        ak.local_align(np.zeros((3, 5)), p=[1, 2], D=1)


def test_multi_head_params_shapes():
    z = np.zeros
    with pytest.raises(ak.ShapeError, match=r"W_o has shape \(8, 6\) but \(6, 8\) was expected.*Use W_o\.T"):
        ak.MultiHeadParams(W_q=z((2, 8, 4)), W_k=z((2, 8, 4)), W_v=z((2, 8, 3)), W_o=z((8, 6)))
    with pytest.raises(ak.ShapeError, match=r"W_q has shape \(8, 4\) but \(h, d_model, d_head\).*W\[None\]"):
        ak.MultiHeadParams(W_q=z((8, 4)), W_k=z((2, 8, 4)), W_v=z((2, 8, 3)), W_o=z((6, 8)))
    with pytest.raises(ak.ShapeError, match=r"b_q has shape \(4,\) but \(2, 4\) was expected"):
        ak.MultiHeadParams(W_q=z((2, 8, 4)), W_k=z((2, 8, 4)), W_v=z((2, 8, 3)), W_o=z((6, 8)), b_q=z(4))
    with pytest.raises(ak.ParameterError, match=r"params must be a MultiHeadParams.*init_multi_head"):
        ak.multi_head_attention(z((3, 8)), z((3, 8)), {"W_q": 1})
    with pytest.raises(ak.ShapeError, match=r"Xh has shape \(5, 4\) but \(h, n, d_head\)"):
        ak.merge_heads(z((5, 4)))


# ----------------------------------------------------------------------------------------------
# the survey's column layout passed where rows are expected
# ----------------------------------------------------------------------------------------------


def test_column_layout_hints(rng):
    X, W = rng.normal(size=(5, 4)), rng.normal(size=(4, 3))
    col = r"column layout.*Use {}\.T"
    with pytest.raises(ak.ShapeError, match=col.format("X")):
        ak.self_attention(X.T, W, W, W)
    with pytest.raises(ak.ShapeError, match=col.format("W_q")):
        ak.self_attention(X, W.T, W, W)
    with pytest.raises(ak.ShapeError, match=r"Did you pass K in the column layout \(d_k, n_k\)\? Use K\.T"):
        ak.scaled_dot_product_attention(rng.normal(size=(3, 4)), rng.normal(size=(4, 6)), rng.normal(size=(6, 2)))
    with pytest.raises(ak.ShapeError, match=r"column layout \(d_k, n_k\)\? Use K\.T"):
        ak.dot_score(rng.normal(size=(3, 2)), rng.normal(size=(2, 4)))
    with pytest.raises(ak.ShapeError, match=r"W has shape \(3, 2\) but \(2, 3\).*column-convention matrix\? Use W\.T"):
        ak.general_score(rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), rng.normal(size=(3, 2)))
    # the general attention module: F given as the survey's (d_f, n_f) columns
    F = rng.normal(size=(6, 4))  # (n_f, d_f)
    with pytest.raises(ak.ShapeError, match=col.format("F")):
        ak.attend(rng.normal(size=3), F.T, rng.normal(size=(4, 3)), rng.normal(size=(4, 2)))
    with pytest.raises(ak.ShapeError, match=col.format("W_k")):
        ak.attend(rng.normal(size=3), F, rng.normal(size=(3, 4)), rng.normal(size=(4, 2)))
    with pytest.raises(ak.ShapeError, match=col.format("X_q")):
        ak.multi_head_attention(rng.normal(size=(8, 5)), rng.normal(size=(8, 5)), ak.init_multi_head(8, 2, rng=rng))


# ----------------------------------------------------------------------------------------------
# NaN / inf, empty sequences
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad,kind", [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "inf")])
def test_non_finite_inputs(bad, kind, rng):
    X = rng.normal(size=(4, 3))
    Xb = X.copy()
    Xb[1, 2] = bad
    pat = rf"holds {kind} \(first at index \(1, 2\), 1 bad entries in all\).*finite"
    with pytest.raises(ak.NonFiniteError, match=r"Q " + pat):
        ak.scaled_dot_product_attention(Xb, X, X)
    with pytest.raises(ak.NonFiniteError, match=r"V " + pat):
        ak.scaled_dot_product_attention(X, X, Xb)
    with pytest.raises(ak.NonFiniteError, match=r"x " + pat):
        ak.softmax(Xb)
    with pytest.raises(ak.NonFiniteError, match=r"K " + pat):
        ak.dot_score(X, Xb)
    with pytest.raises(ak.NonFiniteError, match=r"X " + pat):
        ak.self_attention(Xb, np.eye(3), np.eye(3), np.eye(3))
    with pytest.raises(ak.NonFiniteError, match=r"X_kv " + pat):
        ak.multi_head_attention(np.zeros((4, 3)), Xb, ak.init_multi_head(3, 1, rng=rng))
    W = np.eye(3)
    W[0, 0] = bad
    with pytest.raises(ak.NonFiniteError, match=r"W_q holds"):
        ak.self_attention(X, W, np.eye(3), np.eye(3))
    with pytest.raises(ak.NonFiniteError, match=r"W holds"):
        ak.general_score(X, X, W)
    with pytest.raises(ak.NonFiniteError, match=r"W_o holds"):
        ak.MultiHeadParams(W_q=np.ones((1, 3, 3)), W_k=np.ones((1, 3, 3)), W_v=np.ones((1, 3, 3)), W_o=W)


def test_parameters_mutated_to_nan_are_caught(rng):
    p = ak.init_multi_head(4, 2, rng=rng)
    X = rng.normal(size=(3, 4))
    p.W_k[0, 0, 0] = np.nan  # after construction: not validated by MultiHeadParams
    with pytest.raises(ak.NonFiniteError, match=r"scores.*NaN"):
        ak.multi_head_attention(X, X, p)
    p = ak.init_multi_head(4, 2, rng=rng)
    p.W_v[0, 0, 0] = np.inf
    with pytest.raises(ak.NonFiniteError, match=r"output of multi_head_attention"):
        ak.multi_head_attention(X, X, p)


def test_overflowing_scores_are_reported_not_nan():
    Q = np.full((2, 2), 1e200)
    with pytest.raises(ak.NonFiniteError, match=r"scores Q K\^T / sqrt\(d_k\) holds inf"):
        ak.scaled_dot_product_attention(Q, Q, Q)
    with pytest.raises(ak.NonFiniteError, match=r"scores Q K\^T / sqrt\(d_k\) holds inf"):
        ak.scaled_dot_product_attention(Q, -Q, Q)  # -inf scores too: never a silent zero weight


def test_empty_sequences(rng):
    X = rng.normal(size=(5, 4))
    with pytest.raises(ak.EmptySequenceError, match=r"Q is empty \(shape \(0, 4\)\).*at least one token"):
        ak.scaled_dot_product_attention(np.zeros((0, 4)), X, X)
    with pytest.raises(ak.EmptySequenceError, match=r"K is empty"):
        ak.scaled_dot_product_attention(X, np.zeros((0, 4)), np.zeros((0, 4)))
    with pytest.raises(ak.EmptySequenceError, match=r"x has shape \(0,\): there are no keys.*n_k >= 1"):
        ak.softmax([])
    with pytest.raises(ak.EmptySequenceError, match=r"X is empty"):
        ak.self_attention(np.zeros((0, 4)), np.eye(4), np.eye(4), np.eye(4))
    with pytest.raises(ak.EmptySequenceError, match=r"F is empty"):
        ak.attend(np.ones(4), np.zeros((0, 4)))
    with pytest.raises(ak.ParameterError, match=r"n must be a whole number >= 1"):
        ak.causal_mask(0)
    assert issubclass(ak.EmptySequenceError, ValueError)


def test_not_numbers():
    with pytest.raises(ak.ShapeError, match=r"could not be turned into an array.*equal-length rows"):
        ak.softmax([[1, 2], [3]])
    with pytest.raises(ak.ShapeError, match=r"must hold numbers.*strings"):
        ak.softmax(["a", "b"])
    with pytest.raises(ak.ShapeError, match=r"complex"):
        ak.softmax([1j, 2])


# ----------------------------------------------------------------------------------------------
# heads, masks, names, local alignment, temperature
# ----------------------------------------------------------------------------------------------


def test_d_model_not_divisible_by_heads(rng):
    with pytest.raises(ak.ParameterError, match=r"d_model = 10 is not divisible by n_heads = 3.*\[1, 2, 5, 10\]"):
        ak.init_multi_head(10, 3, rng=rng)
    with pytest.raises(ak.ParameterError, match=r"not divisible by n_heads = 3"):
        ak.split_heads(np.zeros((2, 10)), 3)
    with pytest.raises(ak.ParameterError, match=r"n_heads must be a whole number >= 1, got 0"):
        ak.init_multi_head(8, 0, rng=rng)
    with pytest.raises(ak.ParameterError, match=r"rng must be a numpy Generator.*default_rng"):
        ak.init_multi_head(8, 2, rng=None)
    # with explicit d_k / d_v the heads need not divide d_model
    assert ak.init_multi_head(10, 3, rng=rng, d_k=4, d_v=4).W_o.shape == (12, 10)


def test_mask_wrong_shape(rng):
    X = rng.normal(size=(5, 4))
    with pytest.raises(ak.MaskError, match=r"mask has shape \(4, 5\) but it must broadcast to the scores' shape \(5, 5\).*causal_mask"):
        ak.scaled_dot_product_attention(X, X, X, mask=np.ones((4, 5), bool))
    p = ak.init_multi_head(8, 2, rng=rng)
    Y = rng.normal(size=(5, 8))
    with pytest.raises(ak.MaskError, match=r"\(3, 5, 5\).*\(2, 5, 5\)"):
        ak.multi_head_attention(Y, Y, p, mask=np.ones((3, 5, 5), bool))
    with pytest.raises(ak.MaskError, match=r"must broadcast"):
        ak.softmax(X, mask=np.ones(5, bool))
    with pytest.raises(ak.MaskError, match=r"must broadcast"):
        ak.general_attention(X[0], X, X, mask=np.ones(4, bool))


@pytest.mark.parametrize("mask", [np.ones((5, 5), int), np.ones((5, 5)), np.zeros((5, 5), np.uint8)])
def test_mask_not_boolean(mask, rng):
    X = rng.normal(size=(5, 4))
    pat = (r"mask must be boolean with True meaning 'may attend'.*astype\(bool\).*"
           r"torch\.nn\.MultiheadAttention.*opposite polarity \(True = blocked\).*~mask")
    with pytest.raises(ak.MaskDtypeError, match=pat):
        ak.scaled_dot_product_attention(X, X, X, mask=mask)
    with pytest.raises(TypeError, match=pat):  # a notebook may catch it as TypeError ...
        ak.softmax(rng.normal(size=(5, 5)), mask=mask)
    with pytest.raises(ValueError, match=pat):  # ... or as ValueError
        ak.soft_align(rng.normal(size=(5, 5)), mask=mask)


def test_unknown_names(rng):
    X = rng.normal(size=(3, 2))
    valid_scores = esc(str(sorted(ak.SCORES)))
    with pytest.raises(ak.UnknownNameError, match=r"unknown score function 'bilinear'; choose one of " + valid_scores):
        ak.score("bilinear", X, X)
    with pytest.raises(ak.UnknownNameError, match=r"choose one of " + valid_scores):
        ak.general_attention(X[0], X, X, score="cos")
    with pytest.raises(ak.UnknownNameError, match=r"unknown alignment 'sparse'; choose one of \['hard', 'local', 'soft'\]"):
        ak.align(X, "sparse")
    with pytest.raises(ak.UnknownNameError, match=r"unknown alignment 'cos'; choose one of \['hard', 'local', 'soft'\]"):
        ak.attend(X[0], X, align="cos")
    with pytest.raises(ak.UnknownNameError, match=r"unknown activation 'gelu'; choose one of \['identity', 'relu', 'sigmoid', 'tanh'\]"):
        ak.additive_score(X, X, np.eye(2), np.eye(2), np.ones(2), act="gelu")
    with pytest.raises(ak.UnknownNameError):
        ak.score(None, X, X)
    with pytest.raises(ak.ParameterError, match=r"score 'dot' takes parameters \[\], not \['W'\]"):
        ak.score("dot", X, X, W=np.eye(2))


@pytest.mark.parametrize("D", [0, 0.5, -1, np.nan, "2", True])
def test_local_alignment_window_too_small(D):
    with pytest.raises(ak.ParameterError, match=r"local alignment needs a window half-width D >= 1, got D="):
        ak.local_align(np.zeros(5), p=2, D=D)


@pytest.mark.parametrize("p", [-1, 5, 4.5, -0.01, np.nan, [0, 9]])
def test_local_alignment_centre_outside_sequence(p):
    e = np.zeros(5) if np.ndim(p) == 0 else np.zeros((2, 5))
    with pytest.raises(ak.ParameterError, match=r"centre p=.* lies outside the sequence; it must be between 0 and n_k - 1 = 4"):
        ak.local_align(e, p=p, D=1)
    with pytest.raises(ak.ParameterError, match=r"lies outside the sequence"):
        ak.attend(np.ones(2), np.ones((5, 2)), align="local", align_params={"p": p, "D": 1})


def test_local_alignment_bad_p_type():
    with pytest.raises(ak.ParameterError, match=r"p must be a number"):
        ak.local_align(np.zeros(5), p="middle", D=1)


@pytest.mark.parametrize("t", [0, -1, np.inf, np.nan])
def test_bad_temperature(t):
    with pytest.raises(ak.ParameterError, match=r"temperature must be a positive number.*try 1\.0"):
        ak.soft_align(np.zeros(3), temperature=t)


def test_bad_scale_and_rng():
    with pytest.raises(ak.ParameterError, match=r"scale must be a finite number"):
        ak.scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), scale=np.inf)
    with pytest.raises(ak.ParameterError, match=r"rng must be a numpy Generator"):
        ak.hard_align(np.zeros(3), rng=3)


def test_padding_mask_bad_lengths():
    with pytest.raises(ak.ParameterError, match=r"every length must lie in 0\.\.n_k=5, got \[3, 7\]"):
        ak.padding_mask([3, 7], 5)
    with pytest.raises(ak.ShapeError, match=r"lengths must be an int or a 1-D sequence of ints"):
        ak.padding_mask([1.5], 5)


# ----------------------------------------------------------------------------------------------
# stability: never a NaN
# ----------------------------------------------------------------------------------------------


def test_extreme_scores_give_finite_weights():
    e = np.array([[1e4, -1e4, 3.0], [-1e4, -1e4, -1e4]])
    for fn in (ak.softmax, ak.soft_align, ak.hard_align):
        assert np.isfinite(fn(e)).all()
    assert np.isfinite(ak.local_align(e, p=1, D=1)).all()
    Q = np.array([[100.0, 0.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0]])
    out, w = ak.scaled_dot_product_attention(Q, K, K, scale=1.0)  # scores +-1e4
    assert np.isfinite(out).all() and w.tolist() == [[1.0, 0.0]]


def test_fully_masked_rows_give_zeros_not_nan(rng):
    X = rng.normal(size=(3, 4))
    none = np.zeros((3, 3), bool)
    out, w = ak.scaled_dot_product_attention(X, X, X, mask=none)
    assert np.all(out == 0) and np.all(w == 0)
    assert np.all(ak.softmax(X, mask=np.zeros(4, bool)) == 0)
    assert np.all(ak.hard_align(X, mask=np.zeros(4, bool)) == 0)
    assert np.all(ak.local_align(X[:, :3], p=1, D=1, mask=np.zeros(3, bool), renormalize=True) == 0)
    p = ak.init_multi_head(4, 2, rng=rng)
    out, w = ak.multi_head_attention(X, X, p, mask=np.zeros((3, 3), bool))
    assert np.isfinite(out).all() and np.all(w == 0)


def test_window_mask_bad_width_and_centre():
    for bad in (-1, float("nan"), float("inf"), "2", None, True):
        with pytest.raises(ak.ParameterError, match=r"D is the window's half-width.*>= 0.*D=1 keeps"):
            ak.window_mask(3, 5, center=1, D=bad)
    with pytest.raises(ak.ShapeError, match=r"center must be a number or have shape \(3,\).*got shape \(2,\)"):
        ak.window_mask(3, 5, center=[1, 2], D=1)
    with pytest.raises(ak.ParameterError, match=r"center must be finite"):
        ak.window_mask(2, 5, center=[1, np.nan], D=1)
    with pytest.raises(ak.ParameterError, match=r"center must be a number or one number per query"):
        ak.window_mask(2, 5, center="middle", D=1)
    # the valid edge cases still work: D = 0 keeps the centre only, one centre for all queries
    assert ak.window_mask(2, 4, center=1, D=0).tolist() == [[False, True, False, False]] * 2
