"""Notebooks 01-07: heatmaps of attention weights, one or one per head.

:func:`heatmap` draws on an ``Axes`` you give it (or makes one) and returns its artists;
:func:`update_heatmap` changes their data, colours and texts in place (the widgets redraw a reused
figure this way); :func:`head_grid` draws one heatmap per head with a shared colour bar.

A weights matrix has shape ``(n_q, n_k)`` and is drawn like the printed matrix: query ``i`` is row
``i`` from the top, key ``j`` is column ``j`` from the left. Masks are boolean and True means "may
attend"; a masked cell is drawn hatched grey and marked "—", so it can never be read as a weight of 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import Colormap, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..i18n import _
from .colours import SCORES_CMAP, WEIGHTS_CMAP
from .fast_artists import CellImage, FastText, TextBatch

__all__ = ["HeatmapArtists", "heatmap", "update_heatmap", "head_grid"]

MASKED_TEXT = "—"
MAX_ANNOTATED = 12  # annotate cells automatically up to 12 x 12


@dataclass
class HeatmapArtists:
    """The artists of one heatmap, as returned by :func:`heatmap`.

    Attributes
    ----------
    image : matplotlib.image.AxesImage
        The cells; ``image.get_array()`` is the (masked) data, shape ``(n_q, n_k)``.
    texts : ndarray of Text, shape (n_q, n_k), or shape (0, 0) when not annotated
        The value written in each cell.
    colorbar : matplotlib.colorbar.Colorbar or None
    ax : matplotlib.axes.Axes
    kind : {"weights", "scores"}
    fmt : str
        Format of the cell values, e.g. ``"{:.2f}"``.
    """

    image: Any
    texts: np.ndarray
    colorbar: Any
    ax: Axes
    kind: str = "weights"
    fmt: str = "{:.2f}"
    mask_patch: Any = None
    grid: Any = None
    text_batch: Any = None
    query_labels: Any = None
    key_labels: Any = None
    _strings: list = field(default_factory=list, repr=False)
    _dark: np.ndarray | None = field(default=None, repr=False)


def _as_matrix(weights, name: str = "weights") -> np.ndarray:
    a = np.asarray(weights, dtype=float)
    if a.ndim == 1:
        a = a[None, :]  # (1, n_k): a single query row
    if a.ndim != 2 or a.size == 0:
        raise ValueError(
            f"{name} has shape {np.shape(weights)} but (n_q, n_k) or (n_k,) was expected "
            "(rows are queries, columns are keys)"
        )
    return a


def _as_mask(mask, shape: tuple) -> np.ndarray | None:
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"mask must be boolean (True = may attend), got dtype {m.dtype}")
    if m.ndim == 1 and shape[0] == 1:
        m = m[None, :]
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(f"mask has shape {m.shape} but must broadcast to {shape} (n_q, n_k)") from None


def _fontsize(n_q: int, n_k: int) -> float:
    n = max(n_q, n_k)
    return 11.0 if n <= 4 else 9.0 if n <= 6 else 8.0 if n <= 9 else 6.5


def _scores_limit(a: np.ndarray, m: np.ndarray | None) -> float:
    """A round symmetric limit >= max |score| (1, 2, 2.5, 5 times a power of ten): it changes only
    in steps, so a live colorbar does not jitter."""
    vals = a if m is None else a[m]
    vals = vals[np.isfinite(vals)]
    lim = float(np.max(np.abs(vals))) if vals.size else 1.0
    if not lim > 0:
        return 1.0
    p = 10.0 ** np.floor(np.log10(lim))
    for step in (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if lim <= step * p * (1 + 1e-9):
            return float(step * p)
    return float(10 * p)


#: WCAG's relative luminance below which white text has more contrast than black (both >= 4.58:1)
WHITE_TEXT_BELOW = 0.1791


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG 2.x relative luminance of sRGB colours (values 0-1, last axis R, G, B)."""
    c = np.asarray(rgb, dtype=float)[..., :3]
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def _dark_cells(image, data: np.ndarray) -> np.ndarray:
    """True where the cell colour is dark (so its text should be white): whichever of black and
    white contrasts more with the cell, so every value is written at >= 4.5:1 (WCAG AA)."""
    rgba = image.cmap(image.norm(data))  # (n_q, n_k, 4)
    return relative_luminance(rgba) < WHITE_TEXT_BELOW


