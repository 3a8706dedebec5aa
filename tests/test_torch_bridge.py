"""Notebook 04's "the same in PyTorch" aside: attention_kit agrees with torch's
scaled_dot_product_attention, mask polarity included. PyTorch is optional: without it these tests skip."""

import numpy as np
import pytest

import attention_kit as ak

torch = pytest.importorskip("torch")
F = torch.nn.functional


def test_batched_masked_attention_matches_torch():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 2, 6, 4))                          # (B, n, d) each
    mask = ak.causal_mask(6) & ak.padding_mask([6, 3], 6)             # (B, n, n), True = may attend
    ours = ak.scaled_dot_product_attention(Q, K, V, mask=mask)[0]
    theirs = F.scaled_dot_product_attention(*(torch.tensor(a) for a in (Q, K, V)),
                                            attn_mask=torch.tensor(mask)).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-10)


def test_multi_head_mask_gets_the_head_axis_like_unsqueeze_1():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 5, 8))                                    # (B, n, d_model)
    p = ak.init_multi_head(8, 4, rng=rng)
    mask = ak.padding_mask([5, 2], 5)                                 # (B, 1, n)
    _, w = ak.multi_head_attention(X, X, p, mask=mask)                # (B, h, n, n)
    Qh, Kh, Vh = (torch.tensor(np.einsum("bnd,hde->bhne", X, W)) for W in (p.W_q, p.W_k, p.W_v))
    scores = Qh @ Kh.transpose(-2, -1) / np.sqrt(2)
    scores = scores.masked_fill(~torch.tensor(mask).unsqueeze(1), float("-inf"))
    np.testing.assert_allclose(w, torch.softmax(scores, dim=-1).numpy(), atol=1e-10)
