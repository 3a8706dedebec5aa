"""Notebook 09's shipped RoPE rhyme models (tools/train_tiny_lm.py --positions rope) are reproduced by their
script's first steps, are small, and read long texts through the sliding cache as notebook 09 says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.decoder.lm_training import evaluate, make_lm_data, rhyme_stream
from attention_kit.long import streaming

ROOT = Path(__file__).resolve().parents[1]


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("layers", [1, 2])
def test_rope_models_are_small_trained_and_reproduced(layers):
    p, cfg, meta = streaming.load_rope_lm(layers)
    assert cfg.positions == "rope" and cfg.n_layers == layers
    assert (ROOT / "attention_kit" / "data" / f"tiny_lm_rope{layers}.npz").stat().st_size < 150_000
    data = make_lm_data(cfg.context, seed=int(meta["seed"]))
    loss, acc = evaluate(p, cfg, data.X_held, data.Y_held)
    assert loss < 0.6 and acc > 0.85
    assert float(meta["history"][-1, 2]) == pytest.approx(loss, abs=0.01)  # float32 rounding only
    mod = _tool("train_tiny_lm")
    _, _, _, history = mod.run(steps=2 * mod.LOG_EVERY, layers=layers, positions="rope")
    logged = np.asarray(meta["history"])[:2]
    np.testing.assert_allclose(np.array(history)[:, 1:], logged[:, 1:], rtol=1e-6)


def test_streaming_one_layer_is_exact_two_layers_are_not():
    ids = rhyme_stream()[1].encode(rhyme_stream()[0])[:60]
    for layers in (1, 2):
        p, cfg, _ = streaming.load_rope_lm(layers)
        d = np.abs(streaming.stream_logits(p, cfg, ids) - streaming.recompute_logits(p, cfg, ids)).max(axis=1)
        assert d[:cfg.context].max() < 1e-12
        if layers == 1:
            assert d.max() < 1e-12
        else:
            assert np.median(d[cfg.context:]) > 0.05


def test_streaming_refuses_absolute_positions_past_the_window():
    p, cfg, _ = ak.decoder.tiny_lm.load_pretrained()
    ids = np.arange(cfg.context + 1) % cfg.vocab_size
    with pytest.raises(ak.ParameterError, match="recompute_logits"):
        streaming.stream_logits(p, cfg, ids)
    streaming.recompute_logits(p, cfg, ids)  # fine
    with pytest.raises(ak.ShapeError):
        streaming.stream_logits(p, cfg, np.zeros((2, 3), int))
