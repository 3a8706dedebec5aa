"""Widgets for the notebooks: a safe vector editor, a live figure and the explorers.

Everything here is an ipywidgets 8 widget (the live figure an anywidget) whose callbacks are plain
methods, so tests (and the
notebooks' stored outputs) can drive them without a browser:

* :func:`parse_vector` turns typed text into a vector with an allow-list (no ``eval``).
* :class:`VectorEditor` - a text box and one slider per component for each named vector.
* :class:`LiveFigure` - shows a reused matplotlib ``Figure`` on a ``<canvas>``: its still parts as
  a PNG, its moving artists as drawing commands that the browser draws (no PNG per slider step).
* :class:`AttentionExplorer` (notebook 01), :class:`SelfAttentionExplorer` (notebook 02),
  :class:`MultiHeadExplorer` (notebook 03), :class:`MaskExplorer` (notebook 04) and
  :class:`TilingStepper` (notebook 07), :class:`HeadExplorer` and :class:`PhaseChangeViewer` (notebook 08),
  :class:`RopeExplorer` (notebook 09).
* :class:`AttentionTrainer` and :class:`TrainingMonitor` (notebook 05): train a head and watch it.

An explorer recomputes its ``state`` with ``attention_kit`` and redraws its figure in place
(``set_data``, ``set_text``, ``set_positions``, ``set_height``); no new figure is made per change.
Every exception raised while updating is caught and written in the explorer's error label; the
previous state and picture stay. Without a widget front end (GitHub, nbval) an explorer shows a PNG
of its current figure.

Where each piece lives (one module per building block, one per explorer):

* ``parsing`` - :func:`parse_vector`, :func:`format_vector`: typed text to a vector, no ``eval``
* ``editor`` - :class:`VectorEditor`
* ``live_figure`` - :class:`LiveFigure` (and ``live_figure.js``, its page side); ``raster`` - :func:`encode_png`
* ``draw_ops`` - matplotlib artists as canvas drawing commands (:func:`record_ops`)
* ``base`` - the explorer base class and the 2-D plane helpers
* ``messages`` - the error label and its one-line messages
* ``general_attention``, ``self_attention``, ``multi_head``, ``masks``, ``head_view``,
  ``tiling`` - one explorer each
* ``trainer`` - :class:`AttentionTrainer` and :class:`TrainingMonitor`
* ``heads`` - :class:`HeadExplorer` and :class:`PhaseChangeViewer` (notebook 08)
* ``kernel_status`` - a control's message does not make the kernel say "busy" (fewer frames for
  the page to draw per press)
* ``server_extension`` - a Jupyter server extension: the kernel's messages reach the page without
  Nagle's delay (enabled by ``make lab`` and Binder's ``postBuild``)
"""

import importlib

# Each public name and the module that defines it. They are imported on first use (PEP 562), so
# that importing the package does not load ipywidgets before an explorer is asked for.
_WHERE = {
    "VectorParseError": "parsing",
    "parse_vector": "parsing",
    "format_vector": "parsing",
    "VectorEditor": "editor",
    "LiveFigure": "live_figure",
    "encode_png": "raster",
    "AttentionExplorer": "general_attention",
    "SelfAttentionExplorer": "self_attention",
    "MultiHeadExplorer": "multi_head",
    "MaskExplorer": "masks",
    "AttentionTrainer": "trainer",
    "TrainingMonitor": "trainer",
    "TilingStepper": "tiling",
    "HeadView": "head_view",
    "RopeExplorer": "rope",
    "HeadExplorer": "heads",
    "PhaseChangeViewer": "heads",
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
