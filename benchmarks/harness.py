"""The browser benchmarks' one harness: one loop over notebooks, one way to press each control.

``every_control.py`` (every control of every explorer, in a row or in a learner's order) and
``latency_stages.py`` (one press split into stages) both use it:

* :func:`each_notebook`: one JupyterLab (127.0.0.1, throw-away settings, copies of the notebooks)
  and one headless Chromium for all the notebooks (and the ``interact`` baseline), a fresh page
  for each, its kernel shut down after it;
* :func:`open_sections`: open a notebook, Run All, wait for its widgets, the interactive cells;
* :func:`controls` and :func:`press`: every control of a cell and the one way to press it (a
  slider's ArrowRight / ArrowLeft, a menu's next / previous entry, a checkbox's Space, a button's
  Enter, a text box's new text and Enter); :func:`enable` / :func:`restore` for a control that a
  menu or checkbox of its cell enables;
* :func:`install_probes` and :func:`timed_press`: the stamps of one press on both sides (the page's
  ``keydown``, message sent and received, the first ``ak-frame`` and the first frame whose pixels
  changed; the kernel's comm arrival and the stages of ``LiveFigure.trace``), merged per press.

Both clocks are the epoch in ms (one machine).
"""

from __future__ import annotations

import ast
import json
import os
import sys
import tempfile
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

BASELINE_NAME = "00_interact_baseline.ipynb"
BASELINE_CELLS = [
    """\
%matplotlib inline
import numpy as np
import matplotlib.pyplot as plt
from ipywidgets import interact, FloatSlider
import attention_kit as ak
from attention_kit.plotting import heatmap

rng = np.random.default_rng(0)
tokens = "the cat sat on the mat and purred".split()
X2 = rng.normal(0, 1, (8, 2))  # 8 tokens in 2-D""",
    """\
def naive(v=0.0):
    X = X2.copy()
    X[0, 0] = v
    _, W = ak.self_attention(X, np.eye(2), np.eye(2), np.eye(2))  # (8, 8)
    fig, ax = plt.subplots(figsize=(6, 5), layout="constrained")
    heatmap(W, query_labels=tokens, key_labels=tokens, ax=ax, title="self-attention weights")
    plt.show()

interact(naive, v=FloatSlider(value=0.0, min=-2, max=2, step=0.05));""",
]

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


def write_baseline(directory: Path) -> Path:
    """The naive interact notebook (two code cells) in ``directory``."""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                     "outputs": [], "source": src} for i, src in enumerate(BASELINE_CELLS)],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = directory / BASELINE_NAME
    path.write_text(json.dumps(nb, indent=1))
    return path


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

# A menu entry chosen as with the mouse; stamps the press for both probes.
JS_CHOOSE = """
(h, step) => {
  const now = performance.timeOrigin + performance.now();
  const st = window.__st;
  if (st) { st.cur = {key: now}; st.keys.push(now); }
  if (window.__px) window.__px.stamp();
  h.selectedIndex = Math.max(0, Math.min(h.options.length - 1, h.selectedIndex + step));
  h.dispatchEvent(new Event('change', {bubbles: true}));
}
"""

KINDS = (  # (kind, selector)
    ("slider", ".jupyter-widgets [role=slider]"),
    ("menu", ".jupyter-widgets select"),
    ("checkbox", ".jupyter-widgets input[type=checkbox]"),
    ("button", ".jupyter-widgets button"),
    ("text", ".jupyter-widgets input[type=text]"),
)


JS_ROW_NAME = """
h => {  // a vector editor's row starts with the vector's name (a Label): 'x1' for its controls
  const row = h.closest('.widget-hbox:not(.widget-inline-hbox)');
  const first = row && row.firstElementChild;
  return first && first !== h && !first.contains(h) && first.classList.contains('widget-label')
    ? first.innerText.trim() : '';
}
"""


def label(handle, kind: str) -> str:
    """The control's name as the page shows it, with its vector's name in a vector editor."""
    try:
        row = handle.evaluate(JS_ROW_NAME) or ""
    except Exception:
        row = ""
    own = own_label(handle, kind)
    return f"{row} {own}".strip() if kind != "text" else (row or own)


def own_label(handle, kind: str) -> str:
    try:
        if kind == "button":
            return handle.inner_text(timeout=1000).strip() or "?"
        if kind == "checkbox":
            return handle.evaluate(
                "h => (h.closest('label') || h.parentElement).innerText.trim()") or "?"
        box = handle.locator("xpath=ancestor::div[contains(@class, 'widget-inline-hbox')][1]")
        return box.locator(".widget-label").first.inner_text(timeout=1000).strip() or "?"
    except Exception:
        return "?"


def disabled(handle) -> bool:
    return bool(handle.evaluate(
        "h => !!h.disabled || h.getAttribute('aria-disabled') === 'true' || "
        "!!h.closest('[disabled]') || !!h.closest('.jupyter-widgets.mod-disabled')"))


def controls(cell) -> list[tuple[str, object]]:
    out = []
    for kind, selector in KINDS:
        for handle in cell.locator(selector).all():
            if handle.is_visible():
                out.append((kind, handle))
    return out


