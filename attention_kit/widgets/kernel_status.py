"""A control's message does not make the kernel say "busy": the page then has less to redraw.

Before it handles any message, ipykernel publishes the status "busy", and "idle" after it. A
slider step is a message (``comm_msg``), so every press makes JupyterLab show the kernel as busy
and then idle again: the toolbar's kernel circle, the status bar and the browser tab's icon (a new
favicon is loaded) change twice, and each change is a frame the page lays out, paints and
composites. On a 2-core machine the page spends more time on those frames than the kernel spends
on the new picture, and both share the cores. Measured in JupyterLab (headless Chromium, notebook
01's explorer alone, every control pressed 4 times, both versions in one run): the median of the
controls' medians from key press to changed pixels fell from 83.7 to 53.7 ms without the "busy"
(the course repository's latency benchmarks have the runs).

:func:`quiet_control_status` therefore drops the "busy" (only that) of ``comm_msg`` requests in
the running kernel. "idle" is still sent after every message: ipywidgets waits for it before it
sends a control's next value, and nothing else in the page depends on a control's "busy". A cell
that runs (``execute_request``) and every other request still show "busy" then "idle". A control
whose work lasts longer (05's "Run 100") shows its progress in its own picture.

The explorers call it when their live figure is made; outside a kernel (tests, scripts, nbval's
own process) it does nothing.
"""

from __future__ import annotations

__all__ = ["quiet_control_status", "kernel_loop"]

#: The requests whose "busy" is not published (a widget's message from the page).
QUIET = frozenset({"comm_msg"})


def _quiet(kernel):
    """``kernel._publish_status`` without the "busy" of a control's message."""
    publish = kernel._publish_status

    def publish_status(status, channel, parent=None):
        if status == "busy":
            request = parent if parent is not None else kernel.get_parent(channel)
            header = request.get("header", {}) if isinstance(request, dict) else {}
            if header.get("msg_type") in QUIET:
                return
        publish(status, channel, parent)

    publish_status.quiet_controls = True
    return publish_status


def quiet_control_status(kernel=None) -> bool:
    """Stop ``kernel`` (default: the running IPython kernel) publishing "busy" for control
    messages; once per kernel. Returns True when the kernel is (now) quiet, False when there is
    no kernel or it lacks the methods this relies on (another kernel, another ipykernel)."""
    if kernel is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
            return False
        shell = get_ipython()
        kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return False
    publish = getattr(kernel, "_publish_status", None)
    if publish is None or not callable(getattr(kernel, "get_parent", None)):
        return False
    if not getattr(publish, "quiet_controls", False):
        kernel._publish_status = _quiet(kernel)
    return True


def kernel_loop():
    """The kernel's running event loop, or None outside a kernel: a script, a test, or a process
    where another library keeps a loop "running" that never comes back to us (Playwright's sync
    API does, in its thread). A live figure's words wait on it (``LiveFigure._describe_soon``)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or getattr(shell, "kernel", None) is None:
            return None
        import asyncio

        return asyncio.get_running_loop()
    except (ImportError, RuntimeError):
        return None
