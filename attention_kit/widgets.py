"""Widgets for the notebooks: a safe vector editor, a live figure and three explorers.

Everything here is an ipywidgets 8 widget whose callbacks are plain methods, so tests (and the
notebooks' stored outputs) can drive them without a browser:

* :func:`parse_vector` turns typed text into a vector with an allow-list (no ``eval``).
* :class:`VectorEditor` - a text box and one slider per component for each named vector.
* :class:`LiveFigure` - an ``ipywidgets.Image`` that shows a reused matplotlib ``Figure`` as PNG.
* :class:`AttentionExplorer` (notebook 01), :class:`SelfAttentionExplorer` (notebook 02),
  :class:`MultiHeadExplorer` (notebook 03) and :class:`MaskExplorer` (notebook 04).

An explorer recomputes its ``state`` with ``attention_kit`` and redraws its figure in place
(``set_data``, ``set_text``, ``set_positions``, ``set_height``); no new figure is made per change.
Every exception raised while updating is caught and written in the explorer's error label; the
previous state and picture stay. Without a widget front end (GitHub, nbval) an explorer shows a PNG
of its current figure.
"""

from __future__ import annotations

import base64
import struct
import time
import zlib
from contextlib import contextmanager
from functools import partial
from typing import Callable

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import alignment as _alignment
from . import attention as _attention
from . import masks as _masks
from . import multihead as _multihead
from . import positions as _positions
from . import scores as _scores
from .parsing import VectorParseError, format_vector, parse_vector
from .plotting import (
    OKABE_ITO,
    _add_text,
    head_grid,
    heatmap,
    plot_vectors,
    update_heatmap,
    update_vectors,
)

__all__ = [
    "VectorParseError",
    "parse_vector",
    "format_vector",
    "VectorEditor",
    "LiveFigure",
    "encode_png",
    "AttentionExplorer",
    "SelfAttentionExplorer",
    "MultiHeadExplorer",
    "MaskExplorer",
]

ERROR_STYLE = {"text_color": "#b00020"}
CONTEXT_COLOR = "#D55E00"  # vermillion (Okabe-Ito): the context / output vectors


class _MessageLabel(widgets.Label):
    """A red label that takes no room while it is empty."""

    def __init__(self):
        super().__init__(value="", style=ERROR_STYLE, layout=widgets.Layout(display="none"))
        self.observe(self._toggle, names="value")

    def _toggle(self, change) -> None:
        self.layout.display = None if change["new"] else "none"


def _friendly(exc: BaseException) -> str:
    """One line for the error label: the message, without a traceback."""
    msg = str(exc).strip() or type(exc).__name__
    if len(msg) > 300:
        msg = msg[:299] + "…"
    return f"⚠ {msg}"


# ---------------------------------------------------------------------------------------------
# Vector editor
# ---------------------------------------------------------------------------------------------


class VectorEditor(widgets.VBox):
    """Edit a few named vectors: one text box and one slider per component for each.

    Parameters
    ----------
    vectors : dict[str, array_like, shape (d,)]
        Initial vectors by name, e.g. ``{"q": [1, 0], "k1": [0.5, 0.5]}``. Order is kept.
    min, max, step : float
        Slider range and step. A typed value outside the range widens that slider's range.

    Notes
    -----
    Typing in a box and pressing Enter is :meth:`set_text`. Bad text leaves the vector (and the
    sliders) at the last good value and shows a short message next to the box; the box keeps what
    was typed so it can be corrected.
    """

    def __init__(self, vectors: dict, *, min: float = -2.0, max: float = 2.0, step: float = 0.05):
        lo, hi = float(min), float(max)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"min must be below max, got min={min!r}, max={max!r}")
        if not vectors:
            raise ValueError("vectors is empty: give at least one named vector, e.g. {'q': [1, 0]}")
        self._vals: dict[str, np.ndarray] = {}
        self._texts: dict[str, widgets.Text] = {}
        self._sliders: dict[str, list[widgets.FloatSlider]] = {}
        self._msgs: dict[str, widgets.Label] = {}
        self._ok: dict[str, bool] = {}
        self._callbacks: list[Callable] = []
        self._quiet = False
        rows = []
        for name, v in vectors.items():
            arr = np.asarray(v, dtype=float).reshape(-1)  # (d,)
            if arr.size == 0 or not np.isfinite(arr).all():
                raise ValueError(f"vector {name!r} must hold finite numbers, got {v!r}")
            self._vals[name] = arr.copy()
            text = widgets.Text(value=format_vector(arr), continuous_update=False,
                                placeholder="e.g. 0.1, 0.5", layout=widgets.Layout(width="150px"))
            text.observe(partial(self._text_changed, name), names="value")
            sliders = []
            for i, x in enumerate(arr):
                s = widgets.FloatSlider(
                    value=float(x), min=builtins_min(lo, float(x)), max=builtins_max(hi, float(x)),
                    step=step, description=f"[{i}]", readout_format=".2f", continuous_update=True,
                    layout=widgets.Layout(width="230px"), style={"description_width": "28px"})
                s.observe(partial(self._slider_changed, name, i), names="value")
                sliders.append(s)
            msg = _MessageLabel()
            self._texts[name], self._sliders[name], self._msgs[name] = text, sliders, msg
            self._ok[name] = True
            label = widgets.Label(value=name, layout=widgets.Layout(width="32px"))
            # a long message wraps onto its own line under the row instead of being cut off
            rows.append(widgets.HBox([label, text, *sliders, msg],
                                     layout=widgets.Layout(flex_flow="row wrap", align_items="center")))
        self.error = _MessageLabel()
        super().__init__(rows + [self.error])

    # -- reading ------------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The vectors' names, in order."""
        return list(self._vals)

    @property
    def values(self) -> dict[str, np.ndarray]:
        """A copy of the current vectors, ``{name: ndarray (d,)}``."""
        return {k: v.copy() for k, v in self._vals.items()}

    def matrix(self, names=None) -> np.ndarray:
        """The named vectors (default: all) stacked as rows, shape ``(m, d)``."""
        names = self.names if names is None else list(names)
        return np.stack([self._vals[n] for n in names])  # (m, d)

    def message(self, name: str) -> str:
        """The message shown next to ``name``'s box ('' when the last input was fine)."""
        return self._msgs[self._check_name(name)].value

    def text(self, name: str) -> str:
        """What ``name``'s text box shows."""
        return self._texts[self._check_name(name)].value

    def slider_values(self, name: str) -> np.ndarray:
        """What ``name``'s sliders show, shape ``(d,)``."""
        return np.array([s.value for s in self._sliders[self._check_name(name)]])

    # -- writing ------------------------------------------------------------------------------
    def on_change(self, callback: Callable) -> None:
        """Call ``callback(editor)`` after every valid change."""
        self._callbacks.append(callback)

    def set_text(self, name: str, text: str) -> bool:
        """Type ``text`` into ``name``'s box and press Enter. Returns whether it was accepted."""
        box = self._texts[self._check_name(name)]
        if box.value == text:  # no change event would fire: handle it directly
            return self._apply_text(name, text)
        box.value = text  # the observer parses it, as in the browser
        return self._ok[name]

    def set_component(self, name: str, i: int, value: float) -> None:
        """Move slider ``i`` of ``name`` to ``value`` (its range widens if needed)."""
        sliders = self._sliders[self._check_name(name)]
        value = float(value)
        if not np.isfinite(value):
            raise VectorParseError(f"{name}[{i}] must be a finite number, got {value!r}")
        s = sliders[i]
        self._widen(s, value)
        s.value = value

    def set_vector(self, name: str, vector) -> None:
        """Replace a whole vector (like typing it), notifying listeners once."""
        self.set_text(name, format_vector(np.asarray(vector, dtype=float)))

    # -- internals ----------------------------------------------------------------------------
    def _check_name(self, name: str) -> str:
        if name not in self._vals:
            raise KeyError(f"no vector named {name!r}; the editor has {self.names}")
        return name

    @staticmethod
    def _widen(s: widgets.FloatSlider, value: float) -> None:
        if value > s.max:
            s.max = value
        if value < s.min:
            s.min = value

    def _text_changed(self, name: str, change) -> None:
        if not self._quiet:
            self._apply_text(name, change["new"])

    def _apply_text(self, name: str, text: str) -> bool:
        old = self._vals[name]
        try:
            v = parse_vector(text, length=old.size)
        except VectorParseError as exc:
            self._ok[name] = False
            self._msgs[name].value = f"⚠ {exc} (kept {format_vector(old)})"
            return False
        except Exception as exc:  # never a traceback in the widget
            self._ok[name] = False
            self._msgs[name].value = _friendly(exc)
            return False
        self._vals[name] = v
        self._quiet = True
        try:
            for s, x in zip(self._sliders[name], v, strict=True):
                self._widen(s, float(x))
                s.value = float(x)
            self._texts[name].value = format_vector(v)
        finally:
            self._quiet = False
        self._ok[name] = True
        self._msgs[name].value = ""
        self._fire()
        return True

    def _slider_changed(self, name: str, i: int, change) -> None:
        if self._quiet:
            return
        v = self._vals[name].copy()
        v[i] = float(change["new"])
        self._vals[name] = v
        self._quiet = True
        try:
            self._texts[name].value = format_vector(v)
        finally:
            self._quiet = False
        self._ok[name] = True
        self._msgs[name].value = ""
        self._fire()

    def _fire(self) -> None:
        self.error.value = ""
        for cb in self._callbacks:
            try:
                cb(self)
            except Exception as exc:  # a listener's error is shown, not raised
                self.error.value = _friendly(exc)


