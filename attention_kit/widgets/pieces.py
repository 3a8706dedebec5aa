"""A figure's background drawn in pieces small enough for idle time (issue 36).

``LiveFigure.background_steps`` renders a prepared scene one piece per step, so that a press that
arrives meanwhile waits for one piece, not for the whole figure. A panel (an ``Axes``) is 40-70 ms
of CPU here, most of it its two axes' ticks and labels, so a panel is split too: its start (the
aspect and the title's place, as ``Axes.draw`` does them), then each of its artists in ``Axes.draw``'s
order. With Agg, which composites no images, the pixels are the same as ``figure.draw``'s
(a test of the course compares them)."""

from __future__ import annotations

from operator import attrgetter

from matplotlib.axes import Axes
from matplotlib.figure import SubFigure

__all__ = ["pieces"]


class _AxesStart:
    """What ``Axes.draw`` does before its first artist, as a piece of its own."""

    def __init__(self, ax: Axes) -> None:
        self.ax = ax

    def draw(self, renderer) -> None:
        ax = self.ax
        ax._unstale_viewLim()
        renderer.open_group("axes", gid=ax.get_gid())
        ax._stale = True
        locator = ax.get_axes_locator()
        ax.apply_aspect(locator(ax, renderer) if locator else None)
        ax._update_title_position(renderer)


class _AxesEnd:
    """...and after its last."""

    def __init__(self, ax: Axes) -> None:
        self.ax = ax

    def draw(self, renderer) -> None:
        renderer.close_group("axes")
        self.ax.stale = False


def _splittable(ax, renderer) -> bool:
    """An Axes drawn as ``Axes.draw`` would draw it piece by piece: visible, neither rasterized nor
    filtered as a whole, no rasterization zorder, and a renderer that composites no images."""
    return (isinstance(ax, Axes) and type(ax).draw is Axes.draw and ax.get_visible()
            and not ax.get_rasterized() and ax.get_agg_filter() is None
            and ax.get_sketch_params() is None and ax._rasterization_zorder is None
            and renderer.option_image_nocomposite())


def _axes_pieces(ax: Axes, renderer):
    yield _AxesStart(ax)
    # after the start has run (this generator is asked for the next piece only after the last
    # one was drawn): the artists as Axes.draw lists them
    artists = ax.get_children()
    artists.remove(ax.patch)
    if not (ax.axison and ax._frameon):
        for spine in ax.spines.values():
            artists.remove(spine)
    if not ax.axison:
        for axis in ax._axis_map.values():
            artists.remove(axis)
    artists = sorted((a for a in artists if not a.get_animated()), key=attrgetter("zorder"))
    if ax.axison and ax._frameon:
        artists = [ax.patch] + artists
    yield from artists
    yield _AxesEnd(ax)


def pieces(figure, renderer):
    """What ``figure.draw`` draws, in its order, each subfigure split into its patch and its own
    artists (a subfigure of heat maps is 150-190 ms of CPU: 05's and 03's head grids) and each
    panel into its start and its artists. Draw each piece, in order, before asking for the next."""
    for artist in figure._get_draw_artists(renderer):
        if isinstance(artist, SubFigure):
            if artist.get_visible():
                yield artist.patch
                yield from pieces(artist, renderer)
                artist.stale = False
        elif _splittable(artist, renderer):
            yield from _axes_pieces(artist, renderer)
        else:
            yield artist
