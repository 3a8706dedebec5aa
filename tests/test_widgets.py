"""Widgets driven without a browser: callbacks are called directly, results are checked against
attention_kit and against plain numpy written out here."""

import base64
import html
import io
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402
from test_parse_vector import BAD  # noqa: E402

import attention_kit as ak  # noqa: E402
from attention_kit.widgets import (  # noqa: E402
    AttentionExplorer,
    LiveFigure,
    MaskExplorer,
    MultiHeadExplorer,
    SelfAttentionExplorer,
    TilingStepper,
    VectorEditor,
    encode_png,
)

X3 = np.array([[0.1, 0.5],   # x1
               [0.3, 0.4],   # x2
               [0.8, 0.0]])  # x3
TOKENS = "the cat sat on the mat and purred".split()


def np_softmax(e):
    z = np.exp(e - e.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def png_pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def assert_not_blank(png: bytes):
    px = png_pixels(png)
    assert px.shape[0] > 200 and px.shape[1] > 300
    assert px.std() > 20, "figure looks blank"
    # a fair share of the picture is not background white
    assert (px.sum(axis=-1) < 700).mean() > 0.05


# ---------------------------------------------------------------------------------------------
# VectorEditor
# ---------------------------------------------------------------------------------------------


def make_editor():
    ed = VectorEditor({"q": [0.1, 0.5], "k1": [1.0, 0.0]})
    calls = []
    ed.on_change(lambda e: calls.append(e.values))
    return ed, calls


@pytest.mark.parametrize("text, fragment", BAD)
def test_editor_bad_text_keeps_last_good_vector(text, fragment):
    ed, calls = make_editor()
    assert ed.set_text("q", "0.3, -0.2")
    before = ed.values
    ok = ed.set_text("q", text)
    assert ok is False
    assert fragment in ed.message("q")
    assert "kept 0.3, -0.2" in ed.message("q")
    assert ed.message("k1") == ""
    np.testing.assert_array_equal(ed.values["q"], before["q"])
    np.testing.assert_array_equal(ed.slider_values("q"), [0.3, -0.2])
    np.testing.assert_array_equal(ed.values["k1"], before["k1"])
    assert len(calls) == 1, "only the valid change notified listeners"


def test_editor_good_text_syncs_sliders_and_clears_message():
    ed, calls = make_editor()
    assert ed._msgs["q"].layout.display == "none"  # an empty message takes no room
    assert not ed.set_text("q", "nan, 1")
    assert ed._msgs["q"].layout.display is None
    assert ed.set_text("q", "[0.25 -1e-1]")
    assert ed.message("q") == ""
    assert ed._msgs["q"].layout.display == "none"
    np.testing.assert_array_equal(ed.values["q"], [0.25, -0.1])
    np.testing.assert_array_equal(ed.slider_values("q"), [0.25, -0.1])
    assert ed.text("q") == "0.25, -0.1"
    assert len(calls) == 1
    np.testing.assert_array_equal(ed.matrix(), [[0.25, -0.1], [1.0, 0.0]])
    np.testing.assert_array_equal(ed.matrix(["k1"]), [[1.0, 0.0]])


def test_editor_slider_moves_text_and_values():
    ed, calls = make_editor()
    ed.set_component("k1", 1, 0.75)
    assert ed.text("k1") == "1, 0.75"
    np.testing.assert_array_equal(ed.values["k1"], [1.0, 0.75])
    assert len(calls) == 1
    # a typed value beyond the slider range widens that slider instead of being clipped
    assert ed.set_text("k1", "5, -3")
    np.testing.assert_array_equal(ed.slider_values("k1"), [5.0, -3.0])
    # the sliders themselves (a benchmark moves them): a copy of the list, the editor's own widgets
    sliders = ed.sliders("k1")
    assert [s.value for s in sliders] == [5.0, -3.0]
    sliders[0].value = 1.5
    np.testing.assert_array_equal(ed.values["k1"], [1.5, -3.0])
    sliders.clear()
    assert len(ed.sliders("k1")) == 2


def test_editor_listener_error_is_shown_not_raised():
    ed = VectorEditor({"x": [0.0, 0.0]})

    def bad(_):
        raise RuntimeError("listener broke")

    ed.on_change(bad)
    assert ed.set_text("x", "1, 1")
    assert "listener broke" in ed.error.value


def test_editor_unknown_name():
    ed, _ = make_editor()
    with pytest.raises(KeyError, match="no vector named 'z'"):
        ed.set_text("z", "1, 2")


# ---------------------------------------------------------------------------------------------
# AttentionExplorer
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_attention_explorer_weights_follow_the_vectors():
    ex = AttentionExplorer([1.0, 0.2], [[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]])
    assert ex.message == ""
    assert ex.editor.set_text("q", "0.2, 1.5")
    q = np.array([0.2, 1.5])
    K = np.array([[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]])
    e = np.array([q @ k for k in K])  # plain loop: dot scores
    a = np_softmax(e)
    np.testing.assert_allclose(ex.state["scores"], e)
    np.testing.assert_allclose(ex.state["weights"], a)
    np.testing.assert_allclose(ex.state["context"], a @ K)
    np.testing.assert_allclose([b.get_height() for b in ex._bars_w], a)
    assert [t.get_text() for t in ex._txt_w] == [f"{x:.2f}" for x in a]
    # the context arrow points at c
    np.testing.assert_allclose(ex._arr_c.arrows[0]._posA_posB[1], a @ K)


def test_attention_explorer_every_score_and_alignment():
    ex = AttentionExplorer([1.0, 0.2], [[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]], V=[[1, 0], [0, 1], [1, 1]])
    V = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)
    cases = [(name, "soft") for name in ak.SCORES] + [("additive", al) for al in ak.ALIGNMENTS]
    for name, al in cases:
        ex.controls["score"].value = name
        ex.controls["align"].value = al
        if True:
            assert ex.message == "", (name, al, ex.message)
            ref_c, ref_a, ref_e = ak.general_attention(
                [1.0, 0.2], [[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]], V, score=name, align=al,
                score_params=ak.default_score_params(name, 2, 2, rng=np.random.default_rng(0)),
                align_params={"p": 1.0, "D": 1} if al == "local" else {}, return_scores=True)
            np.testing.assert_allclose(ex.state["weights"], ref_a)
            np.testing.assert_allclose(ex.state["context"], ref_c)
    ex.controls["align"].value = "local"
    assert not ex.controls["D"].disabled
    ex.controls["align"].value = "soft"
    assert ex.controls["D"].disabled


