"""The red message label every widget shows instead of a traceback, and the one-line text it holds."""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["ERROR_STYLE", "CONTEXT_COLOR", "MessageLabel", "friendly"]

ERROR_STYLE = {"text_color": "#b00020"}
CONTEXT_COLOR = "#D55E00"  # vermillion (Okabe-Ito): the context / output vectors


class MessageLabel(widgets.Label):
    """A red label that takes no room while it is empty."""

    def __init__(self):
        super().__init__(value="", style=ERROR_STYLE, layout=widgets.Layout(display="none"))
        self.observe(self._toggle, names="value")

    def _toggle(self, change) -> None:
        self.layout.display = None if change["new"] else "none"


def friendly(exc: BaseException) -> str:
    """One line for the error label: the message, without a traceback."""
    msg = str(exc).strip() or type(exc).__name__
    if len(msg) > 300:
        msg = msg[:299] + "…"
    return f"⚠ {msg}"
