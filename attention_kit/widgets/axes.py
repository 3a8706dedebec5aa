"""The explorers' axes: 2-D planes, limits that stay put while a learner moves a slider, the
widest label first (for layout), and the random projections the toy explorers start from."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..i18n import _

__all__ = ["nice_limit", "plane", "steady_limits", "steady_box", "random_projections", "widest_first"]


def widest_first(fig: Figure, words, size: float = 10) -> np.ndarray:
    """The indices of ``words``, the widest first as ``fig`` draws them at ``size`` points (for the
    template of ``Explorer._place_scenes``)."""
    from matplotlib.font_manager import FontProperties

    renderer, prop = fig.canvas.get_renderer(), FontProperties(size=size)
    widths = [renderer.get_text_width_height_descent(str(w), prop, False)[0] for w in words]
    return np.argsort(widths, kind="stable")[::-1]


LIMIT_STEPS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def nice_limit(points: np.ndarray, minimum: float = 1.0, room: float = 1.2) -> float:
    """The smallest of 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (x 10^k) that leaves ``room``
    (x the largest value) for labels; never below ``minimum``."""
    m = float(np.max(np.abs(points))) if points.size else 0.0
    need = max(minimum, m * room)
    scale = 10.0 ** np.floor(np.log10(need))
    for step in LIMIT_STEPS:
        if step * scale >= need - 1e-12:
            return float(step * scale)
    return float(10 * scale)


def plane(ax, title: str) -> None:
    ax.set_aspect("equal")
    ax.axhline(0, color="#999999", linewidth=0.8, zorder=0)
    ax.axvline(0, color="#999999", linewidth=0.8, zorder=0)
    ax.grid(True, color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title)
    ax.set_xlabel(_("component 0"))
    ax.set_ylabel(_("component 1"))


def steady_limits(ax, lim: float, which: str = "xy") -> None:
    """Set symmetric limits (-lim, lim), but only when the data leaves the current range or
    would fill less than half of it: the axes (and the cached background) rarely change."""
    get = ax.get_xlim if which[0] == "x" else ax.get_ylim
    current = get()[1]
    if not (get()[0] == -current and current > 0) or lim > current or lim < 0.5 * current:
        if "x" in which:
            ax.set_xlim(-lim, lim)
        if "y" in which:
            ax.set_ylim(-lim, lim)


def steady_box(ax, points: np.ndarray, *, room: float = 0.25, minimum: float = 0.5) -> float:
    """Fit the limits to the origin and ``points`` (shape (m, 2)) with a margin of ``room`` x the
    larger side, on a 0.25 grid, so that arrows fill the plane instead of one corner of a square
    around 0. Changes the limits only when a point leaves them or the data fills less than half of
    the current box (the axes, and the cached background, rarely change). Returns the box's side."""
    pts = np.vstack([np.zeros((1, 2)), np.asarray(points, dtype=float).reshape(-1, 2)])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = room * max(float((hi - lo).max()), minimum)
    lo, hi = np.floor((lo - pad) * 4) / 4, np.ceil((hi + pad) * 4) / 4
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    inside = (pts[:, 0] >= x0).all() and (pts[:, 0] <= x1).all() \
        and (pts[:, 1] >= y0).all() and (pts[:, 1] <= y1).all()
    big = (hi - lo).max() < 0.5 * max(x1 - x0, y1 - y0)
    if not inside or big:
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return float(max(x1 - x0, y1 - y0))


def random_projections(d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded ``W_q, W_k, W_v``, each of shape (d, d), entries N(0, 1/d)."""
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, 1.0 / np.sqrt(d), (3, d, d))  # (3, d_model, d_k)
    return W[0], W[1], W[2]
