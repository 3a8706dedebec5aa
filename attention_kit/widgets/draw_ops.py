"""Matplotlib artists as a short list of canvas drawing commands ("ops") for the browser.

A :class:`~attention_kit.widgets.LiveFigure` sends its picture in two layers: a PNG background
(axes, ticks, labels, colour bars), sent only when it changes, and the artists that move with a
slider (heatmap cells, cell values, arrows, bars, a title) as the ops built here, drawn by
``live_figure.js`` on a ``<canvas>``: a few kilobytes of JSON per step instead of a PNG.

Every op is a list whose first item names it; coordinates are canvas pixels (origin top left):

* ``["p", codes, xy, fill, stroke, width, dashes, cap, join, clip]``: a path. ``codes`` has one
  letter per vertex group (M move, L line, Q quadratic, C cubic, Z close), ``xy`` the flat
  coordinates; ``fill`` and ``stroke`` are CSS colours or None; ``width`` and ``dashes`` in pixels.
* ``["t", x, y, text, font, colour, align, baseline, angle, clip]``: a line of text at an anchor
  (``font``: an index into the CSS fonts sent with the ops), aligned by the browser, rotated by
  ``angle`` degrees anticlockwise.
* ``["m", codes, xy, at, fill, stroke, width, dashes, cap, join, clip]``: markers, the path
  ``codes`` / ``xy`` (around the origin) drawn at every point of the flat list ``at``.
* ``["i", x, y, w, h, nx, ny, rgba, clip]``: an image of ``nx`` x ``ny`` cells, ``rgba`` their
  bytes in base64, scaled up without smoothing to the ``w`` x ``h`` box at (x, y).

``clip`` is ``[x, y, w, h]`` or None. An artist the ops cannot express (hatching, clip paths that
are not rectangles, images with a non-affine transform) raises :class:`Unsupported`, and the
live figure falls back to sending the whole picture as a PNG.
"""

from __future__ import annotations

import base64
import weakref

import numpy as np
from matplotlib.axis import Axis
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.path import Path
from matplotlib.text import Text

from ..plotting.fast_artists import TextBatch

__all__ = ["Unsupported", "record_ops"]

#: The fonts the browser tries for matplotlib's default sans-serif (DejaVu Sans) text.
SANS = '"DejaVu Sans", "Bitstream Vera Sans", Verdana, Arial, sans-serif'
_FAMILIES = {"sans-serif": SANS, "serif": '"DejaVu Serif", Georgia, serif',
             "monospace": '"DejaVu Sans Mono", Menlo, Consolas, monospace'}
_CODES = {Path.MOVETO: "M", Path.LINETO: "L", Path.CURVE3: "Q", Path.CURVE4: "C",
          Path.CLOSEPOLY: "Z"}
_VALIGN = {"center": "middle", "center_baseline": "middle", "top": "top", "bottom": "bottom",
           "baseline": "alphabetic"}
_CAPS = {"butt": "butt", "round": "round", "projecting": "square"}


_FONTS: dict = {}  # (font properties, dpi) -> CSS font
_RECORDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Agg renderer -> OpRecorder
_COLOURS: dict = {}  # (matplotlib colour, alpha) -> CSS colour


def _key(color):
    """A colour as a hashable key (matplotlib gives strings, tuples or arrays)."""
    return color if isinstance(color, str) or color is None else tuple(np.ravel(color).tolist())


def _marker_key(m) -> tuple:
    """What a ``MarkerStyle`` draws: its paths and transforms (its name does not tell them)."""
    key = []
    for path, tr in ((m.get_path(), m.get_transform), (m.get_alt_path(), m.get_alt_transform)):
        if path is not None:
            key += [path.vertices.tobytes(), None if path.codes is None else path.codes.tobytes(),
                    tr().get_matrix().tobytes()]
    return tuple(key)


def _effects_key(a) -> str:
    """An artist's path effects with their settings (another width or colour: another picture)."""
    return repr([(type(p).__name__, vars(p)) for p in a.get_path_effects()])


def _css_colour(color, alpha) -> str | None:
    key = (_key(color), alpha)
    out = _COLOURS.get(key, "")
    if out == "":
        out = _COLOURS[key] = css(to_rgba(color), alpha)
    return out