def test_hold_redraws_once():
    ex = AttentionExplorer([1.0, 0.2], [[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]])
    renders = ex.live.renders
    with ex.hold():
        ex.controls["score"].value = "scaled_dot"
        ex.controls["temperature"].value = 0.5
        ex.editor.set_text("q", "2, 0")
    assert ex.live.renders == renders + 1
    e = np.array([1.0, 2.0, -1.0]) / np.sqrt(2)
    np.testing.assert_allclose(ex.state["weights"], np_softmax(e / 0.5))


def test_attention_explorer_temperature_and_local_window():
    ex = AttentionExplorer([1.0, 0.0], [[1, 0], [0, 1], [-1, 0]], align="local", D=1, p=0.0)
    e = np.array([1.0, 0.0, -1.0])
    inside = np_softmax(e[:2])  # keys 0 and 1 lie in the window [p - D, p + D] = [-1, 1]
    gauss = np.exp(-(np.arange(2) - 0.0) ** 2 / (2 * 0.5 ** 2))
    np.testing.assert_allclose(ex.state["weights"], [*(inside * gauss), 0.0])
    ex.controls["align"].value = "soft"
    ex.controls["temperature"].value = 10.0
    np.testing.assert_allclose(ex.state["weights"], np_softmax(e / 10.0))


def test_explorer_error_is_shown_and_state_kept():
    ex = AttentionExplorer([1.0, 0.2], [[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]])
    # q . k1 overflows to inf: attention_kit refuses it; the explorer shows why
    assert ex.editor.set_text("q", "1e200, 1e200")
    assert ex.message == ""
    before = {k: v.copy() for k, v in ex.state.items()}
    png_before = ex.live.value
    assert ex.editor.set_text("k1", "1e200, 1e200")
    assert "inf" in ex.message
    assert ex.message.startswith("⚠")
    for k, v in before.items():
        np.testing.assert_array_equal(ex.state[k], v)
    assert ex.live.value == png_before
    # recovering clears the message
    assert ex.editor.set_text("k1", "0.5, 0.5")
    assert ex.editor.set_text("q", "1, 0.2")
    assert ex.message == ""
    np.testing.assert_allclose(ex.state["weights"], np_softmax(np.array([0.6, 1.0, -0.3])))


