"""Text alternatives of a matrix of weights, of vectors and of a curve (the words of
:mod:`attention_kit.plotting.describe`, which reads them off a figure): a :class:`Description`
with a summary, the salient facts and the full matrix as a table."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..i18n import N_, _
from .words import figure_number, listing, plural, short_list

__all__ = ["Description", "describe_heatmap", "heatmap_table", "describe_vectors", "curve_facts",
           "curve_jumps", "path_facts", "scattered", "label_names", "MAX_ROWS"]


#: Nouns a heatmap's rows, columns and hidden cells are named by (its axis labels, singular),
#: said in the learner's language.
_NOUNS = (N_("row"), N_("column"), N_("query"), N_("key"), N_("head"), N_("token"), N_("position"),
          N_("score function"), N_("masked"))

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
    #: the facts that only name a panel and what it holds ("Panel 2: Weights …: 3 bars"): an
    #: announcement says the other changes first
    headings: tuple = ()

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
        said = html.escape(_("Describe this figure"))
        return (f"<details{' open' if open_details else ''} class=\"ak-describe\">"
                f"<summary>{said}</summary>{body}</details>")


def _num(v: float, digits: int = 2) -> str:
    s = f"{float(v):.{digits}f}"
    return "0." + "0" * digits if s == "-0." + "0" * digits else s


def label_names(labels, n: int) -> list[str]:
    """Labels as text; a label that repeats (two "the") gets its position: "the (0)", "the (4)"."""
    if labels is None:
        return [str(i) for i in range(n)]
    out = [str(x) for x in labels]
    repeated = {x for x in out if out.count(x) > 1}
    return [f"{x} ({i})" if x in repeated else x for i, x in enumerate(out)]


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
        whose value, as printed with ``fmt`` but at least two decimals, equals the largest as
        printed: "tied" when the values are equal, "about 0.23, on keys a and b" when only their
        printed numbers are), the masked cells and the range of the values.
    """
    a = np.asarray(weights, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    n_q, n_k = a.shape
    m = np.ones(a.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool),
                                                                          a.shape)
    ql, kl = label_names(query_labels, n_q), label_names(key_labels, n_k)
    what = _("attention weights") if kind == "weights" else _("attention scores")
    head = _("{title}: ").format(title=title) if title else ""
    along_r = "" if rows == "row" else _("rows, ")
    along_c = "" if cols == "column" else _("columns, ")
    rows, cols, masked = _(rows), _(cols), _(masked)  # (in the learner's language: "query" is 查询)
    rp, cp = plural(rows), plural(cols)
    row_word, col_word = rows[0].upper() + rows[1:], cols
    summary = _("{head}heatmap of {what}, {n_rows} {rows} ({along_r}top to bottom: {row_names}) by "
                "{n_cols} {cols} ({along_c}left to right: {col_names}).").format(
        head=head, what=what, n_rows=n_q, rows=rows if n_q == 1 else rp, along_r=along_r,
        row_names=short_list(ql), n_cols=n_k, cols=cols if n_k == 1 else cp, along_c=along_c,
        col_names=short_list(kl))
    facts = []
    tie_fmt = _tie_format(fmt)
    shown = range(n_q) if n_q <= MAX_ROWS else list(range(MAX_ROWS // 2)) + list(
        range(n_q - MAX_ROWS // 2, n_q))
    for i in shown:
        ok = m[i] & np.isfinite(a[i])
        if not ok.any():
            facts.append(_("{row} {name}: every {col} is {masked}.").format(
                row=row_word, name=ql[i], col=col_word, masked=masked))
            continue
        row = np.where(ok, a[i], -np.inf)
        best = float(row.max())
        shown_best = tie_fmt.format(best)  # ties as printed: the words never contradict the numbers
        top = [j for j in range(n_k) if ok[j] and tie_fmt.format(row[j]) == shown_best]
        word = _("weight") if kind == "weights" else _("score")
        if len(top) == 1:
            facts.append(_("{row} {name}: largest {word} {value} on {col} {key}.").format(
                row=row_word, name=ql[i], word=word, value=shown_best, col=col_word, key=kl[top[0]]))
        elif np.ptp(row[top]) <= 1e-9 * max(1.0, abs(best)):  # truly equal
            facts.append(_("{row} {name}: largest {word} {value}, tied on {cols} {keys}.").format(
                row=row_word, name=ql[i], word=word, value=shown_best, cols=cp,
                keys=listing([kl[j] for j in top])))
        else:  # equal only as printed (0.2333 and 0.2350): "about", not "tied"
            facts.append(_("{row} {name}: largest {word} about {value}, on {cols} {keys}.").format(
                row=row_word, name=ql[i], word=word, value=shown_best, cols=cp,
                keys=listing([kl[j] for j in top])))
    if n_q > MAX_ROWS:
        more = n_q - MAX_ROWS
        facts.insert(MAX_ROWS // 2, _("({more} more {rows} in the table.)").format(
            more=more, rows=rows if more == 1 else rp))
    masked_word, is_masked = masked, ~m
    if is_masked.any():
        count = int(is_masked.sum())
        said = _("{masked} (drawn hatched, marked —)").format(masked=masked_word[0].upper() + masked_word[1:])
        if count <= 8:
            cells = listing([_("{row} {q} to {col} {k}").format(row=rows, q=ql[i], col=cols, k=kl[j])
                             for i, j in zip(*np.nonzero(is_masked), strict=True)])
            facts.append(_("{said}: {cells}.").format(said=said, cells=cells))
        elif _is_causal(is_masked) and (rows, cols) == (_("query"), _("key")):
            facts.append(_("{said}: {count} cells, every key after its query (a causal mask).").format(
                said=said, count=count))
        else:
            facts.append(_("{said}: {count} of {total} cells.").format(said=said, count=count, total=a.size))
    vals = a[m & np.isfinite(a)]
    if vals.size:
        facts.append(_("Values range from {low} to {high}.").format(low=fmt.format(vals.min()),
                                                                    high=fmt.format(vals.max())))
    table = [heatmap_table(a, mask=None if mask is None else m, query_labels=ql, key_labels=kl,
                           fmt=fmt, caption=(title or what), rows=rows, cols=cols,
                           masked=masked_word)] if tables else []
    return Description(summary, facts, table, joined=(row_word, _("Values"), masked[0].upper() + masked[1:]))


def _tie_format(fmt: str) -> str:
    """How the largest value is written and ties judged: the heatmap's own format, but never
    coarser than two decimals (05's one-decimal cells made 0.245, 0.171 and 0.219 "tied")."""
    m = re.fullmatch(r"\{:\.(\d+)f\}", fmt)
    return "{:.2f}" if m and int(m.group(1)) < 2 else fmt


def _is_causal(masked: np.ndarray) -> bool:
    n_q, n_k = masked.shape
    off = n_k - n_q
    return bool(np.array_equal(masked, np.triu(np.ones_like(masked, dtype=bool), k=1 + off)))


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
    ql, kl = label_names(query_labels, n_q), label_names(key_labels, n_k)
    e = html.escape
    rows, cols = _(rows), _(cols)
    out = ["<table class=\"ak-describe-table\"><caption>"
           + e(_("{caption}: one row per {row}, one column per {col}").format(caption=caption, row=rows, col=cols))
           + "</caption><thead><tr>"
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
    names = label_names(labels, len(v)) if labels is not None else [_("arrow {k}").format(k=i + 1)
                                                                      for i in range(len(v))]
    start = "" if not o.any() else _(" from ({x}, {y})").format(x=_num(o[0]), y=_num(o[1]))
    head = _("{title}: ").format(title=title) if title else ""
    count = (_("{n} arrow") if len(v) == 1 else _("{n} arrows")).format(n=len(v))
    summary = _("{head}{count} in the plane{start}.").format(head=head, count=count, start=start)
    facts = [f"{names[i]} = ({_num(v[i, 0])}, {_num(v[i, 1])})" for i in range(len(v))]
    return Description(summary, [_("Arrows: {arrows}.").format(arrows=_("; ").join(facts))] if facts else [])


def curve_jumps(x: np.ndarray, y: np.ndarray, log_y: bool = False, *, most: int = 3) -> list[tuple[int, int]]:
    """Where a curve jumps: a change between neighbouring points at least a fifth of the curve's
    range and more than ten times every other change (01's hard weight, 0 until x = 2.5, 1 after).
    Neighbouring big changes the same way are one jump. Returns ``[(i, j), ...]``, the points
    before and after each jump; none for fewer than 5 points or more than ``most`` jumps, for x
    that is not in order (a curve in the plane), for a big change across a wider gap in x than
    any other (a straight line sampled sparsely at its end: a gap, not a jump), and for one point
    away from the rest (a jump there and straight back: an outlier, said as the highest or lowest)."""
    if log_y and np.all(y > 0):
        y = np.log10(y)
    d = np.diff(y)
    span = float(np.ptp(y)) if y.size else 0.0
    if y.size < 5 or span == 0:
        return []
    dx = np.diff(x)
    if not (np.all(dx > 0) or np.all(dx < 0)):
        return []
    big = np.abs(d) >= 0.2 * span
    if not big.any() or (big.all()):
        return []
    if float(np.abs(d[big]).min()) <= 10 * float(np.abs(d[~big]).max()):
        return []
    if float(np.abs(dx[big]).max()) > float(np.abs(dx[~big]).max()):
        return []
    out: list[tuple[int, int]] = []
    for k in np.flatnonzero(big):
        k = int(k)
        if out and out[-1][1] == k and np.sign(d[k]) == np.sign(d[k - 1]):
            out[-1] = (out[-1][0], k + 1)
        else:
            out.append((k, k + 1))
    if any(a[1] == b[0] and np.sign(d[a[0]]) != np.sign(d[b[0]]) for a, b in zip(out, out[1:], strict=False)):
        return []  # one point away and back: an outlier, not two jumps
    return out if len(out) <= most else []


def scattered(x: np.ndarray, y: np.ndarray) -> bool:
    """Points that go up and down from one to the next most of the time (a measurement, 07's
    times per token): at least 20, x in order (not a path in the plane, 09's trail), and the
    direction turns at 45 % of them or more (independent noise turns at 2 in 3; a sampled wave
    turns at θ/π of them, so only one with under 4.4 points per period counts)."""
    dx, d = np.diff(x), np.diff(y)
    d = d[d != 0]
    return (y.size >= 20 and d.size >= 2 and bool(np.all(dx > 0) or np.all(dx < 0))
            and float(np.mean(np.sign(d[1:]) != np.sign(d[:-1]))) >= 0.45)


def path_facts(name: str, x: np.ndarray, y: np.ndarray) -> str:
    """Points in the plane rather than a function of x (x back and forth, or two points): a segment
    between its ends; points at one distance from the origin, a circle (09's trail of a key
    rotated to every position); else where the points lie and where they start and end."""
    s = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))))
    at = lambda k: f"({figure_number(x[k], s)}, {figure_number(y[k], s)})"  # noqa: E731
    if x.size == 2:
        return _("{name}: a segment from {a} to {b}.").format(name=name, a=at(0), b=at(1))
    r = np.hypot(x, y)
    spread = len(np.unique(np.round(np.stack([x, y], axis=1) / (s or 1.0), 9), axis=0)) >= 3
    if spread and r.max() > 0 and np.ptp(r) <= 0.01 * r.max():  # (one place repeated: no circle)
        return _("{name}: {n} points on a circle of radius {r} around (0, 0); the first at {a}, "
                 "the last at {b}.").format(name=name, n=x.size, r=figure_number(r.mean()), a=at(0), b=at(-1))
    return _("{name}: {n} points in the plane, x from {x0} to {x1}, y from {y0} to {y1}; the first at "
             "{a}, the last at {b}.").format(name=name, n=x.size, x0=figure_number(x.min(), s),
                                             x1=figure_number(x.max(), s), y0=figure_number(y.min(), s),
                                             y1=figure_number(y.max(), s), a=at(0), b=at(-1))


