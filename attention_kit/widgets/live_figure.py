"""A live figure: a matplotlib ``Figure`` shown as a PNG in an ``ipywidgets.Image``, redrawn
incrementally (cached background, cached text bitmaps, fast PNG encoding) and sent to the page as
a ``data:`` URL."""

from __future__ import annotations

import base64
import struct
import time
import zlib
from functools import partial

import ipywidgets as widgets
import numpy as np
import traitlets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..plotting import _glyphs

__all__ = ["LiveFigure", "encode_png"]



def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_png(rgba: np.ndarray, level: int = 1) -> bytes:
    """Encode an RGBA image (shape (H, W, 4), uint8) as an RGB PNG, quickly.

    No per-row filter search and fast zlib compression: about twice as fast as PIL's encoder on
    a widget-sized figure, at a similar size (figures are mostly flat colour).
    """
    h, w, _ = rgba.shape
    raw = np.empty((h, w * 3 + 1), dtype=np.uint8)  # each row: filter byte 0, then R G B ...
    raw[:, 0] = 0
    raw[:, 1:].reshape(h, w, 3)[...] = rgba[..., :3]
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(raw, level)) + _png_chunk(b"IEND", b""))


def _cached_draw_text(renderer, original, gc, x, y, s, prop, angle, ismath=False, mtext=None):
    """``RendererAgg.draw_text`` with the rendered string bitmap cached.

    Rendering a string costs a FreeType layout plus one glyph rendering per character; a widget
    redraws the same few hundred strings ("0.12", tick labels, titles) on every change, so each is
    rendered once and then only blitted. Rotated text and mathtext take the normal path.
    """
    if ismath or angle % 360 != 0 or not gc.get_antialiased():
        return original(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
    img, xo, yo = _glyphs(renderer, s, prop)
    renderer._renderer.draw_text_image(img, round(x + xo), round(y + yo) + 1, 0, gc)


def _png_as_data_url(value, widget) -> memoryview | None:
    """How a LiveFigure's PNG travels to the page: as the bytes of a ``data:`` URL.

    The browser shows a ``data:`` URL without the round trip through the browser process that a
    blob URL (ipywidgets' way for image bytes) costs: about 15 ms less per picture in Chromium.
    """
    if value is None:
        return None
    return memoryview(b"data:image/png;base64," + base64.b64encode(bytes(value)))


class LiveFigure(widgets.Image):
    """An ``ipywidgets.Image`` showing a reused matplotlib ``Figure`` as PNG.

    The figure is attached to an Agg canvas only (not to pyplot), so the inline backend never shows
    a second copy. Rendering is incremental:

    * the layout (constrained) is computed once, and again only after :meth:`relayout`;
    * artists registered with :meth:`set_dynamic` are the only ones redrawn on a :meth:`refresh`:
      everything else (axes, ticks, labels, colorbars) is rendered once into a cached background,
      until :meth:`invalidate` is called (e.g. after an axis range or a title changed);
    * rendered strings are cached, and the PNG is written with fast compression;
    * in Python ``value`` is the PNG and ``format`` is ``"png"``, as for any ``Image``; the page
      gets them as a ``data:`` URL with ``format="url"`` (shown sooner than an image blob).

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    dpi : float, optional
        Rendering resolution (default: the figure's).
    """

    #: Set to a list (``LiveFigure.trace = []``) to record, for every refresh of every live figure,
    #: a dict of wall-clock stamps (ms since the epoch) of its stages; None (the default) records
    #: nothing. ``benchmarks/latency_stages.py`` uses it to split a slider press into stages.
    trace: list | None = None

    value = widgets.trait_types.CByteMemoryView(
        help="The PNG bytes (sent to the page as a data: URL).").tag(
        sync=True, to_json=_png_as_data_url, from_json=widgets.trait_types.bytes_from_json)
    format = traitlets.Unicode("png", help="The image format (the page is told 'url').").tag(
        sync=True, to_json=lambda _value, _widget: "url")

    def __init__(self, figure: Figure, *, dpi: float | None = None, **kwargs):
        super().__init__(format="png", **kwargs)
        self.figure = figure
        if dpi is not None:
            figure.set_dpi(dpi)
        if figure.get_layout_engine() is None:
            figure.set_layout_engine("constrained")
        FigureCanvasAgg(figure)
        self._laid_out = False
        self._background = None
        self._dynamic: list = []
        self.renders = 0
        self.full_renders = 0
        self._stamps: dict = {}

    def stamp(self, stage: str) -> None:
        """Note the time of ``stage`` of the current refresh when :attr:`trace` is on."""
        if LiveFigure.trace is not None:
            self._stamps[stage] = time.time() * 1e3

    @property
    def dynamic(self) -> tuple:
        """The artists redrawn on every refresh (see :meth:`set_dynamic`)."""
        return tuple(self._dynamic)

    def set_dynamic(self, artists) -> None:
        """The artists that change between refreshes (images, cell texts, arrows, bars, a title
        whose text changes with a slider): everything else is drawn once into the background."""
        for a in self._dynamic:
            a.set_animated(False)
        self._dynamic = list(artists)
        self._background = None

    def invalidate(self) -> None:
        """Redraw everything (not just the dynamic artists) on the next render."""
        self._background = None

    def relayout(self) -> None:
        """Lay the figure out again on the next render (after axes or titles changed)."""
        self.figure.set_layout_engine("constrained")
        self._laid_out = False
        self._background = None

    def _renderer(self):
        r = self.figure.canvas.get_renderer()
        if not getattr(r, "_ak_cached_text", False):
            r.draw_text = partial(_cached_draw_text, r, r.draw_text)
            r._ak_cached_text = True
        return r

    def render(self) -> bytes:
        """Draw the figure (incrementally when possible) and return it as PNG bytes."""
        fig = self.figure
        canvas = fig.canvas
        self._renderer()
        if not self._laid_out or self._background is None or not self._dynamic:
            for a in self._dynamic:
                a.set_animated(True)  # the background is drawn without them
            canvas.draw()  # (the first time, constrained layout positions the axes...)
            if not self._laid_out:
                fig.set_layout_engine("none")  # ...and then they stay put)
                self._laid_out = True
            self._background = canvas.copy_from_bbox(fig.bbox) if self._dynamic else None
            self.full_renders += 1
        else:
            canvas.restore_region(self._background)
        renderer = self._renderer()
        for a in self._dynamic:
            if a.get_visible():
                a.draw(renderer)
        self.stamp("rendered")
        png = encode_png(np.asarray(canvas.buffer_rgba()))
        self.stamp("encoded")
        self.renders += 1
        return png

    def refresh(self) -> None:
        """Re-render the figure into the image."""
        full = self.full_renders
        self.value = self.render()
        if LiveFigure.trace is not None:
            self.stamp("sent")
            LiveFigure.trace.append(dict(self._stamps, model=self.model_id, bytes=len(self.value),
                                         full=self.full_renders > full))
        self._stamps = {}