builtins_min = min
builtins_max = max


# ---------------------------------------------------------------------------------------------
# Live figure
# ---------------------------------------------------------------------------------------------


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


_TEXT_CACHE: dict = {}
_TEXT_CACHE_MAX = 4096


def _cached_draw_text(renderer, original, gc, x, y, s, prop, angle, ismath=False, mtext=None):
    """``RendererAgg.draw_text`` with the rendered string bitmap cached.

    Rendering a string costs a FreeType layout plus one glyph rendering per character; a widget
    redraws the same few hundred strings ("0.12", tick labels, titles) on every change, so each is
    rendered once and then only blitted. Rotated text and mathtext take the normal path.
    """
    if ismath or angle % 360 != 0 or not gc.get_antialiased():
        return original(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
    key = (s, hash(prop), renderer.dpi)
    entry = _TEXT_CACHE.get(key)
    if entry is None:
        from matplotlib.backends.backend_agg import get_hinting_flag

        font = renderer._prepare_font(prop)
        font.set_text(s, 0, flags=get_hinting_flag())
        font.draw_glyphs_to_bitmap(antialiased=True)
        xo, yo = font.get_bitmap_offset()
        entry = (np.array(font.get_image()), xo / 64.0, yo / 64.0 + font.get_descent() / 64.0)
        if len(_TEXT_CACHE) >= _TEXT_CACHE_MAX:
            _TEXT_CACHE.clear()
        _TEXT_CACHE[key] = entry
    img, xo, yo = entry
    renderer._renderer.draw_text_image(img, round(x + xo), round(y + yo) + 1, 0, gc)


class LiveFigure(widgets.Image):
    """An ``ipywidgets.Image`` showing a reused matplotlib ``Figure`` as PNG.

    The figure is attached to an Agg canvas only (not to pyplot), so the inline backend never shows
    a second copy. Rendering is incremental:

    * the layout (constrained) is computed once, and again only after :meth:`relayout`;
    * artists registered with :meth:`set_dynamic` are the only ones redrawn on a :meth:`refresh`:
      everything else (axes, ticks, labels, colorbars) is rendered once into a cached background,
      until :meth:`invalidate` is called (e.g. after an axis range or a title changed);
    * rendered strings are cached, and the PNG is written with fast compression.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
    dpi : float, optional
        Rendering resolution (default: the figure's).
    """

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

    def set_dynamic(self, artists) -> None:
        """The artists that change between refreshes (images, cell texts, arrows, bars)."""
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
        png = encode_png(np.asarray(canvas.buffer_rgba()))
        self.renders += 1
        return png

    def refresh(self) -> None:
        """Re-render the figure into the image."""
        self.value = self.render()


# ---------------------------------------------------------------------------------------------
# Explorers
# ---------------------------------------------------------------------------------------------


class _Explorer(widgets.VBox):
    """Shared machinery: controls, editor, error label, live figure, safe update, static repr."""

    _PLAIN = "Explorer (interactive: run in JupyterLab to use the controls)"

    def _assemble(self, controls: dict, editor: VectorEditor | None, figure: Figure,
                  dpi: float = 80) -> None:
        self.controls = controls
        self.editor = editor
        self.figure = figure
        self.state: dict[str, np.ndarray] = {}
        self.error = _MessageLabel()
        self.live = LiveFigure(figure, dpi=dpi)
        self._busy = False
        self._last_layout = self._last_background = None
        for w in controls.values():
            w.observe(self._control_changed, names="value")
        if editor is not None:
            editor.on_change(lambda _e: None if self._busy else self.update())
        control_box = widgets.HBox(list(self._top_controls()),
                                   layout=widgets.Layout(flex_flow="row wrap"))
        parts = [control_box]
        if editor is not None:
            parts.append(editor)
        parts += [self.error, self.live]
        super().__init__(parts)

    def _top_controls(self):
        return self.controls.values()

    @property
    def message(self) -> str:
        """The error label's text ('' when the last update worked)."""
        return self.error.value

    @contextmanager
    def hold(self):
        """Change several controls or vectors, then redraw once::

            with explorer.hold():
                explorer.controls["score"].value = "general"
                explorer.controls["temperature"].value = 0.5
        """
        busy = self._busy
        self._busy = True
        try:
            yield self
        finally:
            self._busy = busy
        if not busy:
            self.update()

    def _control_changed(self, change) -> None:
        if not self._busy:
            self.update()

    def update(self) -> bool:
        """Recompute ``state`` from the controls and redraw in place.

        Returns True on success. On any error the message is shown in ``.error``, ``state`` and
        the picture stay as they were, and False is returned.
        """
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            with np.errstate(all="ignore"):  # overflow becomes a NonFiniteError message instead
                state = self._compute()
            self._draw(state)
        except Exception as exc:
            self.error.value = _friendly(exc)
            if self.state:
                try:  # put the artists back to the last good state
                    self._draw(self.state)
                except Exception:
                    pass
            return False
        self.state = state
        self.error.value = ""
        layout_sig, background_sig = self._signatures()
        if self._last_layout is None or len(layout_sig) != len(self._last_layout) or any(
                len(new) > len(old) + 3 for new, old in zip(layout_sig, self._last_layout, strict=True)):
            # a new panel or a clearly longer title: lay out again
            self._last_layout = layout_sig
            self._last_background = background_sig
            self.live.relayout()
        elif background_sig != self._last_background:  # an axis range or colour scale changed
            self._last_background = background_sig
            self.live.invalidate()
        try:
            self.live.refresh()
        except Exception as exc:
            self.error.value = _friendly(exc)
            return False
        #: wall and CPU milliseconds of the last successful update (compute + draw + PNG)
        self.last_update_ms = ((time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3)
        return True

    def _signatures(self) -> tuple[tuple, tuple]:
        axes = [ax for ax in self.figure.get_axes() if ax.get_visible()]
        plain = [ax for ax in axes if not hasattr(ax, "_colorbar")]
        layout = tuple(ax.get_title() for ax in plain)
        background = tuple((ax.get_title(), ax.get_xlim(), ax.get_ylim(),
                            tuple(im.get_clim() for im in ax.images)) for ax in plain)
        return layout, background

    def png(self) -> bytes:
        """The current figure as PNG bytes."""
        return self.live.render()

    def _repr_mimebundle_(self, **kwargs):
        data = dict(super()._repr_mimebundle_(**kwargs) or {})
        data["text/plain"] = self._PLAIN
        try:
            data["image/png"] = base64.b64encode(self.png()).decode("ascii")
        except Exception:
            pass
        return data

    def _compute(self) -> dict:
        raise NotImplementedError

    def _draw(self, state: dict) -> None:
        raise NotImplementedError


_LIMIT_STEPS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def _nice_limit(points: np.ndarray, minimum: float = 1.0, room: float = 1.2) -> float:
    """The smallest of 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (x 10^k) that leaves ``room``
    (x the largest value) for labels; never below ``minimum``."""
    m = float(np.max(np.abs(points))) if points.size else 0.0
    need = max(minimum, m * room)
    scale = 10.0 ** np.floor(np.log10(need))
    for step in _LIMIT_STEPS:
        if step * scale >= need - 1e-12:
            return float(step * scale)
    return float(10 * scale)


def _plane(ax, title: str) -> None:
    ax.set_aspect("equal")
    ax.axhline(0, color="#999999", linewidth=0.8, zorder=0)
    ax.axvline(0, color="#999999", linewidth=0.8, zorder=0)
    ax.grid(True, color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title)
    ax.set_xlabel("component 0")
    ax.set_ylabel("component 1")


def _steady_limits(ax, lim: float, which: str = "xy") -> None:
    """Set symmetric limits (-lim, lim), but only when the data leaves the current range or
    would fill less than half of it: the axes (and the cached background) rarely change."""
    get = ax.get_xlim if which[0] == "x" else ax.get_ylim
    current = get()[1]
    if not (get()[0] == -current and current > 0) or lim > current or lim < 0.5 * current:
        if "x" in which:
            ax.set_xlim(-lim, lim)
        if "y" in which:
            ax.set_ylim(-lim, lim)


class AttentionExplorer(_Explorer):
    """One 2-D query against a few 2-D keys and values: scores, weights and the context vector.

    Parameters
    ----------
    q : array_like, shape (2,)
        The query.
    K : array_like, shape (n, 2)
        The keys, one per row.
    V : array_like, shape (n, 2), optional
        The values (default: a copy of the keys).
    key_labels : sequence of str, optional
        Names of the keys in the bar charts (default ``k1 .. kn``).
    score, align : str
        Initial choices, names from ``SCORES`` and ``ALIGNMENTS``.
    temperature : float
        Divides the scores before the softmax.
    p : float, optional
        Centre of the local window (default: the middle key).
    D : int
        Half-width of the local window.
    seed : int
        Seeds the random weights of the additive / concat scores and hard-alignment sampling.

    Attributes
    ----------
    state : dict
        ``scores`` (n,), ``weights`` (n,), ``context`` (2,).
    """

    _PLAIN = "AttentionExplorer (interactive: run in JupyterLab to use the controls)"

    def __init__(self, q, K, V=None, *, key_labels=None, score: str = "dot", align: str = "soft",
                 temperature: float = 1.0, p: float | None = None, D: int = 1, seed: int = 0):
        q = np.asarray(q, dtype=float).reshape(-1)  # (2,)
        K = np.asarray(K, dtype=float)  # (n, 2)
        if q.shape != (2,) or K.ndim != 2 or K.shape[1] != 2:
            raise ValueError(f"AttentionExplorer works in the plane: q must have shape (2,) and K "
                             f"(n, 2), got q {q.shape} and K {K.shape}")
        V = K.copy() if V is None else np.asarray(V, dtype=float)  # (n, 2)
        if V.shape != K.shape:
            raise ValueError(f"V has shape {V.shape} but K has {K.shape}: one 2-D value per key")
        n = K.shape[0]
        if score not in _scores.SCORES:
            raise ValueError(f"unknown score {score!r}; choose one of {list(_scores.SCORES)}")
        if align not in _alignment.ALIGNMENTS:
            raise ValueError(f"unknown alignment {align!r}; choose one of {list(_alignment.ALIGNMENTS)}")
        self.n = n
        self.key_labels = list(key_labels) if key_labels is not None else [f"k{i + 1}" for i in range(n)]
        vecs = {"q": q}
        vecs.update({f"k{i + 1}": K[i] for i in range(n)})
        vecs.update({f"v{i + 1}": V[i] for i in range(n)})
        editor = VectorEditor(vecs)
        controls = {
            "score": widgets.Dropdown(options=list(_scores.SCORES), value=score, description="score",
                                      layout=widgets.Layout(width="220px")),
            "align": widgets.Dropdown(options=list(_alignment.ALIGNMENTS), value=align,
                                      description="align", layout=widgets.Layout(width="180px")),
            "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=-1, max=1,
                                                  step=0.05, description="temperature",
                                                  readout_format=".2f",
                                                  style={"description_width": "initial"}),
            "D": widgets.IntSlider(value=D, min=1, max=builtins_max(1, n), description="D (window)",
                                   style={"description_width": "initial"}),
            "p": widgets.FloatSlider(value=(n - 1) / 2 if p is None else p, min=0, max=builtins_max(n - 1, 0),
                                     step=0.1, description="p (centre)", readout_format=".1f",
                                     style={"description_width": "initial"}),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description="seed"),
            "sample": widgets.Checkbox(value=False, description="hard: sample (else argmax)",
                                       indent=False),
        }
        fig = Figure(figsize=(10.5, 4.2), layout="constrained")
        self._build_figure(fig)
        self._assemble(controls, editor, fig, dpi=80)
        self.live.set_dynamic([*self._bars_s, *self._bars_w, *self._txt_s, *self._txt_w,
                               *self._arr_k, *self._arr_v, *self._arr_q, *self._arr_c])
        self.update()

    def _build_figure(self, fig: Figure) -> None:
        n = self.n
        gs = fig.add_gridspec(2, 2, width_ratios=[1.25, 1])
        self._ax_s = fig.add_subplot(gs[0, 0])
        self._ax_w = fig.add_subplot(gs[1, 0], sharex=self._ax_s)
        self._ax_p = fig.add_subplot(gs[:, 1])
        colors = [OKABE_ITO[i % 5] for i in range(n)]
        x = np.arange(n)
        self._bars_s = self._ax_s.bar(x, np.zeros(n), color=colors, width=0.6)
        self._bars_w = self._ax_w.bar(x, np.zeros(n), color=colors, width=0.6)
        self._ax_s.axhline(0, color="#555555", linewidth=0.8)
        self._txt_s = [self._ax_s.text(i, 0, "", ha="center", fontsize=10) for i in range(n)]
        self._txt_w = [self._ax_w.text(i, 0, "", ha="center", va="bottom", fontsize=10) for i in range(n)]
        self._ax_s.set_ylabel("score e")
        self._ax_w.set_ylabel("weight a")
        self._ax_w.set_ylim(0, 1.18)
        self._ax_w.set_yticks([0, 0.5, 1])
        self._ax_w.set_xticks(x)
        self._ax_w.set_xticklabels(self.key_labels)
        self._ax_s.tick_params(labelbottom=False)
        self._ax_w.set_xlabel("keys")
        for ax in (self._ax_s, self._ax_w):
            ax.spines[["top", "right"]].set_visible(False)
        self._ax_s.set_title(" ")
        self._ax_w.set_title(" ")
        _plane(self._ax_p, "q, keys k (solid), values v (dashed), context c")
        self._ax_p.title.set_fontsize(10.5)
        self._arr_k = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=[f"k{i + 1}" for i in range(n)],
                                   color=colors)
        self._arr_v = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=[f"v{i + 1}" for i in range(n)],
                                   color=colors, linestyle="--", alpha=0.75)
        self._arr_q = plot_vectors(self._ax_p, np.zeros((1, 2)), labels=["q"], color="black")
        self._arr_c = plot_vectors(self._ax_p, np.zeros((1, 2)), labels=["c"], color=CONTEXT_COLOR,
                                   linewidth=3.0)

    def _compute(self) -> dict:
        c = self.controls
        vals = self.editor.values
        n = self.n
        q = vals["q"]
        K = np.stack([vals[f"k{i + 1}"] for i in range(n)])  # (n, 2)
        V = np.stack([vals[f"v{i + 1}"] for i in range(n)])  # (n, 2)
        name, al = c["score"].value, c["align"].value
        seed = int(c["seed"].value)
        sparams = _scores.default_score_params(name, 2, 2, rng=np.random.default_rng(seed))
        aparams = {"temperature": float(c["temperature"].value)}
        if al == "local":
            aparams.update(p=float(c["p"].value), D=int(c["D"].value))
        elif al == "hard" and c["sample"].value:
            aparams["rng"] = np.random.default_rng(seed)
        context, weights, scores = _attention.general_attention(
            q, K, V, score=name, align=al, score_params=sparams, align_params=aparams,
            return_scores=True)
        self._enable(name, al)
        return {"q": q, "K": K, "V": V, "scores": scores, "weights": weights, "context": context}

    def _enable(self, score: str, align: str) -> None:
        c = self.controls
        c["D"].disabled = c["p"].disabled = align != "local"
        c["sample"].disabled = align != "hard"
        c["seed"].disabled = not (score in ("additive", "concat") or (align == "hard" and c["sample"].value))

    def _draw(self, st: dict) -> None:
        e, a = st["scores"], st["weights"]
        _steady_limits(self._ax_s, _nice_limit(e, minimum=1.0), "y")
        lim = self._ax_s.get_ylim()[1]
        for i, (bar, t, v) in enumerate(zip(self._bars_s, self._txt_s, e, strict=True)):
            bar.set_height(v)
            t.set_text(f"{v:.2f}")
            t.set_position((i, v + (0.04 * lim if v >= 0 else -0.04 * lim)))
            t.set_va("bottom" if v >= 0 else "top")
        for i, (bar, t, v) in enumerate(zip(self._bars_w, self._txt_w, a, strict=True)):
            bar.set_height(v)
            t.set_text(f"{v:.2f}")
            t.set_position((i, v + 0.02))
        c = self.controls
        self._ax_s.set_title(f"scores e = {c['score'].value}(q, k)", fontsize=11)
        extra = ""
        if c["align"].value == "local":
            extra = f", p={c['p'].value:.1f}, D={c['D'].value}"
        self._ax_w.set_title(f"weights a = {c['align'].value} alignment of e "
                             f"(T={c['temperature'].value:.2f}{extra}); sum = {a.sum():.2f}", fontsize=11)
        K, V, q, ctx = st["K"], st["V"], st["q"], st["context"]
        pts = np.vstack([K, V, q[None], ctx[None]])
        lim = _nice_limit(pts, minimum=0.5, room=1.4)  # room for the tip labels
        _steady_limits(self._ax_p, lim)
        lim = self._ax_p.get_xlim()[1]
        for i in range(self.n):  # labels first: update_vectors places them by their length
            same = np.allclose(K[i], V[i])
            self._arr_k.labels[i].set_text(f"k{i + 1}=v{i + 1}" if same else f"k{i + 1}")
            self._arr_v.labels[i].set_text("" if same else f"v{i + 1}")
            self._arr_v.arrows[i].set_visible(not same)
        update_vectors(self._arr_k, K, span=lim)
        update_vectors(self._arr_v, V, span=lim)
        update_vectors(self._arr_q, q[None], span=lim)
        update_vectors(self._arr_c, ctx[None], span=lim)
        for i in range(self.n):
            self._arr_v.arrows[i].set_linewidth(0.8 + 4.0 * float(a[i]))


