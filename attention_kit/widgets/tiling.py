"""``TilingStepper`` (notebook 07): tiled attention one tile at a time, with one query row's running
maximum, running sum and partial output converging to the exact output."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.patches import Patch, Rectangle

from ..i18n import N_, _
from ..mechanism import attention as _attention
from ..mechanism import masks as _masks
from ..plotting import OKABE_ITO
from ..scale import tiled as _tiled
from .base import Explorer
from .editor import VectorEditor

__all__ = ["TilingStepper"]

# cell status in the grid of (query, key) pairs
TODO, DONE, CURRENT, SKIPPED, MASKED = range(5)
STATUS_COLORS = ("#ffffff", "#9ecae1", OKABE_ITO[1], "#8c8c8c", "#ececec")
STATUS_NAMES = (N_("not computed yet"), N_("computed"), N_("this step"), N_("skipped tile"), N_("masked pair (-inf)"))
#: Each status also has a mark in its cells (colour is never the only carrier, issue 34):
#: matplotlib marker, size, colour; "not computed yet" is blank.
STATUS_MARKS = (None, (".", 5, "#08306b"), ("*", 9, "#000000"), ("x", 5, "#ffffff"), ("_", 6, "#555555"))


def _steady_ylim(ax, lo: float, hi: float, *, symmetric: bool = False) -> None:
    """Show ``lo .. hi`` with some room, changing the range (and so redrawing the axes) only when
    the data leaves it or fills less than a quarter of it; new limits are rounded outwards."""
    if symmetric:
        lo, hi = -max(abs(lo), abs(hi)), max(abs(lo), abs(hi))
    span = max(hi - lo, 0.5)
    cur_lo, cur_hi = ax.get_ylim()
    if cur_lo <= lo - 0.05 * span and hi + 0.05 * span <= cur_hi and span >= 0.25 * (cur_hi - cur_lo):
        return
    want_lo, want_hi = lo - 0.2 * span, hi + 0.2 * span
    step = 10.0 ** np.floor(np.log10(want_hi - want_lo)) / 2  # e.g. 0.5 for a range of 1 to 10
    ax.set_ylim(np.floor(want_lo / step) * step, np.ceil(want_hi / step) * step)


def _row_tiles(steps, r: int):
    """The tiles that compute row ``r`` (not skipped), and the row's index inside them."""
    mine = [t for t in steps if t.rows[0] <= r < t.rows[1] and not t.skipped]
    return mine, r - mine[0].rows[0]


