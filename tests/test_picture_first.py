"""The new picture leaves the kernel before the other widgets' new state (``picture_first``).

A control's side effects on other widgets (the text box showing a slider's vector, the sliders of a
typed vector, a stepper's range) used to be sent ahead of the picture, and the page updated those
widgets before it drew. These tests record the messages an explorer sends, in order, as the
browser would receive them."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from attention_kit.widgets import (
    AttentionExplorer,
    AttentionTrainer,
    LiveFigure,
    SelfAttentionExplorer,
    TilingStepper,
    VectorEditor,
)
from attention_kit.widgets.live_figure import picture_first


@pytest.fixture
def sent(monkeypatch):
    """Every state update sent to the page: a list of (widget, {name: value})."""
    log: list = []
    original = widgets.Widget._send

    def record(self, msg, buffers=None):
        if msg.get("method") == "update":
            log.append((self, dict(msg["state"])))
        return original(self, msg, buffers=buffers)

    monkeypatch.setattr(widgets.Widget, "_send", record)
    return log


def _from_page(widget, **state):
    """A change made in the browser: the state message ipywidgets' front end sends."""
    widget.set_state(state)


def _order(log):
    """'picture' for the live figure's frame, else the names of what another widget sent."""
    out = []
    for w, state in log:
        if isinstance(w, LiveFigure):
            if "frame" in state:
                out.append("picture")
        else:
            out.append((type(w).__name__, tuple(sorted(state))))
    return out


def test_a_slider_sends_the_picture_before_its_vectors_text(sent):
    ex = AttentionExplorer(q=[1.0, 0.4], K=[[1.2, 0.3], [0.2, 1.0]], V=[[1.5, -0.6], [-0.4, 1.5]])
    sent.clear()
    _from_page(ex.editor._sliders["q"][0], value=0.55)
    order = _order(sent)
    assert order[0] == "picture", order
    assert ("Text", ("value",)) in order[1:], order  # the box still shows "0.55, 0.4", after
    assert ex.editor.text("q") == "0.55, 0.4"


def test_a_typed_vector_sends_the_picture_before_the_sliders(sent):
    ex = SelfAttentionExplorer(np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]]))
    sent.clear()
    _from_page(ex.editor._texts["x1"], value="0.2  0.6")
    order = _order(sent)
    assert order[0] == "picture", order
    sliders = [o for o in order if o == ("FloatSlider", ("value",))]
    assert len(sliders) == 2 and order.index("picture") < order.index(sliders[0])
    assert ex.editor.text("x1") == "0.2, 0.6"  # normalised, and sent after the picture too
    np.testing.assert_allclose(ex.editor.slider_values("x1"), [0.2, 0.6])


def test_a_bad_vector_still_shows_its_message(sent):
    ex = SelfAttentionExplorer(np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]]))
    sent.clear()
    _from_page(ex.editor._texts["x1"], value="0.2, oops")
    assert "oops" in ex.editor.message("x1") or "number" in ex.editor.message("x1")
    assert any(isinstance(w, widgets.Label) and "value" in s for w, s in sent)  # the message went out
    assert not any(isinstance(w, LiveFigure) for w, _ in sent)  # and no new picture


def test_a_control_that_moves_another_sends_the_picture_first(sent):
    ts = TilingStepper(step=6)
    sent.clear()
    _from_page(ts.controls["block_q"], value=2)  # a new tile count: the step slider's range follows
    order = _order(sent)
    assert order[0] == "picture", order
    assert any(o[0] == "IntSlider" and "max" in o[1] for o in order[1:] if o != "picture"), order


def test_a_typed_learning_rate_sends_the_picture_first(sent):
    lab = AttentionTrainer("reverse", lr=0.2)
    sent.clear()
    _from_page(lab.controls["lr"], value=0.5)  # the slider: the box shows 0.5 after the picture
    order = _order(sent)
    assert order[0] == "picture", order
    assert ("Text", ("value",)) in order, order
    assert lab.controls["lr_text"].value == "0.5" and lab.trainer.lr == 0.5


def test_nested_holds_send_each_widget_once_at_the_end(sent):
    ed = VectorEditor({"a": [1.0, 2.0]})
    with picture_first(ed):
        with picture_first(ed):
            ed._sliders["a"][0].value = 1.5
            ed._sliders["a"][0].value = 1.25
        assert sent == []  # held by the outer block
    values = [s["value"] for w, s in sent if w is ed._sliders["a"][0]]
    assert values == [1.25]  # one message, with the last value
    assert ed.text("a") == "1.25, 2"