def _random_projections(d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, 1.0 / np.sqrt(d), (3, d, d))  # (3, d_model, d_k)
    return W[0], W[1], W[2]


class SelfAttentionExplorer(_Explorer):
    """Self-attention of a few tokens: raw dot products, weights and (in 2-D) inputs and outputs.

    Parameters
    ----------
    X : array_like, shape (n, d)
        One token per row (d = 2 also draws the plane).
    labels : sequence of str, optional
        Token names (default ``x1 .. xn``).
    learned : bool
        Use seeded random ``W_q, W_k, W_v`` of shape (d, d) instead of the identity.
    seed : int
        Seed of those projections.
    temperature : float
        Extra divisor of the scores.
    scale : bool
        Divide the scores by ``sqrt(d_k)``.

    Attributes
    ----------
    state : dict
        ``dots`` (n, n) raw ``Q K^T``, ``weights`` (n, n), ``outputs`` (n, d), plus ``Q``, ``K``,
        ``V`` (n, d).
    """

    _PLAIN = "SelfAttentionExplorer (interactive: run in JupyterLab to use the controls)"

    def __init__(self, X, *, labels=None, learned: bool = False, seed: int = 0,
                 temperature: float = 1.0, scale: bool = True):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X has shape {X.shape} but (n, d) was expected (rows are tokens)")
        n, d = X.shape
        self.n, self.d = n, d
        self.labels = list(labels) if labels is not None else [f"x{i + 1}" for i in range(n)]
        if len(self.labels) != n:
            raise ValueError(f"labels has {len(self.labels)} entries but X has {n} tokens")
        editor = VectorEditor({f"x{i + 1}": X[i] for i in range(n)})
        controls = {
            "learned": widgets.Checkbox(value=learned, description="learned W_q, W_k, W_v (random)",
                                        indent=False),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description="seed"),
            "scale": widgets.Checkbox(value=scale, description="divide by √d_k", indent=False),
            "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=-1, max=1,
                                                  step=0.05, description="temperature",
                                                  readout_format=".2f",
                                                  style={"description_width": "initial"}),
        }
        fig = Figure(figsize=(13.5 if d == 2 else 10, 4.6), layout="constrained")
        self._build_figure(fig)
        self._assemble(controls, editor, fig, dpi=72 if n > 5 else 80)
        dynamic = []
        for hm in (self._hm_dots, self._hm_w):
            dynamic += [hm.image, hm.grid] + ([hm.text_batch] if hm.text_batch else [])
        if self._ax_p is not None:
            dynamic += [*self._arr_x, *self._arr_y]
        self.live.set_dynamic(dynamic)
        self.update()

    def _build_figure(self, fig: Figure) -> None:
        n, d = self.n, self.d
        ncols = 3 if d == 2 else 2
        axes = fig.subplots(1, ncols, gridspec_kw={"width_ratios": [1, 1, 0.9][:ncols]})
        zeros = np.zeros((n, n))
        self._hm_dots = heatmap(zeros, query_labels=self.labels, key_labels=self.labels, ax=axes[0],
                                kind="scores", title="raw scores Q Kᵀ")
        self._hm_w = heatmap(np.full((n, n), 1.0 / n), query_labels=self.labels,
                             key_labels=self.labels, ax=axes[1], title="weights")
        self._ax_p = axes[2] if d == 2 else None
        if self._ax_p is not None:
            colors = [OKABE_ITO[i % len(OKABE_ITO)] for i in range(n)]
            _plane(self._ax_p, "inputs x (solid), outputs y (dashed)" if n <= 4 else
                   "inputs (solid), outputs (dashed)")
            self._arr_x = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=self.labels, color=colors)
            # with many tokens, output labels would pile up: the colour pairs them instead
            self._arr_y = plot_vectors(self._ax_p, np.zeros((n, 2)),
                                       labels=[f"y{i + 1}" if n <= 4 else "" for i in range(n)],
                                       color=colors, linestyle="--")

    def _compute(self) -> dict:
        c = self.controls
        X = self.editor.matrix([f"x{i + 1}" for i in range(self.n)])  # (n, d)
        d = self.d
        if c["learned"].value:
            W_q, W_k, W_v = _random_projections(d, int(c["seed"].value))
        else:
            W_q = W_k = W_v = np.eye(d)
        c["seed"].disabled = not c["learned"].value
        T = float(c["temperature"].value)
        if not np.isfinite(T) or T <= 0:
            raise ValueError(f"temperature must be positive, got {T}")
        Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (n, d) each
        dots = _scores.dot_score(Q, K)  # (n, n)
        s = (1.0 / np.sqrt(K.shape[1]) if c["scale"].value else 1.0) / T
        outputs, weights = _attention.scaled_dot_product_attention(Q, K, V, scale=s)
        return {"X": X, "Q": Q, "K": K, "V": V, "dots": dots, "weights": weights, "outputs": outputs}

    def _draw(self, st: dict) -> None:
        c = self.controls
        update_heatmap(self._hm_dots, st["dots"])
        update_heatmap(self._hm_w, st["weights"])
        div = []
        if c["scale"].value:
            div.append("√d_k")
        if abs(c["temperature"].value - 1.0) > 1e-9:
            div.append(f"{c['temperature'].value:.2f}")
        arg = "Q Kᵀ" + (" / " + "·".join(div) if div else "")
        self._hm_w.ax.set_title(f"weights softmax({arg})")
        src = "X W_q (X W_k)ᵀ" if c["learned"].value else "X Xᵀ (W = identity)"
        self._hm_dots.ax.set_title(f"raw scores Q Kᵀ = {src}")
        if self._ax_p is not None:
            X, Y = st["X"], st["outputs"]
            lim = _nice_limit(np.vstack([X, Y]), minimum=0.5, room=1.4)  # room for the tip labels
            _steady_limits(self._ax_p, lim)
            lim = self._ax_p.get_xlim()[1]
            update_vectors(self._arr_x, X, span=lim)
            update_vectors(self._arr_y, Y, span=lim)


