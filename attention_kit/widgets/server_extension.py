"""A Jupyter server extension: the kernel's messages reach the page without Nagle's delay.

jupyter_server leaves Nagle's algorithm on for the websocket that carries a kernel's messages to
the page. When the kernel sends several messages in a row (the kernel's status, a control's echo,
the new picture, the next picture of a run), a message can then wait for the page's delayed
acknowledgement of the one before it: up to 40 ms on Linux. Measured in JupyterLab (headless
Chromium, notebooks 01 and 05, 222 presses per run, without and with it interleaved, the course
repository's latency benchmarks): p95 56-58 -> 36-39 ms, "Run 100" 44-47 -> 31-33 ms median. It sets
TCP_NODELAY on that websocket, as tornado's documentation advises for interactive websockets.

``python -m attention_kit.widgets.server_extension enable`` turns it on for every Jupyter server
of this Python environment (a file in ``<sys.prefix>/etc/jupyter/jupyter_server_config.d/``):
``make lab`` runs it in the course's ``.venv`` (so does the course repository's test setup), and
Binder's ``postBuild`` in its environment; ``jupyter server extension list`` shows it.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

__all__ = ["without_nagle", "enable", "CONFIG_NAME"]

MODULE = "attention_kit.widgets.server_extension"
CONFIG_NAME = "attention_kit.json"


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": MODULE}]


def enable(prefix: str | Path = sys.prefix) -> Path:
    """Enable the extension for the Jupyter servers of the environment at ``prefix``; returns the
    config file written (``jupyter server extension enable`` refuses a module that no config
    names yet)."""
    folder = Path(prefix) / "etc" / "jupyter" / "jupyter_server_config.d"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CONFIG_NAME
    path.write_text(json.dumps({"ServerApp": {"jpserver_extensions": {MODULE: True}}}, indent=2) + "\n",
                    encoding="utf-8")
    return path


def without_nagle(open_):
    """``open_`` (a websocket handler's ``open``) that first turns Nagle's algorithm off."""
    if getattr(open_, "_ak_nodelay", False):
        return open_

    @functools.wraps(open_)
    async def open(self, *args, **kwargs):
        self.set_nodelay(True)
        return await open_(self, *args, **kwargs)

    open._ak_nodelay = True
    return open


def _load_jupyter_server_extension(serverapp) -> None:
    try:
        from jupyter_server.services.kernels.websocket import KernelWebsocketHandler
    except ImportError as exc:  # another jupyter_server: the course works, only less promptly
        serverapp.log.warning("attention_kit: kernel websocket not found (%s); Nagle's delay stays", exc)
        return
    KernelWebsocketHandler.open = without_nagle(KernelWebsocketHandler.open)
    serverapp.log.info("attention_kit: kernel messages go to the page without Nagle's delay")


if __name__ == "__main__":
    if sys.argv[1:] != ["enable"]:
        sys.exit(f"usage: python -m {MODULE} enable")
    print(f"enabled {MODULE}: {enable()}")
