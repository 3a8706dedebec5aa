"""Widget latency as a learner feels it: from a slider change to the new picture leaving the kernel.

Starts a real ipykernel (this interpreter, inline matplotlib backend) through jupyter_client, builds
explorers there, and moves a slider 30 times exactly as the browser does: a ``comm_msg`` with
``{"method": "update", "state": {"value": ...}}`` on the shell channel. For each change it times
how long until the new picture is sent on iopub:

* live heatmap: one annotated 8 x 8 weights heatmap kept live with ``heatmap`` +
  ``update_heatmap`` + ``LiveFigure`` (the same picture as the naive case);
* explorers (SelfAttentionExplorer with 8 tokens: two annotated 8 x 8 heatmaps and the plane;
  MultiHeadExplorer with 8 heads; MaskExplorer with 8 tokens, its nudge slider; TilingStepper, its
  "tiles done" slider and a slider of its query): the ``comm_msg`` that updates their
  ``LiveFigure`` (its drawing commands, ``frame``); the kernel's CPU time per update is printed as well, since a busy machine inflates
  wall-clock latency;
* naive: ``ipywidgets.interact`` with a freshly built annotated 8 x 8 heatmap and ``plt.show()``
  every time: the ``display_data`` carrying the picture (HTML with the PNG and its text
  alternative, as every figure is sent once attention_kit is imported; ``image/png`` otherwise).

Run: ``.venv/bin/python benchmarks/widget_latency.py [--n 30]``. Prints median and p95 of each and
the ratio naive / explorer. Targets (2-core machine, 8 x 8 annotated heatmap): median <= 60 ms and
at least 3 x faster than naive.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from queue import Empty

import numpy as np
from jupyter_client.manager import start_new_kernel

SETUP = r"""
%matplotlib inline
import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
import attention_kit as ak
from attention_kit.plotting import heatmap
from attention_kit.widgets import MaskExplorer, MultiHeadExplorer, SelfAttentionExplorer, TilingStepper

rng = np.random.default_rng(0)
tokens = "the cat sat on the mat and purred".split()
X2 = rng.normal(0, 1, (8, 2))   # 8 tokens in 2-D: two annotated 8 x 8 heatmaps + the plane
X8 = rng.normal(0, 1, (8, 8))   # 8 tokens, d_model = 8: 8 heads
sa = SelfAttentionExplorer(X2, labels=tokens)
mh = MultiHeadExplorer(X8, tokens, n_heads=8)
mk = MaskExplorer(tokens, mask="causal", token=2)   # 8 tokens: annotated 8 x 8 heatmap + 8 bars
display(sa)
display(mh)
display(mk)
ts = TilingStepper(step=6)                           # 12 tokens, 4 x 3 tiles
display(ts)

def naive(v=0.0):
    X = X2.copy()
    X[0, 0] = v
    _, W = ak.self_attention(X, np.eye(2), np.eye(2), np.eye(2))  # (8, 8)
    fig, ax = plt.subplots(figsize=(6, 5), layout="constrained")  # same size as the live one
    heatmap(W, query_labels=tokens, key_labels=tokens, ax=ax, title="self-attention weights")
    plt.show()

# the same 8 x 8 annotated heatmap as the naive case, kept live with attention_kit's pieces:
# one reused Figure, update_heatmap in place, LiveFigure's drawing commands
from matplotlib.figure import Figure
from attention_kit.plotting import update_heatmap
from attention_kit.widgets import LiveFigure

def weights_for(v):
    X = X2.copy()
    X[0, 0] = v
    return ak.self_attention(X, np.eye(2), np.eye(2), np.eye(2))[1]  # (8, 8)

hm_fig = Figure(figsize=(6, 5), layout="constrained")
hm_art = heatmap(weights_for(0.0), query_labels=tokens, key_labels=tokens, ax=hm_fig.add_subplot(),
                 title="self-attention weights")
