"""The stamps of one press on both sides, for the browser benchmarks (``harness.py`` gathers them
with the loop and the presses).

* :func:`install_probes` and :func:`timed_press`: the page's ``keydown``, message sent and
  received, the first ``ak-frame`` and the first frame whose pixels changed (:data:`JS_PIXELS`);
  the kernel's comm arrival and the stages of ``LiveFigure.trace`` (``latency_probes.py``);
* :func:`fetch_stamps`, :func:`merge`, :func:`attach_kernel`: one record per press;
* :data:`STAGES`, :func:`stage_values`, :func:`percentile`: the stages between two stamps.

Both clocks are the epoch in ms (one machine).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import jlab  # noqa: E402
from latency_probes import (  # noqa: E402
    JS_EXECUTE,
    JS_INSTALL,
    KERNEL_FETCH,
    KERNEL_RESET,
    KERNEL_SETUP,
)
from presses import press  # noqa: E402

KERNEL_STAGES = ("callback", "computed", "drawn", "rendered", "encoded", "sent")
STAGES = (  # (name, from stamp, to stamp)
    ("key -> send", "key", "send"),
    ("to kernel", "send", "arrived"),
    ("dispatch", "arrived", "callback"),
    ("compute", "callback", "computed"),
    ("artists", "computed", "drawn"),
    ("render", "drawn", "rendered"),
    ("encode", "rendered", "encoded"),
    ("send back", "encoded", "sent"),
    ("to page", "sent", "recv"),
    ("to picture", "recv", "src"),
    ("decode", "src", "load"),
    ("frame", "load", "frame"),
    ("paint", "frame", "painted"),
    ("round trip", "send", "recv"),
    ("to frame", "key", "frame"),
    ("total", "key", "painted"),
    ("to ak-frame", "key", "akframe"),  # every_control.py: the first "ak-frame" after the press
    ("to pixels", "key", "pixels"),  # every_control.py: the first frame with changed pixels
)


def kernel_execute(page, code: str, expr: str | None = None):
    out = page.evaluate(JS_EXECUTE, [code, expr])
    if "error" in out:
        raise RuntimeError(f"kernel: {out['error']}")
    return out.get("value")


# Page side: a hash of the pictures of one cell, read in a requestAnimationFrame loop while a
# press is pending, in the frames after something drew. window.__px.arm() takes the hash before
# the press; the keydown (Arrow*, Enter, Space) or a menu choice stamps the press; the first frame
# with another hash stamps "pixels".
JS_PIXELS = """
(sel) => {
  const now = () => performance.timeOrigin + performance.now();
  const root = document.querySelector(sel);
  const hashPictures = () => {
    let h = 0x811c9dc5;
    for (const el of root.querySelectorAll('canvas.ak-live-figure, .jupyter-widgets img')) {
      if (el.tagName === 'CANVAS') {
        if (!el.width || !el.height) continue;
        const d = new Uint32Array(el.getContext('2d').getImageData(0, 0, el.width, el.height).data.buffer);
        for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 0x01000193);
        h = Math.imul(h ^ el.width, 0x01000193);
      } else {
        const s = (el.complete && el.naturalWidth > 0) ? el.src.slice(-64) + el.src.length : '#';
        for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
      }
    }
    return h >>> 0;
  };
  const px = window.__px = {armed: false, key: null, before: 0, frames: 0, akframe: null,
                            result: null, hashMs: [], dirty: true};
  // Pixels can change only by a drawing call on a canvas's 2-D context, a canvas resized (which
  // clears it) or an image's new source or load: each marks the pictures dirty, and a frame hashes
  // them only then, instead of on every frame while a press is pending (~1 ms of the page's main
  // thread a hash; the figures came out the same either way, benchmarks/LATENCY.md).
  if (!window.__pxPatched) {
    window.__pxPatched = true;
    const proto = CanvasRenderingContext2D.prototype;
    for (const name of ['clearRect', 'fillRect', 'strokeRect', 'drawImage', 'putImageData', 'fill',
                        'stroke', 'fillText', 'strokeText', 'reset']) {
      const original = proto[name];
      if (typeof original !== 'function') continue;
      proto[name] = function (...args) {
        if (window.__px) window.__px.dirty = true;
        return original.apply(this, args);
      };
    }
  }
  new MutationObserver(() => { px.dirty = true; }).observe(
    root, {subtree: true, childList: true, attributes: true, attributeFilter: ['src', 'width', 'height']});
  root.addEventListener('load', () => { px.dirty = true; }, true);
  const loop = () => {
    if (!px.armed) return;
    const t = now();
    if (px.key !== null && px.dirty) {
      px.dirty = false;
      const h = hashPictures();
      px.hashMs.push(now() - t);
      if (h !== px.before) {
        px.result = {key: px.key, pixels: t, akframe: px.akframe, frames: px.frames,
                     hashMs: px.hashMs.slice()};
        px.armed = false;
        return;
      }
    }
    requestAnimationFrame(loop);
  };
  px.arm = () => {
    px.before = hashPictures();
    px.key = null; px.frames = 0; px.akframe = null; px.result = null; px.armed = true;
    px.hashMs = []; px.dirty = false;
    requestAnimationFrame(loop);
  };
  px.stamp = () => { if (px.armed && px.key === null) px.key = now(); };
  px.stop = () => {
    const r = px.result || {key: px.key, pixels: null, akframe: px.akframe, frames: px.frames,
                            hashMs: px.hashMs.slice()};
    px.armed = false;
    return r;
  };
  // A space typed into a text box is part of the new text, not a press: only its Enter counts.
  const typing = (e) => e.target && e.target.tagName === 'INPUT' && e.target.type === 'text';
  document.addEventListener('keydown', (e) => {
    if (e.key.startsWith('Arrow') || e.key === 'Enter' || (e.key === ' ' && !typing(e))) px.stamp();
  }, true);
  root.addEventListener('ak-frame', () => {
    if (px.key === null) return;
    px.frames += 1;
    if (px.akframe === null) px.akframe = now();
  });
}
"""

def attach_kernel(presses: list[dict], trace: list[dict], arrivals: list[float]) -> None:
    """Give each press the kernel stamps of the first refresh (and comm arrival) after its key."""
    for i, p in enumerate(presses):
        end = presses[i + 1]["key"] if i + 1 < len(presses) else float("inf")
        refresh = next((r for r in trace if p["key"] <= r.get("callback", -1) < end), None)
        if refresh is not None:
            p.update({k: refresh[k] for k in KERNEL_STAGES if k in refresh})
            p["full"] = refresh.get("full")
            arrived = [t for t in arrivals if p.get("send", p["key"]) <= t <= refresh["callback"]]
            if arrived:
                p["arrived"] = arrived[-1]


def percentile(xs: list[float], q: float) -> float:
    """The q-th percentile (linear interpolation, as numpy's default)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def stage_values(row: dict, name: str) -> list[float]:
    a, b = next((a, b) for n, a, b in STAGES if n == name)
    return [p[b] - p[a] for p in row["presses"] if a in p and b in p]


def install_probes(page, cell_index: int) -> None:
    """The stamps of a press in the kernel (comm arrival, LiveFigure.trace) and in the page (the
    stages of latency_stages.py and the pixel probe) for cell ``cell_index``."""
    kernel_execute(page, KERNEL_SETUP)
    sel = jlab.cell_selector(page, cell_index)
    page.evaluate(JS_INSTALL.replace("e.key === 'Enter'", "e.key === 'Enter' || (e.key === ' ' && "
                                     "!(e.target && e.target.type === 'text'))"), sel)
    page.evaluate(JS_PIXELS, sel)


def reset_stamps(page) -> None:
    kernel_execute(page, KERNEL_RESET)
    page.evaluate("() => { window.__st.done = []; window.__st.cur = null; }")


def timed_press(page, kind: str, handle, forward: bool, timeout_ms: int = 3000) -> dict:
    """One press, timed by the pixel probe: its result (key, pixels, akframe, frames, hashMs)."""
    page.evaluate("() => window.__px.arm()")
    press(page, kind, handle, forward)
    try:
        page.wait_for_function("() => window.__px.result !== null", polling=20, timeout=timeout_ms)
    except Exception:
        pass
    return page.evaluate("() => window.__px.stop()")


def fetch_stamps(page, pixel: list[dict]) -> list[dict]:
    """The presses of ``pixel`` (timed_press results) merged with the page's stage stamps and the
    kernel's, one record per press."""
    done = page.evaluate("() => window.__st.done")
    fetched = json.loads(ast.literal_eval(kernel_execute(page, "", KERNEL_FETCH)))
    merged = merge(pixel, done)
    attach_kernel(merged, fetched["trace"], fetched["arrivals"])
    return merged


def merge(pixel: list[dict], done: list[dict]) -> list[dict]:
    """One record per press: the stage stamps (matched by the key time) plus "pixels" and
    "akframe"; a press's own fields (e.g. its control) are kept."""
    presses = []
    for p in pixel:
        if p.get("key") is None:
            continue
        rec = next((d for d in done if abs(d["key"] - p["key"]) < 5.0), None)
        rec = dict(rec) if rec else {"key": p["key"]}
        rec.update({k: v for k, v in p.items() if k not in ("hashMs", "result") and v is not None})
        if p.get("hashMs"):  # the probe's own cost: reading and hashing the pictures, per frame
            rec["hash_ms"] = sum(p["hashMs"]) / len(p["hashMs"])
        rec.pop("hashMs", None)
        presses.append(rec)
    return presses