def _set_ticks(ax: Axes, labels, n: int, axis: str) -> None:
    ticks = np.arange(n)
    if axis == "x":
        ax.set_xticks(ticks)
        labs = [str(x) for x in (labels if labels is not None else ticks)]
        long = max(len(s) for s in labs) > 3 and n > 2
        ax.set_xticklabels(labs, rotation=45 if long else 0, ha="right" if long else "center",
                           rotation_mode="anchor")
    else:
        ax.set_yticks(ticks)
        ax.set_yticklabels([str(x) for x in (labels if labels is not None else ticks)])
    ax.tick_params(length=0)


def heatmap(
    weights,
    *,
    query_labels: Sequence | None = None,
    key_labels: Sequence | None = None,
    ax: Axes | None = None,
    kind: str = "weights",
    mask=None,
    annotate: bool | None = None,
    fmt: str = "{:.2f}",
    cbar: bool = True,
    title: str | None = None,
    cmap: str | Colormap | None = None,
) -> HeatmapArtists:
    """Draw an attention matrix as an annotated heatmap: queries are rows, keys are columns.

    Parameters
    ----------
    weights : array_like, shape (n_q, n_k) or (n_k,)
        Attention weights (rows sum to 1) or raw scores. A 1-D array is one query row.
    query_labels : sequence of str, length n_q, optional
        Row labels (default 0 .. n_q - 1).
    key_labels : sequence of str, length n_k, optional
        Column labels (default 0 .. n_k - 1).
    ax : matplotlib.axes.Axes, optional
        Where to draw. Without it a new pyplot figure is made (end the cell with ``plt.show()``).
    kind : {"weights", "scores"}
        ``"weights"``: fixed 0 to 1 scale, colour map viridis, colorbar "attention weight".
        ``"scores"``: symmetric scale around 0 fitted to the data, diverging map, colorbar "score".
    mask : array_like of bool, broadcastable to (n_q, n_k), optional
        True means "may attend". Masked cells are drawn hatched grey and marked "—".
    annotate : bool, optional
        Write each value in its cell. None means: when the matrix is at most 12 x 12.
    fmt : str
        Format of the written values.
    cbar : bool
        Draw a colorbar.
    title : str, optional
        Axes title: say what is shown.
    cmap : str or Colormap, optional
        Override the colour map.

    Returns
    -------
    HeatmapArtists
        ``image``, ``texts`` (shape (n_q, n_k) or (0, 0)), ``colorbar`` (or None) and ``ax``.
    """
    if kind not in ("weights", "scores"):
        raise ValueError(f"kind must be 'weights' or 'scores', got {kind!r}")
    a = _as_matrix(weights)
    n_q, n_k = a.shape
    m = _as_mask(mask, a.shape)
    for labels, n, what in ((query_labels, n_q, "query_labels"), (key_labels, n_k, "key_labels")):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{what} has {len(labels)} entries but the matrix has {n} "
                             f"{'rows (queries)' if what[0] == 'q' else 'columns (keys)'}")
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(1.2 + 0.55 * n_k + (1.0 if cbar else 0), 0.9 + 0.5 * n_q),
                               layout="constrained")
    if kind == "weights":
        cm = colormaps[cmap or WEIGHTS_CMAP] if not isinstance(cmap, Colormap) else cmap
        norm = Normalize(0.0, 1.0)
    else:
        cm = colormaps[cmap or SCORES_CMAP] if not isinstance(cmap, Colormap) else cmap
        lim = _scores_limit(a, m)
        norm = Normalize(-lim, lim)
    cm = cm.with_extremes(bad=(0, 0, 0, 0))  # masked cells transparent: the hatch shows through
    data = np.ma.masked_array(a, mask=None if m is None else ~m)
    image = CellImage(ax, cmap=cm, norm=norm, interpolation="nearest", origin="upper",
                      extent=(-0.5, n_k - 0.5, n_q - 0.5, -0.5), zorder=1)
    image.set_data(data)
    ax.add_image(image)
    ax.set_aspect("equal")
    # hatched grey background, visible only through masked (transparent) cells
    patch = Rectangle((-0.5, -0.5), n_k, n_q, facecolor="#d9d9d9", edgecolor="#7f7f7f", hatch="///",
                      linewidth=0, zorder=0.5)
    ax.add_patch(patch)
    _set_ticks(ax, key_labels, n_k, "x")
    _set_ticks(ax, query_labels, n_q, "y")
    ax.set_xlabel(_("keys"))
    ax.set_ylabel(_("queries"))
    ax.set_xlim(-0.5, n_k - 0.5)
    ax.set_ylim(n_q - 0.5, -0.5)  # query 0 at the top, like the printed matrix
    # thin white lines between cells
    segs = [[(j - 0.5, -0.5), (j - 0.5, n_q - 0.5)] for j in range(1, n_k)]
    segs += [[(-0.5, i - 0.5), (n_k - 0.5, i - 0.5)] for i in range(1, n_q)]
    grid = LineCollection(segs, colors="white", linewidths=1.0, zorder=2)
    ax.add_collection(grid, autolim=False)
    for s in ax.spines.values():
        s.set_visible(False)
    if title:
        ax.set_title(title)
    colorbar = None
    if cbar:
        colorbar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        colorbar.set_label(_("attention weight") if kind == "weights" else _("score"))
    art = HeatmapArtists(image=image, texts=np.empty((0, 0), dtype=object), colorbar=colorbar,
                         ax=ax, kind=kind, fmt=fmt, mask_patch=patch, grid=grid,
                         query_labels=None if query_labels is None else list(query_labels),
                         key_labels=None if key_labels is None else list(key_labels))
    ax._ak_heatmap = art  # what describe_figure reads (attention_kit.plotting.describe)
    if annotate is None:
        annotate = max(n_q, n_k) <= MAX_ANNOTATED
    if annotate:
        fs = _fontsize(n_q, n_k)
        texts = np.empty((n_q, n_k), dtype=object)
        for i in range(n_q):
            for j in range(n_k):
                t = FastText(j, i, "", ha="center", va="center", fontsize=fs, zorder=3)
                t.set_figure(ax.figure)
                t.axes = ax
                t.set_transform(ax.transData)
                texts[i, j] = t
        art.texts = texts
        art.text_batch = TextBatch(ax, texts.ravel())
        art._strings = [""] * (n_q * n_k)
        art._dark = np.zeros((n_q, n_k), dtype=bool)
        _update_texts(art, a, m, force=True)
    return art