hm_live = LiveFigure(hm_fig, dpi=72)
hm_live.set_dynamic([hm_art.image, hm_art.grid, hm_art.text_batch])
hm_slider = widgets.FloatSlider(value=0.0, min=-2, max=2, step=0.01)
hm_slider.observe(lambda ch: (update_heatmap(hm_art, weights_for(ch["new"])), hm_live.refresh()),
                  names="value")
hm_live.refresh()
display(widgets.VBox([hm_slider, hm_live]))

naive_slider = widgets.FloatSlider(value=0.0, min=-2, max=2, step=0.01)
naive_w = widgets.interactive(naive, v=naive_slider)
display(naive_w)
ids = {
    "sa_slider": sa.editor.sliders("x1")[0].model_id,
    "sa_image": sa.live.model_id,
    "mh_slider": mh.controls["dim0"].model_id,
    "mh_image": mh.live.model_id,
    "mk_slider": mk.controls["nudge"].model_id,
    "mk_image": mk.live.model_id,
    "ts_step": ts.controls["step"].model_id,
    "ts_q0": ts.editor.sliders("q")[0].model_id,
    "ts_image": ts.live.model_id,
    "naive_slider": naive_slider.model_id,
    "hm_slider": hm_slider.model_id,
    "hm_image": hm_live.model_id,
}
"""


def _drain(kc, timeout=0.2):
    while True:
        try:
            kc.get_iopub_msg(timeout=timeout)
        except Empty:
            return


def _execute(kc, code: str, expr: dict | None = None) -> dict:
    msg_id = kc.execute(code, user_expressions=expr or {})
    reply = kc.get_shell_msg(timeout=120)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=120)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"kernel error: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    return reply["content"].get("user_expressions", {})


def _set_value(kc, comm_id: str, value: float) -> None:
    """Send what the browser sends when a slider moves."""
    content = {"comm_id": comm_id,
               "data": {"method": "update", "state": {"value": value}, "buffer_paths": []}}
    msg = kc.session.msg("comm_msg", content)
    kc.shell_channel.send(msg)


def _wait(kc, match, timeout=30.0) -> None:
    end = time.perf_counter() + timeout
    while True:
        left = end - time.perf_counter()
        try:
            if left <= 0:
                raise Empty
            msg = kc.get_iopub_msg(timeout=left)
        except Empty:
            raise TimeoutError(f"no new picture within {timeout:.0f} s") from None
        if match(msg):
            return


def _image_update(image_id):
    def match(msg):
        if msg["msg_type"] != "comm_msg":
            return False
        c = msg["content"]
        d = c.get("data", {})
        return (c.get("comm_id") == image_id and d.get("method") == "update"
                and "frame" in d.get("state", {}))  # a LiveFigure's new picture
    return match


def _png_display(msg) -> bool:
    """The naive case's new picture: a figure's ``display_data``. With attention_kit imported a
    figure leaves the kernel as HTML, its PNG in an ``<img alt=...>`` (issue 34, accessible.py),
    as it does for a learner's own ``interact``; without, as ``image/png``."""
    if msg["msg_type"] not in ("display_data", "update_display_data"):
        return False
    data = msg["content"]["data"]
    return "image/png" in data or "data:image/png;base64," in data.get("text/html", "")


def measure(kc, slider_id: str, match, values, cpu_expr: str | None = None):
    """Latency in ms of each change, and (for explorers) the kernel's CPU ms per update."""
    times, cpu = [], []
    for v in values:
        _drain(kc, timeout=0.05)
        t0 = time.perf_counter()
        _set_value(kc, slider_id, float(v))
        _wait(kc, match)
        times.append(time.perf_counter() - t0)
        if cpu_expr:
            cpu.append(float(_execute(kc, "", {"c": cpu_expr})["c"]["data"]["text/plain"]))
    return np.array(times) * 1e3, np.array(cpu)


