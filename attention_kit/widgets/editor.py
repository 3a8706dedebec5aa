"""The vector editor: one text box and one slider per component for each named vector."""

from __future__ import annotations

from functools import partial
from typing import Callable

import ipywidgets as widgets
import numpy as np

from ..i18n import _
from .live_figure import picture_first
from .messages import MessageLabel, friendly
from .parsing import VectorParseError, format_vector, parse_vector

__all__ = ["VectorEditor"]



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
        #: The last change, as the learner sees it ("vector q 0.50, 1.00", "q[0] 0.50"): the
        #: explorer's announcement starts with it.
        self.last_change = ""
        rows = []
        for name, v in vectors.items():
            arr = np.asarray(v, dtype=float).reshape(-1)  # (d,)
            if arr.size == 0 or not np.isfinite(arr).all():
                raise ValueError(f"vector {name!r} must hold finite numbers, got {v!r}")
            self._vals[name] = arr.copy()
            text = widgets.Text(value=format_vector(arr), continuous_update=False,
                                placeholder=_("e.g. 0.1, 0.5"), layout=widgets.Layout(width="150px"),
                                tooltip=_("vector {name}").format(name=name))  # its name for a screen reader, too
            text.observe(partial(self._text_changed, name), names="value")
            sliders = []
            for i, x in enumerate(arr):
                s = widgets.FloatSlider(
                    value=float(x), min=builtins_min(lo, float(x)), max=builtins_max(hi, float(x)),
                    step=step, description=f"[{i}]", readout_format=".2f", continuous_update=True,
                    layout=widgets.Layout(width="230px"), style={"description_width": "28px"},
                    tooltip=f"{name}[{i}]")  # which vector's "[i]" (live_figure.js names it so)
                s.observe(partial(self._slider_changed, name, i), names="value")
                sliders.append(s)
            msg = MessageLabel()
            self._texts[name], self._sliders[name], self._msgs[name] = text, sliders, msg
            self._ok[name] = True
            label = widgets.Label(value=name, layout=widgets.Layout(width="32px"))
            # a long message wraps onto its own line under the row instead of being cut off
            rows.append(widgets.HBox([label, text, *sliders, msg],
                                     layout=widgets.Layout(flex_flow="row wrap", align_items="center")))
        self.error = MessageLabel()
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

    def sliders(self, name: str) -> list[widgets.FloatSlider]:
        """``name``'s sliders themselves, one a component (e.g. for a benchmark that moves one)."""
        return list(self._sliders[self._check_name(name)])

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
            raise VectorParseError(_("{name}[{i}] must be a finite number, got {value!r}").format(name=name, i=i, value=value))
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
            with picture_first(self):  # the sliders follow the new picture
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
            self._msgs[name].value = friendly(exc)
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
        self.last_change = _("vector {name} {values}").format(name=name, values=format_vector(v))
        self._accept(name)
        return True

    def _slider_changed(self, name: str, i: int, change) -> None:
        if self._quiet:
            return
        v = self._vals[name].copy()
        v[i] = float(change["new"])
        self._vals[name] = v
        with picture_first(self):  # the text box follows the new picture
            self._quiet = True
            try:
                self._texts[name].value = format_vector(v)
            finally:
                self._quiet = False
            self.last_change = f"{name}[{i}] {float(change['new']):.2f}"
            self._accept(name)

    def _accept(self, name: str) -> None:
        """``name`` holds a valid vector again: clear its message and tell the listeners."""
        self._ok[name] = True
        self._msgs[name].value = ""
        self._fire()

    def _fire(self) -> None:
        self.error.value = ""
        for cb in self._callbacks:
            try:
                cb(self)
            except Exception as exc:  # a listener's error is shown, not raised
                self.error.value = friendly(exc)


builtins_min = min
builtins_max = max
