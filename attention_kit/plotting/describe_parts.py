"""Notebooks 01-09: the parts of a figure its text alternative names besides heatmaps and curves
(issue 34): a curve's line style and marker, lines told apart only by colour, boxes drawn over a
heatmap's cells, shaded bands, reference lines; :func:`describe.describe_figure` puts them in words."""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from .describe_matrix import label_names
from .words import figure_number, listing, plain, plural, title_words

__all__ = ["axes_title", "line_style_words", "colour_only_lines", "has_marker", "boxed_cells", "cell_marks", "grid_shape",
           "cell_marks_facts",
           "bands_of", "band_facts", "reference_marks"]


_DASHES = {"-": N_("solid"), "solid": N_("solid"), "--": N_("dashed"), "dashed": N_("dashed"), ":": N_("dotted"),
           "dotted": N_("dotted"), "-.": N_("dash-dot"), "dashdot": N_("dash-dot")}
_MARKS = {"o": N_("circles"), "s": N_("squares"), "^": N_("triangles"), "v": N_("down triangles"),
          "<": N_("left triangles"), ">": N_("right triangles"), "D": N_("diamonds"), "d": N_("thin diamonds"),
          "x": N_("crosses"), "X": N_("crosses"), "+": N_("pluses"), "P": N_("pluses"), "*": N_("stars"),
          ".": N_("dots"), "p": N_("pentagons"), "h": N_("hexagons"), "H": N_("hexagons"), "8": N_("octagons"),
          "|": N_("bars"), "_": N_("dashes")}


def axes_title(ax) -> str:
    for loc in ("center", "left", "right"):
        t = ax.get_title(loc=loc)
        if t:
            return title_words(t)
    return ""


def line_style_words(ln) -> str:
    """How a line looks apart from its colour: "solid", "dashed, circles", "squares only"."""
    ls = ln.get_linestyle()
    dash = _(_DASHES.get(ls, N_("patterned"))) if ls not in ("None", "none", "", " ") else ""
    marker = ln.get_marker()
    mark = "" if marker in (None, "None", "none", "", " ", ",") else _(_MARKS.get(str(marker), N_("markers")))
    if dash and mark:
        return _("{dash}, {mark}").format(dash=dash, mark=mark)
    return dash or (_("{mark} only").format(mark=mark) if mark else _("invisible"))


def colour_only_lines(fig) -> list[tuple[str, str, str]]:
    """Pairs of curves in one panel of ``fig`` that differ only in colour (the same line style and
    marker): ``[(panel title, label 1, label 2), ...]``. Reference lines (``axhline``) and single
    points are left out. The course's figures have none (a test of the course checks it)."""
    out = []
    for ax in fig.get_axes():
        lines = [ln for ln in ax.get_lines() if ln.get_visible() and np.size(ln.get_xdata()) >= 2
                 and ln.get_transform().contains_branch(ax.transData)
                 and not np.all(np.asarray(ln.get_ydata(), dtype=float) == np.ravel(ln.get_ydata())[0])]
        seen: dict = {}
        for ln in lines:
            key = line_style_words(ln)
            if key in seen:
                out.append((axes_title(ax), plain(seen[key].get_label()), plain(ln.get_label())))
            else:
                seen[key] = ln
    return out


def has_marker(ln) -> bool:
    """Drawn as a marker only (no line): a tip, a "you are here" dot."""
    return ln.get_marker() not in (None, "None", "none", "", " ", ",") and \
        ln.get_linestyle() in ("None", "none", "", " ")


def grid_shape(ax) -> tuple[int, int] | None:
    """(rows, columns) of the panel's first image of cells, or None without one."""
    images = [im for im in ax.get_images() if np.ndim(im.get_array()) >= 2]
    return tuple(np.shape(images[0].get_array())[:2]) if images else None


def cell_marks(ax, lines) -> list:
    """The marker-only series of ``lines`` that mark cells of the panel's image (07's grid of
    (query, key) pairs: dots on the computed cells, stars on this step's tile): every point at a
    cell's centre. They are said as marked cells, not as curves with a start, an end and a highest
    point, which mean nothing for them."""
    shape = grid_shape(ax)
    if shape is None:
        return []
    n_r, n_c = shape
    out = []
    for ln in lines:
        if not has_marker(ln):
            continue
        x = np.asarray(ln.get_xdata(), dtype=float).ravel()
        y = np.asarray(ln.get_ydata(), dtype=float).ravel()
        if x.size and np.all(x == np.round(x)) and np.all(y == np.round(y)) and \
                x.min() >= 0 and y.min() >= 0 and x.max() < n_c and y.max() < n_r:
            out.append(ln)
    return out


