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

import html
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["Description", "describe_figure", "describe_heatmap", "describe_vectors",
           "describe_axes", "heatmap_table"]

#: At most this many rows are itemised in a heatmap's facts (the table always has every row).
MAX_ROWS = 12


@dataclass
class Description:
    """What a figure shows, in words.

    Attributes
    ----------
    summary : str
        One or two sentences: the kind of figure, its axes, its size (an image's ``alt``).
    facts : list of str
        The salient facts, one sentence each.
    tables : list of str
        HTML tables (the full matrix of each heatmap), for a reader who wants every number.
    """

    summary: str
    facts: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    #: facts starting with one of these read on after a panel's name ("Panel 1, query a: …")
    joined: tuple = ("Query", "Values", "Masked")

    @property
    def text(self) -> str:
        """Summary and facts as one plain text (an image's ``alt``)."""
        return " ".join([self.summary, *self.facts]).strip()

    @property
    def lines(self) -> str:
        """Summary and facts, one per line (an explorer's description: the page reads out the
        lines that changed)."""
        return "\n".join([self.summary, *self.facts]).strip()

    def __str__(self) -> str:
        return "\n".join([self.summary, *("- " + f for f in self.facts)])

    def html(self, *, open_details: bool = False) -> str:
        """The facts and tables as HTML: a list, then the tables in a ``<details>`` element."""
        parts = []
        if self.facts:
            parts.append("<ul>" + "".join(f"<li>{html.escape(f)}</li>" for f in self.facts) + "</ul>")
        for t in self.tables:
            parts.append(t)
        body = "".join(parts)
        if not body:
            return ""
        return (f"<details{' open' if open_details else ''} class=\"ak-describe\">"
                f"<summary>Describe this figure</summary>{body}</details>")


def _num(v: float, digits: int = 2) -> str:
    s = f"{float(v):.{digits}f}"
    return "0." + "0" * digits if s == "-0." + "0" * digits else s


def _labels(labels, n: int) -> list[str]:
    """Labels as text; a label that repeats (two "the") gets its position: "the (0)", "the (4)"."""
    if labels is None:
        return [str(i) for i in range(n)]
    out = [str(x) for x in labels]
    repeated = {x for x in out if out.count(x) > 1}
    return [f"{x} ({i})" if x in repeated else x for i, x in enumerate(out)]


