"""What makes a slider press cheap (issue 15): the moving artists travel as canvas drawing commands
and the PNG background only when it changes, a title that names a slider's value does not force a
full redraw, cached text layout draws the same pixels, and LiveFigure's stage stamps are complete
and in order."""

import base64
import io
import json

import numpy as np
import pytest
from ipywidgets.widgets.widget import _remove_buffers
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from PIL import Image

from attention_kit.plotting.fast_artists import FastText
from attention_kit.widgets import (
    AttentionExplorer,
    LiveFigure,
    MaskExplorer,
    SelfAttentionExplorer,
    TilingStepper,
)
from attention_kit.widgets.axes import nice_limit
from attention_kit.widgets.draw_ops import Unsupported, record_ops

#: make check leaves these to make test: scene and background redraw counts over many steps (about 18 s at load 4)
pytestmark = pytest.mark.slow

TOKENS = "the cat sat on the mat and purred".split()
PADDED = ["the", "cat", "sat", "on", "the", "mat", "<pad>", "<pad>"]


def pixels(png) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"), dtype=int)


def small_live() -> LiveFigure:
    fig = Figure(figsize=(2, 1.5))
    fig.add_subplot().plot([0, 1], [1, 0])
    live = LiveFigure(fig, dpi=50)
    live.refresh()
    return live


def test_a_figure_without_moving_artists_is_sent_whole_as_a_png_background():
    live = small_live()
    assert bytes(live.value[:8]) == b"\x89PNG\r\n\x1a\n"
    prefix = "data:image/png;base64,"
    assert live.background.startswith(prefix)
    assert base64.b64decode(live.background[len(prefix):]) == bytes(live.value)
    assert json.loads(live.ops) == {"fonts": [], "ops": []}
    assert live.size == list(pixels(live.value).shape[1::-1])  # [width, height]


@pytest.mark.slow
def test_moving_artists_travel_as_ops_and_the_background_only_when_it_changes():
    ex = SelfAttentionExplorer(np.random.default_rng(0).normal(0, 1, (8, 2)), labels=TOKENS)
    live = ex.live
    ex.controls["temperature"].value = 0.9  # the title grows once: a new layout
    state, _, buffers = _remove_buffers(live.get_state())
    assert buffers == []  # plain JSON, no binary parts
    frame, background = live.frame, live.background
    ex.editor.set_text("x1", "0.3, -0.2")
    assert live.frame == frame + 1 and live.background == background  # only the ops changed
    payload = json.loads(live.ops)
    kinds = [op[0] for op in payload["ops"]]
    assert kinds.count("i") == 2  # the two heatmaps' cells
    assert kinds.count("t") >= 2 * 64  # their 64 values each (+ arrow labels, titles)
    texts = [op[3] for op in payload["ops"] if op[0] == "t"]
    assert f"{ex.state['weights'][0, 0]:.2f}" in texts
    assert all(0 <= op[4] < len(payload["fonts"]) for op in payload["ops"] if op[0] == "t")
    full = live.full_renders
    ex.editor.set_text("x1", "2, 2")  # the scores' colour scale grows from +-6 to +-8...
    assert ex._hm_dots.image.get_clim() == (-8.0, 8.0)
    assert live.full_renders == full + 1 and live.background != background  # ...a new background


@pytest.mark.parametrize("origin", ["upper", "lower"])
def test_image_ops_put_the_first_query_row_where_the_axes_show_it(origin):
    fig = Figure(figsize=(3, 3), dpi=50)
    ax = fig.add_subplot()
    data = np.arange(6.0).reshape(2, 3)  # rows: queries
    im = ax.imshow(data, origin=origin, interpolation="nearest", cmap="viridis")
    live = LiveFigure(fig)
    live.set_dynamic([im])
    live.refresh()
    (op,) = [op for op in json.loads(live.ops)["ops"] if op[0] == "i"]
    _, x, y, w, h, nx, ny, b64, _ = op
    cells = np.frombuffer(base64.b64decode(b64), dtype=np.uint8).reshape(ny, nx, 4)
    colours = im.to_rgba(data, bytes=True)
    top_row = colours[0] if origin == "upper" else colours[-1]  # what the canvas shows on top
    np.testing.assert_array_equal(cells[0], top_row)
    png = pixels(live.value)  # Agg's picture: the same colour in the middle of the top-left cell
    np.testing.assert_array_equal(png[int(y + h / (2 * ny)), int(x + w / (2 * nx))],
                                  top_row[0, :3])