def _runs(idx: list[int], names: list[str], noun: str, every: int) -> str:
    """Indices as ranges: "keys 0 to 2 and 6 to 8", "key 4", "every key"."""
    if len(idx) == every:
        return _("every {noun}").format(noun=noun)
    runs, start = [], idx[0]
    for a, b in zip(idx, idx[1:] + [None], strict=True):
        if b != a + 1:
            runs.append(names[start] if start == a else _("{first} to {last}").format(first=names[start], last=names[a]))
            start = b
    many = len(idx) > 1
    return f"{plural(noun) if many else noun} {listing(runs)}"


def cell_marks_facts(ax, marks, rows: str, cols: str, row_labels, col_labels) -> list[str]:
    """Each series of marked cells by its name (the line's label, as in the legend) and its mark,
    how many cells, and which: rows with the same marked columns together ("computed (dots): 60
    cells: queries 0 to 3, every key; queries 4 to 7, keys 0 to 2")."""
    n_r, n_c = grid_shape(ax)
    rows, cols = _(rows), _(cols)  # (in the learner's language: "query" is 查询)
    rn, cn = label_names(row_labels, n_r), label_names(col_labels, n_c)
    facts = []
    for k, ln in enumerate(marks):
        label = plain(ln.get_label())
        name = label if label and not label.startswith("_") else _("marked cells {k}").format(k=k + 1)
        mark = line_style_words(ln).removesuffix(" only").removesuffix(_("{mark} only").replace("{mark}", ""))
        x = np.round(np.asarray(ln.get_xdata(), dtype=float).ravel()).astype(int)
        y = np.round(np.asarray(ln.get_ydata(), dtype=float).ravel()).astype(int)
        by_row: dict[int, list[int]] = {}
        for i, j in sorted(set(zip(y.tolist(), x.tolist(), strict=True))):
            by_row.setdefault(i, []).append(j)
        groups: list[tuple[list[int], list[int]]] = []
        for i, js in by_row.items():
            if groups and groups[-1][1] == js and groups[-1][0][-1] == i - 1:
                groups[-1][0].append(i)
            else:
                groups.append(([i], js))
        n = sum(len(js) for js in by_row.values())
        where = _("; ").join(_("{rows}, {cols}").format(rows=_runs(r, rn, rows, n_r), cols=_runs(c, cn, cols, n_c))
                             for r, c in groups[:6])
        facts.append((_("{name} ({mark}): {n} cell: {where}.") if n == 1 else
                      _("{name} ({mark}): {n} cells: {where}.")).format(
            name=name, mark=mark, n=n, where=where + (_("; …") if len(groups) > 6 else "")))
    return facts


def boxed_cells(ax, shape, query_labels, key_labels, rows: str, cols: str) -> list[str]:
    """The cells of a heatmap framed by an unfilled box (05's targets: where the task needs each
    query to look), by their row and column: "Target cells (outlined boxes): query bee → key owl;
    …". A box's label says what it marks ("target"); without one they are "Outlined cells"."""
    n_r, n_c = shape[:2]
    found: dict[str, list[str]] = {}
    for p in ax.patches:
        if not p.get_visible() or type(p).__name__ != "Rectangle" or p.get_fill():
            continue
        if not p.get_transform().contains_branch(ax.transData):
            continue
        x, y, w, h = p.get_x(), p.get_y(), p.get_width(), p.get_height()
        if not (np.isclose(abs(w), 1) and np.isclose(abs(h), 1)):
            continue
        j, i = x + 0.5, y + 0.5
        if not (np.isclose(j, round(j)) and np.isclose(i, round(i))):
            continue
        i, j = int(round(i)), int(round(j))
        if not (0 <= i < n_r and 0 <= j < n_c):
            continue
        q, k = label_names(query_labels, n_r)[i], label_names(key_labels, n_c)[j]
        label = plain(p.get_label() or "")
        what = label if label and not label.startswith("_") else "outlined"
        found.setdefault(what, []).append(f"{_(rows)} {q} → {_(cols)} {k}")
    out = []
    for what, cells in found.items():
        head = _("Outlined cells") if what == "outlined" else \
            _("{what} cells (outlined boxes)").format(what=f"{what[0].upper()}{what[1:]}")
        out.append(_("{head}: {cells}.").format(head=head, cells=_("; ").join(cells[:24]) + (_("; …") if len(cells) > 24 else "")))
    return out


