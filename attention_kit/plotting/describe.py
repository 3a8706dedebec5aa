"""Text alternatives for the course's figures, written from what the figure draws.

A screen reader cannot read a picture: every figure the course shows also says in words what it
shows. :func:`describe_figure` reads a matplotlib ``Figure`` (its titles, axis labels, heatmaps,
arrows, curves, bars) and returns a :class:`Description`: a one-line ``summary`` (the ``alt`` of
the image), the salient ``facts`` (for a heatmap: each query's largest weight and the key it goes
to, the masked cells, the range) and, one step away, ``tables``: every heatmap's full matrix as an
HTML table a screen reader can walk. The explorers (``LiveFigure``) announce the same text when
the picture changes; the static figures carry it in their output (:mod:`attention_kit.accessible`).

The numbers are the ones the heatmaps print (two decimals) and coordinates to two decimals:
what a sighted learner reads in the picture.
"""

from __future__ import annotations

import numpy as np

from ..i18n import _
from .describe_matrix import (
    Description,
    curve_facts,
    describe_heatmap,
    describe_vectors,
    heatmap_table,
)
from .describe_parts import (
    axes_title,
    band_facts,
    bands_of,
    boxed_cells,
    cell_marks,
    cell_marks_facts,
    colour_only_lines,
    grid_shape,
    has_marker,
    line_style_words,
    reference_marks,
)
from .words import dash_means, figure_number, listing, noun, plain, title_words

__all__ = ["Description", "describe_figure", "describe_heatmap", "describe_vectors",
           "describe_axes", "heatmap_table", "colour_only_lines", "line_style_words"]


def _sup(ax, which: str) -> str:
    fig = ax.figure
    t = getattr(fig, which, None) if fig is not None else None
    return t.get_text() if t is not None else ""


def _suptitle(ax) -> str:
    return _sup(ax, "_suptitle")


def _axis_nouns(ax) -> tuple[str, str]:
    """What the rows and columns of a heatmap or image are: the y and x axis labels (or the
    figure's common ones) say so; "row" and "column" when they are blank."""
    yl = ax.get_ylabel() or _sup(ax, "_supylabel") or _sibling_label(ax, "y")
    xl = ax.get_xlabel() or _sup(ax, "_supxlabel") or _sibling_label(ax, "x")
    return noun(yl, "row"), noun(xl, "column")


def _sibling_label(ax, axis: str) -> str:
    """A heatmap whose axis label was blanked because a neighbour says it once (05's five steps:
    only the first says "queries"): the label of another heatmap in the figure with the same tick
    labels on that axis, else ""."""
    art = getattr(ax, "_ak_heatmap", None)
    if art is None:
        return ""
    mine = art.query_labels if axis == "y" else art.key_labels
    if mine is None:
        return ""
    root = ax.get_figure(root=True) if hasattr(ax, "get_figure") else ax.figure
    for other in root.get_axes() if root is not None else []:
        o = getattr(other, "_ak_heatmap", None)
        if other is ax or o is None or (o.query_labels if axis == "y" else o.key_labels) != mine:
            continue
        label = other.get_ylabel() if axis == "y" else other.get_xlabel()
        if label:
            return label
    return ""


