"""Heatmaps read like the printed matrix; updates happen in place; masked cells never look like 0."""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

import attention_kit as ak  # noqa: E402
from attention_kit.plotting import (  # noqa: E402
    head_grid,
    heatmap,
    plot_vectors,
    update_heatmap,
    update_vectors,
)

W3 = np.array([[0.7, 0.2, 0.1],
               [0.0, 1.0, 0.0],
               [1 / 3, 1 / 3, 1 / 3]])


def new_ax():
    fig = Figure(figsize=(4, 3), layout="constrained")
    return fig.add_subplot()


def pixels(fig) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=60)
    return np.asarray(Image.open(buf).convert("RGB"), dtype=float)


def test_rows_are_queries_and_columns_keys():
    ax = new_ax()
    art = heatmap(W3, query_labels=["a", "b", "c"], key_labels=["x", "y", "z"], ax=ax)
    np.testing.assert_array_equal(art.image.get_array(), W3)
    assert ax.get_xlabel() == "keys" and ax.get_ylabel() == "queries"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    # query 0 is drawn at the top
    bottom, top = ax.get_ylim()
    assert top < bottom
    # cell (0, 1) text sits in row 0, column 1
    assert art.texts.shape == (3, 3)
    assert art.texts[0, 1].get_position() == (1, 0)
    assert art.texts[0, 1].get_text() == "0.20"


def test_weights_scale_is_fixed_and_labelled():
    art = heatmap(W3 * 0.5, ax=new_ax())
    assert art.image.get_clim() == (0.0, 1.0)
    assert art.colorbar.ax.get_ylabel() == "attention weight"
    assert art.image.get_cmap().name.startswith("viridis")


def test_scores_get_a_symmetric_scale_and_diverging_map():
    S = np.array([[3.2, -1.0], [0.5, 0.0]])
    art = heatmap(S, kind="scores", ax=new_ax())
    lo, hi = art.image.get_clim()
    assert lo == -hi and hi >= 3.2
    assert art.colorbar.ax.get_ylabel() == "score"
    assert art.image.get_cmap().name.startswith("RdBu")
    update_heatmap(art, S * 10)
    assert art.image.get_clim()[1] >= 32


def test_text_contrasts_with_its_cell():
    art = heatmap(np.array([[0.0, 1.0]]), ax=new_ax())
    dark, light = art.texts[0]
    assert dark.get_color() == "white"  # viridis at 0 is dark purple
    assert light.get_color() == "black"  # viridis at 1 is yellow
    update_heatmap(art, np.array([[1.0, 0.0]]))
    assert art.texts[0, 0].get_color() == "black" and art.texts[0, 1].get_color() == "white"


def test_masked_cells_are_marked_not_zero():
    mask = ak.causal_mask(3)
    W = ak.softmax(np.zeros((3, 3)), mask=mask)
    art = heatmap(W, mask=mask, ax=new_ax())
    data = art.image.get_array()
    assert np.ma.is_masked(data) and data.mask[0, 1] and not data.mask[1, 0]
    assert art.texts[0, 2].get_text() == "—"
    assert art.texts[1, 0].get_text() == "0.50"
    assert art.mask_patch.get_hatch() == "///"
    # a true 0 (not masked) is written as 0.00
    art2 = heatmap(np.array([[1.0, 0.0]]), ax=new_ax())
    assert art2.texts[0, 1].get_text() == "0.00"