def bands_of(ax, curve_names) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """The shaded bands of ``fill_between`` (09's range of the seeds around each mean): for each,
    the curve it belongs to (its label, else the curve of its colour), and its lower and upper
    edge at each x: ``[(name, x, low, high), ...]``."""
    from matplotlib.colors import to_rgb

    out = []
    for c in ax.collections:
        if not c.get_visible() or "PolyCollection" not in type(c).__name__ or len(c.get_paths()) != 1:
            continue
        if not c.get_transform().contains_branch(ax.transData):
            continue
        v = np.asarray(c.get_paths()[0].vertices, dtype=float)
        v = v[np.all(np.isfinite(v), axis=1)]
        xs = np.unique(v[:, 0])
        if len(xs) < 2 or len(xs) * 2 > len(v) + 2:
            continue
        low = np.array([v[v[:, 0] == x, 1].min() for x in xs])
        high = np.array([v[v[:, 0] == x, 1].max() for x in xs])
        label = plain(c.get_label() or "")
        name = label if label and not label.startswith("_") else ""
        if not name and len(c.get_facecolor()):
            rgb = np.asarray(c.get_facecolor()[0][:3])
            same = [n for ln, n in curve_names if np.allclose(to_rgb(ln.get_color()), rgb, atol=1e-3)]
            name = same[0] if len(same) == 1 else ""
        out.append((name or _("band {k}").format(k=len(out) + 1), xs, low, high))
    return out


def band_facts(bands) -> list[str]:
    """Each band by its curve and its range at each x (at most 6; else where it starts and ends),
    then which bands overlap where (a difference of the means inside both ranges)."""
    facts = []
    for name, xs, low, high in bands:
        at = range(len(xs)) if len(xs) <= 6 else (0, len(xs) - 1)
        facts.append(_("Shaded band, the range of {name}: {ranges}.").format(name=name, ranges=_("; ").join(
            _("{low} to {high} at x = {x}").format(low=figure_number(low[i]), high=figure_number(high[i]),
                                                   x=figure_number(xs[i])) for i in at)))
    for a in range(len(bands)):
        for b in range(a + 1, len(bands)):
            (na, xa, la, ha), (nb, xb, lb, hb) = bands[a], bands[b]
            both = [x for x in xa if x in set(xb)]
            over = [x for x in both if max(la[list(xa).index(x)], lb[list(xb).index(x)])
                    <= min(ha[list(xa).index(x)], hb[list(xb).index(x)])]
            if over:
                where = listing([figure_number(x) for x in over])
                facts.append(_("The bands of {a} and {b} overlap at x = {x}.").format(a=na, b=nb, x=where))
    return facts


def reference_marks(ax, xl: str, yl: str) -> list[str]:
    """Lines across the whole plot (``axhline``, ``axvline``) by their value and shaded bands
    (``axvspan``, ``axhspan``) by their range: "shaded from training step 300 to 600"."""
    def at(label: str, axis: str, eq: str = "") -> str:
        return f"{label}{eq} " if label and len(label.split()) <= 3 else f"{axis} = "

    def named(artist, words: str) -> str:
        label = plain(artist.get_label() or "")
        return _("{label}: {words}").format(label=label, words=words) if label and not label.startswith("_") else words

    out = []
    for ln in ax.get_lines():
        if not ln.get_visible():
            continue
        data_x, data_y = ln.get_transform().contains_branch_seperately(ax.transData)
        if data_x == data_y:
            continue
        vals = np.asarray(ln.get_ydata() if data_y else ln.get_xdata(), dtype=float).ravel()
        if not vals.size or not np.all(vals == vals[0]):
            continue
        out.append(named(ln, (_("horizontal line at {where}{value}") if data_y else _("vertical line at {where}{value}")).format(
            where=at(yl, 'y', ' =') if data_y else at(xl, 'x', ' ='), value=figure_number(vals[0]))))
    for p in ax.patches:
        if not p.get_visible() or not hasattr(p, "get_width"):
            continue
        data_x, data_y = p.get_transform().contains_branch_seperately(ax.transData)
        if data_x == data_y:
            continue
        if data_x:
            lo, hi = sorted((p.get_x(), p.get_x() + p.get_width()))
            out.append(named(p, _("shaded from {where}{low} to {high}").format(
                where=at(xl, 'x'), low=figure_number(lo), high=figure_number(hi))))
        else:
            lo, hi = sorted((p.get_y(), p.get_y() + p.get_height()))
            out.append(named(p, _("shaded from {where}{low} to {high}").format(
                where=at(yl, 'y'), low=figure_number(lo), high=figure_number(hi))))
    return out[:8]