class Unsupported(Exception):
    """An artist that the canvas ops cannot draw faithfully (the figure is sent as a PNG)."""


def css(rgba, alpha: float | None = None) -> str | None:
    """A CSS colour from an RGB(A) tuple of floats in [0, 1]; None when fully transparent."""
    r, g, b = (int(round(255 * float(c))) for c in rgba[:3])
    a = float(rgba[3]) if len(rgba) > 3 else 1.0
    if alpha is not None:
        a = float(alpha)
    if a <= 0:
        return None
    return f"rgb({r},{g},{b})" if a >= 1 else f"rgba({r},{g},{b},{a:.3g})"


def _font(prop, dpi: float) -> str:
    size = prop.get_size_in_points() * dpi / 72.0
    weight = prop.get_weight()
    weight = {"normal": 400, "regular": 400, "bold": 700, "heavy": 800, "light": 300}.get(
        weight, weight)
    families = ", ".join(_FAMILIES.get(f, f'"{f}"') for f in prop.get_family())
    return f"{prop.get_style()} {weight} {size:.2f}px {families}"


class OpRecorder(RendererBase):
    """A matplotlib renderer that writes canvas ops instead of pixels.

    Text metrics come from the real Agg renderer, so artists lay themselves out exactly as in the
    PNG; the display's y axis (up) is flipped to the canvas's (down).
    """

    def __init__(self, agg):
        super().__init__()
        self.agg = agg
        self.width, self.height, self.dpi = agg.width, agg.height, agg.dpi
        self.ops: list = []
        self.fonts: list[str] = []  # CSS fonts; text ops refer to them by index

    def font(self, prop) -> int:
        key = (hash(prop), self.dpi)
        css_font = _FONTS.get(key)
        if css_font is None:
            css_font = _FONTS[key] = _font(prop, self.dpi)
        return self.font_index(css_font)

    def font_index(self, css_font: str) -> int:
        if css_font not in self.fonts:
            self.fonts.append(css_font)
        return self.fonts.index(css_font)

    # -- what matplotlib asks of any renderer ---------------------------------------------------
    def get_canvas_width_height(self):
        return self.width, self.height

    def get_text_width_height_descent(self, s, prop, ismath):
        return self.agg.get_text_width_height_descent(s, prop, ismath)

    def points_to_pixels(self, points):
        return points * self.dpi / 72.0

    def new_gc(self):
        return GraphicsContextBase()

    def flipy(self):
        return False

    # -- drawing ---------------------------------------------------------------------------------
    def _clip(self, gc):
        path, _ = gc.get_clip_path()
        if path is not None:
            raise Unsupported("clip path")
        return self._box(gc.get_clip_rectangle())

    def _box(self, box):
        """A clip ``Bbox`` in display pixels as ``[x, y, w, h]`` on the canvas, or None."""
        if box is None:
            return None
        x0, y0, x1, y1 = box.extents
        return [round(x0, 2), round(self.height - y1, 2), round(x1 - x0, 2), round(y1 - y0, 2)]

    def _path(self, path, transform, top: float) -> tuple[str, list]:
        """A path's codes and flat canvas coordinates; ``top`` - y flips the y axis."""
        codes, xy = [], []
        for verts, code in path.iter_segments(transform, remove_nans=True, simplify=False,
                                              curves=True):
            codes.append(_CODES[code])
            if code != Path.CLOSEPOLY:
                pts = np.asarray(verts, dtype=float).reshape(-1, 2)
                xy.extend(np.round(np.column_stack([pts[:, 0], top - pts[:, 1]]), 2)
                          .ravel().tolist())
        return "".join(codes), xy

    def _style(self, gc, rgbFace) -> list | None:
        """``[fill, stroke, width, dashes, cap, join, clip]`` of a path, or None if invisible."""
        if gc.get_hatch() is not None:
            raise Unsupported("hatching")
        forced = gc.get_forced_alpha()
        fill = None
        if rgbFace is not None:
            fill = css(rgbFace, gc.get_alpha() if forced or len(rgbFace) == 3 else None)
        width = float(self.points_to_pixels(gc.get_linewidth()))
        stroke = css(gc.get_rgb()) if width > 0 else None
        if fill is None and stroke is None:
            return None
        offset, dashes = gc.get_dashes()
        dashes = None if dashes is None else [round(float(self.points_to_pixels(d)), 2)
                                              for d in dashes]
        return [fill, stroke, round(width, 2), dashes, _CAPS.get(gc.get_capstyle(), "butt"),
                gc.get_joinstyle(), self._clip(gc)]

    def draw_path(self, gc, path, transform, rgbFace=None):
        style = self._style(gc, rgbFace)
        codes, xy = self._path(path, transform, self.height)
        if codes and style is not None:
            self.ops.append(["p", codes, xy, *style])

    def draw_markers(self, gc, marker_path, marker_trans, path, trans, rgbFace=None):
        """One op for all the markers of a line: the marker's path once, and where it goes (the
        generic ``draw_markers`` made one path op per marker: 37 ms for notebook 09's 65 dots)."""
        style = self._style(gc, rgbFace)
        codes, xy = self._path(marker_path, marker_trans, 0.0)  # around (0, 0), y pointing down
        at = []
        for verts, code in path.iter_segments(trans, simplify=False):
            if code != Path.CLOSEPOLY and len(verts):
                x, y = float(verts[-2]), float(verts[-1])
                if np.isfinite(x) and np.isfinite(y):
                    at += [round(x, 2), round(self.height - y, 2)]
        if codes and at and style is not None:
            self.ops.append(["m", codes, xy, at, *style])

    def draw_image(self, gc, x, y, im, transform=None):
        raise Unsupported("a resampled image")

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            raise Unsupported("mathtext")
        # (x, y) is the start of the line's baseline, as Text.draw lays it out
        self.ops.append(["t", round(x, 2), round(self.height - y, 2), s, self.font(prop),
                         css(gc.get_rgb()), "left", "alphabetic", round(angle, 2), self._clip(gc)])

    # -- artists the ops express better than their generic drawing --------------------------------
    def text(self, t: Text, x: float, y: float) -> None:
        """One single-line ``Text`` at its anchor, aligned by the browser's own font metrics."""
        s = t.get_text()
        if not s or not (np.isfinite(x) and np.isfinite(y)):
            return
        color = _css_colour(t.get_color(), t.get_alpha())
        if color is None:
            return
        self.ops.append(["t", round(float(x), 2), round(self.height - float(y), 2), s,
                         self.font(t.get_fontproperties()), color, t.get_ha(),
                         _VALIGN.get(t.get_va(), "middle"), round(t.get_rotation(), 2),
                         self._artist_clip(t)])

    def _artist_clip(self, a):
        """The clip rectangle of an artist, as ``_clip`` gives it for a graphics context."""
        if not a.get_clip_on():
            return None
        if a.get_clip_path() is not None:
            raise Unsupported("clip path")
        return self._box(a.get_clip_box())

    def lines(self, c: LineCollection) -> None:
        """Straight segments of one colour, width and style (a heatmap's grid) as one path."""
        colors, widths = c.get_colors(), c.get_linewidths()
        styles = c.get_linestyles()
        if len(colors) != 1 or len(widths) != 1 or len(styles) != 1 or styles[0][1] is not None \
                or c.get_hatch() is not None or not c.get_transform().is_affine:
            c.draw(self)  # the general way
            return
        segs = [np.asarray(seg, dtype=float) for seg in c.get_segments() if len(seg)]
        stroke = css(colors[0], c.get_alpha())
        width = round(float(self.points_to_pixels(widths[0])), 2)
        if not segs or stroke is None or width <= 0:
            return
        pts = c.get_transform().transform(np.concatenate(segs))  # (m, 2)
        pts[:, 1] = self.height - pts[:, 1]
        codes = "".join("M" + "L" * (len(seg) - 1) for seg in segs)
        self.ops.append(["p", codes, np.round(pts, 2).ravel().tolist(), None, stroke, width, None,
                         _CAPS.get(c.get_capstyle() or "projecting", "square"),
                         c.get_joinstyle() or "round", self._artist_clip(c)])

    def arrow(self, a: FancyArrowPatch) -> None:
        """A ``FancyArrowPatch``: drawn the general way, but only when it moved or changed (its
        path costs most of the ops' time); otherwise its ops from the last time are reused."""
        key = (tuple(map(tuple, a._posA_posB)), a.get_transform().get_matrix().tobytes(), a.get_edgecolor(), a.get_facecolor(),
               a.get_linewidth(), a.get_linestyle(), a.get_mutation_scale(),
               id(a.get_arrowstyle()), a.get_alpha(), a.get_fill(), self.height, self.dpi,
               tuple(self._artist_clip(a) or ()))
        self._reuse(a, key)

    def rectangle(self, r: Rectangle) -> None:
        """A bar (an unrotated ``Rectangle``): its corners through the data transform, in the style
        its last general drawing gave (the patch transform and the graphics context were most of a
        bar's ops time: 16 bars, 4.1 ms of 03's seed step in-process)."""
        key = (_key(r.get_facecolor()), _key(r.get_edgecolor()), r.get_linewidth(),
               r.get_linestyle(), r.get_capstyle(), r.get_joinstyle(), r.get_alpha(), r.get_fill(),
               self.height, self.dpi, tuple(self._artist_clip(r) or ()))
        style, pts = getattr(r, "_ak_style", None), None
        if style is not None and style[0] == key and not (r.get_angle() or r.get_hatch() or r.get_path_effects()) \
                and r.get_sketch_params() is None and (data := r.get_data_transform()).is_affine:
            (x0, y0), w, h = r.get_xy(), r.get_width(), r.get_height()
            pts = data.transform(
                np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], dtype=float))
        if pts is None or not np.isfinite(pts).all():
            start = len(self.ops)
            r.draw(self)  # the general way (which drops what is not finite), whose style is reused
            drawn = self.ops[start:]
            ok = len(drawn) == 1 and drawn[0][0] == "p" and drawn[0][1] == "MLLLZ"
            r._ak_style = (key, drawn[0][3:]) if ok else None
            return
        pts[:, 1] = self.height - pts[:, 1]
        self.ops.append(["p", "MLLLZ", np.round(pts, 2).ravel().tolist(), *style[1]])

    def line(self, a: Line2D) -> None:
        """A ``Line2D``, drawn afresh only when its canvas points or its style changed (07's
        dashed finals, 09's circle: the ops of the last time)."""
        key = (a.get_transform().transform(np.asarray(a.get_xydata(), dtype=float)).tobytes(),
               *map(_key, (a.get_color(), a.get_gapcolor(), a.get_markerfacecolor(),
                           a.get_markerfacecoloralt(), a.get_markeredgecolor())),
               a.get_linewidth(), a.get_linestyle(), repr(getattr(a, "_dash_pattern", None)),
               _marker_key(a._marker), a.get_markersize(), a.get_markeredgewidth(), a.get_alpha(),
               a.get_drawstyle(), repr(a.get_markevery()), a.get_fillstyle(), a.get_dash_capstyle(),
               a.get_solid_capstyle(), a.get_dash_joinstyle(), a.get_solid_joinstyle(),
               _effects_key(a), self.height, self.dpi, tuple(self._artist_clip(a) or ()))
        self._reuse(a, key)

    def _reuse(self, a, key) -> None:
        """Draw ``a`` the general way, or, when ``key`` (what its picture depends on) is the one of
        the last time, append the ops it gave then, each text's font by name (this recording
        numbers its fonts anew)."""
        cached = getattr(a, "_ak_ops", None)
        if cached is not None and cached[0] == key:
            fonts = cached[2]
            for op in cached[1]:
                if op[0] == "t":
                    op = [*op[:4], self.font_index(fonts[op[4]]), *op[5:]]
                self.ops.append(op)
            return
        start = len(self.ops)
        a.draw(self)
        a._ak_ops = (key, self.ops[start:], list(self.fonts))

    def axis(self, axis: Axis) -> None:
        """An axis (ticks, their numbers, its label) that moves with its bars (04, 03): drawn the
        general way only when its scale, ticks, labels or place changed; otherwise its ops from
        the last time are reused (its text layout is most of a step's ops time: 12 of 21 ms of
        04's nudge, in-process)."""
        ax = axis.axes
        locs = np.asarray(axis.get_majorticklocs(), dtype=float)
        minor = np.asarray(axis.get_minorticklocs(), dtype=float)
        major_fmt, minor_fmt = axis.get_major_formatter(), axis.get_minor_formatter()
        key = (axis.get_scale(), tuple(axis.get_view_interval()), ax.bbox.bounds, locs.tobytes(),
               minor.tobytes(), tuple(major_fmt.format_ticks(locs)), major_fmt.get_offset(),
               tuple(minor_fmt.format_ticks(minor)), repr(axis._major_tick_kw),
               repr(axis._minor_tick_kw), axis.get_inverted(), axis.label.get_text(),
               axis.label.get_color(), hash(axis.label.get_fontproperties()),
               axis.label.get_visible(), axis.get_label_position(), axis.get_ticks_position(),
               self.height, self.dpi, self._artist_clip(axis) and tuple(self._artist_clip(axis)))
        self._reuse(axis, key)

    def image(self, im: AxesImage) -> None:
        """A small image of flat cells (a heatmap) as its cell colours and its box in pixels."""
        A = im.get_array()
        if A is None or A.ndim != 2 or not im.get_transform().is_affine \
                or im.get_interpolation() not in ("nearest", "none", "antialiased", "auto"):
            raise Unsupported("image")
        M = im.get_transform().get_matrix()
        if M[0, 1] != 0 or M[1, 0] != 0:
            raise Unsupported("rotated image")
        rgba = im.to_rgba(A, bytes=True, norm=True)  # (ny, nx, 4): row 0 first, column 0 first
        x0, x1, y0, y1 = im.get_extent()  # row 0 sits at y1 ("upper") or at y0 ("lower")
        (xa, ya), (xb, yb) = im.get_transform().transform([[x0, y0], [x1, y1]])
        if xa > xb:  # column 0 on the right
            rgba, xa, xb = rgba[:, ::-1], xb, xa
        row0, other = (yb, ya) if im.origin == "upper" else (ya, yb)
        if row0 < other:  # row 0 lower on the page than the last row: the canvas wants it first
            rgba = rgba[::-1]
        top, bottom = max(ya, yb), min(ya, yb)
        left, right = round(xa), round(xb)
        top_px, bottom_px = round(self.height - top), round(self.height - bottom)
        gc = self.new_gc()
        im._set_gc_clip(gc)
        ny, nx = rgba.shape[:2]
        self.ops.append(["i", left, top_px, right - left, bottom_px - top_px, nx, ny,
                         base64.b64encode(np.ascontiguousarray(rgba).tobytes()).decode("ascii"),
                         self._clip(gc)])

    def artist(self, a) -> None:
        if not a.get_visible():
            return
        if isinstance(a, TextBatch):
            texts = [t for t in a.texts if t.get_visible() and t.get_text()]
            if texts:
                xy = a.get_transform().transform(np.array([t.get_unitless_position()
                                                           for t in texts], dtype=float))
                for t, (x, y) in zip(texts, xy, strict=True):
                    self.text(t, x, y)
        elif isinstance(a, Text) and "\n" not in a.get_text() and "$" not in a.get_text() \
                and a.get_bbox_patch() is None:
            x, y = a.get_transform().transform(a.get_unitless_position())
            self.text(a, x, y)
        elif isinstance(a, AxesImage):
            self.image(a)
        elif isinstance(a, FancyArrowPatch) and a._posA_posB is not None:
            self.arrow(a)
        elif type(a) is LineCollection:
            self.lines(a)
        elif type(a) is Rectangle:
            self.rectangle(a)
        elif type(a) is Line2D:
            self.line(a)
        elif isinstance(a, Axis):
            self.axis(a)
        else:
            a.draw(self)


def record_ops(agg, artists) -> dict:
    """The canvas ops that draw ``artists`` (in order) on a figure rendered by ``agg``, as
    ``{"fonts": [css font, ...], "ops": [op, ...]}``.

    Raises :class:`Unsupported` when one of them cannot be expressed as ops.
    """
    rec = _RECORDERS.get(agg)
    if rec is None:  # one per Agg renderer: matplotlib caches text layouts per renderer
        rec = _RECORDERS[agg] = OpRecorder(agg)
    rec.ops, rec.fonts = [], []
    for a in artists:
        rec.artist(a)
    return {"fonts": rec.fonts, "ops": rec.ops}
