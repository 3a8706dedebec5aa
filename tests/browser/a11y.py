"""axe-core in the notebook in front (issue 34): the course's own output areas, and JupyterLab's
chrome counted apart. Plain functions (the browser test and ``python tests/browser/a11y.py``).

    .venv/bin/python tests/browser/a11y.py notebooks/02_self_attention.ipynb   # counts per rule

The engine is axe-core as shipped in the ``axe-playwright-python`` package (no download)."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import jlab  # noqa: E402

#: WCAG 2.0 and 2.1, levels A and AA.
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: The course's own output: every output area of the notebook in front.
OUTPUTS = "[data-ak-audit] .jp-OutputArea"


def axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).with_name("axe.min.js")).read_text(encoding="utf-8")


def _mark_front(page) -> None:
    page.evaluate("""() => {
        document.querySelectorAll('[data-ak-audit]').forEach(n => delete n.dataset.akAudit);
        window.jupyterapp.shell.currentWidget.node.dataset.akAudit = '1';
    }""")


def run_axe(page, *, outputs: bool = True) -> list[dict]:
    """axe's WCAG 2.0/2.1 A/AA violations in the output areas of the notebook in front
    (``outputs``), or in the rest of the page (JupyterLab's own chrome). Each violation:
    ``{"id", "impact", "nodes": [html snippets]}``."""
    _mark_front(page)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    context = {"include": [OUTPUTS]} if outputs else {"exclude": [".jp-OutputArea"]}
    res = page.evaluate("""async ([context, tags]) => {
        const r = await axe.run(context, {runOnly: {type: 'tag', values: tags},
                                          resultTypes: ['violations']});
        return r.violations.map(v => ({id: v.id, impact: v.impact,
                                       nodes: v.nodes.map(n => n.html.slice(0, 200))}));
    }""", [context, WCAG_TAGS])
    return res


def counts(violations: list[dict]) -> Counter:
    """Violating elements per rule."""
    c: Counter = Counter()
    for v in violations:
        c[v["id"]] += len(v["nodes"])
    return c


def figures_without_text(page) -> dict:
    """Figures in the outputs (images and explorer canvases) and how many have no text alternative."""
    return page.evaluate("""(sel) => {
        const areas = document.querySelectorAll(sel);
        let figures = 0, unnamed = 0;
        for (const a of areas) {
            for (const img of a.querySelectorAll('img')) {
                if (img.closest('.lm-mod-hidden')) continue;
                figures++;
                if (!(img.getAttribute('alt') || '').trim()) unnamed++;
            }
            for (const c of a.querySelectorAll('canvas')) {
                figures++;
                if (!(c.getAttribute('aria-label') || '').trim()) unnamed++;
            }
        }
        return {figures, unnamed};
    }""", OUTPUTS)


def audit(notebook: Path) -> dict:
    """Open ``notebook`` in a fresh JupyterLab, Run All, and count what axe reports."""
    from playwright.sync_api import sync_playwright

    chromium = jlab.find_chromium()
    with jlab.LabServer([notebook]) as lab, sync_playwright() as pw:
        browser = jlab.launch_browser(pw, chromium)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        jlab.open_notebook(page, lab, notebook.name)
        seconds = jlab.run_all_cells(page, timeout=300)
        jlab.wait_widgets_rendered(page)
        page.wait_for_timeout(1500)
        course = run_axe(page)
        chrome = run_axe(page, outputs=False)
        out = {"notebook": notebook.name, "run_all_s": round(seconds, 1),
               "outputs": dict(counts(course)), "chrome": dict(counts(chrome)),
               **figures_without_text(page), "examples": {v["id"]: v["nodes"][:2] for v in course}}
        browser.close()
        lab.shutdown_kernels()
    return out


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps(audit(Path(arg))), flush=True)


# ---------------------------------------------------------------------------------------------
# The keyboard pass (issue 34): every control of every explorer, reached with Tab and operated
# with the keys a learner expects; the picture and the description must change each time.
# ---------------------------------------------------------------------------------------------
#: What can take the keyboard in an explorer's output (ipywidgets' slider handles are divs with
#: role="slider"; a slider's value readout is a contenteditable div).
CONTROLS = 'select, input, textarea, button, [role="slider"], [contenteditable="true"]'

_JS_START = """([n, sel]) => {
    document.querySelectorAll('[data-ak-keys]').forEach(x => delete x.dataset.akKeys);
    const c = [...document.querySelectorAll('[data-ak-audit] canvas.ak-live-figure')][n];
    if (!c) return false;
    const area = c.closest('.jp-OutputArea-output');
    area.dataset.akKeys = '1';
    const first = area.querySelector(sel);
    if (!first) return false;
    first.focus();
    return document.activeElement === first;
}"""

# What has the focus: its kind, name, state, and its place among the explorer's controls.
_JS_FOCUSED = """(sel) => {
    const a = document.activeElement;
    const area = document.querySelector('[data-ak-keys]');
    if (!(a && area && area.contains(a))) return {inside: false, tag: a ? a.tagName : null};
    const all = [...area.querySelectorAll(sel)];
    const text = (n) => n ? (n.textContent || '').replace(/\\s+/g, ' ').trim() : '';
    const role = a.getAttribute('role');
    const kind = role === 'slider' ? 'slider' : a.isContentEditable ? 'readout'
        : a.tagName === 'SELECT' ? 'select' : a.tagName === 'BUTTON' ? 'button'
        : a.tagName === 'TEXTAREA' ? 'text' : a.type === 'checkbox' ? 'checkbox'
        : (a.type === 'button' || a.type === 'submit') ? 'button' : 'text';
    const forLabel = a.id ? area.querySelector(`label[for="${CSS.escape(a.id)}"]`) : null;
    const name = a.getAttribute('aria-label') || text(forLabel) || text(a.closest('label')) ||
        (kind === 'button' ? text(a) : '');
    const widget = a.closest('.widget-slider');
    const readout = widget ? widget.querySelector('.widget-readout') : null;
    return {inside: true, index: all.indexOf(a), kind, name,
            disabled: !!(a.disabled || a.closest('[disabled]') || a.getAttribute('aria-disabled') === 'true'),
            now: a.getAttribute('aria-valuenow'), max: a.getAttribute('aria-valuemax'),
            min: a.getAttribute('aria-valuemin'),
            valuetext: a.getAttribute('aria-valuetext'),
            selected: a.tagName === 'SELECT' ? a.selectedIndex : null,
            options: a.tagName === 'SELECT' ? a.options.length : null,
            value: kind === 'readout' ? text(a) : (a.value === undefined ? null : String(a.value)),
            readout: readout ? text(readout) : null};
}"""

# The controls a keyboard user should be able to reach: enabled, shown, in the Tab order.
_JS_TABBABLE = """(sel) => {
    const area = document.querySelector('[data-ak-keys]');
    return [...area.querySelectorAll(sel)].map((e, i) => ({i, ok: e.tabIndex >= 0 && !e.disabled &&
        e.getAttribute('aria-disabled') !== 'true' && !e.closest('[disabled]') && e.getClientRects().length > 0}))
        .filter(x => x.ok).map(x => x.i);
}"""

_JS_PICTURE = """() => {
    const area = document.querySelector('[data-ak-keys]');
    const c = area.querySelector('canvas.ak-live-figure');
    let sig = 0;  // the pixels drawn, hashed: a redraw of the same picture keeps it
    const url = c.toDataURL();
    for (let i = 0; i < url.length; i++) sig = (sig * 31 + url.charCodeAt(i)) | 0;
    return {frame: c.dataset.frame, sig, label: c.getAttribute('aria-label') || '',
            full: (area.querySelector('.ak-description') || {}).textContent || '',
            live: (area.querySelector('[aria-live="polite"]') || {}).textContent || ''};
}"""

_JS_REFOCUS = """([sel, i]) => {
    const area = document.querySelector('[data-ak-keys]');
    const e = area.querySelectorAll(sel)[i];
    if (e) e.focus();
    return !!e && document.activeElement === e;
}"""

_JS_SAYS_SHOWN = """() => {
    const a = document.activeElement;
    const r = a && a.closest('.widget-slider') && a.closest('.widget-slider').querySelector('.widget-readout');
    return !r || a.getAttribute('aria-valuetext') === (r.textContent || '').replace(/\\s+/g, ' ').trim();
}"""

_NUMBER = re.compile(r"^\s*-?\d+(\.\d*)?([eE][-+]?\d+)?\s*$")


def explorer_count(page) -> int:
    """How many explorers (live figures) the notebook in front shows."""
    _mark_front(page)
    return page.evaluate("() => document.querySelectorAll('[data-ak-audit] canvas.ak-live-figure').length")


def _new_text(value: str) -> str:
    """Something else to type into a text box that holds ``value``: the vector nudged, a number
    halved, or the words in another order."""
    if jlab.VECTOR_TEXT.match(value):
        return jlab.nudged_vector(value)
    if _NUMBER.match(value):
        return f"{float(value) / 2:g}"
    words = value.split()
    other = words[::-1] if words[::-1] != words else words[1:] + words[:1]
    return " ".join(other)


#: The explorer's words are those of the picture it shows (the description's element carries the
#: frame whose words it holds: live_figure.js, from the kernel's ``described``), and no new
#: picture came for ``quiet`` ms (one key press can reach the kernel as two messages, and a
#: button that trains for 100 steps draws several pictures).
# How long a press may take to bring its picture and words: a limit for an event on a machine
# shared with other work (a fresh-clone run beside six other jobs, load average 14 on 2 cores, once
# took longer than 15 s), not a speed: the latency targets are measured by benchmarks/.
PRESS_TIMEOUT_MS = 30000

_JS_SETTLED = """(quiet) => {
    const area = document.querySelector('[data-ak-keys]');
    const c = area.querySelector('canvas.ak-live-figure');
    const d = area.querySelector('.ak-description');
    const now = performance.now();
    if (c.dataset.seenFrame !== c.dataset.frame) { c.dataset.seenFrame = c.dataset.frame; c.dataset.seenAt = now; }
    return !!(d && c.dataset.frame !== undefined && d.dataset.frame === c.dataset.frame) &&
        now - Number(c.dataset.seenAt) >= quiet;
}"""


def _settle(page, *, quiet_ms: int = 400, timeout_ms: int = 30000) -> bool:
    """Wait until the description in the page is the one of the picture shown and no new picture
    came for ``quiet_ms``: the kernel writes the words after the picture (DESCRIBE_AFTER later,
    once its handler is done), the page places them at most every 500 ms and marks them with
    their frame (instead of waiting for 900 ms without new words). False when that did not
    happen within ``timeout_ms``."""
    try:
        page.wait_for_function(_JS_SETTLED, arg=quiet_ms, timeout=timeout_ms, polling=100)
        return True
    except Exception:  # playwright's TimeoutError: the caller says what is missing
        return False


def _words_of(page) -> str:
    """Which frame the canvas shows and which one the description's words are of."""
    return page.evaluate("""() => {
        const area = document.querySelector('[data-ak-keys]');
        const d = area.querySelector('.ak-description');
        return `frame ${area.querySelector('canvas.ak-live-figure').dataset.frame} shown, ` +
               `words of frame ${d ? d.dataset.frame : '(no description)'}`;
    }""")


def _gist(words: str, n: int = 160) -> str:
    """The first ``n`` characters of a description, for a failure message."""
    return repr(words[:n] + ("..." if len(words) > n else ""))


def _operate(page, focus: dict, memo: dict) -> str | None:
    """Press the keys a learner presses on the focused control; returns what was done (or None
    when there is nothing to do with it)."""
    kind = focus["kind"]
    kb = page.keyboard
    if kind == "slider":
        up = focus["now"] is None or focus["max"] is None or float(focus["now"]) < float(focus["max"])
        kb.press("ArrowRight" if up else "ArrowLeft")
        return "ArrowRight" if up else "ArrowLeft"
    if kind == "readout":  # one more step the way the arrow key went, typed (not back: a reset
        before = memo.pop("readout", None)  # button after the sliders must still have work to do)
        try:
            v0, v1 = (float(t.replace("\u2212", "-")) for t in (before, focus["value"]))
        except (AttributeError, TypeError, ValueError):
            return None
        if v0 == v1:
            return None
        # (a slider the arrow took to its end: a step back past where it was, inside the range)
        text = f"{v1 + (v1 - v0) * (-2 if memo.pop('at_end', False) else 1):.6g}"
        kb.press("Control+a")
        kb.type(text)
        kb.press("Enter")
        return f"typed {text!r}, Enter"
    if kind == "select":
        if focus["options"] <= 1:  # (06's one layer: nothing to choose)
            return None
        down = focus["selected"] < focus["options"] - 1
        kb.press("ArrowDown" if down else "ArrowUp")
        return "ArrowDown" if down else "ArrowUp"
    if kind == "checkbox":
        kb.press("Space")
        return "Space"
    if kind == "button":
        kb.press("Enter")
        return "Enter"
    text = _new_text(focus["value"] or "")
    kb.press("Control+a")
    kb.type(text)
    kb.press("Enter")
    return f"typed {text!r}, Enter"


def keyboard_pass(page, n: int, *, max_tabs: int = 80) -> dict:
    """From explorer ``n``'s first control, Tab through every control of the explorer and operate
    each with its keys (a slider: ArrowRight, or ArrowLeft at its end; its value box: the value
    one more step, typed, Enter; a menu: ArrowDown/ArrowUp; a checkbox: Space; a button: Enter; a text
    box: new text, Enter), checking that the picture and the description change. Returns
    ``{"controls", "reached", "operated", "disabled", "order_ok", "unreached", "failures", "log"}``."""
    out = {"controls": 0, "reached": 0, "operated": 0, "disabled": 0, "order_ok": True,
           "unreached": [], "failures": [], "log": []}
    if not page.evaluate(_JS_START, [n, CONTROLS]):
        return out
    if not _settle(page):  # (then no press can be judged: stop here)
        out["failures"].append(f"the description never became that of the picture shown: {_words_of(page)}")
        return out
    seen: list[int] = []
    memo: dict = {}
    for _ in range(max_tabs):
        focus = page.evaluate(_JS_FOCUSED, CONTROLS)
        if not focus["inside"] or focus["index"] in seen:
            break
        seen.append(focus["index"])
        where = f"{focus['kind']} {focus['name']!r}"
        if not focus["name"].strip():
            out["failures"].append(f"{where} (control {focus['index']}) has no accessible name")
        if focus["disabled"]:
            out["disabled"] += 1
            out["log"].append(f"{where}: disabled, skipped")
        else:
            if not _settle(page):
                out["failures"].append(f"before {where}: the description is not the picture's: {_words_of(page)}")
                break
            before = page.evaluate(_JS_PICTURE)
            if focus["kind"] == "slider":  # typed back into its value box, which Tab reaches next
                memo["readout"] = focus["readout"]
            tries = 3 if focus["kind"] == "slider" else 1
            done = after = None
            for _try in range(tries):
                done = _operate(page, focus, memo)
                if done is None:
                    break
                try:
                    page.wait_for_function(
                        """(f) => document.querySelector('[data-ak-keys] canvas.ak-live-figure').dataset.frame !== f""",
                        arg=before["frame"], timeout=PRESS_TIMEOUT_MS)
                except Exception:  # playwright's TimeoutError: judged below
                    pass
                else:
                    _settle(page, timeout_ms=PRESS_TIMEOUT_MS)  # the words of the new picture
                after = page.evaluate(_JS_PICTURE)
                if after["frame"] != before["frame"] and after["full"] != before["full"]:
                    break
                if focus["kind"] == "slider":  # a step that changes no shown number: one more
                    again = page.evaluate(_JS_FOCUSED, CONTROLS)
                    if not again["inside"]:
                        break  # the key took the focus out of the explorer: said below
                    focus = again
            if done is None:
                out["log"].append(f"{where}: nothing to do")
            else:
                out["log"].append(f"{where}: {done}")
                if after["frame"] == before["frame"]:
                    out["failures"].append(f"{where}: {done} drew no new picture")
                elif after["full"] == before["full"] and after["sig"] == before["sig"]:
                    # drawn again, pixel for pixel the same (01's seed drew the same sample three
                    # times): nothing new to describe; a control that redraws nothing would fail above
                    out["log"][-1] += " (the same picture drawn again: nothing new to say)"
                elif after["full"] == before["full"]:
                    out["failures"].append(
                        f"{where}: {done} changed the picture (frame {before['frame']} -> "
                        f"{after['frame']}), not its description, still {_gist(after['full'])}")
                elif not after["live"]:
                    out["failures"].append(f"{where}: nothing was put in the live region")
                else:
                    out["operated"] += 1
            now = page.evaluate(_JS_FOCUSED, CONTROLS)
            if focus["kind"] == "slider" and now["inside"]:
                memo["at_end"] = now["now"] is not None and any(
                    x is not None and float(x) == float(now["now"]) for x in (now["max"], now["min"]))
            if focus["kind"] == "slider" and now["inside"] and now["readout"]:
                try:  # the value read out is the one shown (set a frame after the readout changes)
                    page.wait_for_function(_JS_SAYS_SHOWN, timeout=30000)
                except Exception:  # playwright's TimeoutError: judged below
                    pass
                now = page.evaluate(_JS_FOCUSED, CONTROLS)
                if now["valuetext"] != now["readout"]:
                    out["failures"].append(f"{where}: a screen reader says {now['valuetext']!r} "
                                           f"where the slider shows {now['readout']!r}")
            if not now["inside"]:  # the control was drawn anew and lost the focus
                out["failures"].append(f"{where}: the focus left the explorer after {done}")
                page.evaluate(_JS_REFOCUS, [CONTROLS, focus["index"]])
        page.keyboard.press("Tab")
    # (a control that a checkbox or menu turned on counts too; one it turned off does not)
    tabbable = set(page.evaluate(_JS_TABBABLE, CONTROLS))
    out["controls"] = len(tabbable | set(seen))
    out["reached"] = len(seen)
    out["order_ok"] = seen == sorted(seen)
    out["unreached"] = sorted(tabbable - set(seen))
    return out

