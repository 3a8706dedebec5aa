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
  :class:`TilingStepper` (notebook 07).
* :class:`AttentionTrainer` and :class:`TrainingMonitor` (notebook 05): train a head and watch it.

An explorer recomputes its ``state`` with ``attention_kit`` and redraws its figure in place
(``set_data``, ``set_text``, ``set_positions``, ``set_height``); no new figure is made per change.
Every exception raised while updating is caught and written in the explorer's error label; the
previous state and picture stay. Without a widget front end (GitHub, nbval) an explorer shows a PNG
of its current figure.

Where each piece lives (one module per building block, one per explorer):

* ``editor`` - :class:`VectorEditor` (the parser itself is :mod:`attention_kit.parsing`)
* ``live_figure`` - :class:`LiveFigure`, :func:`encode_png` (and ``live_figure.js``, its page side)
* ``draw_ops`` - matplotlib artists as canvas drawing commands (:func:`record_ops`)
* ``base`` - the explorer base class and the 2-D plane helpers
* ``messages`` - the error label and its one-line messages
* ``general_attention``, ``self_attention``, ``multi_head``, ``masks``, ``head_view``,
  ``tiling`` - one explorer each
* ``trainer`` - :class:`AttentionTrainer` and :class:`TrainingMonitor`
"""

from ..parsing import VectorParseError, format_vector, parse_vector
from .editor import VectorEditor
from .general_attention import AttentionExplorer
from .head_view import HeadView
from .live_figure import LiveFigure, encode_png
from .masks import MaskExplorer
from .multi_head import MultiHeadExplorer
from .self_attention import SelfAttentionExplorer
from .tiling import TilingStepper
from .trainer import AttentionTrainer, TrainingMonitor

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
    "AttentionTrainer",
    "TrainingMonitor",
    "TilingStepper",
    "HeadView",
]
