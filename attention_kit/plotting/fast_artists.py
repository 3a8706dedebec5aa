"""The live figure's speed machinery for Agg: the pieces that let an explorer redraw in milliseconds.

Notebooks 01-07 use them through :mod:`attention_kit.plotting` (every heatmap and arrow label is
drawn with them) and :mod:`attention_kit.widgets.live_figure`; a learner never needs to read this
module. Each piece draws the same pixels as matplotlib's own artist, only faster:

* :class:`CellImage` - an ``AxesImage`` of a small matrix scaled up by repeating cells
* :func:`glyphs` - a string's FreeType bitmap, rendered once and cached
* :class:`FastText` - a ``Text`` whose Agg rendering is cached
* :class:`TextBatch` - many ``FastText`` drawn in one go
* :func:`add_fast_text` - a ``FastText`` added to an ``Axes``, like ``ax.text``
"""

from __future__ import annotations

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.image import AxesImage
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform

__all__ = ["CellImage", "FastText", "TextBatch", "add_fast_text", "glyphs"]

class CellImage(AxesImage):
    """An ``AxesImage`` of a small matrix drawn as flat cells, with a cheap nearest-neighbour
    scale-up on Agg: colour the ``n_q x n_k`` cells, then repeat them to pixels (the general
    image resampler does far more work for the same picture). Any other case (other extent or
    origin, zoomed axes, rotation, vector backends) falls back to ``AxesImage``."""

    def make_image(self, renderer, magnification=1.0, unsampled=False):
        A = self._A
        fallback = (unsampled or magnification != 1.0 or A is None or A.ndim != 2
                    or self.origin != "upper" or not self.get_transform().is_affine)
        if not fallback:
            n_q, n_k = A.shape
            fallback = tuple(self.get_extent()) != (-0.5, n_k - 0.5, n_q - 0.5, -0.5)
        if not fallback:
            M = self.get_transform().get_matrix()
            fallback = M[0, 1] != 0 or M[1, 0] != 0 or M[0, 0] <= 0 or M[1, 1] >= 0
        if not fallback:
            (xa, ya), (xb, yb) = self.get_transform().transform([[-0.5, -0.5], [n_k - 0.5, n_q - 0.5]])
            left, right, top, bottom = round(xa), round(xb), round(ya), round(yb)
            ax_box = self.axes.bbox
            fallback = (left < ax_box.x0 - 1 or right > ax_box.x1 + 1 or bottom < ax_box.y0 - 1
                        or top > ax_box.y1 + 1 or right - left < n_k or top - bottom < n_q)
        if fallback:
            return super().make_image(renderer, magnification, unsampled)
        rgba = self.to_rgba(A, bytes=True, norm=True)  # (n_q, n_k, 4): colour, bad = transparent
        W, H = right - left, top - bottom
        cols = np.minimum(((np.arange(W) + 0.5) / W * n_k).astype(int), n_k - 1)  # (W,)
        rows = np.minimum(((np.arange(H) + 0.5) / H * n_q).astype(int), n_q - 1)  # (H,) top first
        # pixels per cell column and per cell row (both index lists are sorted): each cell is
        # repeated as a block, far cheaper than indexing every pixel
        per_col = np.bincount(cols, minlength=n_k)  # (n_k,)
        per_row = np.bincount(rows, minlength=n_q)  # (n_q,)
        im = np.repeat(np.repeat(rgba[::-1], per_row[::-1], axis=0), per_col, axis=1)
        return im, left, bottom, IdentityTransform()  # (H, W, 4), row 0 = bottom (Agg order)


_BITMAPS: dict = {}
_BITMAPS_MAX = 4096


def glyphs(renderer, s: str, prop) -> tuple[np.ndarray, float, float]:
    """``s`` rendered once by FreeType and cached: its anti-aliased alpha bitmap (shape (h, w),
    uint8) and the bitmap's offset from the text origin in pixels, ``(x, y)`` (y includes the
    font's descent), as Agg's ``draw_text`` places it."""
    key = (s, hash(prop), renderer.dpi)
    entry = _BITMAPS.get(key)
    if entry is None:
        from matplotlib.backends.backend_agg import get_hinting_flag

        font = renderer._prepare_font(prop)
        font.set_text(s, 0, flags=get_hinting_flag())
        font.draw_glyphs_to_bitmap(antialiased=True)
        xo, yo = font.get_bitmap_offset()
        entry = (np.array(font.get_image()), xo / 64.0, yo / 64.0 + font.get_descent() / 64.0)
        if len(_BITMAPS) >= _BITMAPS_MAX:
            _BITMAPS.clear()
        _BITMAPS[key] = entry
    return entry


def _text_bitmap(renderer, s: str, prop) -> np.ndarray:
    """The anti-aliased alpha bitmap of ``s`` (shape (h, w), uint8), rendered once and cached."""
    return glyphs(renderer, s, prop)[0]


_OFFSETS: dict = {}
_OFFSETS_MAX = 4096


def _line_offset(line_info) -> tuple[float, float]:
    """A line's ``(x, y)`` offset from the text's anchor, from ``Text._get_layout``'s list: since
    matplotlib 3.11 each line is ``(line, (w, ascent, descent), (x, y))``; up to 3.10 it was
    ``(line, (w, h), x, y)``. (Read as the newer form, matplotlib 3.8-3.10 raised here: an
    explorer's still picture, and with it its text alternative, was not drawn.)"""
    if len(line_info) == 4:
        return float(line_info[2]), float(line_info[3])
    x, y = line_info[2]
    return float(x), float(y)