@pytest.mark.slow
def test_a_bad_vector_sends_no_new_picture():
    ex = SelfAttentionExplorer(np.random.default_rng(0).normal(0, 1, (8, 2)), labels=TOKENS)
    frame, ops = ex.live.frame, ex.live.ops
    assert not ex.editor.set_text("x1", "0.5, oops")
    assert "oops" in ex.editor.message("x1")
    assert (ex.live.frame, ex.live.ops) == (frame, ops)  # the page keeps the last good picture


def test_an_artist_ops_cannot_draw_sends_the_whole_picture():
    fig = Figure(figsize=(2, 1.5))
    ax = fig.add_subplot()
    patch = ax.add_patch(Rectangle((0.2, 0.2), 0.5, 0.5, hatch="//"))
    live = LiveFigure(fig, dpi=50)
    live.set_dynamic([patch])
    with pytest.raises(Unsupported):
        record_ops(live._renderer(), [patch])
    live.refresh()
    assert json.loads(live.ops)["ops"] == []
    prefix = "data:image/png;base64,"
    assert base64.b64decode(live.background[len(prefix):]) == bytes(live.value)


@pytest.mark.slow
def test_trace_records_every_stage_in_order_and_is_off_by_default():
    live = small_live()
    assert LiveFigure.trace is None
    LiveFigure.trace = []
    try:
        ex = AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0]])
        LiveFigure.trace.clear()
        ex.controls["temperature"].value = 0.5
        live.refresh()  # a bare LiveFigure: only its own stages
        rec, bare = LiveFigure.trace
    finally:
        LiveFigure.trace = None
    stages = ["callback", "computed", "drawn", "rendered", "encoded", "sent"]
    times = [rec[s] for s in stages]
    assert times == sorted(times)
    assert rec["model"] == ex.live.model_id and rec["bytes"] >= len(ex.live.ops)
    assert set(bare) >= {"rendered", "encoded", "sent"} and "callback" not in bare
    ex.controls["temperature"].value = 0.7  # trace off again: nothing recorded, nothing kept
    assert ex.live._stamps == {}


@pytest.mark.parametrize("make", [
    lambda: AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]]),
    lambda: SelfAttentionExplorer(np.random.default_rng(0).normal(0, 1, (8, 2)), labels=TOKENS),
], ids=["AttentionExplorer", "SelfAttentionExplorer"])
@pytest.mark.slow
def test_temperature_steps_redraw_only_the_dynamic_artists_and_titles(make):
    ex = make()
    ex.controls["temperature"].value = 0.9  # the title grows once: one new layout is fine
    full = ex.live.full_renders
    for t in (0.8, 1.12, 0.7, 2.5):
        ex.controls["temperature"].value = t
        fast = pixels(ex.live.value)
        assert f"{t:.2f}" in " ".join(ax.get_title() for ax in ex.figure.get_axes())
        ex.live.invalidate()
        np.testing.assert_array_equal(fast, pixels(ex.live.render()))  # same as a full redraw
    assert ex.live.full_renders - full == 4  # only the four forced by invalidate()


def test_mask_explorer_seed_steps_keep_the_bar_scale():
    ex = MaskExplorer(PADDED, mask="causal", token=2, nudge=1.0)
    full = ex.live.full_renders
    for seed in (1, 0, 1, 0, 1):
        ex.controls["seed"].value = seed
        lim = ex._ax_b.get_xlim()[1]
        need = nice_limit(np.array([ex.state["reach"], *ex.state["change"]]), minimum=0.5, room=1.3)
        assert 0.25 * lim <= need <= lim  # every bar fits, and the scale is not four times too wide
    assert ex.live.full_renders - full <= 1


@pytest.mark.parametrize("ha", ["left", "center", "right"])
@pytest.mark.parametrize("va", ["baseline", "bottom", "top", "center"])
def test_fast_text_draws_the_pixels_of_text_for_every_alignment(ha, va):
    if (ha, va) == ("center", "center"):
        pytest.skip("centred text has its own path: the ink bitmap centred on the anchor")
    def draw(cls, x):
        fig = Figure(figsize=(2, 1), dpi=80)
        ax = fig.add_axes([0, 0, 1, 1])
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        t = cls(x, 0.4, "0.73 gy", ha=ha, va=va, fontsize=10)
        t.set_transform(ax.transData)
        ax.add_artist(t)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return np.asarray(canvas.buffer_rgba()).copy()

    for x in (0.5, 0.5137, 0.2):  # twice the same string: the second draw uses the cached layout
        plain, fast = draw(Text, x), draw(FastText, x)
        assert (plain[..., :3] < 250).any(), "nothing drawn"
        np.testing.assert_array_equal(fast, plain)