def test_masked_cells_look_different_from_zero_in_the_picture():
    fig = Figure(figsize=(2, 1), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    heatmap(np.array([[0.0, 0.0]]), mask=np.array([[True, False]]), ax=ax, cbar=False, annotate=False)
    ax.set_axis_off()
    px = pixels(fig)
    left, right = px[:, : px.shape[1] // 2], px[:, px.shape[1] // 2:]
    assert np.abs(left.mean(axis=(0, 1)) - right.mean(axis=(0, 1))).sum() > 100


def test_one_dimensional_input_is_one_query_row():
    art = heatmap([0.2, 0.8], ax=new_ax())
    assert art.image.get_array().shape == (1, 2)
    assert art.texts.shape == (1, 2)


def test_annotation_is_automatic_up_to_12():
    assert heatmap(np.full((12, 12), 1 / 12), ax=new_ax()).texts.shape == (12, 12)
    assert heatmap(np.full((13, 13), 1 / 13), ax=new_ax()).texts.size == 0
    assert heatmap(W3, ax=new_ax(), annotate=False).texts.size == 0


def test_update_is_in_place():
    ax = new_ax()
    art = heatmap(W3, ax=ax, title="weights")
    children = list(ax.get_children())
    texts = art.texts.copy()
    W = W3[::-1]
    update_heatmap(art, W)
    assert list(ax.get_children()) == children
    assert all(a is b for a, b in zip(art.texts.ravel(), texts.ravel(), strict=True))
    np.testing.assert_array_equal(art.image.get_array(), W)
    assert [t.get_text() for t in art.texts[0]] == ["0.33", "0.33", "0.33"]
    with pytest.raises(ValueError, match="draw a new heatmap"):
        update_heatmap(art, np.ones((2, 2)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        heatmap(W3, kind="probabilities", ax=new_ax())
    with pytest.raises(ValueError, match="key_labels has 2 entries"):
        heatmap(W3, key_labels=["a", "b"], ax=new_ax())
    with pytest.raises(TypeError, match="boolean"):
        heatmap(W3, mask=np.ones((3, 3)), ax=new_ax())


def test_head_grid_one_panel_per_head_one_colorbar():
    rng = np.random.default_rng(0)
    p = ak.init_multi_head(8, 8, rng=rng)
    X = rng.normal(size=(5, 8))
    _, w = ak.multi_head_attention(X, X, p)  # (8, 5, 5)
    fig = Figure(figsize=(10, 5), layout="constrained")
    fig, axes, arts = head_grid(w, query_labels=list("abcde"), key_labels=list("abcde"), fig=fig)
    assert len(axes) == 8 and len(arts) == 8
    for h in range(8):
        np.testing.assert_allclose(arts[h].image.get_array(), w[h])
        assert axes[h].get_title() == f"head {h + 1}"
    colorbars = [a for a in fig.get_axes() if hasattr(a, "_colorbar")]
    assert len(colorbars) == 1
    assert arts[0].colorbar.ax.get_ylabel() == "attention weight"
    # shared labels, once
    assert fig._supxlabel.get_text() == "keys" and fig._supylabel.get_text() == "queries"
    assert all(ax.get_xlabel() == "" for ax in axes)
    assert pixels(fig).std() > 20


def test_head_grid_with_pyplot_and_titles():
    w = np.full((2, 3, 3), 1 / 3)
    fig, axes, arts = head_grid(w, titles=["previous token", "first token"])
    try:
        assert [ax.get_title() for ax in axes] == ["previous token", "first token"]
        assert arts[0].texts.shape == (3, 3)
    finally:
        plt.close(fig)


def test_plot_vectors_and_update():
    ax = new_ax()
    arts = plot_vectors(ax, [[1.0, 0.5], [-0.5, 1.0]], labels=["x1", "x2"])
    assert len(arts) == 4 and len(arts.arrows) == 2
    assert [t.get_text() for t in arts.labels] == ["x1", "x2"]
    np.testing.assert_allclose(arts.arrows[0]._posA_posB, [(0, 0), (1.0, 0.5)])
    update_vectors(arts, [[0.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(arts.arrows[1]._posA_posB, [(0, 0), (1.0, 1.0)])
    # the label moved beyond the new tip
    x, y = arts.labels[0].get_position()
    assert abs(x) < 1e-9 and y > 1.0
    with pytest.raises(ValueError, match="got 3 vectors"):
        update_vectors(arts, np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\(m, 2\)"):
        plot_vectors(ax, np.ones((2, 3)))


def test_plot_vectors_with_origin():
    ax = new_ax()
    arts = plot_vectors(ax, [[1.0, 1.0]], origin=[0.5, -0.5], color="black")
    np.testing.assert_allclose(arts.arrows[0]._posA_posB, [(0.5, -0.5), (1.5, 0.5)])


@pytest.mark.slow
def test_imports_are_pure_and_change_no_rcparams():
    """``import attention_kit`` pulls in neither matplotlib nor ipywidgets, and importing the
    plotting and widget modules leaves matplotlib's global rcParams alone."""
    import subprocess
    import sys

    code = ("import sys, attention_kit; "
            "print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules)); "
            "import matplotlib as mpl; before = dict(mpl.rcParams); "
            "import attention_kit.plotting, attention_kit.widgets; "
            "print(sorted(k for k in before if mpl.rcParams[k] != before[k]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "[]"]


def test_cached_text_matches_plain_text_rendering():
    """FastText's cached bitmaps draw the same digits, in the same place, as matplotlib's Text."""
    from attention_kit.plotting.fast_artists import FastText

    def render(cls):
        fig = Figure(figsize=(1.2, 0.6), dpi=100)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        t = cls(0.5, 0.5, "0.37", ha="center", va="center", fontsize=14)
        t.set_transform(ax.transAxes)
        ax.add_artist(t)
        return pixels(fig).mean(axis=-1)

    fast, plain = render(FastText), render(matplotlib.text.Text)
    ink_fast, ink_plain = fast < 128, plain < 128
    assert ink_fast.sum() > 20
    assert abs(int(ink_fast.sum()) - int(ink_plain.sum())) < 0.2 * ink_plain.sum()
    cy_f, cx_f = np.argwhere(ink_fast).mean(axis=0)
    cy_p, cx_p = np.argwhere(ink_plain).mean(axis=0)
    assert abs(cx_f - cx_p) <= 2 and abs(cy_f - cy_p) <= 2


def _other_layout_form(info):
    """``Text._get_layout``'s lines in matplotlib's other form: ``(line, (w, h), x, y)`` up to 3.10,
    ``(line, (w, ascent, descent), (x, y))`` from 3.11."""
    if len(info[0]) == 4:
        return [(line, (w, h, 0.0), (x, y)) for line, (w, h), x, y in info]
    return [(line, (w, a + d), x, y) for line, (w, a, d), (x, y) in info]


@pytest.mark.parametrize("layout", ["as this matplotlib gives it", "in the other form"])
def test_aligned_fast_text_draws_where_text_draws(monkeypatch, layout):
    """FastText aligned other than centre-centre (labels at arrow tips and bars) reuses the line's
    offset from Text's layout, whichever form of it this matplotlib returns (3.8-3.10 or 3.11+): the
    same pixels as matplotlib's Text. (Read as 3.11's form, 3.8's raised in every explorer's still
    picture, which then went without its text alternative.)"""
    from attention_kit.plotting import fast_artists
    from attention_kit.plotting.fast_artists import FastText

    monkeypatch.setattr(fast_artists, "_OFFSETS", {})  # no offset cached by an earlier test
    if layout == "in the other form":
        native = matplotlib.text.Text._get_layout

        def converted(self, renderer):
            bbox, info, rest = native(self, renderer)
            return bbox, _other_layout_form(info), rest

        monkeypatch.setattr(FastText, "_get_layout", converted)

    def render(cls):
        fig = Figure(figsize=(1.6, 0.8), dpi=100)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        for x, ha, va in ((0.05, "left", "bottom"), (0.95, "right", "top")):
            t = cls(x, 0.5, "k2 0.37", ha=ha, va=va, fontsize=12)
            t.set_transform(ax.transAxes)
            ax.add_artist(t)
        return pixels(fig)

    fast, plain = render(FastText), render(matplotlib.text.Text)
    assert (plain.mean(axis=-1) < 128).sum() > 40  # the labels have ink
    assert np.array_equal(fast, plain)


@pytest.mark.slow
def test_cell_image_draws_what_axes_image_draws(monkeypatch):
    """CellImage's fast scale-up gives the picture of matplotlib's own resampler (cell edges may
    move by a pixel, under the white grid lines)."""
    from matplotlib.image import AxesImage

    from attention_kit.plotting.fast_artists import CellImage

    def render(W, mask=None, kind="weights"):
        fig = Figure(figsize=(4, 3), dpi=72, layout="constrained")
        heatmap(W, ax=fig.add_subplot(), mask=mask, kind=kind, annotate=False)
        return pixels(fig)

    rng = np.random.default_rng(0)
    cases = [(rng.random((8, 8)), None, "weights"), (rng.random((3, 5)), ak.causal_mask(3, 5), "weights"),
             (rng.normal(size=(4, 4)), None, "scores")]
    fast = [render(*c) for c in cases]
    monkeypatch.setattr(CellImage, "make_image", AxesImage.make_image)
    slow = [render(*c) for c in cases]
    for a, b in zip(fast, slow, strict=True):
        assert (np.abs(a - b).sum(axis=-1) > 30).mean() < 0.01