class MultiHeadExplorer(_Explorer):
    """Multi-head self-attention of a short sentence: every head's weights, and how one edited
    token changes its output row.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
        Token embeddings, one row per token (d_model <= 8).
    tokens : sequence of str, length n
        The words.
    n_heads : int
        Initial number of heads (1, 2, 4 or 8, a divisor of d_model).
    seed : int
        Seeds ``init_multi_head``.
    token : int
        Index of the token whose embedding the sliders edit.

    Attributes
    ----------
    state : dict
        ``weights`` (h, n, n), ``output`` (n, d_model), ``output_initial`` (n, d_model) for the
        initial embeddings with the same parameters, and ``X`` (n, d_model).
    """

    _PLAIN = "MultiHeadExplorer (interactive: run in JupyterLab to use the controls)"

    def __init__(self, X, tokens, *, n_heads: int = 2, seed: int = 0, token: int = 0):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X has shape {X.shape} but (n, d_model) was expected (rows are tokens)")
        n, d = X.shape
        if d > 8:
            raise ValueError(f"d_model = {d}: the explorer shows one slider per component, so keep "
                             "d_model <= 8")
        tokens = [str(t) for t in tokens]
        if len(tokens) != n:
            raise ValueError(f"tokens has {len(tokens)} words but X has {n} rows")
        heads = [h for h in (1, 2, 4, 8) if d % h == 0]
        if n_heads not in heads:
            raise ValueError(f"n_heads = {n_heads} must be one of {heads} (divisors of d_model = {d})")
        if not 0 <= token < n:
            raise ValueError(f"token = {token} must be between 0 and {n - 1}")
        self.n, self.d = n, d
        self.tokens = tokens
        self.X0 = X.copy()
        self._X = X.copy()
        lo = builtins_min(-2.0, float(np.floor(X.min())))
        hi = builtins_max(2.0, float(np.ceil(X.max())))
        controls = {
            "n_heads": widgets.Dropdown(options=heads, value=n_heads, description="heads",
                                        layout=widgets.Layout(width="140px")),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description="seed"),
            "token": widgets.Dropdown(options=[(f"{i}: {t}", i) for i, t in enumerate(tokens)],
                                      value=token, description="edit token",
                                      layout=widgets.Layout(width="220px")),
        }
        for j in range(d):
            controls[f"dim{j}"] = widgets.FloatSlider(
                value=float(X[token, j]), min=lo, max=hi, step=0.05, description=f"dim {j}",
                readout_format=".2f", continuous_update=True,
                layout=widgets.Layout(width="260px"), style={"description_width": "40px"})
        self.reset_button = widgets.Button(description="reset embeddings",
                                           layout=widgets.Layout(width="150px"))
        self.reset_button.on_click(lambda _b: self.reset())
        fig = Figure(figsize=(12, 5.2), layout="constrained")
        self._built_heads = None
        self._assemble(controls, None, fig, dpi=72)
        self.update()

    def _top_controls(self):
        c = self.controls
        first = widgets.HBox([c["n_heads"], c["seed"], c["token"], self.reset_button])
        sliders = widgets.HBox([c[f"dim{j}"] for j in range(self.d)],
                               layout=widgets.Layout(flex_flow="row wrap"))
        return [widgets.VBox([first, sliders])]

    @property
    def X(self) -> np.ndarray:
        """The current embeddings, shape (n, d_model)."""
        return self._X.copy()

    def reset(self) -> None:
        """Back to the initial embeddings."""
        self._X = self.X0.copy()
        self._sync_sliders()
        self.update()

    def _sync_sliders(self) -> None:
        t = int(self.controls["token"].value)
        self._syncing = True
        try:
            for j in range(self.d):
                s = self.controls[f"dim{j}"]
                v = float(self._X[t, j])
                s.min, s.max = builtins_min(s.min, v), builtins_max(s.max, v)
                s.value = v
        finally:
            self._syncing = False

    def _control_changed(self, change) -> None:
        if getattr(self, "_syncing", False):
            return
        owner = change["owner"]
        if owner is self.controls["token"]:
            self._sync_sliders()
        else:
            for j in range(self.d):
                if owner is self.controls[f"dim{j}"]:
                    t = int(self.controls["token"].value)
                    self._X[t, j] = float(change["new"])
        if not self._busy:
            self.update()

    def _compute(self) -> dict:
        c = self.controls
        h = int(c["n_heads"].value)
        params = _multihead.init_multi_head(self.d, h, rng=np.random.default_rng(int(c["seed"].value)))
        X = self._X.copy()
        out, w = _multihead.multi_head_attention(X, X, params)  # (n, d), (h, n, n)
        out0, _ = _multihead.multi_head_attention(self.X0, self.X0, params)
        return {"X": X, "weights": w, "output": out, "output_initial": out0}

    def _build(self, h: int) -> None:
        fig = self.figure
        fig.clear()
        # one row of up to 4 heads; the figure's height follows the number of rows
        fig.set_size_inches(12, {1: 4.4, 2: 4.4, 4: 3.6}.get(h, 5.4))
        gs = fig.add_gridspec(1, 2, width_ratios=[3.2, 1])
        ncols = min(h, 4)
        zeros = np.full((h, self.n, self.n), 1.0 / self.n)
        _, self._axes, self._hms = head_grid(zeros, query_labels=self.tokens, key_labels=self.tokens,
                                             fig=fig, ncols=ncols, subplot_spec=gs[0, 0])
        self._hms[0].colorbar.ax.set_ylabel("attention weight")
        sub = fig.add_subfigure(gs[0, 1])
        ax = sub.add_subplot()
        x = np.arange(self.d)
        self._bars0 = ax.barh(x + 0.2, np.zeros(self.d), height=0.4, color="#999999",
                              label="initial")
        self._bars1 = ax.barh(x - 0.2, np.zeros(self.d), height=0.4, color=OKABE_ITO[0], label="now")
        ax.axvline(0, color="#555555", linewidth=0.8)
        ax.set_yticks(x)
        ax.set_yticklabels([f"dim {j}" for j in range(self.d)])
        ax.set_ylim(self.d - 0.5, -0.5)
        ax.set_xlabel("output value")
        ax.spines[["top", "right"]].set_visible(False)
        self._ax_out = ax
        self._built_heads = h
        dynamic = []
        for hm in self._hms:
            dynamic += [hm.image, hm.grid] + ([hm.text_batch] if hm.text_batch else [])
        self.live.set_dynamic(dynamic + [*self._bars0, *self._bars1])
        self.live.relayout()

    def _draw(self, st: dict) -> None:
        w = st["weights"]
        h = w.shape[0]
        if self._built_heads != h:
            self._build(h)
        for i, art in enumerate(self._hms):
            update_heatmap(art, w[i])
        t = int(self.controls["token"].value)
        o, o0 = st["output"][t], st["output_initial"][t]
        for b, v in zip(self._bars1, o, strict=True):
            b.set_width(v)
        for b, v in zip(self._bars0, o0, strict=True):
            b.set_width(v)
        _steady_limits(self._ax_out, _nice_limit(np.concatenate([o, o0]), minimum=0.5), "x")
        self._ax_out.set_title(f"output row of “{self.tokens[t]}”\nblue: now, grey: initial",
                               fontsize=10.5)