@pytest.mark.parametrize("make", [
    lambda: AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]]),
    lambda: SelfAttentionExplorer(np.random.default_rng(0).normal(0, 1, (8, 2)), labels=TOKENS),
    lambda: SelfAttentionExplorer(np.random.default_rng(0).normal(0, 1, (4, 5))),
], ids=["AttentionExplorer", "SelfAttentionExplorer", "SelfAttentionExplorer-5d"])
@pytest.mark.slow
def test_a_temperature_title_that_grows_but_fits_is_not_a_new_layout(make):
    """Issue 23: the first temperature step (1.00 -> 1.12) made the title longer and laid the
    figure out again, 340 ms in-process; a moving title that fits over its panel needs no layout."""
    ex = make()
    full = ex.live.full_renders
    for t in (1.12, 10.0, 0.1, 1.0, 2.5):
        ex.controls["temperature"].value = t
    assert ex.live.full_renders == full  # no new layout, no new background

    def laid_out(explorer):
        explorer.live.relayout()
        explorer.live.render()
        return np.array([ax.get_position().bounds for ax in explorer.figure.get_axes()])

    # a new layout with the longest title places the panels where one with the first title does
    ex.controls["temperature"].value = 10.0
    r = ex.figure.canvas.get_renderer()
    gap = (laid_out(ex) - laid_out(make())) * np.array([r.width, r.height, r.width, r.height])
    assert np.abs(gap).max() < 1.0


def test_a_moving_title_lays_out_again_only_when_it_stops_fitting_or_gains_a_line():
    from attention_kit.widgets import base  # white-box: the rule inside Explorer

    assert not base._needs_layout(("lines", 1), ("lines", 1))
    assert base._needs_layout(("lines", 2), ("lines", 1))  # a taller title
    assert base._needs_layout("a title wider than its panel", ("lines", 1))
    assert not base._needs_layout(("lines", 1), "a title wider than its panel")  # narrower again
    assert base._needs_layout("a static title, longer", "a static title")
    assert not base._needs_layout("a static title!", "a static title")
    ex = SelfAttentionExplorer(np.random.default_rng(0).normal(0, 1, (3, 2)))
    ex.live.set_dynamic(list(ex.live.dynamic))  # (keeps the titles moving)
    ax = ex._hm_w.ax
    assert ex._layout_title(ax) == ("lines", 1)
    ax.set_title("a title far wider than its panel " * 4)
    assert ex._layout_title(ax) == ax.get_title()


def test_steady_scores_scale_keeps_the_colour_bar_while_the_scores_fit():
    from attention_kit.plotting import heatmap, update_heatmap

    fig = Figure()
    FigureCanvasAgg(fig)
    hm = heatmap(np.array([[1.8, -0.5], [0.2, 0.4]]), ax=fig.add_subplot(), kind="scores")
    assert hm.image.get_clim() == (-2.0, 2.0)
    update_heatmap(hm, np.array([[0.9, 0.1], [0.2, 0.4]]), steady=True)
    assert hm.image.get_clim() == (-2.0, 2.0)  # fits, and fills more than a third: kept
    update_heatmap(hm, np.array([[0.9, 0.1], [0.2, 0.4]]))
    assert hm.image.get_clim() == (-1.0, 1.0)  # without steady: the round limit of the scores
    update_heatmap(hm, np.array([[2.5, 0.1], [0.2, 0.4]]), steady=True)
    assert hm.image.get_clim() == (-3.0, 3.0)  # does not fit: grows
    update_heatmap(hm, np.array([[0.2, 0.1], [0.2, 0.4]]), steady=True)
    assert hm.image.get_clim() == (-0.4, 0.4)  # far too wide: shrinks