def _listing(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def describe_heatmap(weights, *, mask=None, query_labels: Sequence | None = None,
                     key_labels: Sequence | None = None, kind: str = "weights",
                     title: str | None = None, fmt: str = "{:.2f}", tables: bool = True,
                     rows: str = "query", cols: str = "key", masked: str = "masked") -> Description:
    """Describe an attention matrix drawn as a heatmap (queries are rows, keys are columns).

    Parameters
    ----------
    weights : array_like, shape (n_q, n_k)
    mask : array_like of bool, optional
        True means "may attend"; False cells are reported as masked.
    query_labels, key_labels : sequence, optional
    kind : {"weights", "scores"}
    title : str, optional
    fmt : str
        How a value is written (the heatmap's own format).
    tables : bool
        Also write the full matrix as an HTML table (``Description.tables``).
    rows, cols : str
        What a row and a column are, singular ("query", "key"; "score function", "head" when the
        figure's axis label says so).
    masked : str
        What the cells hidden by ``mask`` are (drawn hatched, marked "—"): "masked", or what the
        figure says "—" means ("exactly 0").

    Returns
    -------
    Description
        The facts name, for each query, its largest weight and the key it goes to (every key
        whose value, as printed with ``fmt``, equals the largest as printed: "tied" only when
        the printed numbers are equal), the masked cells and the range of the values.
    """
    a = np.asarray(weights, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    n_q, n_k = a.shape
    m = np.ones(a.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool),
                                                                          a.shape)
    ql, kl = _labels(query_labels, n_q), _labels(key_labels, n_k)
    what = "attention weights" if kind == "weights" else "attention scores"
    head = f"{title}: " if title else ""
    rp, cp = _plural(rows), _plural(cols)
    row_word, col_word = rows[0].upper() + rows[1:], cols
    along_r = "" if rows == "row" else "rows, "
    along_c = "" if cols == "column" else "columns, "
    summary = (f"{head}heatmap of {what}, {n_q} {rows if n_q == 1 else rp} ({along_r}top to "
               f"bottom: {_short_list(ql)}) by {n_k} {cols if n_k == 1 else cp} ({along_c}left to "
               f"right: {_short_list(kl)}).")
    facts = []
    shown = range(n_q) if n_q <= MAX_ROWS else list(range(MAX_ROWS // 2)) + list(
        range(n_q - MAX_ROWS // 2, n_q))
    for i in shown:
        ok = m[i] & np.isfinite(a[i])
        if not ok.any():
            facts.append(f"{row_word} {ql[i]}: every {col_word} is {masked}.")
            continue
        row = np.where(ok, a[i], -np.inf)
        best = float(row.max())
        shown_best = fmt.format(best)  # ties as printed: the words never contradict the numbers
        top = [j for j in range(n_k) if ok[j] and fmt.format(row[j]) == shown_best]
        word = "weight" if kind == "weights" else "score"
        if len(top) == 1:
            facts.append(f"{row_word} {ql[i]}: largest {word} {fmt.format(best)} on {col_word} {kl[top[0]]}.")
        else:
            facts.append(f"{row_word} {ql[i]}: largest {word} {fmt.format(best)}, tied on {cp} "
                         f"{_listing([kl[j] for j in top])}.")
    if n_q > MAX_ROWS:
        more = n_q - MAX_ROWS
        facts.insert(MAX_ROWS // 2, f"({more} more {rows if more == 1 else rp} in the table.)")
    masked_word, is_masked = masked, ~m
    if is_masked.any():
        count = int(is_masked.sum())
        said = masked_word[0].upper() + masked_word[1:] + " (drawn hatched, marked —)"
        if count <= 8:
            cells = _listing([f"{rows} {ql[i]} to {cols} {kl[j]}" for i, j in zip(*np.nonzero(is_masked), strict=True)])
            facts.append(f"{said}: {cells}.")
        elif _is_causal(is_masked) and (rows, cols) == ("query", "key"):
            facts.append(f"{said}: {count} cells, every key after its query (a causal mask).")
        else:
            facts.append(f"{said}: {count} of {a.size} cells.")
    vals = a[m & np.isfinite(a)]
    if vals.size:
        facts.append(f"Values range from {fmt.format(vals.min())} to {fmt.format(vals.max())}.")
    table = [heatmap_table(a, mask=None if mask is None else m, query_labels=ql, key_labels=kl,
                           fmt=fmt, caption=(title or what), rows=rows, cols=cols,
                           masked=masked_word)] if tables else []
    return Description(summary, facts, table, joined=(row_word, "Values", masked[0].upper() + masked[1:]))


def _plural(noun: str) -> str:
    """ "query" -> "queries", "score function" -> "score functions" (the last word)."""
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def _noun(label: str, default: str) -> str:
    """What an axis label says its rows or columns are, singular: "queries" -> "query",
    "score function" -> "score function", "key (position s = 0 … 5); — = exactly 0" -> "key";
    ``default`` when the label is empty or too long to be a name."""
    import re

    words = re.split(r"[(;:,]", plain(label), maxsplit=1)[0].strip()
    if not words or len(words.split()) > 4:
        return default
    first = words.split()[0].lower()
    if first in ("query", "queries"):
        return "query"
    if first in ("key", "keys"):
        return "key"
    if words.endswith("ies"):
        return words[:-3] + "y"
    if words.endswith("s") and not words.endswith("ss"):
        return words[:-1]
    return words


def _dash_means(*labels: str) -> str | None:
    """What a figure says its "—" cells are ("— = exactly 0" in a label: "exactly 0"), or None."""
    import re

    for t in labels:
        m = re.search(r"—\s*=\s*([^;,()]+)", plain(t or ""))
        if m and m.group(1).strip():
            return m.group(1).strip()
    return None


def _is_causal(masked: np.ndarray) -> bool:
    n_q, n_k = masked.shape
    off = n_k - n_q
    return bool(np.array_equal(masked, np.triu(np.ones_like(masked, dtype=bool), k=1 + off)))


def _short_list(labels: list[str], limit: int = 10) -> str:
    sep = "; " if any("," in x for x in labels) else ", "  # "soft, T = 1; soft, T = 4"
    if len(labels) <= limit:
        return sep.join(labels)
    return sep.join(labels[:limit // 2]) + f"{sep}…{sep}" + sep.join(labels[-(limit // 2):])


def heatmap_table(weights, *, mask=None, query_labels=None, key_labels=None, fmt: str = "{:.2f}",
                  caption: str = "attention weights", rows: str = "query", cols: str = "key",
                  masked: str = "masked") -> str:
    """The full matrix as an HTML table: a header row of keys, one row per query (``<th scope>``)
    so that a screen reader says which query and key each number belongs to (``rows``/``cols``:
    what the rows and columns are, for a matrix that is not attention)."""
    a = np.asarray(weights, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    n_q, n_k = a.shape
    m = None if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), a.shape)
    ql, kl = _labels(query_labels, n_q), _labels(key_labels, n_k)
    e = html.escape
    out = [f"<table class=\"ak-describe-table\"><caption>{e(caption)}: one row per {e(rows)}, "
           f"one column per {e(cols)}</caption><thead><tr>"
           f"<th scope=\"col\">{e(rows)} \\ {e(cols)}</th>"]
    out += [f"<th scope=\"col\">{e(k)}</th>" for k in kl]
    out.append("</tr></thead><tbody>")
    for i in range(n_q):
        out.append(f"<tr><th scope=\"row\">{e(ql[i])}</th>")
        for j in range(n_k):
            cell = masked if m is not None and not m[i, j] else fmt.format(a[i, j])
            out.append(f"<td>{e(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def describe_vectors(vectors, *, labels: Sequence | None = None, origin=None,
                     title: str | None = None) -> Description:
    """Describe 2-D vectors drawn as arrows: each one's coordinates (and where it starts when the
    origin is not (0, 0))."""
    v = np.asarray(vectors, dtype=float).reshape(-1, 2)
    o = np.zeros(2) if origin is None else np.asarray(origin, dtype=float).reshape(2)
    names = _labels(labels, len(v)) if labels is not None else [f"arrow {i + 1}" for i in range(len(v))]
    start = "" if not o.any() else f" from ({_num(o[0])}, {_num(o[1])})"
    head = f"{title}: " if title else ""
    summary = f"{head}{len(v)} {'arrow' if len(v) == 1 else 'arrows'} in the plane{start}."
    facts = [f"{names[i]} = ({_num(v[i, 0])}, {_num(v[i, 1])})" for i in range(len(v))]
    return Description(summary, ["Arrows: " + "; ".join(facts) + "."] if facts else [])


# ---------------------------------------------------------------------------------------------
# Whole figures


def _curve_facts(name: str, x: np.ndarray, y: np.ndarray, log_y: bool) -> str:
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return f"{name}: no points yet."
    if x.size == 1:
        return f"{name}: one point at ({_fmt(x[0])}, {_fmt(y[0])})."
    sy = float(np.max(np.abs(y)))
    fmt = lambda v: _fmt(v, sy)  # noqa: E731
    s = f"{name}: {x.size} points from x = {_fmt(x[0])} to {_fmt(x[-1])}; starts at {fmt(y[0])}, ends at {fmt(y[-1])}"
    i_lo, i_hi = int(np.argmin(y)), int(np.argmax(y))
    if i_lo not in (0, x.size - 1):
        s += f"; lowest {fmt(y[i_lo])} at x = {_fmt(x[i_lo])}"
    if i_hi not in (0, x.size - 1):
        s += f"; highest {fmt(y[i_hi])} at x = {_fmt(x[i_hi])}"
    if i_lo in (0, x.size - 1) and i_hi in (0, x.size - 1):
        s += "; it rises throughout" if np.all(np.diff(y) >= 0) else \
            "; it falls throughout" if np.all(np.diff(y) <= 0) else ""
    return s + "."


_TEX = [(r"\\mathrm\{([^{}]*)\}", r"\1"), (r"\\mathbf\{([^{}]*)\}", r"\1"),
        (r"\\text\{([^{}]*)\}", r"\1"), (r"\\hat\{([^{}]*)\}", r"\1 hat"),
        (r"\\sqrt\{([^{}]*)\}", r"√\1"), (r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1 / \2"),
        (r"\\sum_\{?(\w)\}?", r"sum over \1 of "), (r"\\(?:,|;|!|quad| )", " ")]
_SYMBOLS = {"cdot": "·", "times": "×", "sigma": "σ", "theta": "θ", "alpha": "α", "beta": "β",
            "mu": "μ", "pi": "π", "top": "ᵀ", "to": "→", "rightarrow": "→", "leftarrow": "←",
            "approx": "≈", "le": "≤", "ge": "≥", "infty": "∞", "lambda": "λ", "ell": "ℓ", "dots": "…",
            "ldots": "…", "in": "∈", "log": "log", "exp": "exp", "max": "max", "min": "min"}


def plain(text: str) -> str:
    """A label as a screen reader should read it: mathtext (``$\\mathrm{softmax}(W_c c)$``)
    without its dollar signs and commands, whitespace collapsed."""
    import re

    text = str(text)
    if "$" in text:
        for pat, rep in _TEX:
            text = re.sub(pat, rep, text)
        text = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), text)
        text = text.replace("$", "").replace("{", "").replace("}", "")
    return " ".join(text.split())


def _fmt(v: float, scale: float = 0.0) -> str:
    v = float(v)
    if v == 0 or abs(v) < 1e-9 * scale:  # rounding noise next to the data's size: 0
        return "0"
    if abs(v) >= 1000:  # written plainly (1024, 2000, 1100), never "1e+03"
        if abs(v) >= 1e15:
            return f"{v:.3g}"
        return str(int(round(v))) if v == round(v) else str(int(round(v, 2 - int(np.floor(np.log10(abs(v)))))))
    if abs(v) < 0.01:
        return f"{v:.2g}"
    return f"{v:.3g}"


def _sup(ax, which: str) -> str:
    fig = ax.figure
    t = getattr(fig, which, None) if fig is not None else None
    return t.get_text() if t is not None else ""


def _suptitle(ax) -> str:
    return _sup(ax, "_suptitle")


def _axis_nouns(ax) -> tuple[str, str]:
    """What the rows and columns of a heatmap or image are: the y and x axis labels (or the
    figure's common ones) say so; "row" and "column" when they are blank."""
    yl = ax.get_ylabel() or _sup(ax, "_supylabel")
    xl = ax.get_xlabel() or _sup(ax, "_supxlabel")
    return _noun(yl, "row"), _noun(xl, "column")


def _axes_title(ax) -> str:
    for loc in ("center", "left", "right"):
        t = ax.get_title(loc=loc)
        if t:
            return plain(t)
    return ""


def describe_axes(ax, *, tables: bool = True) -> Description:
    """Describe one ``Axes``: a heatmap drawn by :func:`~attention_kit.plotting.heatmap`, the
    arrows of :func:`~attention_kit.plotting.plot_vectors`, or else its curves, bars and images."""
    title = _axes_title(ax)
    art = getattr(ax, "_ak_heatmap", None)
    if art is not None and art.image in ax.images:
        data = art.image.get_array()
        mask = None if not np.ma.is_masked(data) else ~np.ma.getmaskarray(data)
        rows, cols = _axis_nouns(ax)
        return describe_heatmap(np.ma.getdata(data), mask=mask, query_labels=art.query_labels,
                                key_labels=art.key_labels, kind=art.kind, title=title or None,
                                fmt=art.fmt, tables=tables, rows=rows, cols=cols,
                                masked=_dash_means(ax.get_xlabel(), ax.get_ylabel(), title,
                                                   _suptitle(ax)) or "masked")
    want_tables = tables
    facts: list[str] = []
    tables: list[str] = []
    kinds: list[str] = []
    joined: tuple = ()
    for va in getattr(ax, "_ak_vectors", []):
        if not va.arrows or va.arrows[0] not in ax.patches:
            continue
        tips = np.array([a._posA_posB[1] for a in va.arrows], dtype=float).reshape(-1, 2) - va.origin
        names = [t.get_text() for t in va.labels] or None
        d = describe_vectors(tips, labels=names, origin=va.origin)
        kinds.append(d.summary.rstrip("."))
        facts += d.facts
    log_y = ax.get_yscale() == "log"
    lines = [ln for ln in ax.get_lines() if ln.get_visible() and ln.get_transform().contains_branch(ax.transData)
             and np.size(ln.get_xdata()) >= 1]
    if lines:
        kinds.append(f"{len(lines)} {'curve' if len(lines) == 1 else 'curves'}")
        for k, ln in enumerate(lines[:8]):
            label = plain(ln.get_label())
            name = label if label and not label.startswith("_") else f"curve {k + 1}"
            x = np.asarray(ln.get_xdata(), dtype=float).ravel()
            y = np.asarray(ln.get_ydata(), dtype=float).ravel()
            facts.append(_curve_facts(name, x, y, log_y))
        if len(lines) > 8:
            facts.append(f"({len(lines) - 8} more curves.)")
    bar_values: list[float] = []
    for bars in getattr(ax, "containers", []):
        patches = [p for p in bars if hasattr(p, "get_height")]
        if not patches:
            continue
        kinds.append(f"{len(patches)} bars")
        label = plain(bars.get_label() or "")
        across = getattr(bars, "orientation", "vertical") == "horizontal"
        sizes = np.array([p.get_width() if across else p.get_height() for p in patches], dtype=float)
        bar_values += [float(v) for v in sizes if np.isfinite(v)]
        top = float(np.max(np.abs(sizes[np.isfinite(sizes)]), initial=0.0))
        hs = [_fmt(h, top) for h in sizes[:16]]
        names = _bar_names(ax, patches, across)
        named = label and not label.startswith("_")
        if names is not None:
            facts.append(f"{label + ': ' if named else 'Bars: '}"
                         + ", ".join(f"{n} {h}" for n, h in zip(names[:16], hs, strict=True)) + (" …" if len(patches) > 16 else "") + ".")
        else:
            facts.append(f"{label + ': ' if named else ''}bar heights "
                         + ", ".join(hs) + (" …" if len(patches) > 16 else "") + ".")
    for im in ax.get_images():
        d = _describe_image(ax, im, tables=want_tables)
        if d is not None:
            kinds.append(d.summary)
            facts += d.facts
            tables += d.tables
            joined += d.joined
    colls = [c for c in ax.collections if c.get_visible() and hasattr(c, "get_offsets")
             and type(c).__name__ == "PathCollection"]
    for c in colls:
        pts = np.asarray(c.get_offsets(), dtype=float)
        if pts.ndim == 2 and len(pts):
            kinds.append(f"{len(pts)} points")
            if len(pts) <= 8:
                facts.append("Points: " + "; ".join(f"({_fmt(p[0])}, {_fmt(p[1])})" for p in pts) + ".")
    xl, yl = plain(ax.get_xlabel()), plain(ax.get_ylabel())
    marks = _reference_marks(ax, xl, yl)
    if marks:
        facts.append("Also drawn: " + "; ".join(marks) + ".")
    axes_words = []
    if xl:
        axes_words.append(f"x axis: {xl}")
    if yl:
        axes_words.append(f"y axis: {yl}{' (log scale)' if log_y and 'log' not in yl else ''}")
    legend = ax.get_legend()
    if legend is not None:
        names = [plain(t.get_text()) for t in legend.get_texts()]
        if names:
            facts.append("Legend: " + ", ".join(names) + ".")
    what = _listing(kinds) if kinds else "a plot"
    summary = (f"{title}: " if title else "") + what + (f" ({'; '.join(axes_words)})" if axes_words else "") + "."
    texts = [plain(t.get_text()) for t in ax.texts if t.get_visible() and t.get_text().strip()]
    texts = [t for t in texts if not _is_bar_number(t, bar_values)]  # a bar's number drawn on it: said above
    if texts and len(texts) <= 12 and not getattr(ax, "_ak_vectors", None):
        facts.append("Labels in the plot: " + "; ".join(texts) + ".")
    return Description(summary[0].upper() + summary[1:] if summary else summary, facts, tables,
                       joined=joined or Description.joined)



def _reference_marks(ax, xl: str, yl: str) -> list[str]:
    """Lines across the whole plot (``axhline``, ``axvline``) by their value and shaded bands
    (``axvspan``, ``axhspan``) by their range: "shaded from training step 300 to 600"."""
    def at(label: str, axis: str, eq: str = "") -> str:
        return f"{label}{eq} " if label and len(label.split()) <= 3 else f"{axis} = "

    def named(artist, words: str) -> str:
        label = plain(artist.get_label() or "")
        return f"{label}: {words}" if label and not label.startswith("_") else words

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
        out.append(named(ln, f"{'horizontal' if data_y else 'vertical'} line at "
                             f"{at(yl, 'y', ' =') if data_y else at(xl, 'x', ' =')}{_fmt(vals[0])}"))
    for p in ax.patches:
        if not p.get_visible() or not hasattr(p, "get_width"):
            continue
        data_x, data_y = p.get_transform().contains_branch_seperately(ax.transData)
        if data_x == data_y:
            continue
        if data_x:
            lo, hi = sorted((p.get_x(), p.get_x() + p.get_width()))
            out.append(named(p, f"shaded from {at(xl, 'x')}{_fmt(lo)} to {_fmt(hi)}"))
        else:
            lo, hi = sorted((p.get_y(), p.get_y() + p.get_height()))
            out.append(named(p, f"shaded from {at(yl, 'y')}{_fmt(lo)} to {_fmt(hi)}"))
    return out[:8]


def _bar_names(ax, patches, across: bool) -> list[str] | None:
    """Which bar is which: the category tick label nearest each bar's centre (x tick labels for
    vertical bars, y for horizontal), or None when the ticks carry no text labels (numbers only)."""
    axis = ax.yaxis if across else ax.xaxis
    ticks = np.asarray(axis.get_majorticklocs(), dtype=float)
    # the formatter's words, also when this axis hides them (a shared x axis labelled below)
    words = [plain(t) for t in axis.get_major_formatter().format_ticks(ticks)]
    if not len(ticks) or len(words) != len(ticks) or not any(w and not _is_number(w) for w in words):
        return None
    gap = float(np.min(np.diff(np.sort(ticks)))) if len(ticks) > 1 else np.inf
    out = []
    for p in patches:
        c = p.get_y() + p.get_height() / 2 if across else p.get_x() + p.get_width() / 2
        k = int(np.argmin(np.abs(ticks - c)))
        if abs(ticks[k] - c) >= gap / 2 or not words[k]:
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
        return Description(d.summary.rstrip("."), [f.replace("(drawn hatched, marked —)", "(blank)")
                                                   for f in d.facts], d.tables, joined=d.joined)
    facts = []
    if vals.size:
        facts.append(f"Image values from {_fmt(vals.min())} to {_fmt(vals.max())}.")
    if not ok.all():
        facts.append(f"{int((~ok).sum())} of {arr.size} cells are blank (masked).")
    out = []
    if tables and arr.size <= MAX_TABLE_CELLS:
        rows, cols = plain(ax.get_ylabel()) or "row", plain(ax.get_xlabel()) or "column"
        scale = float(np.abs(vals).max()) if vals.size else 0.0
        digits = 2 if scale < 100 else 0
        out.append(heatmap_table(np.where(ok, arr, np.nan), mask=None if ok.all() else ok,
                                 query_labels=rl, key_labels=cl, fmt="{:.%df}" % digits,
                                 caption=_axes_title(ax) or "image values", rows=rows, cols=cols))
    return Description(f"an image of {n_r} by {n_c} cells", facts, out)


def describe_figure(fig, *, tables: bool = True) -> Description:
    """Describe every visible panel of a matplotlib ``Figure`` (colour bars are left out: a heatmap
    says its range in words). The summary names the panels; the facts follow panel by panel."""
    def with_insets(ax):
        yield ax
        for child in getattr(ax, "child_axes", []):  # inset axes (01's scores above its heatmap)
            yield from with_insets(child)

    axes = [a for ax in fig.get_axes() for a in with_insets(ax)]
    axes = [ax for ax in dict.fromkeys(axes) if ax.get_visible() and not hasattr(ax, "_colorbar")
            and ax.get_label() != "<colorbar>"]
    sup = getattr(fig, "_suptitle", None)
    head = plain(sup.get_text()).rstrip(".") + ". " if sup is not None and sup.get_text() else ""
    if not axes:
        return Description(head + "An empty figure.")
    parts = [describe_axes(ax, tables=tables) for ax in axes]
    if len(parts) == 1:
        d = parts[0]
        return Description(head + d.summary, d.facts, d.tables, joined=d.joined)
    heat = [p for ax, p in zip(axes, parts, strict=True) if getattr(ax, "_ak_heatmap", None) is not None]
    titles = [_axes_title(ax) for ax in axes]
    summary = head + f"A figure of {len(parts)} panels" + (
        f" ({len(heat)} {'heatmap' if len(heat) == 1 else 'heatmaps'})" if heat and len(heat) < len(parts) else
        " (heatmaps)" if heat else "") + (
        ": " + "; ".join(t for t in titles if t) if any(titles) else "") + "."
    facts, tables = [], []
    for k, p in enumerate(parts):
        facts.append(f"Panel {k + 1}: {p.summary}")
        facts += [f"Panel {k + 1}, {f[0].lower()}{f[1:]}" if f.startswith(tuple(p.joined))
                  else f"Panel {k + 1}: {f}" for f in p.facts]
        tables += p.tables
    return Description(summary, facts, tables)