def test_update_never_raises(monkeypatch):
    ex = SelfAttentionExplorer(X3)

    def broken(*a, **k):
        raise ZeroDivisionError("something deep broke")

    monkeypatch.setattr(ex, "_compute", broken)
    assert ex.update() is False
    assert "something deep broke" in ex.message
    ex.controls["scale"].value = False  # a control change takes the same path
    assert "something deep broke" in ex.message


# ---------------------------------------------------------------------------------------------
# SelfAttentionExplorer
# ---------------------------------------------------------------------------------------------


def test_self_attention_explorer_heatmaps_equal_attention_kit():
    ex = SelfAttentionExplorer(X3)
    I = np.eye(2)
    _, W0 = ak.self_attention(X3, I, I, I)
    np.testing.assert_allclose(ex._hm_w.image.get_array(), W0)
    assert ex.editor.set_text("x2", "-0.4, 0.9")
    X = X3.copy()
    X[1] = [-0.4, 0.9]
    out, W = ak.self_attention(X, I, I, I)
    np.testing.assert_allclose(ex.state["weights"], W)
    np.testing.assert_allclose(ex._hm_w.image.get_array(), W)
    np.testing.assert_allclose(ex._hm_dots.image.get_array(), X @ X.T)
    np.testing.assert_allclose(ex.state["outputs"], out)
    np.testing.assert_allclose(W, np_softmax(X @ X.T / np.sqrt(2)))
    assert ex._hm_w.texts[1, 0].get_text() == f"{W[1, 0]:.2f}"
    # unscaled
    ex.controls["scale"].value = False
    np.testing.assert_allclose(ex._hm_w.image.get_array(), np_softmax(X @ X.T))
    assert "√d_k" not in ex._hm_w.ax.get_title()


def test_self_attention_explorer_learned_projections():
    ex = SelfAttentionExplorer(X3, learned=True, seed=3)
    rng = np.random.default_rng(3)
    W = rng.normal(0, 1 / np.sqrt(2), (3, 2, 2))
    out, weights = ak.self_attention(X3, W[0], W[1], W[2])
    np.testing.assert_allclose(ex.state["weights"], weights)
    np.testing.assert_allclose(ex.state["outputs"], out)
    ex.controls["seed"].value = 4
    assert not np.allclose(ex.state["weights"], weights)


def test_updates_reuse_the_figure_and_artists():
    ex = SelfAttentionExplorer(X3)
    fig, image, n_children = ex.figure, ex._hm_w.image, len(ex._hm_w.ax.get_children())
    text = ex._hm_w.texts[0, 0]
    full = ex.live.full_renders
    for v in (0.12, 0.15, 0.2, 0.25):
        ex.editor.set_component("x1", 0, v)
    assert ex.figure is fig and ex._hm_w.image is image and ex._hm_w.texts[0, 0] is text
    assert len(ex._hm_w.ax.get_children()) == n_children
    assert ex.live.renders >= 5
    assert ex.live.full_renders - full <= 1, "small moves redraw only the changing artists"


def test_incremental_render_matches_a_full_render():
    ex = SelfAttentionExplorer(X3)
    ex.editor.set_component("x1", 1, 0.3)
    fast = png_pixels(ex.live.value)
    ex.live.invalidate()
    full = png_pixels(ex.live.render())
    assert fast.shape == full.shape
    differ = (np.abs(fast - full).sum(axis=-1) > 30).mean()
    assert differ < 0.002, f"{differ:.4f} of the pixels differ"


