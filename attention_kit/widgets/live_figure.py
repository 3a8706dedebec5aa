"""A live figure: a matplotlib ``Figure`` shown on a ``<canvas>`` in the page (an anywidget).

The parts of the figure that stay put (axes, ticks, labels, colour bars) travel once as a PNG; the
artists that move with a slider travel as a few kilobytes of drawing commands (``draw_ops``) and are
drawn by the browser, so a slider step costs no rendering, encoding or decoding of pixels."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anywidget
import ipywidgets as widgets
import numpy as np
import traitlets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..i18n import _
from ..plotting.describe import describe_figure
from .announce import announcement_for, changed_lines
from .draw_ops import Unsupported, record_ops
from .kernel_status import kernel_loop, quiet_control_status
from .pieces import pieces
from .raster import data_url, encode_png, text_cached

__all__ = ["LiveFigure", "picture_first"]

_ESM = (Path(__file__).with_name("live_figure.js")).read_text(encoding="utf-8")

NO_OPS = '{"fonts":[],"ops":[]}'


class LiveFigure(anywidget.AnyWidget):
    """A reused matplotlib ``Figure`` shown live in the page, redrawn incrementally.

    The figure is attached to an Agg canvas only (not to pyplot), so the inline backend never shows
    a second copy. Rendering is incremental:

    * the layout (constrained) is computed once, and again only after :meth:`relayout`;
    * artists registered with :meth:`set_dynamic` are the only ones redrawn on a :meth:`refresh`:
      everything else (axes, ticks, labels, colorbars) is rendered once into a background PNG,
      until :meth:`invalidate` is called (e.g. after an axis range or a title changed);
    * the page gets the background only when it changes (``background``, a ``data:`` URL) and the
      dynamic artists on every refresh as canvas drawing commands (``ops``, JSON; see
      :mod:`attention_kit.widgets.draw_ops`), which ``live_figure.js`` draws on a ``<canvas>``;
      a figure without dynamic artists, or with one the commands cannot express, is sent whole as
      the background;
    * :meth:`render` (and :attr:`value`) give the whole picture as PNG, drawn by Agg: the static
      image where no kernel runs, and what the tests compare.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    dpi : float, optional
        Rendering resolution (default: the figure's).
    """

    _esm = _ESM

    #: Set to a list (``LiveFigure.trace = []``) to record, for every refresh of every live figure,
    #: a dict of wall-clock stamps (ms since the epoch) of its stages; None (the default) records
    #: nothing. The course repository's latency benchmarks use it to split a slider press into stages.
    trace: list | None = None

    background = traitlets.Unicode("", help="The still part of the picture, a PNG data: URL.").tag(
        sync=True)
    ops = traitlets.Unicode(NO_OPS, help="The moving artists as canvas drawing commands (JSON).").tag(
        sync=True)
    size = traitlets.List([0, 0], help="The picture's size in pixels, [width, height].").tag(
        sync=True)
    frame = traitlets.Int(0, help="Counts the pictures sent; the page redraws on each.").tag(
        sync=True)
    summary = traitlets.Unicode("", help="The picture's name for a screen reader (the canvas's "
                                "aria-label).").tag(sync=True)
    description = traitlets.Unicode("", help="What the picture shows, in words; the page reads it "
                                    "out politely, at most every 0.5 s.").tag(sync=True)
    announce = traitlets.Bool(True, help="Read the description out when it changes (False: the "
                              "canvas keeps its name, the live region stays quiet).").tag(sync=True)
    announcement = traitlets.Unicode("", help="What the live region reads when the picture changes: "
                                     "the control and its new value, then the few first lines that "
                                     "changed (see announcement_for).").tag(sync=True)
    described = traitlets.Int(0, help="The frame the description (and summary) is of: set with "
                              "every description, also an unchanged one.").tag(sync=True)
    words = traitlets.Dict(help="The page's own words, in the course's language: a control's fallback "
                           "name, its value box's name, the canvas's name before its summary "
                           "(live_figure.js).").tag(sync=True)

    kernel_lost = traitlets.Unicode(help="What the page shows (and a screen reader reads) under "
                                    "the picture when the kernel is gone (it died, or was "
                                    "restarted): this explorer no longer answers, and how to "
                                    "bring it back.").tag(sync=True)

    @traitlets.default("kernel_lost")
    def _kernel_lost_default(self) -> str:
        return _("The kernel stopped, so this explorer no longer answers. Your notebook is kept: "
                 "restart the kernel and run the cells again (Kernel menu, Restart Kernel and Run "
                 "All Cells) to bring the explorer back.")

    def __init__(self, figure: Figure, *, dpi: float | None = None, **kwargs):
        super().__init__(**kwargs)
        self.words = {"slider": _("slider"), "value": _("{name} value"), "figure": _("attention figure")}
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
        self._background_url = None  # the background under the dynamic artists, a data: URL
        self._last_sent = None  # the background the page has
        self._kept: dict = {}  # figures shown before (see show): id -> (figure, layout, background...)
        self._when_shown: list = []
        self.on_msg(self._page_message)
        quiet_control_status()  # a press redraws the picture, not the kernel's busy signs

    def show(self, figure: Figure) -> None:
        """Show ``figure`` in place of the current one. Each figure shown keeps its layout and its
        background, so switching back to one costs only its moving artists (an explorer whose
        menu changes the panels builds one figure per choice, once: see ``Explorer._show_scene``)."""
        if figure is self.figure:
            return
        self._kept[id(self.figure)] = (self.figure, self._laid_out, self._background,
                                       self._background_url, self._dynamic)
        kept = self._kept.pop(id(figure), None)
        self.figure = figure
        if kept is not None:
            _, self._laid_out, self._background, self._background_url, self._dynamic = kept
            return
        if figure.get_layout_engine() is None:
            figure.set_layout_engine("constrained")
        if not isinstance(figure.canvas, FigureCanvasAgg):
            FigureCanvasAgg(figure)
        self._laid_out, self._background, self._background_url, self._dynamic = False, None, None, []

    def when_shown(self, callback) -> None:
        """Call ``callback()`` once, when a page first shows this figure (not under nbval or in a
        script, where no page does)."""
        self._when_shown.append(callback)

    def _page_message(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("event") == "shown":
            callbacks, self._when_shown = self._when_shown, []
            for callback in callbacks:
                callback()

    def forget(self, figure: Figure) -> None:
        """Drop what :meth:`show` kept for ``figure`` (not the one shown)."""
        self._kept.pop(id(figure), None)

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

    def placed(self) -> None:
        """The current figure's panels are in place already (see ``Explorer._place_scenes``): draw
        it as it is, without a layout."""
        self.figure.set_layout_engine("none")
        self._laid_out = True
        self._background = None

    def relayout(self) -> None:
        """Lay the figure out again on the next render (after axes or titles changed)."""
        self.figure.set_layout_engine("constrained")
        self._laid_out = False
        self._background = None

    def _renderer(self):
        return text_cached(self.figure.canvas.get_renderer())

    def _draw_background(self) -> bool:
        """Render the background (everything but the dynamic artists) if it is out of date.
        Returns True when it was rendered; the canvas then holds it."""
        if self._laid_out and self._background is not None and self._dynamic:
            return False
        fig = self.figure
        self._renderer()
        for a in self._dynamic:
            a.set_animated(True)  # the background is drawn without them
        fig.canvas.draw()  # (the first time, constrained layout positions the axes...)
        if not self._laid_out:
            fig.set_layout_engine("none")  # ...and then they stay put)
            self._laid_out = True
        self._background = fig.canvas.copy_from_bbox(fig.bbox) if self._dynamic else None
        if self._dynamic:  # what the page shows under the dynamic artists
            self._background_url = data_url(encode_png(np.asarray(fig.canvas.buffer_rgba())))
        self.full_renders += 1
        return True

    def background_steps(self, figure: Figure):
        """Lay out and render the background of ``figure``, a figure :meth:`show` keeps (not the
        one shown), in small steps: a generator that yields after the layout and after each piece
        (``pieces``: a panel's start, each of its artists), so that the kernel handles a press
        between two steps instead of after the whole render
        (``Explorer.prepare_scenes``, in idle time). Nothing is sent. The step after the layout
        yields ``("laid out", moving artists)``, the others None. It stops early when the figure
        is shown, forgotten or rendered meanwhile; at the end it returns the figure's moving
        artists (None when it stopped early)."""
        def pending():
            kept = self._kept.get(id(figure))
            ok = kept is not None and kept[0] is figure and figure is not self.figure and kept[2] is None
            return kept if ok else None

        kept = pending()
        if kept is None or not kept[4]:  # (a figure without moving artists is sent whole each time)
            return None
        dynamic = kept[4]
        if not kept[1]:
            engine = figure.get_layout_engine()
            if engine is not None:
                engine.execute(figure)
            figure.set_layout_engine("none")
            self._kept[id(figure)] = (figure, True, None, None, dynamic)
            yield "laid out", tuple(dynamic)
        renderer = text_cached(figure.canvas.get_renderer())
        for a in dynamic:
            a.set_animated(True)  # the background is drawn without them
        # what FigureCanvasAgg.draw does (the layout is done), one piece at a time (pieces.py)
        if pending() is None:
            return None
        renderer.clear()
        figure.patch.draw(renderer)
        for artist in pieces(figure, renderer):
            yield
            if pending() is None:
                return None
            artist.draw(renderer)
        figure.stale = False
        yield
        if pending() is None:
            return None
        url = data_url(encode_png(np.asarray(figure.canvas.buffer_rgba())))
        self._kept[id(figure)] = (figure, True, figure.canvas.copy_from_bbox(figure.bbox), url, dynamic)
        self.full_renders += 1
        return tuple(dynamic)

    def render(self) -> bytes:
        """Draw the whole figure with Agg (incrementally when possible) and return it as PNG."""
        canvas = self.figure.canvas
        if not self._draw_background():
            canvas.restore_region(self._background)
        renderer = self._renderer()
        if self._background is not None:
            for a in self._dynamic:
                if a.get_visible():
                    a.draw(renderer)
        return encode_png(np.asarray(canvas.buffer_rgba()))

    @property
    def value(self) -> bytes:
        """The current picture as PNG bytes (rendered by Agg on each access)."""
        return self.render()

    def refresh(self) -> None:
        """Send the current picture to the page: the dynamic artists as drawing commands, and the
        background as well when it changed (or everything as a PNG when commands cannot draw it)."""
        full = self.full_renders
        self._draw_background()  # (only when out of date; the canvas then holds it)
        ops = None
        if self._dynamic:
            try:
                ops = record_ops(self._renderer(), self._dynamic)
            except Unsupported:
                pass
        self.stamp("rendered")
        if ops is not None:
            background, text = self._background_url, json.dumps(ops, separators=(",", ":"))
        else:  # the whole picture as the background: no dynamic artists, or ones ops can't draw
            png = self.render() if self._dynamic else encode_png(np.asarray(
                self.figure.canvas.buffer_rgba()))
            background, text = data_url(png), NO_OPS
        self.stamp("encoded")
        renderer = self._renderer()
        w, h = int(renderer.width), int(renderer.height)
        with self.hold_sync():
            self.size = [w, h]
            self.background = background
            self.ops = text
            self.frame += 1
        self.renders += 1
        if LiveFigure.trace is not None:
            self.stamp("sent")
            sent = len(text) + (len(background) if background != self._last_sent else 0)
            LiveFigure.trace.append(dict(self._stamps, model=self.model_id, bytes=sent,
                                         full=self.full_renders > full))
        self._last_sent = background
        self._stamps = {}
        self._describe_soon()

    #: What moved, as the learner sees it ("temperature 1.20"), set by the explorer before the
    #: redraw (``Explorer._on_control``); the next announcement starts with it, then it is cleared.
    cause: str = ""

    #: An explorer's own facts for the description, before the figure's (a callable returning a
    #: list of sentences, e.g. which query a frame highlights), or None.
    describe_extra = None

    #: The kernel writes an explorer's description at most this often (seconds) while a control
    #: is held down; the last picture's words always follow (the page reads at most one text per 0.5 s).
    DESCRIBE_EVERY = 0.25
    #: ...and, in a kernel, this long after the picture left (seconds): the words (a few ms of the
    #: kernel's time) then do not compete with the page drawing the picture on a 2-core machine.
    DESCRIBE_AFTER = 0.06

    def _describe_soon(self) -> None:
        """Describe DESCRIBE_AFTER after the picture, or (when the last description is younger
        than DESCRIBE_EVERY) once the presses pause, for the newest picture; at once outside a
        kernel (a script, a test) or when both are 0."""
        now = time.monotonic()
        wait = max(getattr(self, "_described_at", -1e9) + self.DESCRIBE_EVERY - now,
                   self.DESCRIBE_AFTER)
        if wait <= 0:
            self.describe()
            return
        if getattr(self, "_describe_due", False):
            return
        loop = kernel_loop()
        if loop is None:
            self.describe()  # a script or a test: no loop to come back on
            return
        self._describe_due = True

        def later():
            self._describe_due = False
            self.describe()

        loop.call_later(wait, later)

    def describe(self) -> None:
        """Put the words for the current picture in :attr:`summary` and :attr:`description`
        (:func:`~attention_kit.plotting.describe.describe_figure`). Called after the picture has
        left, so the words never delay it; the page reads them out throttled."""
        self._described_at = time.monotonic()
        try:
            d = describe_figure(self.figure, tables=False)
        except Exception:  # noqa: BLE001 - a figure without words still works
            return
        text = d.lines
        if self.describe_extra is not None:
            try:
                extra = [str(f) for f in self.describe_extra()]
            except Exception:  # noqa: BLE001 - the figure's own words are still said
                extra = []
            text = "\n".join([d.summary, *extra, *d.facts]).strip()
        lines = text.split("\n")
        before = list(getattr(self, "_said", ()))
        cause, self.cause = self.cause, ""
        changed = changed_lines(before, lines, {d.summary, *d.headings}, cause) if before else []
        self._said = lines
        words = announcement_for(cause, changed) if (cause or changed) else ""
        with self.hold_sync():
            if d.summary != self.summary:
                self.summary = d.summary
            if words and words != self.announcement:
                self.announcement = words
            if text != self.description:
                self.description = text
            self.described = self.frame  # (the page marks the words of this frame as placed)


def widgets_under(roots) -> list:
    """Every widget in the boxes ``roots`` (and the roots), live figures left out."""
    seen, out, todo = set(), [], list(roots)
    while todo:
        w = todo.pop()
        if id(w) in seen or not isinstance(w, widgets.Widget) or isinstance(w, LiveFigure):
            continue
        seen.add(id(w))
        out.append(w)
        if isinstance(w, widgets.Box):
            todo.extend(w.children)
    return out


@contextmanager
def picture_first(*roots):
    """Hold the messages of every widget in ``roots`` but the live figures until the block ends.

    A control's side effects on other widgets (the text box that shows a slider's vector, the
    sliders of a typed vector, a menu's new entries, a label) then reach the page after the new
    picture: the page draws it first instead of updating those widgets before it. Nested uses
    (an editor inside an explorer) send once, when the outermost block ends."""
    with ExitStack() as stack:
        for w in widgets_under(roots):
            stack.enter_context(w.hold_sync())
        yield
