"""The page side of a LiveFigure draws what Agg draws.

An explorer's picture reaches the page as a PNG background plus drawing commands for the moving
artists (``attention_kit/widgets/draw_ops.py``), drawn on a ``<canvas>`` by ``live_figure.js``.
Here that script runs in Chromium on a blank page (no JupyterLab needed), with a stand-in for the
widget model holding the explorer's state, and the canvas is compared with the explorer's own Agg
rendering (``LiveFigure.render``, the PNG stored in the notebooks): the same size, and the same
picture up to text anti-aliasing. A picture of another state must fail the same comparison, so the
comparison can tell a wrong drawing from font rendering.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attention_kit.decoder.lm_training import rhyme_stream
from attention_kit.decoder.tiny_lm import load_pretrained
from attention_kit.widgets import (
    AttentionExplorer,
    AttentionTrainer,
    HeadView,
    MaskExplorer,
    MultiHeadExplorer,
    SelfAttentionExplorer,
    TilingStepper,
    live_figure,
)
from attention_kit.widgets.heads import HeadExplorer, PhaseChangeViewer
from attention_kit.widgets.rope import RopeExplorer

ESM = (Path(live_figure.__file__).with_name("live_figure.js")).read_text(encoding="utf-8")  # the page side
TOKENS = "the cat sat on the mat and purred".split()
PADDED = ["the", "cat", "sat", "on", "the", "mat", "<pad>", "<pad>"]

DRAW = """
async ([src, state]) => {
  const mod = await import(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
  const el = document.createElement('div');
  document.body.appendChild(el);
  const model = {get: (k) => state[k], on() {}, off() {}};
  const drawn = new Promise((resolve) => el.addEventListener('ak-frame', resolve));
  const cleanup = mod.default.render({model, el});
  await drawn;
  const canvas = el.querySelector('canvas');
  const out = {url: canvas.toDataURL('image/png'), frame: canvas.dataset.frame, width: canvas.style.width, error: canvas.dataset.error || '',
               picture: canvas.dataset.picture};
  cleanup();
  el.remove();
  return out;
}
"""

MAKERS = {
    "AttentionExplorer": lambda: AttentionExplorer(
        [1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]], [[1.5, -0.6], [-0.4, 1.5], [-1.2, -0.5]]),
    "SelfAttentionExplorer": lambda: SelfAttentionExplorer(
        np.random.default_rng(0).normal(0, 1, (8, 2)), labels=TOKENS),
    "MultiHeadExplorer": lambda: MultiHeadExplorer(
        np.random.default_rng(1).normal(0, 1, (5, 6)), TOKENS[:5], n_heads=2, token=2),
    "MaskExplorer": lambda: MaskExplorer(PADDED, mask="causal", token=2, nudge=1.0),
    "AttentionTrainer": lambda: AttentionTrainer("reverse", lr=0.2),
    "TilingStepper": lambda: TilingStepper(step=6),
    "HeadView": lambda: HeadView(*load_pretrained()[:2], rhyme_stream()[1],
                                 context="little miss muffet sat on a", head=1),
    "RopeExplorer": lambda: RopeExplorer(pair=1),  # its key's trail: markers in one "m" op
    "HeadExplorer": lambda: HeadExplorer(),
    "PhaseChangeViewer": lambda: PhaseChangeViewer(),
}


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def differing_blocks(a: np.ndarray, b: np.ndarray, block: int = 8, tol: float = 24.0) -> float:
    """The share of ``block`` x ``block`` pixel blocks whose mean colour differs by more than
    ``tol`` (of 255) in some channel: text drawn by another rasteriser moves a few pixels of
    a block, a wrong cell colour, a missing arrow or a misplaced value moves whole blocks."""
    h, w = (min(a.shape[0], b.shape[0]) // block) * block, (min(a.shape[1], b.shape[1]) // block) * block
    def means(x):
        return x[:h, :w].reshape(h // block, block, w // block, block, 3).mean(axis=(1, 3))
    return float((np.abs(means(a) - means(b)).max(axis=-1) > tol).mean())


def canvas_png(page, live) -> tuple[bytes, dict]:
    state = {k: getattr(live, k) for k in ("background", "ops", "size", "frame")}
    out = page.evaluate(DRAW, [ESM, state])
    return base64.b64decode(out["url"].split(",", 1)[1]), out


@pytest.fixture(scope="module")
def page(browser):
    p = browser.new_page()
    p.set_content("<!doctype html><html><body></body></html>")
    yield p
    p.close()


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_the_canvas_draws_the_agg_picture(page, name):
    ex = MAKERS[name]()
    ops = json.loads(ex.live.ops)["ops"]
    assert ops, f"{name} sends no drawing commands: its moving artists would travel as PNGs"
    got, meta = canvas_png(page, ex.live)
    want = ex.live.render()
    a, b = pixels(got), pixels(want)
    assert a.shape == b.shape, f"canvas {a.shape[1::-1]} but the figure is {b.shape[1::-1]}"
    assert meta["frame"] == str(ex.live.frame) and meta["picture"] and meta["error"] == ""
    share = differing_blocks(a, b)
    assert share < 0.02, f"{name}: {share:.1%} of the 8x8 blocks differ from Agg's picture"


def test_the_comparison_tells_another_state_apart(page):
    ex = MAKERS["SelfAttentionExplorer"]()
    before = ex.live.render()
    ex.editor.set_text("x1", "-1.5, 1.5")  # other scores, weights and arrows
    got, _ = canvas_png(page, ex.live)
    assert differing_blocks(pixels(got), pixels(ex.live.render())) < 0.02
    assert differing_blocks(pixels(got), pixels(before)) > 0.05


def test_a_high_density_screen_gets_sharp_commands_at_the_same_size(browser):
    page = browser.new_page(device_scale_factor=2)
    try:
        page.set_content("<!doctype html><html><body></body></html>")
        ex = MAKERS["SelfAttentionExplorer"]()
        got, meta = canvas_png(page, ex.live)
        a, b = pixels(got), pixels(ex.live.render())
        assert meta["width"] == f"{b.shape[1]}px"  # laid out at the figure's size...
        assert a.shape[:2] == (2 * b.shape[0], 2 * b.shape[1])  # ...with twice the pixels each way
        half = a.reshape(b.shape[0], 2, b.shape[1], 2, 3).mean(axis=(1, 3))
        assert differing_blocks(half, b) < 0.02  # ...of the same picture
    finally:
        page.close()