def _stats(ms: np.ndarray) -> tuple[float, float]:
    return float(np.median(ms)), float(np.percentile(ms, 95))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="slider changes per case (default 30)")
    ap.add_argument("--json", action="store_true", help="also print the numbers as JSON")
    args = ap.parse_args(argv)
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        ids = _execute(kc, SETUP, {"ids": "ids"})["ids"]
        ids = json.loads(ids["data"]["text/plain"].replace("'", '"'))
        _drain(kc, timeout=0.5)
        rng = np.random.default_rng(1)
        values = np.round(rng.uniform(-1.5, 1.5, args.n), 2)
        # warm up each path once (first-time font and layout caches)
        measure(kc, ids["sa_slider"], _image_update(ids["sa_image"]), [0.5])
        measure(kc, ids["mh_slider"], _image_update(ids["mh_image"]), [0.5])
        measure(kc, ids["mk_slider"], _image_update(ids["mk_image"]), [0.5])
        measure(kc, ids["ts_step"], _image_update(ids["ts_image"]), [5])
        measure(kc, ids["ts_q0"], _image_update(ids["ts_image"]), [0.5])
        steps = [int(k) for k in np.arange(args.n) % 12 + 1]  # 1, 2, ..., 12, 1, ...: one tile apart
        measure(kc, ids["naive_slider"], _png_display, [0.5])
        measure(kc, ids["hm_slider"], _image_update(ids["hm_image"]), [0.5])
        load_before = os.getloadavg()[0]
        results = {
            "live 8x8 annotated heatmap (heatmap + update_heatmap + LiveFigure)":
                measure(kc, ids["hm_slider"], _image_update(ids["hm_image"]), values),
            "SelfAttentionExplorer, 8 tokens (two annotated 8x8 heatmaps + plane)":
                measure(kc, ids["sa_slider"], _image_update(ids["sa_image"]), values,
                        "sa.last_update_ms[1]"),
            "MultiHeadExplorer, 8 heads of 8x8 + output bars":
                measure(kc, ids["mh_slider"], _image_update(ids["mh_image"]), values,
                        "mh.last_update_ms[1]"),
            "MaskExplorer, 8 tokens (annotated 8x8 heatmap + row bars), nudge slider":
                measure(kc, ids["mk_slider"], _image_update(ids["mk_image"]), values,
                        "mk.last_update_ms[1]"),
            "TilingStepper, 12 tokens, 4x3 tiles: tiles-done slider (one step)":
                measure(kc, ids["ts_step"], _image_update(ids["ts_image"]), steps,
                        "ts.last_update_ms[1]"),
            "TilingStepper: a slider of the followed row's query":
                measure(kc, ids["ts_q0"], _image_update(ids["ts_image"]), values,
                        "ts.last_update_ms[1]"),
            "naive: interact + fresh annotated 8x8 heatmap + plt.show":
                measure(kc, ids["naive_slider"], _png_display, values),
        }
        load_after = os.getloadavg()[0]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    naive_med, _ = _stats(results["naive: interact + fresh annotated 8x8 heatmap + plt.show"][0])
    print(f"widget latency, slider change -> new picture sent on iopub ({args.n} changes each; "
          f"{os.cpu_count()} CPUs, load average {load_before:.1f} -> {load_after:.1f})")
    print(f"{'case':72s} {'median ms':>10s} {'p95 ms':>8s} {'naive/this':>11s} {'kernel CPU ms':>14s}")
    out = {}
    for name, (ms, cpu) in results.items():
        med, p95 = _stats(ms)
        cpu_med = f"{np.median(cpu):.1f}" if cpu.size else "-"
        out[name] = {"median_ms": round(med, 1), "p95_ms": round(p95, 1),
                     "ratio": round(naive_med / med, 2), "kernel_cpu_ms": cpu_med}
        print(f"{name:72s} {med:10.1f} {p95:8.1f} {naive_med / med:10.2f}x {cpu_med:>14s}")
    print("targets for the 8x8 annotated heatmap: median <= 60 ms, >= 3x faster than naive")
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