def press(page, kind: str, handle, forward: bool) -> None:
    """One press of a control, forward or back."""
    if kind == "slider":
        now, top = handle.get_attribute("aria-valuenow"), handle.get_attribute("aria-valuemax")
        low = handle.get_attribute("aria-valuemin")
        right = forward
        if now is not None and now == top:
            right = False
        elif now is not None and now == low:
            right = True
        handle.focus()
        page.keyboard.press("ArrowRight" if right else "ArrowLeft")
    elif kind == "menu":
        at = handle.evaluate("h => [h.selectedIndex, h.options.length]")
        step = 1 if forward else -1
        if not 0 <= at[0] + step < at[1]:
            step = -step
        handle.evaluate(JS_CHOOSE, step)
    elif kind == "checkbox":
        handle.focus()
        page.keyboard.press(" ")
    elif kind == "button":
        handle.focus()
        page.keyboard.press("Enter")
    elif kind == "text":
        value = handle.input_value() or ""
        if jlab.VECTOR_TEXT.match(value):
            new = jlab.nudged_vector(value, 0.1 if forward else -0.1)
        elif is_number(value):
            new = nudged_number(value, forward)
        else:  # words (06's context): the last word dropped, then put back
            words = value.split()
            if forward and len(words) > 1:
                handle.evaluate("(h, w) => { h.dataset.akDropped = w; }", words[-1])
                new = " ".join(words[:-1])
            else:
                dropped = handle.evaluate("h => h.dataset.akDropped || ''")
                new = " ".join(words + ([dropped] if dropped else []))
        handle.click()
        handle.press("Control+a")
        handle.press_sequentially(new)
        handle.press("Enter")


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def nudged_number(text: str, forward: bool) -> str:
    try:
        x = float(text)
    except ValueError:
        return text
    return f"{x * (1.25 if forward else 0.8):g}"


def enable(page, cell, handle) -> tuple | None:
    """Make a disabled control usable with one of the cell's menus or checkboxes; returns how to
    put that control back, or None when nothing enables it."""
    for kind, other in controls(cell):
        if kind == "menu" and not disabled(other):
            start = other.evaluate("h => h.selectedIndex")
            n = other.evaluate("h => h.options.length")
            for i in range(n):
                if i == start:
                    continue
                other.evaluate("(h, i) => { h.selectedIndex = i; "
                               "h.dispatchEvent(new Event('change', {bubbles: true})); }", i)
                page.wait_for_timeout(400)
                if not disabled(handle):
                    return (kind, other, start)
            other.evaluate("(h, i) => { h.selectedIndex = i; "
                           "h.dispatchEvent(new Event('change', {bubbles: true})); }", start)
            page.wait_for_timeout(400)
        elif kind == "checkbox" and not disabled(other):
            other.focus()
            page.keyboard.press(" ")
            page.wait_for_timeout(400)
            if not disabled(handle):
                return (kind, other, None)
            other.focus()
            page.keyboard.press(" ")
            page.wait_for_timeout(400)
    return None


def restore(page, how) -> None:
    kind, other, start = how
    if kind == "menu":
        other.evaluate("(h, i) => { h.selectedIndex = i; "
                       "h.dispatchEvent(new Event('change', {bubbles: true})); }", start)
    else:
        other.focus()
        page.keyboard.press(" ")
    page.wait_for_timeout(500)


def undo_first(cell, name: str):
    """For a reset button, a press (not timed) that gives it something to undo before each of its
    presses: another button of the cell (05's "Step"), else its last slider (03's embeddings).
    None for any other control."""
    if "reset" not in name.lower():
        return None
    others = [(k, h) for k, h in controls(cell)
              if (k == "button" and "reset" not in label(h, k).lower()) or k == "slider"]
    buttons = [o for o in others if o[0] == "button"]
    return (buttons or others[-1:] or [None])[0]


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


def each_notebook(notebooks: list[Path], baseline: bool, measure_one,
                  python: str = sys.executable) -> list[dict]:
    """The loop both benchmarks share: one JupyterLab and one Chromium for all the notebooks (and
    the interact baseline, written to a temporary folder); for each, a fresh page and
    ``measure_one(page, server, notebook)``'s rows, or one row with the error; then its kernel
    is shut down. ``python``: the environment JupyterLab and its kernels run in (another
    checkout's ``.venv/bin/python`` measures that checkout's attention_kit)."""
    from playwright.sync_api import sync_playwright

    chromium = jlab.find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium at /usr/bin/chromium (apt-get install -y chromium)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="attn-latency-") as tmp:
        extra = [write_baseline(Path(tmp))] if baseline else []
        with jlab.LabServer(list(notebooks) + extra, python=python) as server, sync_playwright() as pw:
            browser = jlab.launch_browser(pw, chromium)
            try:
                for nb in list(notebooks) + extra:
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    try:
                        rows += measure_one(page, server, nb)
                    except Exception as exc:  # noqa: BLE001 (a notebook that fails is reported)
                        rows.append({"notebook": nb.name, "slider": "-", "presses": [],
                                     "missed": 0, "load": (os.getloadavg()[0],) * 2,
                                     "error": str(exc)})
                    finally:
                        page.close()
                    server.shutdown_kernels()
            finally:
                browser.close()
    return rows


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


def short_name(row: dict) -> str:
    nb = row["notebook"].removesuffix(".ipynb")
    return ("interact baseline" if row["notebook"] == BASELINE_NAME else nb[:18]) + \
        f" / {row['slider']}"


def open_sections(page, server, notebook: Path) -> list:
    """Open ``notebook``, Run All, wait for its widgets; its interactive cells (a widget with a
    picture; for the baseline, its widget)."""
    jlab.open_notebook(page, server, notebook.name)
    jlab.run_all_cells(page)
    cells = jlab.wait_widgets_rendered(page)
    interactive = [c for c in cells if c.is_interactive or (
        notebook.name == BASELINE_NAME and c.widget_outputs)]
    if not interactive:
        raise RuntimeError(f"{notebook.name}: no interactive section")
    return interactive


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