class MaskExplorer(_Explorer):
    """Masks and positions on a short padded sentence: which keys each query may see, the weights,
    and which output rows move when one token is edited.

    Self-attention with seeded random projections ``W_q, W_k, W_v`` (d_model x d_model) on
    embeddings that depend only on the word (so a repeated word has a repeated row), optionally
    plus the sinusoidal positional encoding.

    Parameters
    ----------
    tokens : sequence of str, length n
        The sentence, padding included (e.g. ``"<pad>"`` at the end).
    n_real : int, optional
        How many tokens are real (the rest is padding); default: every token not named ``"<pad>"``.
    mask : str
        One of ``MaskExplorer.MASKS``: "none", "causal", "padding", "causal + padding", "local window".
    positions : bool
        Add ``sinusoidal_positions(n, d_model)`` to the embeddings.
    d_model : int
        Width of the embeddings (even, at most 64).
    seed : int
        Seeds the projections (the embeddings are seeded separately, by ``embed_seed``).
    token : int
        The token that the ``nudge`` slider edits.
    D : int
        Half-width of the local window (the window of query i is keys ``i - D .. i + D``).
    embed_seed : int
        Seeds the word embeddings.
    nudge : float
        Initial position of the ``nudge`` slider, from -2 to 2.

    Attributes
    ----------
    state : dict
        ``X`` (n, d_model) the inputs after the nudge (and positions), ``mask`` (n, n) bool
        (all True for "none"), ``weights`` (n, n), ``output`` (n, d_model), ``output_base``
        (n, d_model) with no nudge, ``change`` (n,) the length of each output row's move, and
        ``reach`` the largest such move anywhere on the nudge slider (it sets the bars' scale).
    """

    _PLAIN = "MaskExplorer (interactive: run in JupyterLab to use the controls)"
    MASKS = ("none", "causal", "padding", "causal + padding", "local window")
    PAD = "<pad>"

    def __init__(self, tokens, *, n_real: int | None = None, mask: str = "causal",
                 positions: bool = False, d_model: int = 8, seed: int = 0, token: int = 0,
                 D: int = 1, embed_seed: int = 0, nudge: float = 0.0):
        tokens = [str(t) for t in tokens]
        n = len(tokens)
        if not 1 <= n <= 12:
            raise ValueError(f"tokens has {n} words; give 1 to 12 so that the heatmap stays readable")
        if mask not in self.MASKS:
            raise ValueError(f"mask = {mask!r} is not one of {list(self.MASKS)}")
        if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) \
                or not 2 <= d_model <= 64 or d_model % 2:
            raise ValueError(f"d_model = {d_model!r} must be an even whole number from 2 to 64")
        if n_real is None:
            n_real = sum(t != self.PAD for t in tokens)
        if not 1 <= n_real <= n:
            raise ValueError(f"n_real = {n_real} must be between 1 and {n} (at least one real token)")
        if not 0 <= token < n:
            raise ValueError(f"token = {token} must be between 0 and {n - 1}")
        if not -2.0 <= float(nudge) <= 2.0:
            raise ValueError(f"nudge = {nudge} must be between -2 and 2")
        self.tokens, self.n, self.d = tokens, n, int(d_model)
        vocab = sorted(set(tokens))
        E = np.random.default_rng(embed_seed).normal(0.0, 1.0, (len(vocab), self.d))  # (vocab, d)
        self.X0 = E[[vocab.index(t) for t in tokens]]  # (n, d): a repeated word, a repeated row
        u = np.random.default_rng(10_000 + embed_seed).normal(size=self.d)
        self.direction = u / np.sqrt(np.mean(u * u))  # (d,), root mean square 1: the nudge direction
        self.P = _positions.sinusoidal_positions(n, self.d)  # (n, d)
        narrow = widgets.Layout(width="250px")
        controls = {
            "mask": widgets.Dropdown(options=list(self.MASKS), value=mask, description="mask",
                                     layout=widgets.Layout(width="230px")),
            "n_real": widgets.IntSlider(value=n_real, min=1, max=n, description="real tokens",
                                        layout=narrow, style={"description_width": "80px"}),
            "D": widgets.IntSlider(value=D, min=0, max=builtins_max(1, n - 1), description="D (window)",
                                   layout=narrow, style={"description_width": "80px"}),
            "positions": widgets.Checkbox(value=positions, description="add positions P",
                                          indent=False, layout=widgets.Layout(width="150px")),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description="seed", layout=narrow,
                                      style={"description_width": "80px"}),
            "token": widgets.Dropdown(options=[(f"{i}: {t}", i) for i, t in enumerate(tokens)],
                                      value=token, description="edit token",
                                      layout=widgets.Layout(width="230px")),
            "nudge": widgets.FloatSlider(value=float(nudge), min=-2.0, max=2.0, step=0.1, description="nudge",
                                         readout_format="+.1f", layout=narrow,
                                         style={"description_width": "80px"}),
        }
        fig = Figure(figsize=(9.6, 1.2 + 0.5 * n), layout="constrained")
        self._build_figure(fig)
        self._assemble(controls, None, fig, dpi=80 if n <= 8 else 72)
        dynamic = [self._hm.image, self._hm.grid] + ([self._hm.text_batch] if self._hm.text_batch else [])
        self.live.set_dynamic(dynamic + list(self._bars) + list(self._bar_texts))
        self.update()

    def _top_controls(self):
        c = self.controls
        row1 = widgets.HBox([c["mask"], c["n_real"], c["D"], c["positions"]])
        row2 = widgets.HBox([c["token"], c["nudge"], c["seed"]])
        return [widgets.VBox([row1, row2])]

    def _build_figure(self, fig: Figure) -> None:
        n = self.n
        ax_w, ax_b = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        self._hm = heatmap(np.full((n, n), 1.0 / n), query_labels=self.tokens, key_labels=self.tokens,
                           ax=ax_w, title="weights")
        y = np.arange(n)
        self._bars = ax_b.barh(y, np.zeros(n), height=0.6, color=OKABE_ITO[0])
        self._bar_texts = [_add_text(ax_b, 0.0, i, "", va="center", ha="left", fontsize=9) for i in y]
        ax_b.set_yticks(y)
        ax_b.set_yticklabels(self.tokens)
        ax_b.set_ylim(n - 0.5, -0.5)  # the same rows as the heatmap, top to bottom
        ax_b.set_xlabel("|change of the output row|")
        ax_b.spines[["top", "right"]].set_visible(False)
        self._ax_b = ax_b

    def _mask(self) -> np.ndarray | None:
        c = self.controls
        kind, n = c["mask"].value, self.n
        if kind == "none":
            return None
        m = np.ones((n, n), dtype=bool)
        if "causal" in kind:
            m &= _masks.causal_mask(n)
        if "padding" in kind:
            m &= _masks.padding_mask(int(c["n_real"].value), n)  # (1, n): pad keys, for every query
        if kind == "local window":
            m &= _masks.window_mask(n, n, center=np.arange(n), D=int(c["D"].value))
        return m

    def _compute(self) -> dict:
        c = self.controls
        kind = c["mask"].value
        c["n_real"].disabled = "padding" not in kind
        c["D"].disabled = kind != "local window"
        X = self.X0 + (self.P if c["positions"].value else 0.0)  # (n, d)
        t = int(c["token"].value)
        W_q, W_k, W_v = _random_projections(self.d, int(c["seed"].value))
        mask = self._mask()

        def nudged(amount: float):
            """Token t moved by ``amount`` along the nudge direction: (inputs, output, weights)."""
            Xa = X.copy()
            Xa[t] += amount * self.direction
            return (Xa, *_attention.self_attention(Xa, W_q, W_k, W_v, mask=mask))  # (n, d), (n, d), (n, n)

        Xn, out, w = nudged(float(c["nudge"].value))
        _, base, _ = nudged(0.0)
        change = np.sqrt(np.sum((out - base) ** 2, axis=1))  # (n,)
        # the largest move over the slider's whole range fixes the bars' scale while dragging
        reach = builtins_max(float(np.sqrt(np.sum((nudged(end)[1] - base) ** 2, axis=1)).max())
                             for end in (c["nudge"].min, c["nudge"].max))
        full = np.ones((self.n, self.n), dtype=bool) if mask is None else mask
        return {"X": Xn, "mask": full, "weights": w, "output": out, "output_base": base,
                "change": change, "reach": reach}

    def _draw(self, st: dict) -> None:
        c = self.controls
        kind = c["mask"].value
        update_heatmap(self._hm, st["weights"], mask=None if kind == "none" else st["mask"])
        extra = " + positions" if c["positions"].value else ""
        self._hm.ax.set_title(f"weights, mask: {kind}{extra}")
        ch = st["change"]
        # one range for the whole nudge slider (room for the value labels): it changes only with
        # the token, the mask, the positions or the seed, so a drag redraws just the bars
        lim = _nice_limit(np.array([st["reach"], *ch]), minimum=0.5, room=1.3)
        if self._ax_b.get_xlim() != (0.0, lim):
            self._ax_b.set_xlim(0, lim)
        for b, txt, v in zip(self._bars, self._bar_texts, ch, strict=True):
            b.set_width(v)
            txt.set_x(v + 0.02 * lim)
            txt.set_text("0" if v < 1e-12 else f"{v:.2f}")
        t = int(c["token"].value)
        self._ax_b.set_title(f"which output rows move\nwhen “{self.tokens[t]}” (token {t}) is nudged",
                             fontsize=10.5)