def _update_texts(art: HeatmapArtists, a: np.ndarray, m: np.ndarray | None, force: bool = False) -> None:
    if art.texts.size == 0:
        return
    dark = _dark_cells(art.image, a)
    fmt = art.fmt
    flat = art.texts.ravel()
    dflat = dark.ravel()
    old_dark = art._dark.ravel()
    mflat = None if m is None else m.ravel()
    for idx, (t, v) in enumerate(zip(flat, a.ravel(), strict=True)):
        if mflat is not None and not mflat[idx]:
            s = MASKED_TEXT
            d = False
        else:
            s = fmt.format(v)
            d = bool(dflat[idx])
        if force or s != art._strings[idx]:
            t.set_text(s)
            art._strings[idx] = s
        if force or d != old_dark[idx]:
            t.set_color("white" if d else "black")
    art._dark = dark if m is None else np.where(m, dark, False)


def update_heatmap(artists: HeatmapArtists, weights, *, mask=None, steady: bool = False) -> None:
    """Update a heatmap in place: new cell data, colours and texts, no new artists.

    Parameters
    ----------
    artists : HeatmapArtists
        From :func:`heatmap`.
    weights : array_like, shape (n_q, n_k) or (n_k,)
        The new values; the shape must be the one the heatmap was drawn with.
    mask : array_like of bool, optional
        True means "may attend"; None means nothing is masked.
    steady : bool
        For ``kind="scores"``: keep the current colour scale while every score fits in it and the
        largest fills at least a third of it (a live figure then redraws its colour bar, a full
        redraw, only now and then while a slider is dragged). Default: the round limit of these
        scores.
    """
    a = _as_matrix(weights)
    old = artists.image.get_array()
    if a.shape != old.shape:
        raise ValueError(f"update_heatmap got shape {a.shape} but the heatmap is {old.shape}; "
                         "draw a new heatmap for a different size")
    m = _as_mask(mask, a.shape)
    artists.image.set_data(a if m is None else np.ma.masked_array(a, mask=~m))
    if artists.kind == "scores":
        lim = _scores_limit(a, m)
        if steady:
            lo, hi = artists.image.get_clim()
            if lo == -hi and lim <= hi and lim >= hi / 3:
                lim = hi
        artists.image.set_clim(-lim, lim)  # the colorbar follows its mappable
    _update_texts(artists, a, m)


