"""A typed context (06's HeadView) or sequence (08's HeadExplorer) is drawn in panels placed once,
for the widest labels the explorer can show (``Explorer._place_scenes``): no layout on the press,
every label inside the figure and clear of the other panels, the same picture however it was
reached."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.layout_engine import ConstrainedLayoutEngine  # noqa: E402

from attention_kit.decoder.lm_training import rhyme_stream  # noqa: E402
from attention_kit.decoder.tiny_lm import load_pretrained  # noqa: E402
from attention_kit.widgets import HeadExplorer, HeadView  # noqa: E402

#: make check leaves these to make test: 06's and 08's scenes placed for many contexts (about 16 s at load 4)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model():
    p, cfg, _ = load_pretrained()
    return p, cfg, rhyme_stream()[1]


@pytest.fixture
def layouts(monkeypatch):
    """How many times constrained layout runs."""
    calls = []
    original = ConstrainedLayoutEngine.execute

    def counted(self, fig):
        calls.append(fig)
        return original(self, fig)

    monkeypatch.setattr(ConstrainedLayoutEngine, "execute", counted)
    return calls


def _fits(explorer) -> None:
    """Every panel's labels lie inside the figure, and no two panels' labels overlap."""
    fig = explorer.figure
    explorer.png()
    renderer = fig.canvas.get_renderer()
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    W, H = fig.bbox.width, fig.bbox.height
    for b in boxes:
        assert b.x0 >= -1 and b.y0 >= -1 and b.x1 <= W + 1 and b.y1 <= H + 1, (b, W, H)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap_w = min(a.x1, b.x1) - max(a.x0, b.x0)
            overlap_h = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert overlap_w <= 1 or overlap_h <= 1, (a, b)


def test_a_typed_context_needs_no_layout(model, layouts):
    hv = HeadView(*model, context="little miss muffet sat on a")
    assert len(layouts) == 1  # the template's, once, in the constructor
    for text in ("humpty dumpty sat on a", "jack and jill went up the hill", "the cat sat on"):
        assert hv.set_context(text)
        assert [tuple(ax.get_position().bounds) for ax in hv.figure.axes] == \
            [tuple(b.bounds) for b in hv._placements]
    assert len(layouts) == 1


def test_every_label_of_a_context_fits(model):
    p, cfg, vocab = model
    hv = HeadView(p, cfg, vocab, context="humpty dumpty sat on")
    _fits(hv)
    widest = [vocab.words[i] for i in np.argsort([len(w) for w in vocab.words])[::-1][:cfg.context]]
    assert hv.set_context(" ".join(widest))  # the longest words, as many as the model reads
    assert len(hv.state["tokens"]) == cfg.context
    _fits(hv)


@pytest.mark.slow
def test_a_context_looks_the_same_however_it_was_reached(model):
    typed = HeadView(*model, context="humpty dumpty sat on")
    typed.set_context("little miss muffet sat on a")
    fresh = HeadView(*model, context="little miss muffet sat on a")
    assert typed.png() == fresh.png()


def test_a_typed_sequence_needs_no_layout_and_fits(layouts):
    hx = HeadExplorer()
    assert len(layouts) == 1
    for text in ("A B C D A B C", "D J O B H M F D J O B H M A B C D E F G H I J K"):
        assert hx.set_tokens(text)
        _fits(hx)
    hx.controls["model"].value = "sinks"  # other names (<s>, T1, T2): the same places
    assert hx.set_tokens("<s> T1 c d e T2 f g h <s> T1")
    _fits(hx)
    assert len(layouts) == 1
    fresh = HeadExplorer("sinks", tokens="<s> T1 c d e T2 f g h <s> T1", layer=hx.controls["layer"].value)
    assert hx.png() == fresh.png()