# ---------------------------------------------------------------------------------------------
# MultiHeadExplorer
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_multi_head_explorer_follows_sliders_and_heads():
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (8, 8))
    ex = MultiHeadExplorer(X, TOKENS, n_heads=2, seed=1, token=2)
    assert ex.controls["n_heads"].options == (1, 2, 4, 8)
    ex.controls["dim3"].value = 1.25
    X1 = X.copy()
    X1[2, 3] = 1.25
    params = ak.init_multi_head(8, 2, rng=np.random.default_rng(1))
    out, w = ak.multi_head_attention(X1, X1, params)
    out0, _ = ak.multi_head_attention(X, X, params)
    np.testing.assert_allclose(ex.state["weights"], w)
    np.testing.assert_allclose(ex.state["output"], out)
    np.testing.assert_allclose(ex.state["output_initial"], out0)
    for h in range(2):
        np.testing.assert_allclose(ex._hms[h].image.get_array(), w[h])
    np.testing.assert_allclose([b.get_width() for b in ex._bars1], out[2])
    # several slider moves under hold(): all recorded, one redraw
    renders = ex.live.renders
    with ex.hold():
        ex.controls["dim0"].value = -1.0
        ex.controls["dim1"].value = 0.5
    assert ex.live.renders == renders + 1
    X1[2, :2] = [-1.0, 0.5]
    np.testing.assert_allclose(ex.state["weights"], ak.multi_head_attention(X1, X1, params)[1])
    out = ak.multi_head_attention(X1, X1, params)[0]
    # switching the edited token loads its embedding into the sliders without changing X
    ex.controls["token"].value = 5
    assert ex.controls["dim3"].value == X[5, 3]
    np.testing.assert_allclose(ex.state["X"], X1)
    # more heads: a figure of its own, built once and shown in the same live figure
    fig, before = ex.figure, ex.png()
    ex.controls["n_heads"].value = 8
    assert ex.figure is not fig and ex.live.figure is ex.figure and len(ex._hms) == 8
    assert ex.state["weights"].shape == (8, 8, 8)
    assert_not_blank(ex.png())
    # back to 2 heads: the first figure again, its layout and background kept (no full render),
    # its artists showing the current weights; and 8 again, the same way
    full, eight = ex.live.full_renders, ex.figure
    ex.controls["n_heads"].value = 2
    assert ex.figure is fig and ex.live.figure is fig and len(ex._hms) == 2
    assert ex.live.full_renders == full and ex.png() == before  # the same picture as before
    for h in range(2):
        np.testing.assert_allclose(ex._hms[h].image.get_array(), ex.state["weights"][h])
    np.testing.assert_allclose([b.get_width() for b in ex._bars1], ex.state["output"][5])
    ex.controls["n_heads"].value = 8
    assert ex.figure is eight and len(ex._hms) == 8 and ex.live.full_renders == full
    np.testing.assert_allclose(ex._hms[7].image.get_array(), ex.state["weights"][7])
    data = ex._repr_mimebundle_()
    assert data["text/plain"] == "MultiHeadExplorer (interactive: run in JupyterLab to use the controls)"
    assert_not_blank(still_png(data))
    ex.reset()
    np.testing.assert_allclose(ex.state["output"], ex.state["output_initial"])


def test_a_still_that_cannot_be_drawn_is_said_not_swallowed(monkeypatch):
    """Where the still picture fails (matplotlib 3.8-3.10 once did), the widget says so: a silent
    fallback had hidden that every explorer lost its text alternative on the lowest versions."""
    ex = MultiHeadExplorer(np.ones((3, 6)), ["a", "b", "c"], n_heads=1)
    monkeypatch.setattr(ex, "png", lambda: 1 / 0)
    with pytest.warns(RuntimeWarning, match=r"MultiHeadExplorer: its still picture .* \(ZeroDivisionError"):
        data = ex._repr_mimebundle_()
    assert "text/html" not in data and data["text/plain"].startswith("MultiHeadExplorer")


def test_multi_head_explorer_head_choices_divide_d_model():
    ex = MultiHeadExplorer(np.ones((3, 6)), ["a", "b", "c"], n_heads=1)
    assert ex.controls["n_heads"].options == (1, 2)
    with pytest.raises(ValueError, match="must be one of"):
        MultiHeadExplorer(np.ones((3, 6)), ["a", "b", "c"], n_heads=4)


# ---------------------------------------------------------------------------------------------
# Static fallback, PNGs
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_explorers():
    rng = np.random.default_rng(0)
    return [
        AttentionExplorer([1.0, 0.2], [[0.5, 0.5], [1.0, 0.0], [-0.5, 1.0]]),
        SelfAttentionExplorer(rng.normal(0, 1, (8, 2)), labels=TOKENS),
        MultiHeadExplorer(rng.normal(0, 1, (8, 8)), TOKENS, n_heads=4),
        MaskExplorer(PADDED, mask="causal + padding", token=2),
        TilingStepper(causal=True, step=7),
    ]


@pytest.mark.slow
@pytest.mark.slow
def test_every_explorer_renders_a_non_blank_png(all_explorers):
    for ex in all_explorers:
        assert ex.message == ""
        assert_not_blank(ex.png())
        assert_not_blank(ex.live.value)


