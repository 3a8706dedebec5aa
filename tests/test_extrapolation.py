"""Notebook 09's length-extrapolation runs (tools/train_extrapolation.py): the stored log is
reproduced by the script's first steps, and the script writes what the loader reads."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_kit.decoder.training import train_decoder
from attention_kit.long import extrapolation as ex

pytestmark = pytest.mark.slow  # reruns the first steps of notebook 09's training runs: make check leaves it out

ROOT = Path(__file__).resolve().parents[1]


def test_extrapolation_log_is_reproduced_by_its_first_steps():
    stored = ex.load_extrapolation()
    for i, scheme in enumerate(stored["schemes"]):
        params = ex.init_model(0)
        log = train_decoder(params, ex.batch, steps=20, lr=ex.TRAINING["lr"], seed=0, **ex.SCHEMES[scheme])
        np.testing.assert_allclose(log.losses, stored["first_losses"][i, :20], rtol=0, atol=1e-6)
    assert (ROOT / "attention_kit" / "data" / "extrapolation.npz").stat().st_size < 250_000


def test_extrapolation_tool_writes_what_the_loader_reads(tmp_path):
    spec = importlib.util.spec_from_file_location("train_extrapolation", ROOT / "tools" / "train_extrapolation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "x.npz"
    argv, sys.argv = sys.argv, ["train_extrapolation", "--steps", "25", "--seeds", "0", "--out", str(out)]
    try:
        mod.main()
    finally:
        sys.argv = argv
    with np.load(out) as z:
        assert z["accuracy"].shape == (len(ex.SCHEMES), 1, 4) and z["first_losses"].shape == (len(ex.SCHEMES), 25)
