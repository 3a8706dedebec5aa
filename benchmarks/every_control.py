"""Every control of every explorer, timed until the pixels on the page change (issue 23).

Used by ``benchmarks/browser_latency.py`` (its default). For each interactive cell of a notebook
(a widget with a picture), every control in it is driven ``presses`` times, one press at a time:

* a slider: ArrowRight / ArrowLeft on its handle (ArrowLeft first at the top of its range);
* a menu (``<select>``): the next / previous entry chosen, as with the mouse;
* a checkbox: Space (on, off);
* a button: Enter (e.g. the trainer's Step, the tiling stepper's next / back); a reset button
  gets something to undo before each press, not timed: another button of its cell (05's Step)
  or its last slider (03's embeddings);
* a text box: its vector with 0.1 added to (then taken from) its first component, a number x 1.25
  (then / 1.25), or words with the last one dropped (then put back), typed, Enter; the press is
  timed from the Enter (a space typed into the box is part of the text, not a press);
* a menu with a single entry (06's layer menu for a one-layer model) is listed, not pressed.

A disabled control is enabled first when one of the cell's menus or checkboxes does it (04's
"real tokens" needs a padding mask, "D (window)" the local window; 02's seed the learned
projections), then put back; a control that stays disabled is listed as such.

Each press is timed in the page from the ``keydown`` (or the menu choice) to the first animation
frame in which a hash of the cell's pictures differs from the hash before the press ("pixels"): a
canvas's pixels (``getImageData``) and an ``<img>``'s source once it has loaded, read in a
``requestAnimationFrame`` loop while a press is pending, in each frame after something could have
changed them (a drawing call on a canvas's 2-D context, a canvas resized, an image's new source or
load). The probe's own cost per frame (reading and hashing the pictures, on the page's main thread)
is kept as ``hash_ms``. Beside it, the first ``ak-frame`` event after the press ("ak-frame") and
the stages of ``latency_stages.py``. A press whose pictures do not change within 3 s counts as "no
change" (with the frames it caused, if any).
"""

from __future__ import annotations

import ast
import json
import os
import sys

import latency_stages as ls
from latency_probes import JS_INSTALL, KERNEL_FETCH, KERNEL_RESET, KERNEL_SETUP
from latency_stages import jlab

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


def _label(handle, kind: str) -> str:
    """The control's name as the page shows it, with its vector's name in a vector editor."""
    try:
        row = handle.evaluate(JS_ROW_NAME) or ""
    except Exception:
        row = ""
    own = _own_label(handle, kind)
    return f"{row} {own}".strip() if kind != "text" else (row or own)


def _own_label(handle, kind: str) -> str:
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


def _disabled(handle) -> bool:
    return bool(handle.evaluate(
        "h => !!h.disabled || h.getAttribute('aria-disabled') === 'true' || "
        "!!h.closest('[disabled]') || !!h.closest('.jupyter-widgets.mod-disabled')"))


def _controls(cell) -> list[tuple[str, object]]:
    out = []
    for kind, selector in KINDS:
        for handle in cell.locator(selector).all():
            if handle.is_visible():
                out.append((kind, handle))
    return out


def _act(page, kind: str, handle, forward: bool) -> None:
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
        elif _is_number(value):
            new = _nudged_number(value, forward)
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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _nudged_number(text: str, forward: bool) -> str:
    try:
        x = float(text)
    except ValueError:
        return text
    return f"{x * (1.25 if forward else 0.8):g}"


def _enable(page, cell, handle) -> tuple | None:
    """Make a disabled control usable with one of the cell's menus or checkboxes; returns how to
    put that control back, or None when nothing enables it."""
    for kind, other in _controls(cell):
        if kind == "menu" and not _disabled(other):
            start = other.evaluate("h => h.selectedIndex")
            n = other.evaluate("h => h.options.length")
            for i in range(n):
                if i == start:
                    continue
                other.evaluate("(h, i) => { h.selectedIndex = i; "
                               "h.dispatchEvent(new Event('change', {bubbles: true})); }", i)
                page.wait_for_timeout(400)
                if not _disabled(handle):
                    return (kind, other, start)
            other.evaluate("(h, i) => { h.selectedIndex = i; "
                           "h.dispatchEvent(new Event('change', {bubbles: true})); }", start)
            page.wait_for_timeout(400)
        elif kind == "checkbox" and not _disabled(other):
            other.focus()
            page.keyboard.press(" ")
            page.wait_for_timeout(400)
            if not _disabled(handle):
                return (kind, other, None)
            other.focus()
            page.keyboard.press(" ")
            page.wait_for_timeout(400)
    return None


def _restore(page, how) -> None:
    kind, other, start = how
    if kind == "menu":
        other.evaluate("(h, i) => { h.selectedIndex = i; "
                       "h.dispatchEvent(new Event('change', {bubbles: true})); }", start)
    else:
        other.focus()
        page.keyboard.press(" ")
    page.wait_for_timeout(500)


def _undo_first(cell, label: str):
    """For a reset button, a press (not timed) that gives it something to undo before each of its
    presses: another button of the cell (05's "Step"), else its last slider (03's embeddings).
    None for any other control."""
    if "reset" not in label.lower():
        return None
    others = [(k, h) for k, h in _controls(cell)
              if (k == "button" and "reset" not in _label(h, k).lower()) or k == "slider"]
    buttons = [o for o in others if o[0] == "button"]
    return (buttons or others[-1:] or [None])[0]


