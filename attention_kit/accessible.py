"""Accessibility (issue 34): figures in a notebook's output with a text alternative (importing
``attention_kit`` turns it on).

JupyterLab (4.x) shows a figure's ``image/png`` output as an ``<img>`` without ``alt``, and it does
not read an ``alt`` from the output's metadata, so a screen reader says only "image". Once
``attention_kit`` is imported in an IPython kernel, every matplotlib figure the inline backend
shows is sent instead as HTML: the same PNG in an ``<img alt="...">`` whose ``alt`` says what the
figure shows (:func:`~attention_kit.plotting.describe.describe_figure`), and under it a collapsed
"Describe this figure" (a ``<details>``) with the salient facts and every heatmap's full matrix as a
table. The picture looks as before.

:func:`describe_figures` turns it off or on, or opens the descriptions::

    import attention_kit as ak
    ak.describe_figures(open=True)   # show every figure's description, expanded
    ak.describe_figures(False)       # plain images again (no alt)
"""

from __future__ import annotations

import base64
import html
import sys

from .i18n import _

__all__ = ["describe_figure", "describe_figures", "figure_html", "install"]

_settings = {"on": True, "open": False}
#: An alt longer than this is cut (the full text is in the "Describe this figure" list).
MAX_ALT = 900


def describe_figures(on: bool = True, *, open: bool = False) -> None:  # noqa: A002
    """Figures shown from now on carry a description (``on``), expanded under each figure when
    ``open``. The explorers' live descriptions are not affected (``LiveFigure.announce``)."""
    _settings["on"] = bool(on)
    _settings["open"] = bool(open)
    install()


def describe_figure(fig):
    """What a matplotlib figure shows, in words: see
    :func:`attention_kit.plotting.describe.describe_figure` (imported when first called, so that
    ``import attention_kit`` stays free of matplotlib)."""
    from .plotting.describe import describe_figure as describe

    return describe(fig)


def _alt(desc, prefix: str = "") -> str:
    text = prefix + desc.text
    return text if len(text) <= MAX_ALT else text[:MAX_ALT - 40].rsplit(" ", 1)[0] + \
        _(" … (the rest under “Describe this figure”).")


def figure_html(fig, png_b64: str, metadata: dict | None = None, *, prefix: str = "",
                open_details: bool | None = None, extra=()) -> str:
    """The HTML of one figure: the PNG with its ``alt`` (``prefix`` first), then the collapsed
    description (expanded when ``open_details``; None: as :func:`describe_figures` set it).
    ``extra``: an explorer's own facts, said before the figure's (06's highlighted query)."""
    from .plotting.describe import Description, describe_figure

    try:
        desc = describe_figure(fig)
    except Exception:  # noqa: BLE001 - a figure that cannot be described is still shown
        desc = Description(_("A figure (no description could be made of it)."))
    if extra:
        desc.facts[:0] = [str(f) for f in extra]
    size = ""
    md = metadata or {}
    if isinstance(md.get("width"), (int, float)):
        size += f' width="{int(md["width"])}"'
    if isinstance(md.get("height"), (int, float)):
        size += f' height="{int(md["height"])}"'
    img = (f'<img src="data:image/png;base64,{png_b64}"{size} alt="{html.escape(_alt(desc, prefix), quote=True)}" '
           'style="max-width:100%">')
    opened = _settings["open"] if open_details is None else open_details
    return f'<div class="ak-figure">{img}{desc.html(open_details=opened)}</div>'


def _show(fig) -> bool:
    """IPython's display hook for a ``Figure``: publish it as HTML with a text alternative."""
    if not _settings["on"]:
        return False
    from IPython import get_ipython
    from IPython.display import publish_display_data

    ip = get_ipython()
    png_formatter = ip.display_formatter.formatters["image/png"]
    try:
        out = png_formatter.lookup(fig)(fig)
    except KeyError:
        return False  # no PNG formatter for figures: not the inline backend
    if out is None:
        return False
    png, md = (out if isinstance(out, tuple) else (out, {}))
    if isinstance(png, bytes):
        png = base64.b64encode(png).decode("ascii")
    data = {"text/plain": repr(fig), "text/html": figure_html(fig, png, md)}
    publish_display_data(data)
    return True


def install() -> bool:
    """Register the hook with the running IPython kernel (a no-op outside IPython). Returns True
    when it is registered."""
    if "IPython" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return False
    formatter = ip.display_formatter.ipython_display_formatter
    # by name: matplotlib is not imported here (IPython resolves it when a figure is shown)
    formatter.for_type_by_name("matplotlib.figure", "Figure", _hook)
    return True


def _hook(fig):
    # IPython counts a display hook that returns without raising as "displayed"; when the
    # descriptions are off the figure is published as IPython would publish it.
    if _show(fig):
        return
    from IPython import get_ipython
    from IPython.display import publish_display_data

    ip = get_ipython()
    fmt = ip.display_formatter
    data, md = {}, {}
    for mime, f in fmt.formatters.items():
        if mime in ("text/plain", "image/png", "image/jpeg", "image/svg+xml", "application/pdf",
                    "image/retina"):
            try:
                r = f(fig)
            except Exception:  # noqa: BLE001
                r = None
            if r is None:
                continue
            if isinstance(r, tuple):
                data[mime], md[mime] = r
            else:
                data[mime] = r
    publish_display_data(data, metadata=md or None)