def describe_axes(ax, *, tables: bool = True) -> Description:
    """Describe one ``Axes``: a heatmap drawn by :func:`~attention_kit.plotting.heatmap`, the
    arrows of :func:`~attention_kit.plotting.plot_vectors`, or else its curves, bars and images."""
    title = axes_title(ax)
    art = getattr(ax, "_ak_heatmap", None)
    if art is not None and art.image in ax.images:
        data = art.image.get_array()
        mask = None if not np.ma.is_masked(data) else ~np.ma.getmaskarray(data)
        rows, cols = _axis_nouns(ax)
        d = describe_heatmap(np.ma.getdata(data), mask=mask, query_labels=art.query_labels,
                             key_labels=art.key_labels, kind=art.kind, title=title or None,
                             fmt=art.fmt, tables=tables, rows=rows, cols=cols,
                             masked=dash_means(ax.get_xlabel(), ax.get_ylabel(), title,
                                                _suptitle(ax)) or _("masked"))
        boxes = boxed_cells(ax, data.shape, art.query_labels, art.key_labels, rows, cols)
        if boxes:
            d.facts.extend(boxes)
        return d
    want_tables = tables
    facts: list[str] = []
    tables: list[str] = []
    kinds: list[str] = []
    joined: tuple = ()
    for va in getattr(ax, "_ak_vectors", []):
        if not va.arrows or va.arrows[0] not in ax.patches:
            continue
        tips = np.array([a._posA_posB[1] for a in va.arrows], dtype=float).reshape(-1, 2) - va.origin
        # a blank tip label (02's outputs y_i, 01's v_i drawn on k_i) is said by the explorer's name
        own = list(getattr(va, "names", None) or [])
        texts = [t.get_text().strip() for t in va.labels]
        names = [t or (own[i] if i < len(own) else "") for i, t in enumerate(texts)] if texts else own
        if names and not all(names):
            names = [n or _("arrow {k}").format(k=i + 1) for i, n in enumerate(names)]
        d = describe_vectors(tips, labels=names or None, origin=va.origin)
        kinds.append(d.summary.rstrip(".").rstrip("。"))
        facts += d.facts
    log_y = ax.get_yscale() == "log"
    tips = {id(t) for va in getattr(ax, "_ak_vectors", []) for t in getattr(va, "tips", [])}
    lines = [ln for ln in ax.get_lines() if ln.get_visible() and ln.get_transform().contains_branch(ax.transData)
             and np.size(ln.get_xdata()) >= 1 and id(ln) not in tips]  # (an arrow's tip: said with it)
    # marks on an image's cells (07's computed and this-step cells) are marked cells, not curves
    cells = cell_marks(ax, lines)
    lines = [ln for ln in lines if not any(ln is m for m in cells)]
    if cells:
        kinds.append((_("{n} set of marked cells") if len(cells) == 1 else _("{n} sets of marked cells")).format(n=len(cells)))
        rows, cols = _axis_nouns(ax)
        n_r, n_c = grid_shape(ax)
        facts += cell_marks_facts(ax, cells, rows, cols, _cell_labels(ax, n_r, "y"), _cell_labels(ax, n_c, "x"))
    # one point drawn as a marker (a vector's tip, "you are here") is a marker, not a curve
    marks = [ln for ln in lines if np.size(ln.get_xdata()) == 1 and has_marker(ln)]
    lines = [ln for ln in lines if not any(ln is m for m in marks)]
    curve_names: list = []
    if lines:
        kinds.append((_("{n} curve") if len(lines) == 1 else _("{n} curves")).format(n=len(lines)))
        for k, ln in enumerate(lines[:8]):
            label = plain(ln.get_label())
            name = label if label and not label.startswith("_") else _("curve {k}").format(k=k + 1)
            style = line_style_words(ln)
            if len(lines) > 1 and not all(w in name for w in style.split(_(", "))):
                name += _(" ({style})").format(style=style)  # how to tell it from the others: "(dashed, circles)", once
            x = np.asarray(ln.get_xdata(), dtype=float).ravel()
            y = np.asarray(ln.get_ydata(), dtype=float).ravel()
            named = _point_names(ax, x) if x.size <= 16 else None
            if named is not None:  # 07's exact output: a mark per named place, said like bars
                top = float(np.max(np.abs(y[np.isfinite(y)]), initial=0.0))
                facts.append(_("{name}: {values}.").format(name=name, values=_(", ").join(f"{w} {figure_number(v, top)}" for w, v in zip(named, y, strict=True))))
            else:
                facts.append(curve_facts(name, x, y, log_y, points=ln.get_linestyle() in ("None", "", " ")
                                         and has_marker(ln), plane=ax.get_aspect() != "auto"))
            on = _lies_on(x, y, [(n, np.asarray(o.get_xdata(), dtype=float).ravel(),
                                  np.asarray(o.get_ydata(), dtype=float).ravel()) for o, n in curve_names], log_y)
            if on:  # 07 cell 5: a reference line drawn under the curve it matches
                facts[-1] = facts[-1][:-1] + _("; it lies on {curve}.").format(curve=on)
            curve_names.append((ln, name))
        if len(lines) > 8:
            facts.append(_("({n} more curves.)").format(n=len(lines) - 8))
    if marks:
        kinds.append((_("{n} marker") if len(marks) == 1 else _("{n} markers")).format(n=len(marks)))
        said = []
        for k, ln in enumerate(marks[:8]):
            label = plain(ln.get_label())
            name = getattr(ln, "_ak_name", "") or (label if label and not label.startswith("_") else
                                                     _("marker {k}").format(k=k + 1))
            x, y = float(np.ravel(ln.get_xdata())[0]), float(np.ravel(ln.get_ydata())[0])
            said.append(_("{name} at ({x}, {y})").format(name=name, x=figure_number(x), y=figure_number(y)))
        facts.append(_("Markers: {markers}.").format(markers=_("; ").join(said) + (_("; …") if len(marks) > 8 else "")))
    bar_values: list[float] = []
    for bars in getattr(ax, "containers", []):
        patches = [p for p in bars if hasattr(p, "get_height")]
        if not patches:
            continue
        kinds.append(_("{n} bars").format(n=len(patches)))
        label = plain(bars.get_label() or "")
        across = getattr(bars, "orientation", "vertical") == "horizontal"
        sizes = np.array([p.get_width() if across else p.get_height() for p in patches], dtype=float)
        bar_values += [float(v) for v in sizes if np.isfinite(v)]
        top = float(np.max(np.abs(sizes[np.isfinite(sizes)]), initial=0.0))
        hs = [figure_number(h, top) for h in sizes[:16]]
        names = _bar_names(ax, patches, across)
        named = label and not label.startswith("_")
        more = " …" if len(patches) > 16 else ""
        if names is not None:
            bars_said = _(", ").join(f"{n} {h}" for n, h in zip(names[:16], hs, strict=True)) + more
            facts.append((_("{name}: {bars}.") if named else _("Bars: {bars}.")).format(name=label, bars=bars_said))
        else:
            facts.append((_("{name}: bar heights {heights}.") if named else _("bar heights {heights}.")).format(name=label, heights=_(", ").join(hs) + more))
    for im in ax.get_images():
        d = _describe_image(ax, im, tables=want_tables)
        if d is not None:
            kinds.append(d.summary)
            # an image whose cells carry marks (07's status grid): its codes say nothing the marks do not
            facts += [f for f in d.facts if not (cells and f.startswith(_("Image values from {low} to {high}.").split("{")[0]))]
            tables += d.tables
            joined += d.joined
    bands = bands_of(ax, curve_names)
    if bands:
        kinds.append((_("{n} shaded band") if len(bands) == 1 else _("{n} shaded bands")).format(n=len(bands)))
        facts += band_facts(bands)
    colls = [c for c in ax.collections if c.get_visible() and hasattr(c, "get_offsets")
             and type(c).__name__ == "PathCollection"]
    for c in colls:
        pts = np.asarray(c.get_offsets(), dtype=float)
        if pts.ndim == 2 and len(pts):
            kinds.append(_("{n} points").format(n=len(pts)))
            if len(pts) <= 8:
                facts.append(_("Points: {points}.").format(points=_("; ").join(f"({figure_number(p[0])}, {figure_number(p[1])})" for p in pts)))
    xl, yl = plain(ax.get_xlabel()), plain(ax.get_ylabel())
    marks = reference_marks(ax, xl, yl)
    if marks:
        facts.append(_("Also drawn: {marks}.").format(marks=_("; ").join(marks)))
    axes_words = []
    if xl:
        axes_words.append(_("x axis: {label}").format(label=xl))
    if yl:
        axes_words.append((_("y axis: {label} (log scale)") if log_y and "log" not in yl and "对数" not in yl else _("y axis: {label}")).format(label=yl))
    legend = ax.get_legend()
    if legend is not None:
        names = [plain(t.get_text()) for t in legend.get_texts()]
        if names:
            facts.append(_("Legend: {names}.").format(names=_(", ").join(names)))
    what = listing(kinds) if kinds else _("a plot")
    summary = (_("{title}: ").format(title=title) if title else "") + what + (_(" ({axes})").format(axes=_("; ").join(axes_words)) if axes_words else "") + _(".")
    texts = [plain(t.get_text()) for t in ax.texts if t.get_visible() and t.get_text().strip()]
    texts = [t for t in texts if not _is_bar_number(t, bar_values)]  # a bar's number drawn on it: said above
    if texts and len(texts) <= 12 and not getattr(ax, "_ak_vectors", None):
        facts.append(_("Labels in the plot: {labels}.").format(labels=_("; ").join(texts)))
    return Description(summary[0].upper() + summary[1:] if summary else summary, facts, tables,
                       joined=joined or Description.joined)