def _press_control(page, kind, handle, presses: int, gap_ms: int, timeout_ms: int = 3000,
                   undo_first=None):
    """``presses`` presses, alternately forward and back; per press the pixel probe's result.
    ``undo_first`` (kind, handle): pressed before each press and not timed (see _undo_first)."""
    page.evaluate("() => { window.__st.done = []; window.__st.cur = null; }")
    out = []
    for i in range(presses):
        if undo_first is not None:
            _act(page, *undo_first, i % 2 == 0)
            page.wait_for_timeout(400 + gap_ms)  # its picture drawn before the timed press
        page.evaluate("() => window.__px.arm()")
        _act(page, kind, handle, i % 2 == 0)
        try:
            page.wait_for_function("() => window.__px.result !== null", polling=20,
                                   timeout=timeout_ms)
        except Exception:
            pass
        out.append(page.evaluate("() => window.__px.stop()"))
        page.wait_for_timeout(gap_ms)  # the kernel goes idle: one press at a time
    done = page.evaluate("() => window.__st.done")
    return out, done


def _merge(pixel: list[dict], done: list[dict]) -> list[dict]:
    """One record per press: the stage stamps of latency_stages (matched by the key time) plus
    "pixels" and "akframe"."""
    presses = []
    for p in pixel:
        if p.get("key") is None:
            continue
        rec = next((d for d in done if abs(d["key"] - p["key"]) < 5.0), None)
        rec = dict(rec) if rec else {"key": p["key"]}
        rec["key"] = p["key"]
        if p.get("pixels") is not None:
            rec["pixels"] = p["pixels"]
        if p.get("akframe") is not None:
            rec["akframe"] = p["akframe"]
        rec["frames"] = p.get("frames", 0)
        if p.get("hashMs"):  # the probe's own cost: reading and hashing the pictures, per frame
            rec["hash_ms"] = sum(p["hashMs"]) / len(p["hashMs"])
        presses.append(rec)
    return presses


def measure_notebook(page, server, notebook, presses: int, gap_ms: int = 250) -> list[dict]:
    """One row per control of every interactive cell of ``notebook``."""
    jlab.open_notebook(page, server, notebook.name)
    jlab.run_all_cells(page)
    cells = jlab.wait_widgets_rendered(page)
    interactive = [c for c in cells if c.is_interactive or (
        notebook.name == ls.BASELINE_NAME and c.widget_outputs)]
    if not interactive:
        raise RuntimeError(f"{notebook.name}: no interactive section")
    ls.kernel_execute(page, KERNEL_SETUP)
    rows = []
    for c in interactive:
        cell = jlab.cell_locator(page, c.index)
        cell.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        sel = jlab.cell_selector(page, c.index)
        page.evaluate(JS_INSTALL.replace("e.key === 'Enter'", "e.key === 'Enter' || (e.key === ' ' && "
                                        "!(e.target && e.target.type === 'text'))"),
                      sel)
        page.evaluate(JS_PIXELS, sel)
        page.wait_for_timeout(300)
        for kind, handle in _controls(cell):
            label = _label(handle, kind)
            restore = None
            if kind == "menu" and handle.evaluate("h => h.options.length") < 2:
                rows.append({"notebook": notebook.name, "cell": c.index, "kind": kind,
                             "slider": label, "presses": [], "missed": 0, "single": True,
                             "load": (os.getloadavg()[0],) * 2})
                continue
            if _disabled(handle):
                restore = _enable(page, cell, handle)
                if restore is None:
                    rows.append({"notebook": notebook.name, "cell": c.index, "kind": kind,
                                 "slider": label, "presses": [], "missed": 0, "disabled": True,
                                 "load": (os.getloadavg()[0],) * 2})
                    continue
            try:
                rows.append(_measure_control(page, notebook, c, kind, handle, label, restore,
                                             presses, gap_ms))
            except Exception as exc:  # one control that fails is reported, the rest measured
                rows.append({"notebook": notebook.name, "cell": c.index, "kind": kind,
                             "slider": label, "presses": [], "missed": 0,
                             "load": (os.getloadavg()[0],) * 2, "error": str(exc)[:200]})
            print(f"  measured {notebook.name} / {label} ({kind})", file=sys.stderr, flush=True)
            if restore is not None:
                _restore(page, restore)
    return rows


def _measure_control(page, notebook, c, kind, handle, label, restore, presses, gap_ms) -> dict:
    """One control of cell ``c``: its presses, merged with the stage stamps."""
    ls.kernel_execute(page, KERNEL_RESET)
    load = os.getloadavg()[0]
    pixel, done = _press_control(page, kind, handle, presses, gap_ms,
                                 undo_first=_undo_first(jlab.cell_locator(page, c.index), label))
    fetched = json.loads(ast.literal_eval(ls.kernel_execute(page, "", KERNEL_FETCH)))
    merged = _merge(pixel, done)
    ls._attach_kernel(merged, fetched["trace"], fetched["arrivals"])
    return {"notebook": notebook.name, "cell": c.index, "kind": kind, "slider": label,
            "presses": merged, "missed": sum(1 for p in merged if "pixels" not in p),
            "enabled_by": None if restore is None else _label(restore[1], restore[0]),
            "load": (load, os.getloadavg()[0])}


def run(notebooks, presses: int, baseline: bool = True, gap_ms: int = 250) -> list[dict]:
    """Every control of every notebook (and the interact baseline) in one JupyterLab."""
    return ls.each_notebook(notebooks, baseline,
                            lambda page, server, nb: measure_notebook(page, server, nb, presses, gap_ms))
