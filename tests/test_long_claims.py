"""Notebook 09 section 3's claims about the stored length-extrapolation runs
(``attention_kit/data/extrapolation.npz``, three seeds), checked here rather than in front of the
learners: the notebook's prose quotes these numbers."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.long import extrapolation


@pytest.fixture(scope="module")
def runs():
    stored = extrapolation.load_extrapolation()
    A = {name: stored["accuracy"][i] for i, name in enumerate(stored["schemes"])}   # (seed, length) each
    return stored, A


def test_who_learned_at_24_tokens(runs):
    _, A = runs
    for name in ("sinusoidal", "rope", "alibi 1, 0"):
        assert (A[name][:, 0] > 0.97).all()                                   # learned at 24 tokens
    assert (A["alibi"] < 0.6).all()                                           # the paper's slopes: not learned
    assert [round(A["alibi"][:, 0].min(), 2), round(A["alibi"][:, 0].max(), 2)] == [0.44, 0.5]
    assert round(A["rope"][:, 0].min(), 2) == 0.99
    assert [round(A["alibi 1, 0"][:, 0].min(), 2), round(A["alibi 1, 0"][:, 0].max(), 2)] == [0.97, 0.99]
    assert A["alibi 1, 0"][:, 0].max() < A["rope"][:, 0].min()                # at 24 rotary is ahead on every seed


def test_alibi_with_the_slopes_1_and_0_stays_right(runs):
    _, A = runs
    assert (A["alibi 1, 0"] > 0.97).all()                                     # right from 24 to 192 ...
    assert (np.diff(A["alibi 1, 0"], axis=1) > 0).all()                      # ... the mean creeping up,
    assert (A["alibi 1, 0"][:, -1] - A["alibi 1, 0"][:, 0] < 0.02).all()      # ... by less than 0.02
    assert [round(A["alibi 1, 0"][:, n].mean(), 2) for n in (0, -1)] == [0.98, 1.00]


def test_sinusoidal_and_rotary_fall(runs):
    _, A = runs
    for name in ("sinusoidal", "rope"):
        assert (np.diff(A[name], axis=1) < 0).all()                           # falling at every step
        assert (A["alibi 1, 0"][:, -1] > A[name][:, -1] + 0.2).all()
    assert [round(A[s][:, -1].mean(), 2) for s in ("sinusoidal", "rope")] == [0.65, 0.59]   # the means at 192
    for name in ("sinusoidal", "rope", "alibi 1, 0"):
        assert (A["alibi"] < A[name]).all()                                   # the paper's slopes: last everywhere
    mean = {s: A[s].mean(axis=0) for s in A}
    assert all(mean["alibi 1, 0"][n] > max(mean[s][n] for s in A if s != "alibi 1, 0") for n in (1, 2, 3))


def test_rotary_below_sinusoidal_seed_by_seed(runs):
    _, A = runs
    paired = A["sinusoidal"][:, 2:] - A["rope"][:, 2:]                        # (seed, 96 and 192)
    assert (paired > 0).all()                                                 # rotary lower on every seed,
    assert [[round(c.min(), 2), round(c.max(), 2)] for c in paired.T] == [[0.01, 0.07], [0.03, 0.11]]
    assert [round(c.mean(), 2) for c in paired.T] == [0.04, 0.06]
    for n in (2, 3):                                                          # the seeds' ranges overlap ...
        assert A["rope"][:, n].max() > A["sinusoidal"][:, n].min()           # ... only through sinusoidal's seed 1
        assert A["rope"][:, n].max() < np.delete(A["sinusoidal"][:, n], 1).min()
    drop = {s: A[s][:, 0] - A[s][:, -1] for s in ("sinusoidal", "rope")}
    assert (drop["sinusoidal"] < drop["rope"]).all()                         # rotary loses more on every seed


def test_the_boundary_token(runs):
    stored, _ = runs
    boundary = stored["boundary"]                                             # (scheme, seed, length)
    assert (boundary == boundary[..., :1]).all()                             # it lies in the first 12 tokens
    assert (boundary < 0.5).all()
    means = [round(boundary[s, :, 0].mean(), 2) for s in range(len(stored["schemes"]))]
    assert min(means) == 0.08 and max(means) == 0.36                         # learned poorly: 0.08 to 0.36