#: Two curves closer than this (relative to their size) are said to lie on each other.
COINCIDE = 1e-3


def _lies_on(x, y, earlier, log_y: bool) -> str:
    """The first of ``earlier`` curves (name, x, y) with the same x values that ``y`` lies on:
    "tiled attention (solid, squares), within 0.1 %" (every point within COINCIDE of it, relative
    to the values on a log axis; on a linear one relative to the larger curve's largest value, and
    the words say so: 0 and 0.9 under a largest value of 1000 lie on each other, but are not
    within 0.1 % of each other), or ""."""
    for name, xo, yo in earlier:
        if xo.shape != x.shape or not np.array_equal(xo, x) or x.size < 2:
            continue
        ok = np.isfinite(y) & np.isfinite(yo)
        if not ok.any():
            continue
        a, b = y[ok], yo[ok]
        gap = np.abs(a - b)
        if not gap.any():
            return _("{name} exactly (the same values)").format(name=name)
        size = np.maximum(np.abs(a), np.abs(b)) if log_y else max(np.abs(a).max(), np.abs(b).max())
        if np.all(gap <= COINCIDE * size):
            return (_("{name}, within {percent} %") if log_y else _("{name}, within {percent} % of the curves' largest value")).format(name=name, percent=f"{100 * COINCIDE:g}")
    return ""