def head_grid(
    weights,
    *,
    query_labels: Sequence | None = None,
    key_labels: Sequence | None = None,
    titles: Sequence[str] | None = None,
    fig: Figure | None = None,
    ncols: int | None = None,
    annotate: bool | None = None,
    subplot_spec=None,
) -> tuple[Figure, np.ndarray, list[HeatmapArtists]]:
    """One weights heatmap per head, with shared axis labels and one colorbar.

    Parameters
    ----------
    weights : array_like, shape (h, n_q, n_k)
        Attention weights of each head (``multi_head_attention`` returns them in this layout).
    query_labels, key_labels : sequence of str, optional
        Token labels for rows and columns.
    titles : sequence of str, length h, optional
        Panel titles (default "head 1" .. "head h").
    fig : matplotlib.figure.Figure, optional
        Draw into this figure (it is not cleared). Without it a new pyplot figure is made.
    ncols : int, optional
        Panels per row (default: up to 4).
    annotate : bool, optional
        Write the values in the cells. None means: when the cells are big enough to read
        (``max(n_q, n_k) * ncols <= 24``).
    subplot_spec : matplotlib SubplotSpec, optional
        Place the grid inside this part of ``fig`` (used by the widgets).

    Returns
    -------
    fig : Figure
    axes : ndarray of Axes, shape (h,)
    artists : list of HeatmapArtists, length h
        The colorbar is attached to the first one (``artists[0].colorbar``).
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim == 2:
        w = w[None]  # (1, n_q, n_k)
    if w.ndim != 3 or w.size == 0:
        raise ValueError(f"weights has shape {np.shape(weights)} but (h, n_q, n_k) was expected")
    h, n_q, n_k = w.shape
    if titles is not None and len(titles) != h:
        raise ValueError(f"titles has {len(titles)} entries but there are {h} heads")
    ncols = min(h, 4) if ncols is None else max(1, min(int(ncols), h))
    nrows = -(-h // ncols)
    if fig is None:
        import matplotlib.pyplot as plt

        side = 0.45 * max(n_q, n_k) + 0.6
        fig = plt.figure(figsize=(ncols * side + 1.6, nrows * side + 0.9), layout="constrained")
    if annotate is None:
        annotate = max(n_q, n_k) * ncols <= 24
    container = fig if subplot_spec is None else fig.add_subfigure(subplot_spec)
    axes_grid = container.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    axes = axes_grid.ravel()
    arts = []
    for i in range(h):
        ax = axes[i]
        art = heatmap(w[i], query_labels=query_labels, key_labels=key_labels, ax=ax,
                      annotate=annotate, cbar=False,
                      title=titles[i] if titles is not None else _("head {i}").format(i=i + 1))
        ax.set_xlabel("")
        ax.set_ylabel("")
        if max(n_q, n_k) * ncols > 16:  # small panels: smaller tick labels
            ax.tick_params(labelsize=8)
        if i % ncols:
            ax.tick_params(labelleft=False)
        arts.append(art)
    for ax in axes[h:]:
        ax.set_visible(False)
    # with sharex, only the bottom panel of each column keeps its tick labels
    for i in range(h):
        below = i + ncols
        axes[i].tick_params(labelbottom=below >= h)
    container.supxlabel(_("keys"))
    container.supylabel(_("queries"))
    cb = container.colorbar(arts[0].image, ax=list(axes[:h]), fraction=0.046 if nrows == 1 else 0.03,
                            pad=0.02)
    cb.set_label(_("attention weight"))
    arts[0].colorbar = cb
    return fig, axes[:h], arts