def test_self_attention_explorer_first_picture_has_the_round_scale_and_steps_keep_it():
    X = np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]])
    ex = SelfAttentionExplorer(X)
    assert ex._hm_dots.image.get_clim() == (-0.8, 0.8)  # the stored picture: max |x_i . x_j| = 0.64
    full = ex.live.full_renders
    ex.editor.set_text("x1", "0.2, 0.5")  # max 0.64 still: nothing but the cells moves
    ex.editor.set_text("x1", "0.1, 0.6")
    assert ex._hm_dots.image.get_clim() == (-0.8, 0.8)
    assert ex.live.full_renders == full


def test_mask_explorer_mask_and_positions_changes_redraw_only_the_moving_artists():
    """Issue 23: the titles name the mask and the edited token; as moving artists, a new mask or
    the positions box no longer redraw the whole background (90 - 110 ms in-process each)."""
    ex = MaskExplorer(PADDED, mask="causal", token=2, nudge=1.0)
    full = ex.live.full_renders
    for mask in ("causal + padding", "padding", "causal"):
        ex.controls["mask"].value = mask
    for positions in (True, False):
        ex.controls["positions"].value = positions
    assert ex.live.full_renders <= full + 1  # (was 5: a new title; left: a new bar scale)
    ex.controls["mask"].value = "local window"
    ex.controls["positions"].value = True
    assert "local window + positions" in ex._hm.ax.get_title()
    fast = pixels(ex.live.value)
    ex.live.invalidate()
    np.testing.assert_array_equal(fast, pixels(ex.live.render()))  # same as a full redraw
    titles = [op[3] for op in json.loads(ex.live.ops)["ops"] if op[0] == "t"]
    assert "weights, mask: local window + positions" in titles


def test_mask_explorer_window_and_padding_sliders_act_only_with_their_mask():
    """Issue 23: 'real tokens' and 'D (window)' showed no change when pressed: they are disabled
    (greyed) unless the mask uses them, and then they change the picture."""
    ex = MaskExplorer(PADDED, mask="causal", token=2, nudge=1.0)
    assert ex.controls["n_real"].disabled and ex.controls["D"].disabled
    ex.controls["mask"].value = "causal + padding"
    assert not ex.controls["n_real"].disabled and ex.controls["D"].disabled
    before = ex.state["weights"].copy()
    ex.controls["n_real"].value = 4
    assert not np.allclose(before, ex.state["weights"])
    ex.controls["mask"].value = "local window"
    assert ex.controls["n_real"].disabled and not ex.controls["D"].disabled
    before = ex.state["weights"].copy()
    ex.controls["D"].value = 2
    assert not np.allclose(before, ex.state["weights"])


def test_a_line_of_markers_is_one_op():
    from attention_kit.widgets.rope import RopeExplorer

    ex = RopeExplorer()
    ops = json.loads(ex.live.ops)["ops"]
    markers = [op for op in ops if op[0] == "m"]
    trail = len(ex._trail.get_xdata())  # the key at every position 0 .. 64
    # the trail, the query's and the key's tips and the curve's dot: four lines of markers, four ops
    assert trail == 65 and sorted(len(op[3]) // 2 for op in markers) == [1, 1, 1, trail]


def test_tiling_stepper_row_and_query_changes_keep_the_background():
    """Issue 36: following another row (or editing its query) changed the y ranges of the line and
    bar panels: a whole new background, 182 ms to the picture in JupyterLab. Those y axes and the
    bars' zero line are now moving artists: the background stays, the pixels are a full redraw's."""
    ex = TilingStepper(row=5, step=6)
    full = ex.live.full_renders
    ranges = set()
    for row in (0, 7, 3, 11, 5):
        ex.controls["row"].value = row
        ranges.add((ex._ax_m.get_ylim(), ex._ax_o.get_ylim()))
        fast = pixels(ex.live.value)
        ex.live.invalidate()
        ex.live.full_renders -= 1  # (the redraw forced here)
        np.testing.assert_array_equal(fast, pixels(ex.live.render()))  # same as a full redraw
    ex.editor.set_text("q", ", ".join(["2.5"] * len(ex.editor.values["q"])))
    ranges.add((ex._ax_m.get_ylim(), ex._ax_o.get_ylim()))
    fast = pixels(ex.live.value)
    ex.live.invalidate()
    ex.live.full_renders -= 1
    np.testing.assert_array_equal(fast, pixels(ex.live.render()))
    assert len(ranges) > 1  # the ranges did move...
    assert ex.live.full_renders == full  # ...and no change redrew the background
