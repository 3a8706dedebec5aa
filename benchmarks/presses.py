"""The browser benchmarks' one way to press each control (``harness.py`` gathers it with the loop
and the stamps).

* :func:`controls`: every visible control of a cell, as ``(kind, handle)`` (:data:`KINDS`), and
  :func:`label`: its name as the page shows it;
* :func:`press`: the one way to press it, forward or back (a slider's ArrowRight / ArrowLeft, a
  menu's next / previous entry, a checkbox's Space, a button's Enter, a text box's new text and
  Enter);
* :func:`enable` / :func:`restore`: a control that a menu or checkbox of its cell enables;
  :func:`undo_first`: what a reset button's press needs before it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import jlab  # noqa: E402

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


def reach(kind: str, handle) -> None:
    """Move the focus to a control the way a keyboard learner reaches it before pressing it (Tab,
    or a click on it): a slider's handle, a checkbox, a button, a text box. A menu is chosen with
    the mouse by :func:`press` itself: nothing to reach. Focusing a control in another cell makes
    JupyterLab activate that cell (``Notebook._evtFocusIn``: every other cell's editor is given its
    cursor again, ~80-130 ms of the page's main thread on 2 cores, benchmarks/LATENCY.md)."""
    if kind in ("slider", "checkbox", "button", "text"):
        handle.focus()


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
