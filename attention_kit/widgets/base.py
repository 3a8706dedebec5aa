"""What every explorer shares: controls, an editor, an error label, a live figure, a safe
``update`` that keeps the last good picture, and a static PNG where no kernel runs. The helpers
for 2-D planes and steady axes are in ``axes.py``."""

from __future__ import annotations

import base64
import time
import warnings
from contextlib import contextmanager

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..i18n import N_, _, language
from .editor import VectorEditor
from .idle import IDLE
from .live_figure import LiveFigure, picture_first
from .messages import MessageLabel, friendly

__all__ = ["Explorer"]


class Explorer(widgets.VBox):
    """Shared machinery: controls, editor, error label, live figure, safe update, static repr."""

    _PLAIN = N_("Explorer (interactive: run in JupyterLab to use the controls)")

    def _assemble(self, controls: dict, editor: VectorEditor | None, figure: Figure,
                  dpi: float = 80) -> None:
        self.controls = controls
        self.editor = editor
        self.figure = figure
        self.state: dict[str, np.ndarray] = {}
        self.error = MessageLabel()
        self.live = LiveFigure(figure, dpi=dpi)
        self._busy = False
        self._last_layout = self._last_background = None
        self.live.when_shown(self._prepare_when_idle)
        for w in controls.values():
            w.observe(self._on_control, names="value")
        if editor is not None:
            editor.on_change(self._on_editor)
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
        with picture_first(self):
            self._busy = True
            try:
                yield self
            finally:
                self._busy = busy
            if not busy:
                self.update()

    #: A control's spoken name when its label is not one (the key in ``controls`` -> name).
    CONTROL_NAMES: dict = {}

    def _on_control(self, change) -> None:
        # the control the learner moved, not one its handler sets, nor those set inside hold()
        outer = not self.__dict__.get("_in_control", False)
        if outer and not self._busy:
            owner = change["owner"]
            key = next((k for k, w in self.controls.items() if w is owner), None)
            name = self.CONTROL_NAMES.get(key)
            self.live.cause = control_words(owner, _(name) if name else name)
        self._in_control = True
        try:
            with picture_first(self):  # what the control changes in other widgets follows the picture
                self._control_changed(change)
        finally:
            self._in_control = not outer

    def _on_editor(self, editor) -> None:
        if self._busy:
            return
        self.live.cause = getattr(editor, "last_change", "")
        self.update()

    def _control_changed(self, change) -> None:
        if not self._busy:
            self.update()

    def update(self) -> bool:
        """Recompute ``state`` from the controls and redraw in place.

        Returns True on success. On any error the message is shown in ``.error``, ``state`` and
        the picture stay as they were, and False is returned. The new picture leaves the kernel
        before any other widget's new state (see ``picture_first``).
        """
        with picture_first(self):
            return self._update()

    def _update(self) -> bool:
        t0, c0 = time.perf_counter(), time.process_time()
        IDLE.pressed()  # idle work waits until the controls are still again
        self.live.stamp("callback")
        try:
            with np.errstate(all="ignore"):  # overflow becomes a NonFiniteError message instead
                state = self._compute()
            self.live.stamp("computed")
            shown = self.__dict__.get("_scene_key")
            self._draw(state)
            self.live.stamp("drawn")
            if self.__dict__.get("_scene_key") != shown and self.__dict__.get("_idle_loop"):
                IDLE.add_once(self, self.preparation, self._idle_loop)  # its choices changed
        except Exception as exc:
            self.error.value = friendly(exc)
            self.live.cause = ""  # no new picture: nothing to announce
            if self.state:
                try:  # put the artists back to the last good state
                    self._draw(self.state)
                except Exception:
                    pass
            return False
        self.state = state
        self.error.value = ""
        layout_sig, background_sig = self._signatures()
        if self._last_layout is _PLACED:  # a scene placed from a template: laid out already
            self._last_layout, self._last_background = layout_sig, background_sig
        elif self._last_layout is None or len(layout_sig) != len(self._last_layout) or any(
                _needs_layout(new, old) for new, old in zip(layout_sig, self._last_layout, strict=True)):
            # a new panel, a clearly longer title, or a moving title that no longer fits: lay out again
            self._last_layout = layout_sig
            self._last_background = background_sig
            self.live.relayout()
        elif background_sig != self._last_background:  # an axis range or colour scale changed
            self._last_background = background_sig
            self.live.invalidate()
        try:
            self.live.refresh()
        except Exception as exc:
            self.error.value = friendly(exc)
            return False
        #: wall and CPU milliseconds of the last successful update (compute + draw + PNG)
        self.last_update_ms = ((time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3)
        return True

    #: The attributes a ``_show_scene`` build sets (its artists); they are kept with its figure.
    _scene_parts: tuple[str, ...] = ()
    #: Where a new scene's panels go (one box in figure fractions per axes, in the order its build
    #: makes them), set by ``_place_scenes``; None: each new scene is laid out afresh.
    _placements: list | None = None
    #: How many built figures an explorer keeps (the oldest other one is dropped first).
    MAX_SCENES = 8

    def _show_scene(self, key, build) -> bool:
        """Show the figure built for ``key``, calling ``build()`` (which draws into
        ``self.figure`` and sets the attributes named in ``_scene_parts``) the first time.
        Returns True when it built a new figure.

        For a menu choice that changes the panels (03's number of heads, 05's task): a new layout
        costs ~0.3-0.5 s in-process (constrained layout of every tick label, a full render), so
        each choice is built once into its own figure, which keeps its layout and background;
        coming back to it redraws the moving artists only.
        """
        scenes = self.__dict__.setdefault("_scenes", {})
        old = self.__dict__.get("_scene_key")
        if old == key:
            return False
        if old is not None:
            scenes[old] = (self.figure, {n: getattr(self, n) for n in self._scene_parts},
                           self._last_layout, self._last_background)
        if key in scenes:
            fig, parts, self._last_layout, self._last_background = scenes.pop(key)
            for name, value in parts.items():
                setattr(self, name, value)
            self.figure = fig
            self.live.show(fig)
            built = False
        else:
            if old is not None:  # the first scene is drawn into the figure the explorer started with
                fig = Figure(figsize=self.figure.get_size_inches(), dpi=self.figure.dpi)
                self.figure = fig
                self.live.show(fig)
            build()
            if self._placements is not None and len(self.figure.axes) == len(self._placements):
                for ax, box in zip(self.figure.axes, self._placements, strict=True):
                    ax.set_position(box)
                self.live.placed()  # drawn where the template's panels went: no layout
                # (its signatures are taken by the update that draws it: its moving titles are
                # not written yet, and a title's lines would otherwise count as a new layout)
                self._last_layout = self._last_background = _PLACED
            else:
                self._last_layout = self._last_background = None
            built = True
        self._scene_key = key
        while len(scenes) >= self.MAX_SCENES:  # (the one shown is not in `scenes`)
            dropped = scenes.pop(next(iter(scenes)))
            self.live.forget(dropped[0])
        return built

    def _place_scenes(self, template: dict) -> None:
        """Lay out, once, the scene of ``template`` (a state with the widest labels the explorer
        can show: its longest words, its most tokens), and put the panels of every scene built
        after it where that one's went. A new scene (06's context, 08's tokens, typed) then needs
        no layout of its own: constrained layout was 30-40 of the ~110 ms a new context cost
        in-process, and every label fits, since none is wider than the template's. Call it after
        ``_assemble`` and before the first ``update``; nothing is drawn or sent."""
        self._draw(template)  # into the figure the explorer starts with
        fig = self.figure
        fig.set_layout_engine("constrained")
        fig.get_layout_engine().execute(fig)
        self._placements = [ax.get_position() for ax in fig.axes]
        fig.clear()
        self.__dict__.pop("_scene_key", None)  # the first update builds its scene in this figure
        self.live.set_dynamic([])

    def _scene_choices(self) -> list:
        """The scene keys a control can ask for, other than the one shown, each with the state to
        draw it with: ``[(key, state), ...]``, the likeliest first (only the first
        ``MAX_SCENES - 1`` are prepared). Explorers with ``_show_scene`` override this."""
        return []

    def prepare_scenes(self, limit: int | None = None) -> int:
        """Build, lay out and render the figures of the other choices of the explorer's menus
        now, without showing them, so that the first press of such a control costs no more than
        the next ones. Returns how many were prepared; nothing is sent to the page. The page has
        this done in the kernel's idle time, in small steps (:meth:`preparation`)."""
        steps = self.preparation(limit)
        while True:
            try:
                next(steps)
            except StopIteration as end:
                return end.value

    def preparation(self, limit: int | None = None):
        """:meth:`prepare_scenes` as a generator of small steps (issue 36): one step builds a
        scene (and shows the one the page shows again), one lays it out, one draws each of its
        panels, one encodes its background. A press handled between two steps finds the explorer
        as the page shows it; a scene the press shows meanwhile is drawn by the press. Returns
        (as its StopIteration's value) how many scenes it built."""
        done = 0
        scenes = self.__dict__.setdefault("_scenes", {})
        tried: set = set()
        while limit is None or done < limit:
            # asked again for each scene: a press between two steps may have changed the states;
            # at most as many as are kept (the first choices first), so that preparing never
            # drops a figure it prepared before
            shown = self.__dict__.get("_scene_key")
            todo = [(key, state) for key, state in self._scene_choices()[:self.MAX_SCENES - 1]
                    if key not in scenes and key != shown and key not in tried]
            if not todo:
                break
            key, state = todo[0]
            tried.add(key)
            try:
                self._draw(state)  # builds the scene and draws its artists
                figure = self.figure
            finally:
                if self.state and self.__dict__.get("_scene_key") != shown:
                    self._draw(self.state)  # back to the scene the page shows, as it was
            done += 1
            if figure is self.figure:  # (no state yet: the new scene stays shown)
                self.live._draw_background()
                self._last_layout, self._last_background = self._signatures()
                continue
            yield
            steps = self.live.background_steps(figure)
            while True:
                try:
                    what = next(steps)
                except StopIteration:
                    break
                entry = scenes.get(key)
                if what is not None and entry is not None and entry[0] is figure:
                    # laid out: its signatures now, so that a press that shows it before its
                    # background is drawn does not lay it out again
                    scenes[key] = (figure, entry[1], *self._signatures(figure, what[1]))
                yield
        return done

    def _prepare_when_idle(self) -> None:
        """Queue the preparation of the other scenes as idle work (``widgets.idle.IDLE``): small
        steps, run while the controls are still. A press that shows another scene queues it again
        (``_update``): the choices changed (05's other tasks for a new number of heads)."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._idle_loop = loop
        IDLE.add_once(self, self.preparation, loop)

    def _signatures(self, figure: Figure | None = None, dynamic=None) -> tuple[tuple, tuple]:
        """What decides a new layout (one entry per panel: its title; for a title redrawn on every
        change, only its number of lines while it fits over its panel) and a new background (the
        static titles, the axis ranges, the colour scales). Of the figure shown, or of ``figure``
        with its moving artists ``dynamic`` (a scene prepared in idle time)."""
        figure = self.figure if figure is None else figure
        axes = [ax for ax in figure.get_axes() if ax.get_visible()]
        plain = [ax for ax in axes if not hasattr(ax, "_colorbar")]
        moving = self.live.dynamic if dynamic is None else dynamic
        dynamic = {id(a) for a in moving}  # a title redrawn every time: not background
        layout = tuple(self._layout_title(ax) if id(ax.title) in dynamic else ax.get_title()
                       for ax in plain)
        # (an axis drawn with the moving artists: its range is not part of the background)
        background = tuple((None if id(ax.title) in dynamic else ax.get_title(),
                            None if id(ax.xaxis) in dynamic else ax.get_xlim(),
                            None if id(ax.yaxis) in dynamic else ax.get_ylim(),
                            tuple(im.get_clim() for im in ax.images)) for ax in plain)
        return layout, background

    def _layout_title(self, ax):
        """A moving title's part in the layout: ``("lines", k)`` while it is no wider than its
        panel (constrained layout then places the panels as before: only the title's height
        counts, so a temperature step is not a new layout, 340 ms in-process), else its text."""
        title = ax.title
        text = title.get_text()
        cache = self.__dict__.setdefault("_title_fits", {})
        key = (id(ax), text, tuple(ax.get_position().bounds))
        if key not in cache:
            renderer = ax.figure.canvas.get_renderer()
            fits = not text or \
                title.get_window_extent(renderer).width <= ax.get_window_extent(renderer).width
            if len(cache) > 256:
                cache.clear()
            cache[key] = ("lines", text.count("\n") + 1 if text else 0) if fits else text
        return cache[key]

    def png(self) -> bytes:
        """The current figure as PNG bytes."""
        return self.live.render()

    #: How the still picture's text alternative starts (where no kernel runs, e.g. on GitHub).
    STILL = N_("A still picture of the explorer (run the notebook to use its controls): ")

    def _repr_mimebundle_(self, **kwargs):
        """The widget, and where no kernel runs (GitHub, nbviewer, an HTML export) its current
        picture as HTML: the PNG in an ``<img>`` whose ``alt`` says what it shows, with the
        description one step away (:func:`attention_kit.accessible.figure_html`)."""
        from ..accessible import figure_html

        data = dict(super()._repr_mimebundle_(**kwargs) or {})
        data["text/plain"] = _(self._PLAIN)
        try:
            png = base64.b64encode(self.png()).decode("ascii")
        except Exception as exc:  # said, not swallowed: a learner's matplotlib drew no still (issue 44)
            warnings.warn(f"{type(self).__name__}: its still picture and text alternative could not be "
                          f"drawn ({type(exc).__name__}: {exc}); the live explorer still works",
                          RuntimeWarning, stacklevel=2)
            return data
        try:  # what the live description says first (06: which query is highlighted)
            extra = list(self.live.describe_extra()) if self.live.describe_extra is not None else []
        except Exception:  # noqa: BLE001 - the figure's own words are still said
            extra = []
        data["text/html"] = figure_html(self.figure, png, prefix=_(self.STILL), extra=extra)
        return data

    def _compute(self) -> dict:
        raise NotImplementedError

    def _draw(self, state: dict) -> None:
        raise NotImplementedError


#: ``_last_layout`` of a scene placed from a template, until an update takes its signatures
_PLACED = ("placed from a template",)


def control_words(w, name: str | None = None) -> str:
    """A control (named ``name``, else by its label) and its value as the learner sees them, for
    the announcement that follows a change: "temperature 1.20", "mask padding", "causal mask on"."""
    name = (name or w.description or getattr(w, "tooltip", None) or "").strip()
    value = w.value
    if isinstance(w, (widgets.Checkbox, widgets.ToggleButton)):
        shown = _("on") if value else _("off")
    elif isinstance(w, (widgets.Dropdown, widgets.SelectionSlider, widgets.RadioButtons,
                        widgets.ToggleButtons, widgets.Select)):
        shown = str(w.label) if w.label is not None else str(value)
    elif isinstance(w, (widgets.FloatSlider, widgets.FloatLogSlider, widgets.IntSlider,
                        widgets.BoundedFloatText, widgets.FloatText)):
        fmt = getattr(w, "readout_format", "") or ("d" if isinstance(value, int) else ".2f")
        try:
            shown = format(value, fmt)
        except (ValueError, TypeError):
            shown = str(value)
    else:
        shown = str(value)
    # words a screen reader says plainly: no underscores ("scaled_dot" -> "scaled dot"), and
    # the name once when the option repeats it ("head" + "head 1" -> "head 1")
    name, shown = name.replace("_", " "), shown.replace("_", " ")
    if name and (shown.lower() == name.lower() or shown.lower().startswith(name.lower() + " ")):
        return shown.strip()
    if name and language() != "en" and name in shown:  # "层" + "第 1 层": the option says it
        return shown.strip()
    return f"{name} {shown}".strip()


def _needs_layout(new, old) -> bool:
    """A panel's layout entry (see ``Explorer._signatures``) changed enough to lay out again."""
    if isinstance(new, tuple):  # a moving title that fits: only a new number of lines counts
        return isinstance(old, tuple) and new != old
    if isinstance(old, tuple):  # a moving title that fitted and now does not
        return True
    return len(new) > len(old) + 3