class TilingStepper(Explorer):
    """Step through tiled attention on a short random sequence, one tile per step.

    The left panel is the grid of (query, key) pairs, queries top to bottom, cut into tiles of
    ``block_q x block_k``: computed tiles, the current one, and (with ``causal``) the skipped tiles
    above the diagonal. For the followed query row, the middle panels show its running maximum
    ``m`` and running sum ``l`` after each of its tiles, the right one its partial output
    ``acc / l`` against the exact output of ``scaled_dot_product_attention``.

    Parameters
    ----------
    n : int
        Number of tokens (queries = keys), 2 to 16.
    block_q, block_k : int
        Tile size (1 .. n); need not divide n.
    causal : bool
        Causal mask: tiles above the diagonal are skipped.
    row : int
        The query row whose ``m``, ``l`` and output are followed.
    seed : int
        Seeds ``Q``, ``K`` (n, 4) and ``V`` (n, 3).
    step : int, optional
        Initial number of tiles done (default: all of them).

    Attributes
    ----------
    state : dict
        ``steps`` (the :class:`~attention_kit.scale.tiled.TileStep` list), ``step``, ``status`` (n, n)
        int codes, ``keys_read`` / ``m`` / ``l`` (the followed row after each of its tiles so far),
        ``partial`` (d_v,), ``exact`` (d_v,), ``counts`` (a TileCounts).
    """

    _PLAIN = N_("TilingStepper (interactive: run in JupyterLab to use the controls)")
    D_K, D_V = 4, 3
    #: spoken names: "block_q" is read letter by letter, underscore and all
    CONTROL_NAMES = {"block_q": "query block size", "block_k": "key block size"}

    def __init__(self, n: int = 12, *, block_q: int = 4, block_k: int = 3, causal: bool = False,
                 row: int = 5, seed: int = 0, step: int | None = None):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= 16:
            raise ValueError(f"n = {n!r} must be a whole number from 2 to 16 so that the grid stays readable")
        for name, b in (("block_q", block_q), ("block_k", block_k)):
            if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 1 <= b <= n:
                raise ValueError(f"{name} = {b!r} must be a whole number from 1 to n = {n}")
        if not 0 <= row < n:
            raise ValueError(f"row = {row} must be between 0 and {n - 1}")
        self.n = int(n)
        rng = np.random.default_rng(seed)
        # two decimals, so that the query typed in (or shown in) the text box is exactly the one used
        self.Q = rng.normal(0.0, 1.0, (n, self.D_K)).round(2)  # (n, d_k)
        self.K = rng.normal(0.0, 1.0, (n, self.D_K))  # (n, d_k)
        self.V = rng.normal(0.0, 1.0, (n, self.D_V))  # (n, d_v)
        total = _tiled.tile_counts(n, n, block_q=block_q, block_k=block_k, causal=causal).total
        first = total if step is None else int(step)
        if not 0 <= first <= total:
            raise ValueError(f"step = {step} must be between 0 and the number of tiles, {total}")
        wide = widgets.Layout(width="260px")
        style = {"description_width": "70px"}
        controls = {
            "step": widgets.IntSlider(value=first, min=0, max=total, description=_("tiles done"),
                                      layout=widgets.Layout(width="330px"), style=style),
            "block_q": widgets.IntSlider(value=block_q, min=1, max=n, description="block_q", layout=wide,
                                         style=style),
            "block_k": widgets.IntSlider(value=block_k, min=1, max=n, description="block_k", layout=wide,
                                         style=style),
            "row": widgets.IntSlider(value=row, min=0, max=n - 1, description=_("follow row"), layout=wide,
                                     style=style),
            "causal": widgets.Checkbox(value=causal, description=_("causal mask"), indent=False,
                                       layout=widgets.Layout(width="130px")),
        }
        self.back = widgets.Button(description=_("◀ back"), layout=widgets.Layout(width="80px"),
                                   tooltip=_("undo the last tile"))
        self.next = widgets.Button(description=_("next ▶"), layout=widgets.Layout(width="80px"),
                                   tooltip=_("process the next tile"))
        self.back.on_click(lambda _b: self.advance(-1))
        self.next.on_click(lambda _b: self.advance(+1))
        editor = VectorEditor({"q": self.Q[row]}, min=-3.0, max=3.0, step=0.01)  # step = the rounding of Q
        fig = Figure(figsize=(11.0, 3.7), layout="constrained")
        self._build_figure(fig)
        self._assemble(controls, editor, fig, dpi=80)
        # Only what a step changes is redrawn; axes, ticks and legends stay in the cached background.
        # The titles change with every step, but always have two lines: they are drawn as dynamic
        # artists too, and do not trigger a new layout (see _signatures).
        # So are the y axes of the line and bar panels and the bars' zero line: their ranges follow
        # the row and the query (a new row was a whole new background, 182 ms to the picture).
        # (drawn in this order: the axes and their grid lines first, under the lines and bars)
        self.live.set_dynamic([self._ax_m.yaxis, self._ax_l.yaxis, self._ax_o.yaxis, self._zero,
                               self._grid, *self._marks.values(), self._tiles, self._row_box, self._m_line, self._m_final,
                               self._l_line, self._l_final, *self._bars, self._exact,
                               self._ax_g.title, self._ax_m.title, self._ax_o.title])
        self.update()

    # -- controls ------------------------------------------------------------------------------
    def _top_controls(self):
        c = self.controls
        return [widgets.VBox([widgets.HBox([self.back, self.next, c["step"], c["causal"]]),
                              widgets.HBox([c["block_q"], c["block_k"], c["row"]])])]

    def advance(self, by: int = 1) -> None:
        """Move ``by`` tiles forward (or back), within 0 .. the number of tiles."""
        s = self.controls["step"]
        s.value = int(np.clip(s.value + by, s.min, s.max))

    def _control_changed(self, change) -> None:
        c = self.controls
        owner = change["owner"]
        busy, self._busy = self._busy, True  # the adjustments below must not redraw on their own
        try:
            if owner in (c["block_q"], c["block_k"], c["causal"]):
                # a new tiling, a new number of steps; "all done" stays all done
                step = c["step"]
                was_done = step.value == step.max
                step.max = _tiled.tile_counts(self.n, self.n, block_q=c["block_q"].value,
                                              block_k=c["block_k"].value, causal=c["causal"].value).total
                step.value = step.max if was_done else min(step.value, step.max)
            elif owner is c["row"]:  # keep the edited query of the old row; show the new row's query
                self.Q[change["old"]] = self.editor.values["q"]
                self.editor.set_vector("q", self.Q[change["new"]])
        finally:
            self._busy = busy
        if not busy:
            self.update()

    # -- figure --------------------------------------------------------------------------------
    def _build_figure(self, fig: Figure) -> None:
        n = self.n
        gs = fig.add_gridspec(2, 3, width_ratios=[1.15, 1.0, 1.0])
        ax_g = fig.add_subplot(gs[:, 0])
        self._grid = ax_g.imshow(np.zeros((n, n)), cmap=ListedColormap(STATUS_COLORS), vmin=-0.5, vmax=4.5,
                                 interpolation="nearest")
        self._tiles = LineCollection([], colors="#333333", linewidths=1.6)
        ax_g.add_collection(self._tiles)
        self._row_box = Rectangle((-0.5, -0.5), n, 1, fill=False, edgecolor=OKABE_ITO[3], linewidth=2.4)
        ax_g.add_patch(self._row_box)
        # labelled as in the legend: the words say "computed (dots): 60 cells: ..." (issue 34)
        self._marks = {k: ax_g.plot([], [], linestyle="none", marker=mark[0], markersize=mark[1],
                                    color=mark[2], markeredgewidth=1.2, label=_(STATUS_NAMES[k]))[0]
                       for k, mark in enumerate(STATUS_MARKS) if mark is not None}
        ax_g.set_xticks(range(n))
        ax_g.set_yticks(range(n))
        ax_g.tick_params(length=0, labelsize=8)
        ax_g.set_xlabel(_("key j"))
        ax_g.set_ylabel(_("query i"))
        ax_g.legend(handles=[(Patch(facecolor=c, edgecolor="#666666"), self._marks[k])
                             for k, c in enumerate(STATUS_COLORS) if k],
                    labels=[_(s) for s in STATUS_NAMES[1:]], handler_map={tuple: HandlerTuple(ndivide=1)},
                    loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)
        self._ax_g = ax_g
        ax_m, ax_l = fig.add_subplot(gs[0, 1]), fig.add_subplot(gs[1, 1])
        self._m_line, = ax_m.plot([], [], "o-", color=OKABE_ITO[0])
        self._m_final = ax_m.axhline(0, color="#555555", linestyle="--", linewidth=1)
        self._l_line, = ax_l.plot([], [], "o-", color=OKABE_ITO[2])
        self._l_final = ax_l.axhline(0, color="#555555", linestyle="--", linewidth=1)
        for ax, name in ((ax_m, _("running max m")), (ax_l, _("running sum l"))):
            ax.set_xlim(0, n + 0.5)
            ax.set_ylabel(name)
            ax.grid(True, color="#e5e5e5", linewidth=0.6)
        ax_l.set_xlabel(_("keys read by the row's tiles"))
        self._ax_m, self._ax_l = ax_m, ax_l
        ax_o = fig.add_subplot(gs[:, 2])
        x = np.arange(self.D_V)
        self._bars = ax_o.bar(x, np.zeros(self.D_V), width=0.6, color=OKABE_ITO[4], label=_("partial acc / l"))
        self._exact = ax_o.plot(x, np.zeros(self.D_V), "_", color="#000000", markersize=28, markeredgewidth=2.5,
                                label=_("exact output"))[0]
        self._zero = ax_o.axhline(0, color="#999999", linewidth=0.8)
        ax_o.set_xticks(x)
        ax_o.set_xticklabels([f"out[{i}]" for i in x])
        ax_o.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=8, frameon=False,
                    markerscale=0.5)
        self._ax_o = ax_o

    def _signatures(self) -> tuple[tuple, tuple]:
        """A fixed layout (the two-line titles are dynamic artists) and the ranges the background
        shows: the x axes (fixed) and the grid's; the y axes whose ranges follow the row and the
        query are drawn with the moving artists, so no press redraws the background."""
        axes = (self._ax_g, self._ax_m, self._ax_l, self._ax_o)
        return ("tiling",), tuple(ax.get_xlim() for ax in axes) + (self._ax_g.get_ylim(),)

    # -- compute and draw ----------------------------------------------------------------------
    def _compute(self) -> dict:
        c = self.controls
        n, r = self.n, int(c["row"].value)
        bq, bk, causal = int(c["block_q"].value), int(c["block_k"].value), bool(c["causal"].value)
        Q = self.Q.copy()
        Q[r] = self.editor.values["q"]  # (d_k,): the followed row's query, as typed or slid
        steps = _tiled.tiled_trace(Q, self.K, self.V, block_q=bq, block_k=bk, causal=causal)
        s = min(int(c["step"].value), len(steps))
        mask = _masks.causal_mask(n) if causal else None
        exact = _attention.scaled_dot_product_attention(Q, self.K, self.V, mask=mask)[0][r]  # (d_v,)
        status = np.full((n, n), TODO)
        for k, t in enumerate(steps[:s]):
            (r0, r1), (c0, c1) = t.rows, t.cols
            status[r0:r1, c0:c1] = SKIPPED if t.skipped else (CURRENT if k == s - 1 else DONE)
        for t in steps[s:]:
            if t.skipped:  # a skipped tile is known to be skippable before it is reached
                status[t.rows[0]:t.rows[1], t.cols[0]:t.cols[1]] = SKIPPED
        if causal:
            future = ~_masks.causal_mask(n)
            status[future & ((status == DONE) | (status == CURRENT))] = MASKED
        mine, li = _row_tiles(steps, r)
        done = [t for t in mine if steps.index(t) < s]
        # the axes' ranges cover the row's values with and without the mask, so that the checkbox
        # does not rescale them (a new background each time: 140 ms in-process)
        o_mine, o_li = _row_tiles(_tiled.tiled_trace(Q, self.K, self.V, block_q=bq, block_k=bk,
                                                     causal=not causal), r)
        ranges = {key: np.concatenate([np.ravel(getattr(t, key)[li]) for t in mine]
                                      + [np.ravel(getattr(t, key)[o_li]) for t in o_mine])
                  for key in ("m", "l", "out")}
        return {"steps": steps, "step": s, "status": status, "exact": exact, "row": r,
                "keys_read": np.array([t.cols[1] for t in done]), "m": np.array([t.m[li] for t in done]),
                "l": np.array([t.l[li] for t in done]),
                "partial": done[-1].out[li] if done else np.zeros(self.D_V),
                "m_all": np.array([t.m[li] for t in mine]), "l_all": np.array([t.l[li] for t in mine]),
                "outs_all": np.array([t.out[li] for t in mine]), "blocks": (bq, bk),
                "counts": _tiled.tile_counts(n, n, block_q=bq, block_k=bk, causal=causal),
                "ranges": ranges}

    def _draw(self, st: dict) -> None:
        n, (bq, bk), r, s = self.n, st["blocks"], st["row"], st["step"]
        self._grid.set_data(st["status"])
        for k, mark in self._marks.items():
            rows, cols = np.nonzero(st["status"] == k)
            mark.set_data(cols, rows)
        lines = [[(-0.5, y - 0.5), (n - 0.5, y - 0.5)] for y in range(bq, n, bq)]
        lines += [[(x - 0.5, -0.5), (x - 0.5, n - 0.5)] for x in range(bk, n, bk)]
        self._tiles.set_segments(lines)
        self._row_box.set_y(r - 0.5)
        counts = st["counts"]
        where = ""
        if s:
            t = st["steps"][s - 1]
            where = ": " + _("query block {q}, key block {k}").format(q=t.q_block, k=t.k_block) + \
                (" " + _("(skipped)") if t.skipped else "")
        self._ax_g.set_title(_("tile {s} of {total}").format(s=s, total=counts.total) + where + "\n"
                             + _("{skipped} of {total} tiles skipped").format(skipped=counts.skipped, total=counts.total),
                             fontsize=10)
        for line, final, ys, all_ys in ((self._m_line, self._m_final, st["m"], st["m_all"]),
                                        (self._l_line, self._l_final, st["l"], st["l_all"])):
            line.set_data(st["keys_read"], ys)
            final.set_ydata([all_ys[-1]] * 2)
        for ax, all_ys in ((self._ax_m, st["ranges"]["m"]), (self._ax_l, st["ranges"]["l"])):
            _steady_ylim(ax, float(all_ys.min()), float(all_ys.max()))
        self._ax_m.set_title(_("row {r}: m and l after each of its tiles (dashed: final)").format(r=r), fontsize=10)
        for b, v in zip(self._bars, st["partial"], strict=True):
            b.set_height(v)
        self._exact.set_ydata(st["exact"])
        outs = np.concatenate([st["exact"], st["ranges"]["out"]])  # every value the bars will take
        _steady_ylim(self._ax_o, float(outs.min()), float(outs.max()), symmetric=True)
        err = float(np.abs(st["partial"] - st["exact"]).max())
        self._ax_o.set_title(_("row {r}: partial output vs exact\nlargest gap {gap}").format(r=r, gap=f"{err:.3f}"), fontsize=10)