class FastText(Text):
    """A ``Text`` whose Agg rendering is cached: used for the values written in heatmap cells and
    the labels at arrow tips and bars, which a live widget redraws on every change.

    Only unrotated, single-line plain text on the Agg renderer takes a fast path: centred text is
    blitted from the string's cached bitmap, centred on the anchor; other alignments reuse the
    offset from the anchor that ``Text`` computed the first time for the same string, font and
    alignment (the same pixels, without laying the text out again). Everything else, and every
    other backend, draws exactly like ``Text``.
    """

    def _plain_ok(self, s: str) -> bool:
        return bool(s) and "\n" not in s and "$" not in s and self._rotation in (0, 0.0, None) \
            and self._bbox_patch is None and not self._usetex and not self._path_effects

    def _fast_ok(self, renderer, s: str) -> bool:
        return self._plain_ok(s) and self._horizontalalignment == "center" \
            and self._verticalalignment == "center"

    def _draw_with_cached_layout(self, renderer, s: str) -> None:
        """``Text.draw`` for one plain line, with the layout offset cached."""
        key = (s, hash(self._fontproperties), self._horizontalalignment,
               self._verticalalignment, self._linespacing, renderer.dpi)
        offset = _OFFSETS.get(key)
        if offset is None:
            _, info, _ = self._get_layout(renderer)
            if len(info) != 1:
                return super().draw(renderer)
            offset = _line_offset(info[0])
            if len(_OFFSETS) >= _OFFSETS_MAX:
                _OFFSETS.clear()
            _OFFSETS[key] = offset
        x, y = self.get_transform().transform(self.get_unitless_position())
        if not (np.isfinite(x) and np.isfinite(y)):
            return
        gc = renderer.new_gc()
        gc.set_foreground(to_rgba(self.get_color()), isRGBA=True)
        gc.set_alpha(self.get_alpha())
        gc.set_url(self._url)
        gc.set_antialiased(self._antialiased)
        gc.set_snap(self.get_snap())
        self._set_gc_clip(gc)
        renderer.draw_text(gc, x + offset[0], renderer.height - (y + offset[1]), s,
                           self._fontproperties, 0, ismath=False, mtext=self)
        gc.restore()
        self.stale = False

    def draw(self, renderer):
        if not self.get_visible():
            return
        s = self.get_text()
        try:
            from matplotlib.backends.backend_agg import RendererAgg
        except ImportError:  # pragma: no cover
            return super().draw(renderer)
        if not isinstance(renderer, RendererAgg) or not self._plain_ok(s):
            return super().draw(renderer)
        if not self._fast_ok(renderer, s):
            return self._draw_with_cached_layout(renderer, s)
        x, y = self.get_transform().transform(self.get_unitless_position())
        if not (np.isfinite(x) and np.isfinite(y)):
            return
        img = _text_bitmap(renderer, s, self._fontproperties)
        h, w = img.shape
        gc = renderer.new_gc()
        gc.set_foreground(self.get_color())
        gc.set_alpha(self.get_alpha())
        self._set_gc_clip(gc)
        # draw_text_image takes the bitmap's left edge and its bottom edge, y counted downwards
        renderer._renderer.draw_text_image(img, round(x - w / 2), round(renderer.height - y + h / 2),
                                           0, gc)
        gc.restore()
        self.stale = False


class TextBatch(Artist):
    """Draws many :class:`FastText` objects in one go (one transform for all anchors).

    The texts are owned by this artist, not added to the axes, so each is drawn exactly once.
    Their properties (text, colour, size, visibility) are read at draw time as usual.
    """

    def __init__(self, ax: Axes, texts, zorder: float = 3):
        super().__init__()
        self.texts = list(texts)
        self.set_zorder(zorder)
        ax.add_artist(self)
        self.set_transform(ax.transData)

    def draw(self, renderer):
        if not self.get_visible() or not self.texts:
            return
        try:
            from matplotlib.backends.backend_agg import RendererAgg
        except ImportError:  # pragma: no cover
            RendererAgg = None
        if RendererAgg is None or not isinstance(renderer, RendererAgg):
            for t in self.texts:
                t.draw(renderer)
            return
        plain = (int, float, np.floating, np.integer)  # no units to convert (cell centres)
        anchors = np.array([(t._x, t._y) if isinstance(t._x, plain) and isinstance(t._y, plain)
                            else t.get_unitless_position() for t in self.texts], dtype=float)  # (m, 2)
        xy = self.get_transform().transform(anchors)  # (m, 2) display coordinates
        H = renderer.height
        gc = renderer.new_gc()
        blit = renderer._renderer.draw_text_image
        style = None
        for t, (x, y) in zip(self.texts, xy, strict=True):
            if not t.get_visible():
                continue
            s = t.get_text()
            if not s:
                continue
            if not t._fast_ok(renderer, s):
                t.draw(renderer)
                continue
            img = _text_bitmap(renderer, s, t._fontproperties)
            h, w = img.shape
            color, alpha = t.get_color(), t.get_alpha()
            if (color, alpha) != style:  # cell texts are mostly one of two colours
                gc.set_foreground(color)
                gc.set_alpha(alpha)
                style = (color, alpha)
            blit(img, round(x - w / 2), round(H - y + h / 2), 0, gc)
        gc.restore()
        self.stale = False


def add_fast_text(ax: Axes, x: float, y: float, s: str, **kw) -> FastText:
    t = FastText(x, y, s, **kw)
    t.set_transform(ax.transData)
    ax.add_artist(t)
    return t
