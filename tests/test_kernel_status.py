"""A control's message does not make the kernel say "busy" (attention_kit.widgets.kernel_status);
"idle" and every other request's statuses stay."""

from __future__ import annotations

import time
from queue import Empty

import pytest

from attention_kit.widgets.kernel_status import quiet_control_status


class _Kernel:
    """A stand-in for ipykernel's Kernel: records what it publishes."""

    def __init__(self):
        self.sent = []
        self.parent = {}

    def get_parent(self, channel=None):
        return self.parent

    def _publish_status(self, status, channel, parent=None):
        self.sent.append((status, (parent or self.get_parent(channel))["header"]["msg_type"]))


def _request(kind):
    return {"header": {"msg_type": kind}, "content": {}}


def test_a_control_message_publishes_idle_but_not_busy():
    k = _Kernel()
    assert quiet_control_status(k)
    for kind in ("comm_msg", "execute_request", "comm_info_request", "kernel_info_request"):
        k.parent = _request(kind)
        k._publish_status("busy", "shell")
        k._publish_status("idle", "shell")
    k._publish_status("busy", "shell", parent=_request("comm_msg"))  # an explicit parent too
    assert k.sent == [("idle", "comm_msg"),
                      ("busy", "execute_request"), ("idle", "execute_request"),
                      ("busy", "comm_info_request"), ("idle", "comm_info_request"),
                      ("busy", "kernel_info_request"), ("idle", "kernel_info_request")]


def test_quieting_twice_wraps_once_and_no_kernel_is_fine():
    k = _Kernel()
    quiet_control_status(k)
    once = k._publish_status
    assert quiet_control_status(k) and k._publish_status is once
    assert quiet_control_status(object()) is False  # no _publish_status: left alone
    assert quiet_control_status() is False  # no IPython kernel in pytest's process


SETUP = """
import ipywidgets as widgets
from matplotlib.figure import Figure
from attention_kit.widgets import LiveFigure
fig = Figure(figsize=(2, 2))
line, = fig.add_subplot().plot([0, 1], [0, 1])
live = LiveFigure(fig, dpi=50)
live.set_dynamic([line])
slider = widgets.FloatSlider(value=0.0, min=-1, max=1, step=0.1)
slider.observe(lambda ch: (line.set_ydata([0, ch["new"]]), live.refresh()), names="value")
live.refresh()
display(widgets.VBox([slider, live]))
ids = {"slider": slider.model_id, "live": live.model_id}
"""


def _shell_reply(kc, msg_id):
    while True:
        reply = kc.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def _iopub_until_idle(kc, msg_id, timeout=20.0):
    """The iopub messages whose parent is ``msg_id``, up to and including its "idle"."""
    out, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out
    raise AssertionError(f"no idle for {msg_id} within {timeout} s: {[m['msg_type'] for m in out]}")


@pytest.mark.slow  # starts a kernel
def test_in_a_real_kernel_a_slider_step_sends_its_picture_and_idle_without_busy():
    from attention_kit.grading.sockets import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        run = kc.execute(SETUP, user_expressions={"ids": "ids"})
        reply = _shell_reply(kc, run)
        assert reply["content"]["status"] == "ok", reply["content"]
        statuses = [m["content"]["execution_state"] for m in _iopub_until_idle(kc, run)
                    if m["msg_type"] == "status"]
        assert statuses == ["busy", "idle"]  # a cell still says busy, then idle
        ids = eval(reply["content"]["user_expressions"]["ids"]["data"]["text/plain"])  # noqa: S307
        for value in (0.5, -0.5):
            msg = kc.session.msg("comm_msg", {"comm_id": ids["slider"], "data": {
                "method": "update", "state": {"value": value}, "buffer_paths": []}})
            kc.shell_channel.send(msg)
            got = _iopub_until_idle(kc, msg["header"]["msg_id"])
            kinds = [m["content"].get("execution_state", m["msg_type"]) for m in got]
            assert "busy" not in kinds, kinds
            assert kinds[-1] == "idle"
            frames = [m for m in got if m["msg_type"] == "comm_msg"
                      and m["content"]["comm_id"] == ids["live"]
                      and "frame" in m["content"]["data"].get("state", {})]
            assert frames, f"no new picture for the step to {value}: {kinds}"
    finally:
        km.shutdown_kernel(now=True)
