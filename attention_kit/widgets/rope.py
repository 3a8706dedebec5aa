"""``RopeExplorer`` (notebook 09): one pair of features of a query and a key, rotated by RoPE at
their positions, and the score as the key's position moves."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..i18n import N_, _
from ..plotting import OKABE_ITO
from ..relative import rope as _rope
from .axes import plane
from .base import Explorer

__all__ = ["RopeExplorer"]


class RopeExplorer(Explorer):
    """A query at position ``m`` and a key at position ``n``, both rotated by RoPE.

    Left: feature pair ``pair`` of the rotated query and key in its plane, with the places the key
    takes at every position 0 .. ``max_position`` (the circle it turns on at its frequency
    ``theta_pair``). Right: the whole score ``rope(q, m) . rope(k, n') / sqrt(d)`` against the
    key's position ``n'``, for the query at ``m``; moving ``m`` slides the curve along, unchanged:
    the score depends on ``m - n'`` only.

    Parameters
    ----------
    m, n : int
        The query's and the key's positions, 0 .. ``max_position``.
    pair : int
        Which feature pair to draw, 0 (the fastest) .. d / 2 - 1 (the slowest).
    d : int
        Width of the query and key (even, 2 to 64).
    seed : int
        Seeds the query and key vectors.
    max_position : int
    """

    _PLAIN = N_("RopeExplorer (interactive: run in JupyterLab to use the controls)")
    _scene_parts = ("_ax_p", "_ax_s", "_trail", "_q_line", "_k_line", "_q_tip", "_k_tip", "_curve",
                    "_here")

    def __init__(self, *, m: int = 8, n: int = 5, pair: int = 0, d: int = 16, seed: int = 0,
                 max_position: int = 64):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 2 <= d <= 64 or d % 2:
            raise ValueError(f"d = {d!r} must be an even whole number from 2 to 64")
        if not isinstance(max_position, (int, np.integer)) or not 4 <= max_position <= 512:
            raise ValueError(f"max_position = {max_position!r} must be a whole number from 4 to 512")
        for name, v in (("m", m), ("n", n)):
            if not 0 <= int(v) <= max_position:
                raise ValueError(f"{name} = {v} must be a position from 0 to {max_position}")
        if not 0 <= int(pair) < d // 2:
            raise ValueError(f"pair = {pair} must be from 0 to {d // 2 - 1} (d = {d} has {d // 2} pairs)")
        self.d, self.top = int(d), int(max_position)
        rng = np.random.default_rng(seed)
        self.q, self.k = rng.normal(size=(2, self.d))  # (d,) each
        self.theta = _rope.rope_frequencies(self.d)  # (d/2,)
        wide = widgets.Layout(width="300px")
        style = {"description_width": "110px"}
        controls = {
            "m": widgets.IntSlider(value=int(m), min=0, max=self.top, description=_("query position m"),
                                   layout=wide, style=style),
            "n": widgets.IntSlider(value=int(n), min=0, max=self.top, description=_("key position n"),
                                   layout=wide, style=style),
            "pair": widgets.IntSlider(value=int(pair), min=0, max=self.d // 2 - 1,
                                      description=_("feature pair i"), layout=wide, style=style),
        }
        fig = Figure(figsize=(9.6, 4.0), layout="constrained")
        self._assemble(controls, None, fig)
        # every pair's panels go where those of the pair with the widest tick labels went: a new
        # pair's figure needs no constrained layout of its own (160-250 ms of CPU in-process, one
        # uninterruptible step of the idle preparation, or of a press that comes first; issue 36)
        self._place_scenes(self._compute(pair=self._widest_pair()))
        self.update()

    def _widest_pair(self) -> int:
        """The pair whose plane has the longest tick labels (the first of equals)."""
        fig = Figure()
        ax = fig.add_subplot()
        loc, fmt = ax.yaxis.get_major_locator(), ax.yaxis.get_major_formatter()

        def width(i):
            r = self._radius(i)
            ticks = [v for v in loc.tick_values(-r, r) if -r <= v <= r]
            fmt.set_locs(ticks)
            return max(len(t) for t in fmt.format_ticks(ticks))
        return max(range(self.d // 2), key=lambda i: (width(i), -i))

    def _radius(self, i: int) -> float:
        """The plane's half-width for pair ``i``: room for its q and k (a rotation keeps their
        lengths), on a 0.25 grid."""
        r = 1.25 * max(np.hypot(*self.q[2 * i: 2 * i + 2]), np.hypot(*self.k[2 * i: 2 * i + 2]), 0.1)
        return float(np.ceil(r * 4) / 4)

    def _scene_choices(self) -> list:
        shown = int(self.controls["pair"].value)
        near = sorted((i for i in range(self.d // 2) if i != shown), key=lambda i: abs(i - shown))
        return [(i, self._compute(pair=i)) for i in near]  # the slider's neighbours first

    def _build(self, r: float) -> None:
        """The two panels, the plane fitted to ``r``: one figure per pair (see
        ``Explorer._show_scene``), so a step of the pair slider switches figures instead of
        redrawing the axes and laying out the pair's title (80 ms in-process)."""
        self._build_figure(self.figure)
        self._ax_p.set_xlim(-r, r)
        self._ax_p.set_ylim(-r, r)
        self.live.set_dynamic([self._trail, self._q_line, self._k_line, self._q_tip, self._k_tip,
                               self._curve, self._here, self._ax_p.title, self._ax_s.title])

    def _build_figure(self, fig: Figure) -> None:
        ax_p, ax_s = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
        plane(ax_p, "")
        ax_p.set_xlabel(_("feature 2i"))
        ax_p.set_ylabel(_("feature 2i + 1"))
        (self._trail,) = ax_p.plot([], [], "o", color="#bbbbbb", markersize=3, zorder=1,
                                   label=_("the key at positions 0, 1, 2, ..."))
        (self._q_line,) = ax_p.plot([], [], "-", color=OKABE_ITO[0], linewidth=2.5, label=_("query at m"))
        # the key differs from the query by line and tip shape as well as by colour (issue 34)
        (self._k_line,) = ax_p.plot([], [], "--", color=OKABE_ITO[1], linewidth=2.5, label=_("key at n"))
        (self._q_tip,) = ax_p.plot([], [], "o", color=OKABE_ITO[0], markersize=7)
        (self._k_tip,) = ax_p.plot([], [], "s", color=OKABE_ITO[1], markersize=7)
        self._q_tip._ak_name, self._k_tip._ak_name = "query's tip (round)", "key's tip (square)"
        ax_p.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8, ncol=2, frameon=False)
        pos = np.arange(self.top + 1)
        (self._curve,) = ax_s.plot(pos, np.zeros_like(pos, dtype=float), "-", color=OKABE_ITO[2],
                                   linewidth=1.8)
        (self._here,) = ax_s.plot([], [], "o", color=OKABE_ITO[1], markersize=8)
        self._here._ak_name = "key position n"
        ax_s.axhline(0, color="#999999", linewidth=0.8, zorder=0)
        ax_s.set_xlim(0, self.top)
        # every distance -top .. top: the query at 0 and at the last position against every key
        keys = _rope.rope(np.broadcast_to(self.k, (len(pos), self.d)), pos)  # (positions, d)
        ends = _rope.rope(np.stack([self.q, self.q]), [0, self.top])  # (2, d)
        lim = 1.15 * float(np.abs(keys @ ends.T).max()) / np.sqrt(self.d)
        ax_s.set_ylim(-lim, lim)
        ax_s.set_xlabel(_("key position n'"))
        ax_s.set_ylabel(_("score  rope(q, m) · rope(k, n') / √d"))
        ax_s.grid(True, color="#e5e5e5", linewidth=0.6)
        self._ax_p, self._ax_s = ax_p, ax_s

    def _compute(self, pair: int | None = None) -> dict:
        c = self.controls
        m, n = int(c["m"].value), int(c["n"].value)
        i = int(c["pair"].value) if pair is None else pair
        pos = np.arange(self.top + 1, dtype=float)
        keys = _rope.rope(np.broadcast_to(self.k, (len(pos), self.d)), pos)  # (positions, d)
        q_m = _rope.rope(self.q[None], [m])[0]  # (d,)
        scores = keys @ q_m / np.sqrt(self.d)  # (positions,)
        return {"m": m, "n": n, "pair": i, "q": q_m, "k": keys[n], "trail": keys[:, 2 * i: 2 * i + 2],
                "scores": scores}

    def _draw(self, st: dict) -> None:
        i, m, n = st["pair"], st["m"], st["n"]
        q2, k2 = st["q"][2 * i: 2 * i + 2], st["k"][2 * i: 2 * i + 2]
        self._show_scene(i, lambda: self._build(self._radius(i)))
        self._trail.set_data(st["trail"][:, 0], st["trail"][:, 1])
        self._q_line.set_data([0, q2[0]], [0, q2[1]])
        self._k_line.set_data([0, k2[0]], [0, k2[1]])
        self._q_tip.set_data([q2[0]], [q2[1]])
        self._k_tip.set_data([k2[0]], [k2[1]])
        self._curve.set_ydata(st["scores"])
        self._here.set_data([n], [st["scores"][n]])
        angle = (m - n) * self.theta[i]
        self._ax_p.set_title(_("pair {i}: θ_{i} = {theta} rad per position\n(m − n)·θ_{i} = {angle} rad")
                             .format(i=i, theta=f"{self.theta[i]:.3g}", angle=f"{angle:.2f}"), fontsize=10)
        self._ax_s.set_title(_("query at m = {m}: the score of every key position\nkey at n = {n}: m − n = {d}, score {score}")
                             .format(m=m, n=n, d=m - n, score=f"{st['scores'][n]:+.2f}"), fontsize=10)