def _bar_names(ax, patches, across: bool) -> list[str] | None:
    """Which bar is which: the category tick label nearest each bar's centre (x tick labels for
    vertical bars, y for horizontal), or None when the ticks carry no text labels (numbers only)."""
    if (named := _tick_words(ax.yaxis if across else ax.xaxis)) is None:
        return None
    ticks, words = named
    gap = float(np.min(np.diff(np.sort(ticks)))) if len(ticks) > 1 else np.inf
    out = []
    for p in patches:
        c = p.get_y() + p.get_height() / 2 if across else p.get_x() + p.get_width() / 2
        k = int(np.argmin(np.abs(ticks - c)))
        if abs(ticks[k] - c) >= gap / 2 or not words[k]:
            return None
        out.append(words[k])
    return out


def _tick_words(axis):
    """``(tick places, their words)`` of ``axis``, or None when no tick has words (numbers only).
    The formatter's words, also when this axis hides them (a shared x axis labelled below)."""
    ticks = np.asarray(axis.get_majorticklocs(), dtype=float)
    words = [plain(t) for t in axis.get_major_formatter().format_ticks(ticks)]
    if not len(ticks) or len(words) != len(ticks) or not any(w and not _is_number(w) for w in words):
        return None
    return ticks, words


def _point_names(ax, x: np.ndarray) -> list[str] | None:
    """The x tick's text label at each of ``x`` (07's "out[0]", "out[1]", ...), or None when a
    point is not on a tick that has words (numbers only: a curve of x)."""
    if (named := _tick_words(ax.xaxis)) is None:
        return None
    ticks, words = named
    out = []
    for v in x:
        k = int(np.argmin(np.abs(ticks - v)))
        if abs(ticks[k] - v) > 1e-9 * max(1.0, abs(v)) or not words[k] or _is_number(words[k]):
            return None
        out.append(words[k])
    return out


def _is_number(text: str) -> bool:
    try:
        float(text.replace("−", "-").rstrip("%"))
    except ValueError:
        return False
    return True


def _is_bar_number(text: str, values: list[float]) -> bool:
    """True when ``text`` is only a number and is one of the bars' values as printed."""
    if not values or not _is_number(text):
        return False
    t = text.replace("−", "-")
    x = float(t.rstrip("%"))
    decimals = len(t.split(".")[1].rstrip("%")) if "." in t else 0
    tol = 0.5 * 10.0 ** -decimals + 1e-12
    return any(abs(x - v) <= tol or (t.endswith("%") and abs(x - 100 * v) <= tol) for v in values)


#: A plain image (``imshow`` in a notebook cell) with at most this many cells gets its full table.
MAX_TABLE_CELLS = 2048


def _cell_labels(ax, n: int, axis: str) -> list[str] | None:
    """The tick labels of an image's rows (``axis="y"``) or columns when there is one tick per
    cell at 0, 1, ..., n - 1; else None (the cells are numbered)."""
    ticks = ax.get_yticks() if axis == "y" else ax.get_xticks()
    labels = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    if len(ticks) != n or not np.allclose(ticks, np.arange(n)):
        return None
    words = [plain(t.get_text()) for t in labels]
    return words if all(words) else None