def curve_facts(name: str, x: np.ndarray, y: np.ndarray, log_y: bool, points: bool = False,
                plane: bool = False) -> str:
    """A curve in words: its points, start and end, jumps, lowest and highest. ``points``: drawn
    as markers only; when those are scattered (:func:`scattered`), their trend is said instead of
    the single lowest and highest point, which are noise. Two points are a segment
    (:func:`path_facts`) when ``plane`` (the axes' aspect is fixed: x and y are coordinates in the
    plane) or one end is the origin (an arrow, 09's query and key); else a curve of x with two
    points (07's running max after a row's first two tiles: "flat at 0.951")."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return _("{name}: no points yet.").format(name=name)
    if x.size == 1:
        return _("{name}: one point at ({x}, {y}).").format(name=name, x=figure_number(x[0]), y=figure_number(y[0]))
    sy = float(np.max(np.abs(y)))
    fmt = lambda v: figure_number(v, sy)  # noqa: E731
    dx = np.diff(x)
    arrow = x.size == 2 and (plane or not (x[0] or y[0]) or not (x[1] or y[1]))
    if arrow or not (np.all(dx >= 0) or np.all(dx <= 0)) or not dx.any():
        return path_facts(name, x, y)  # (x in order with repeats, a staircase: still a curve)
    head = _("{name}: {n} points from x = {x0} to {x1}; ").format(name=name, n=x.size, x0=figure_number(x[0]),
                                                                   x1=figure_number(x[-1]))
    if len({fmt(v) for v in y}) == 1:  # every value the same as printed: flat, neither rising nor falling
        return head + _("flat at {y}.").format(y=fmt(y[0]))
    s = head + _("starts at {a}, ends at {b}").format(a=fmt(y[0]), b=fmt(y[-1]))
    if points and scattered(x, y):
        k = max(3, x.size // 10)
        a, b = float(np.median(y[:k])), float(np.median(y[-k:]))
        # against the spread of the middle 90 % of the points: a single spike (a busy machine's
        # pause) made the whole range, and a rise from 1.3 to 6.3 "stayed level"
        big = 0.5 * float(np.subtract(*np.percentile(y, [95, 5])))
        trend = (_("; scattered from point to point: the median of its first {k} points is {a}, of its "
                   "last {k} {b}, so overall it rises.") if b - a > big else
                 _("; scattered from point to point: the median of its first {k} points is {a}, of its "
                   "last {k} {b}, so overall it falls.") if a - b > big else
                 _("; scattered from point to point: the median of its first {k} points is {a}, of its "
                   "last {k} {b}, so overall it stays level."))
        return s + trend.format(k=k, a=fmt(a), b=fmt(b))
    jumps = curve_jumps(x, y, log_y)
    near = {k for a, b in jumps for k in range(a, b + 1)}  # a jump's ends: said with the jump
    for a, b in jumps:
        gap = x[b] - x[a]
        at = _("at x = {x}").format(x=figure_number((x[a] + x[b]) / 2)) if abs(gap) <= 0.02 * abs(x[-1] - x[0]) else \
            _("between x = {x0} and {x1}").format(x0=figure_number(x[a]), x1=figure_number(x[b]))
        # over one step of x a jump or a drop; over several steps, each a big change the same way
        # (a steep sigmoid sampled coarsely), a steep rise or fall: the samples show no break
        verb = (_("; jumps from {a} to {b} {at}") if y[b] > y[a] else _("; drops from {a} to {b} {at}")) \
            if b - a == 1 else (_("; rises steeply from {a} to {b} {at}") if y[b] > y[a] else
                                _("; falls steeply from {a} to {b} {at}"))
        s += verb.format(a=fmt(y[a]), b=fmt(y[b]), at=at)
    i_lo, i_hi = int(np.argmin(y)), int(np.argmax(y))
    if i_lo not in (0, x.size - 1) and i_lo not in near:
        s += _("; lowest {y} at x = {x}").format(y=fmt(y[i_lo]), x=figure_number(x[i_lo]))
    if i_hi not in (0, x.size - 1) and i_hi not in near:
        s += _("; highest {y} at x = {x}").format(y=fmt(y[i_hi]), x=figure_number(x[i_hi]))
    if i_lo in (0, x.size - 1) and i_hi in (0, x.size - 1) and not jumps:
        s += _("; it rises throughout") if np.all(np.diff(y) >= 0) else \
            _("; it falls throughout") if np.all(np.diff(y) <= 0) else ""
    return s + _(".")