def still_png(data: dict) -> bytes:
    """The PNG of an explorer's still picture (its ``text/html``: an ``<img>`` with an alt)."""
    m = re.search(r'<img src="data:image/png;base64,([^"]+)"', data["text/html"])
    assert m, "the still picture is not an <img> with a PNG"
    return base64.b64decode(m.group(1))


@pytest.mark.slow
def test_mimebundle_has_widget_still_picture_with_alt_and_fixed_text(all_explorers):
    """Where no kernel runs (GitHub, nbviewer), the explorer is a still picture whose alt says
    what it shows (issue 34): the figure's own description, after a word that it is a still."""
    from attention_kit.plotting.describe import describe_figure

    for ex in all_explorers:
        data = ex._repr_mimebundle_()
        name = type(ex).__name__
        assert data["text/plain"] == f"{name} (interactive: run in JupyterLab to use the controls)"
        assert "application/vnd.jupyter.widget-view+json" in data
        assert set(data) == {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"}
        assert_not_blank(still_png(data))
        alt = html.unescape(re.search(r'alt="([^"]*)"', data["text/html"]).group(1))
        assert alt.startswith(ex.STILL)
        summary = describe_figure(ex.figure, tables=False).summary
        assert summary and summary in alt, (name, alt)
        assert "Describe this figure" in data["text/html"]


def test_figures_are_not_registered_with_pyplot():
    import matplotlib.pyplot as plt

    plt.close("all")
    SelfAttentionExplorer(X3)
    assert plt.get_fignums() == []


def test_live_figure_and_png_encoder_round_trip():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    live = LiveFigure(fig, dpi=50)
    live.refresh()
    px = png_pixels(live.value)
    assert px.shape == (100, 150, 3)
    rgba = np.asarray(fig.canvas.buffer_rgba())
    np.testing.assert_array_equal(png_pixels(encode_png(rgba)), rgba[..., :3])


# ---------------------------------------------------------------------------------------------
# MaskExplorer
# ---------------------------------------------------------------------------------------------

PADDED = ["the", "cat", "sat", "on", "the", "mat", "<pad>", "<pad>"]


def mask_reference(ex: MaskExplorer, mask):
    """Self-attention written with plain numpy: the same embeddings, projections and mask."""
    c = ex.controls
    X = ex.X0 + (ex.P if c["positions"].value else 0.0)
    X = X.copy()
    X[c["token"].value] += c["nudge"].value * ex.direction
    W_q, W_k, W_v = np.random.default_rng(c["seed"].value).normal(0, 1 / np.sqrt(ex.d), (3, ex.d, ex.d))
    S = (X @ W_q) @ (X @ W_k).T / np.sqrt(ex.d)
    S = np.where(mask, S, -np.inf)
    W = np_softmax(S)
    return W, W @ (X @ W_v)


def test_mask_explorer_weights_and_outputs_equal_a_plain_reference():
    n = len(PADDED)
    ex = MaskExplorer(PADDED, mask="none", token=2, seed=3)
    masks = {
        "none": np.ones((n, n), bool),
        "causal": np.tril(np.ones((n, n), bool)),
        "padding": np.broadcast_to(np.arange(n) < 6, (n, n)),
        "causal + padding": np.tril(np.ones((n, n), bool)) & (np.arange(n) < 6),
        "local window": np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= 1,
    }
    for kind, m in masks.items():
        with ex.hold():
            ex.controls["mask"].value = kind
            ex.controls["nudge"].value = 0.7
        assert ex.message == ""
        W, out = mask_reference(ex, m)
        np.testing.assert_allclose(ex.state["weights"], W, atol=1e-12)
        np.testing.assert_allclose(ex.state["output"], out, atol=1e-12)
        np.testing.assert_array_equal(ex.state["mask"], m)
        shown = ex._hm.image.get_array()
        np.testing.assert_allclose(np.ma.filled(shown, np.nan)[m], W[m])
        assert (np.ma.getmaskarray(shown) == ~m).all() if kind != "none" else not np.ma.getmaskarray(shown).any()
        assert ex.controls["n_real"].disabled == ("padding" not in kind)
        assert ex.controls["D"].disabled == (kind != "local window")


def test_mask_explorer_starts_nudged():
    ex = MaskExplorer(PADDED, mask="causal", token=1, nudge=1.0)
    assert ex.controls["nudge"].value == 1.0
    assert ex.state["change"][0] == 0 and np.all(ex.state["change"][1:] > 0)


def test_mask_explorer_causal_nudge_moves_only_later_rows():
    ex = MaskExplorer(PADDED, mask="causal", token=3)
    assert np.all(ex.state["change"] == 0)
    ex.controls["nudge"].value = 1.5
    ch = ex.state["change"]
    assert np.all(ch[:3] == 0) and np.all(ch[3:] > 1e-6)
    assert [t.get_text() for t in ex._bar_texts[:3]] == ["0", "0", "0"]
    np.testing.assert_allclose([b.get_width() for b in ex._bars], ch)


def test_mask_explorer_padding_hides_the_pads_and_real_tokens_set_it():
    ex = MaskExplorer(PADDED, mask="padding", token=7)
    assert ex.controls["n_real"].value == 6
    ex.controls["nudge"].value = -2.0
    ch = ex.state["change"]
    assert np.all(ch[:7] == 0) and ch[7] > 0  # only the pad's own (ignored) output row moves
    ex.controls["n_real"].value = 8  # now the last token counts: every row sees it
    assert np.all(ex.state["change"] > 0)


def test_mask_explorer_positions_tell_the_two_thes_apart():
    ex = MaskExplorer(PADDED, mask="none")
    w = ex.state["weights"]
    np.testing.assert_allclose(w[0], w[4])  # same word, same row: self-attention ignores order
    ex.controls["positions"].value = True
    w = ex.state["weights"]
    assert np.abs(w[0] - w[4]).max() > 0.01
    np.testing.assert_allclose(ex.state["X"], ex.X0 + ak.sinusoidal_positions(8, 8))


def test_mask_explorer_slider_moves_are_cheap():
    ex = MaskExplorer(PADDED, mask="causal", token=2)
    full = ex.live.full_renders
    for v in (0.1, 0.4, -0.3, 1.0):
        ex.controls["nudge"].value = v
    assert ex.live.full_renders - full <= 1, "a nudge redraws only the changing artists"


@pytest.mark.parametrize("kwargs, match", [
    ({"tokens": []}, "give 1 to 12"),
    ({"mask": "future"}, "is not one of"),
    ({"d_model": 7}, "must be an even whole number"),
    ({"n_real": 0}, "at least one real token"),
    ({"token": 9}, "must be between 0 and 7"),
    ({"nudge": 3}, "must be between -2 and 2"),
])
def test_mask_explorer_bad_arguments(kwargs, match):
    args = {"tokens": PADDED, **kwargs}
    with pytest.raises(ValueError, match=match):
        MaskExplorer(args.pop("tokens"), **args)


def test_self_attention_plane_fits_the_vectors_not_a_square_around_zero():
    """Issue 17: the toy vectors filled one corner of a [-1.25, 1.25] box and their labels overlapped."""
    from attention_kit.widgets import SelfAttentionExplorer

    X = np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]])
    ex = SelfAttentionExplorer(X, labels=["x1", "x2", "x3"])
    ax = ex._ax_p
    pts = np.vstack([np.zeros((1, 2)), ex.state["X"], ex.state["outputs"]])
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 <= pts[:, 0].min() and pts[:, 0].max() <= x1 and y0 <= pts[:, 1].min() and pts[:, 1].max() <= y1
    assert np.ptp(pts[:, 0]) > 0.5 * (x1 - x0) and np.ptp(pts[:, 1]) > 0.4 * (y1 - y0)
    ex.editor.set_text("x3", "3, 0")                 # a long vector: the box grows to hold it
    assert ax.get_xlim()[1] >= 3.0


def test_multi_head_explorer_sliders_show_feature_names():
    from attention_kit.widgets import MultiHeadExplorer

    X = np.eye(4)
    names = ["det", "noun", "pos0", "pos1"]
    ex = MultiHeadExplorer(X, ["a", "b", "c", "d"], n_heads=2, feature_names=names)
    assert [ex.controls[f"dim{j}"].description for j in range(4)] == names
    assert MultiHeadExplorer(X, list("abcd")).controls["dim3"].description == "dim 3"
    with pytest.raises(ValueError, match="feature_names has 3 names"):
        MultiHeadExplorer(X, list("abcd"), feature_names=names[:3])
