"""Notebooks 01-02: vectors as arrows in the plane, each labelled at its tip.

:func:`plot_vectors` draws them on an ``Axes`` and returns the artists; :func:`update_vectors`
moves them in place (the explorers redraw a reused figure this way).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch

from .colours import OKABE_ITO
from .fast_artists import add_fast_text

__all__ = ["TIP_MARKERS", "VectorArtists", "plot_vectors", "update_vectors"]

#: Tip shapes, one per vector (``plot_vectors(..., markers=True)``): a second carrier beside the
#: colour, so that x_i and y_i drawn in the same colour also share a shape (issue 34).
TIP_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


class VectorArtists(list):
    """The artists of :func:`plot_vectors`: a list ``[arrow_1, ..., arrow_m, label_1, ..., label_m]``.

    Attributes
    ----------
    arrows : list of FancyArrowPatch
    labels : list of Text (empty when no labels were given)
    origin : ndarray, shape (2,)
    tips : list of Line2D (a marker at each tip; empty unless ``markers`` was given)
    """

    def __init__(self, arrows, labels, origin, tips=()):
        super().__init__(list(arrows) + list(labels) + list(tips))
        self.arrows = list(arrows)
        self.labels = list(labels)
        self.tips = list(tips)
        #: what the description calls each vector where its tip label is blank (or None)
        self.names = None
        self.origin = np.asarray(origin, dtype=float)


def _label_pos(origin: np.ndarray, tip: np.ndarray, scale: float, nchar: int = 2) -> np.ndarray:
    """Just beyond the tip, along the arrow, far enough that a label of ``nchar`` characters
    (centred there) clears the arrow head."""
    d = tip - origin
    n = float(np.hypot(*d))
    u = d / n if n > 1e-9 else np.array([0.7071, 0.7071])
    half_w, half_h = 0.028 * scale * nchar, 0.04 * scale  # rough text box at 11 pt
    return tip + u * (0.05 * scale + abs(u[0]) * half_w + abs(u[1]) * half_h)


def _spread_labels(pos: np.ndarray, nchars: Sequence[int], scale: float) -> np.ndarray:
    """Move label centres ``pos`` (m, 2) apart vertically so that no two text boxes overlap."""
    pos = pos.copy()
    h = 0.085 * scale  # a label's height, with a little air, at 11 pt
    placed: list[int] = []
    for i in np.argsort(pos[:, 1], kind="stable"):
        for j in placed:  # lowest first: push i up past every box it overlaps
            w = 0.028 * scale * (nchars[i] + nchars[j])
            if abs(pos[i, 0] - pos[j, 0]) < w and abs(pos[i, 1] - pos[j, 1]) < h:
                pos[i, 1] = pos[j, 1] + h
        placed.append(i)
    return pos


def plot_vectors(
    ax: Axes,
    vectors,
    *,
    labels: Sequence[str] | None = None,
    color=None,
    origin=None,
    markers=None,
    names: Sequence[str] | None = None,
    **kw,
) -> VectorArtists:
    """Draw 2-D vectors as arrows from ``origin``, each labelled at its tip.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    vectors : array_like, shape (m, 2) or (2,)
        One vector per row.
    labels : sequence of str, length m, optional
        Written just beyond each tip.
    color : colour or sequence of m colours, optional
        Default: the Okabe-Ito palette, one colour per vector.
    origin : array_like, shape (2,), optional
        Where every arrow starts (default (0, 0)).
    markers : True or sequence of m matplotlib markers, optional
        A shape at each tip (True: :data:`TIP_MARKERS` in order), so that vectors told apart by
        colour are told apart by shape too.
    names : sequence of str, length m, optional
        What the words call each vector where its label is blank (02's outputs, drawn without
        labels so they do not pile up, are "y of cat" in the description, not "arrow 2").
    **kw
        Passed to ``FancyArrowPatch`` (e.g. ``linestyle="--"``, ``linewidth=3``, ``alpha``).

    Returns
    -------
    VectorArtists
        A list of the arrows then the labels, with ``.arrows`` and ``.labels``.
    """
    v = np.asarray(vectors, dtype=float)
    if v.ndim == 1:
        v = v[None, :]  # (1, 2)
    if v.ndim != 2 or v.shape[1] != 2:
        raise ValueError(f"vectors has shape {np.shape(vectors)} but (m, 2) was expected (one 2-D vector per row)")
    m = v.shape[0]
    o = np.zeros(2) if origin is None else np.asarray(origin, dtype=float).reshape(2)
    if labels is not None and len(labels) != m:
        raise ValueError(f"labels has {len(labels)} entries but there are {m} vectors")
    if color is None:
        colors = [OKABE_ITO[i % len(OKABE_ITO)] for i in range(m)]
    elif isinstance(color, str) or (np.ndim(color) == 1 and len(color) in (3, 4)
                                    and not isinstance(color[0], str)):
        colors = [color] * m
    else:
        colors = list(color)
    style = {"arrowstyle": "-|>", "mutation_scale": 14, "linewidth": 2.0, "shrinkA": 0, "shrinkB": 0,
             "zorder": 3}
    style.update(kw)
    fontsize = style.pop("fontsize", 11)
    arrows, texts = [], []
    span = max(1.0, float(np.abs(v).max()) if v.size else 1.0)
    if labels is not None:
        nchars = [len(str(lab)) for lab in labels]
        spots = _spread_labels(np.array([_label_pos(o, o + v[i], span, nchars[i]) for i in range(m)]),
                               nchars, span)
    for i in range(m):
        arr = FancyArrowPatch(tuple(o), tuple(o + v[i]), color=colors[i], **style)
        ax.add_patch(arr)
        arrows.append(arr)
        if labels is not None:
            p = spots[i]
            texts.append(add_fast_text(ax, p[0], p[1], str(labels[i]), color=colors[i], fontsize=fontsize,
                                   ha="center", va="center", zorder=4, fontweight="bold"))
    tips = []
    if markers is not None:
        shapes = [TIP_MARKERS[i % len(TIP_MARKERS)] for i in range(m)] if markers is True else list(markers)
        for i in range(m):
            tips.append(ax.plot([o[0] + v[i, 0]], [o[1] + v[i, 1]], linestyle="none", marker=shapes[i],
                                markersize=6, markerfacecolor="white", markeredgecolor=colors[i],
                                markeredgewidth=1.6, zorder=5)[0])
    pts = np.vstack([o[None], o + v])
    ax.update_datalim(pts)
    ax.autoscale_view()
    art = VectorArtists(arrows, texts, o, tips)
    if names is not None:
        if len(names) != m:
            raise ValueError(f"names has {len(names)} entries but there are {m} vectors")
        art.names = [str(n) for n in names]
    ax.__dict__.setdefault("_ak_vectors", []).append(art)  # what describe_figure reads
    return art


def update_vectors(artists: VectorArtists, vectors, *, span: float | None = None) -> None:
    """Move the arrows (and their tip labels) of :func:`plot_vectors` in place.

    Parameters
    ----------
    artists : VectorArtists
    vectors : array_like, shape (m, 2)
        Same number of vectors as drawn.
    span : float, optional
        Scale used to place the labels off the tips (default: the largest coordinate, at least 1).
    """
    v = np.asarray(vectors, dtype=float).reshape(-1, 2)  # (m, 2)
    if v.shape[0] != len(artists.arrows):
        raise ValueError(f"got {v.shape[0]} vectors but {len(artists.arrows)} arrows were drawn")
    o = artists.origin
    span = span if span is not None else max(1.0, float(np.abs(v).max()))
    if artists.labels:
        nchars = [len(lab.get_text()) for lab in artists.labels]
        spots = _spread_labels(np.array([_label_pos(o, o + v[i], span, nchars[i])
                                         for i in range(len(v))]), nchars, span)
    for i, arr in enumerate(artists.arrows):
        arr.set_positions(tuple(o), tuple(o + v[i]))
        if artists.tips:
            artists.tips[i].set_data([o[0] + v[i, 0]], [o[1] + v[i, 1]])
        if artists.labels:
            artists.labels[i].set_position(tuple(spots[i]))
