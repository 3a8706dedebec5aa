"""Notebooks 01-07: the course's colours, colour-blind safe (no change to matplotlib's ``rcParams``)."""

__all__ = ["WEIGHTS_CMAP", "SCORES_CMAP", "OKABE_ITO"]

#: Colour map for weights: perceptually uniform and readable with colour-vision deficiency.
WEIGHTS_CMAP = "viridis"
#: Diverging map for raw scores (ColorBrewer's RdBu is colour-blind safe); 0 is white.
SCORES_CMAP = "RdBu_r"
#: Okabe & Ito's colour-blind-safe palette, for arrows and bars.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
