"""Notebooks 01-07: every heatmap and arrow plot of the course (matplotlib only).

* ``heatmaps`` - :func:`heatmap`, :func:`update_heatmap`, :func:`head_grid`
* ``vectors`` - :func:`plot_vectors`, :func:`update_vectors`
* ``colours`` - ``WEIGHTS_CMAP``, ``SCORES_CMAP``, ``OKABE_ITO``
* ``fast_artists`` - the Agg speed machinery (cached text bitmaps, cell images) these plots and
  the explorers' live figure draw with

Every helper draws on an ``Axes`` you give it (or makes one), returns its artists, and has an
in-place ``update_*`` twin that changes data, colours and texts without creating new artists.
Conventions, as everywhere in ``attention_kit``: **rows are tokens**; heatmaps read like the
printed matrix. Importing this package does not change matplotlib's
global ``rcParams``, except in Chinese: then ``fonts`` adds a Chinese font at the end of
``rcParams["font.family"]`` (:func:`~attention_kit.plotting.fonts.use_cjk_font`).
"""

from ..i18n import language as _language
from .colours import OKABE_ITO, SCORES_CMAP, WEIGHTS_CMAP
from .heatmaps import HeatmapArtists, head_grid, heatmap, update_heatmap
from .vectors import VectorArtists, plot_vectors, update_vectors

if _language() == "zh":  # the figures' titles and labels are Chinese: a font that draws them
    from .fonts import use_cjk_font

    use_cjk_font()

__all__ = ["HeatmapArtists", "VectorArtists", "heatmap", "update_heatmap", "head_grid",
           "plot_vectors", "update_vectors", "WEIGHTS_CMAP", "SCORES_CMAP", "OKABE_ITO"]