def _describe_image(ax, im, *, tables: bool) -> Description | None:
    """A plain 2-D image (``imshow`` in a notebook's own cell) in words. When it holds attention
    weights (every value in [0, 1], every row summing to 1 over its shown cells) it is described
    like a heatmap: each row's largest weight and the column it goes to, the blank (masked) cells;
    else its size and range. Either way, up to MAX_TABLE_CELLS cells, its full matrix as a table
    (rows and columns named by the axis labels, or by the tick labels of each cell)."""
    raw = im.get_array()
    arr = np.asarray(np.ma.getdata(raw), dtype=float)
    if arr.ndim != 2 or not arr.size:
        return None
    ok = np.isfinite(arr) & ~np.ma.getmaskarray(raw)
    n_r, n_c = arr.shape
    rl, cl = _cell_labels(ax, n_r, "y"), _cell_labels(ax, n_c, "x")
    vals = arr[ok]
    rows_ok = ok.any(axis=1)
    weights = bool(vals.size and vals.min() >= -1e-9 and vals.max() <= 1 + 1e-9 and np.allclose(
        np.where(ok, arr, 0.0).sum(axis=1)[rows_ok], 1.0, atol=0.02))
    if weights:
        rows, cols = _axis_nouns(ax)
        d = describe_heatmap(arr, mask=None if ok.all() else ok, query_labels=rl, key_labels=cl,
                             tables=tables and arr.size <= MAX_TABLE_CELLS, rows=rows, cols=cols)
        hatched = _("{masked} (drawn hatched, marked —)").replace("{masked}", "")
        return Description(d.summary.rstrip(".").rstrip(_(".")), [f.replace(hatched, _(" (blank)")) for f in d.facts], d.tables, joined=d.joined)
    facts = []
    if vals.size:
        facts.append(_("Image values from {low} to {high}.").format(low=figure_number(vals.min()), high=figure_number(vals.max())))
    if not ok.all():
        facts.append(_("{n} of {total} cells are blank (masked).").format(n=int((~ok).sum()), total=arr.size))
    out = []
    if tables and arr.size <= MAX_TABLE_CELLS:
        rows, cols = plain(ax.get_ylabel()) or _("row"), plain(ax.get_xlabel()) or _("column")
        scale = float(np.abs(vals).max()) if vals.size else 0.0
        digits = 2 if scale < 100 else 0
        out.append(heatmap_table(np.where(ok, arr, np.nan), mask=None if ok.all() else ok,
                                 query_labels=rl, key_labels=cl, fmt="{:.%df}" % digits,
                                 caption=axes_title(ax) or _("image values"), rows=rows, cols=cols))
    return Description(_("an image of {rows} by {cols} cells").format(rows=n_r, cols=n_c), facts, out)


def _titles_said(titles: list[str]) -> str:
    """The panels' titles for a summary, joined by "; ": each after its panel's number when that
    is needed to tell them apart (a title of two lines is joined by "; " as well, or a panel has
    no title), else plain ("head 1; head 2; head 3")."""
    if all(titles) and not any("; " in t or "；" in t for t in titles):
        return _("; ").join(titles)
    return _("; ").join(_("panel {k}: {title}").format(k=k + 1, title=t) for k, t in enumerate(titles) if t)


def describe_figure(fig, *, tables: bool = True) -> Description:
    """Describe every visible panel of a matplotlib ``Figure`` (colour bars are left out: a heatmap
    says its range in words). The summary names the panels (:func:`_titles_said`); the facts
    follow panel by panel."""
    def with_insets(ax):
        yield ax
        for child in getattr(ax, "child_axes", []):  # inset axes (01's scores above its heatmap)
            yield from with_insets(child)

    axes = [a for ax in fig.get_axes() for a in with_insets(ax)]
    axes = [ax for ax in dict.fromkeys(axes) if ax.get_visible() and not hasattr(ax, "_colorbar")
            and ax.get_label() != "<colorbar>"]
    sup = getattr(fig, "_suptitle", None)
    head = _("{title}. ").format(title=title_words(sup.get_text()).rstrip(".").rstrip("。")) if sup is not None and sup.get_text() else ""
    if not axes:
        return Description(head + _("An empty figure."))
    parts = [describe_axes(ax, tables=tables) for ax in axes]
    if len(parts) == 1:
        d = parts[0]
        return Description(head + d.summary, d.facts, d.tables, joined=d.joined)
    heat = [p for ax, p in zip(axes, parts, strict=True) if getattr(ax, "_ak_heatmap", None) is not None]
    titles = [axes_title(ax) for ax in axes]
    summary = head + _("A figure of {n} panels").format(n=len(parts)) + (
        (_(" ({n} heatmap)") if len(heat) == 1 else _(" ({n} heatmaps)")).format(n=len(heat))
        if heat and len(heat) < len(parts) else _(" (heatmaps)") if heat else "") + (
        _(": {titles}").format(titles=_titles_said(titles)) if any(titles) else "") + _(".")
    facts, tables, headings = [], [], []
    for k, p in enumerate(parts):
        facts.append(_("Panel {k}: {fact}").format(k=k + 1, fact=p.summary))
        headings.append(facts[-1])
        facts += [_("Panel {k}, {fact}").format(k=k + 1, fact=f"{f[0].lower()}{f[1:]}") if f.startswith(tuple(p.joined))
                  else _("Panel {k}: {fact}").format(k=k + 1, fact=f) for f in p.facts]
        tables += p.tables
    return Description(summary, facts, tables, headings=tuple(headings))
