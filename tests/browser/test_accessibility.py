"""Issue 34: the course's own output is usable with a screen reader and from the keyboard.

After Run All, in each notebook:

* axe-core (WCAG 2.0/2.1, A and AA) finds no violation in the output areas; what it finds in
  JupyterLab's own chrome is printed apart (not this course's to fix);
* every figure in the outputs has a text alternative (an ``alt``, or a canvas's ``aria-label``);
* from the keyboard only: Tab from an explorer's first control reaches a slider, whose accessible
  name is its label; ArrowRight moves it, the picture changes and so does the description that
  the page reads out (the polite live region, throttled to one text per 0.5 s).

One notebook at a time while developing:
``BROWSER_NOTEBOOKS='notebooks/02_*.ipynb' .venv/bin/python -m pytest -q tests/browser/test_accessibility.py``
"""

from __future__ import annotations

import a11y
import jlab
import pytest

pytest.importorskip("axe_playwright_python")


@pytest.mark.parametrize("notebook", jlab.course_notebooks(), ids=lambda p: p.stem)
def test_the_outputs_have_no_wcag_violation_and_every_figure_a_text_alternative(notebook, page):
    jlab.activate(page, notebook.name)
    jlab.wait_widgets_rendered(page)
    _wait_controls_named(page)
    course = a11y.run_axe(page)
    chrome = a11y.run_axe(page, outputs=False)
    print(f"{notebook.name}: outputs {dict(a11y.counts(course))}; "
          f"JupyterLab's chrome (not the course's): {dict(a11y.counts(chrome))}")
    assert not course, "axe found WCAG A/AA violations in the course's output:\n" + "\n".join(
        f"  {v['id']} ({v['impact']}) x{len(v['nodes'])}: {v['nodes'][0]}" for v in course)
    figs = a11y.figures_without_text(page)
    assert figs["figures"] > 0, "no figure found in the outputs"
    assert figs["unnamed"] == 0, f"{figs['unnamed']} of {figs['figures']} figures have no text alternative"


_NAMED = """() => [...document.querySelectorAll('.jp-OutputArea-output')]
    .filter((area) => area.querySelector('canvas.ak-live-figure'))
    .every((area) => area.classList.contains('ak-explorer-a11y') &&
        [...area.querySelectorAll('[role="slider"]')].every((h) => h.getAttribute('aria-label')))"""


def _wait_controls_named(page, timeout_ms: int = 15000) -> None:
    """The explorers name their controls once their view is in the page (live_figure.js); on a
    busy machine that can take a few seconds after the widgets render. Wait for it, then let axe
    judge what is there (a name that never comes fails below, with axe's words)."""
    page.wait_for_timeout(500)
    try:
        page.wait_for_function(_NAMED, timeout=timeout_ms)
    except Exception:  # playwright's TimeoutError: axe reports the unnamed controls
        pass


# In the explorer's output: the first control, and after each Tab what has the focus.
_FIRST_CONTROL = """(n) => {
    const canvases = [...document.querySelectorAll('[data-ak-audit] canvas.ak-live-figure')];
    const canvas = canvases[n];
    if (!canvas) return false;
    const area = canvas.closest('.jp-OutputArea-output');
    const first = area.querySelector('select, input, button, [role="slider"], textarea');
    if (!first) return false;
    area.dataset.akKeys = '1';
    first.focus();
    return document.activeElement === first;
}"""
_FOCUSED = """() => {
    const a = document.activeElement;
    const area = document.querySelector('[data-ak-keys]');
    return {inside: !!(a && area && area.contains(a)), role: a && (a.getAttribute('role') || a.tagName),
            name: a && (a.getAttribute('aria-label') || ''),
            disabled: !!(a && (a.closest('[disabled]') || a.getAttribute('aria-disabled') === 'true'))};
}"""
_PICTURE = """() => {
    const area = document.querySelector('[data-ak-keys]');
    const c = area.querySelector('canvas.ak-live-figure');
    return {frame: c.dataset.frame, label: c.getAttribute('aria-label') || '',
            full: (area.querySelector('.ak-description') || {}).textContent || '',
            live: (area.querySelector('[aria-live="polite"]') || {}).textContent || ''};
}"""


def _explorers(page) -> int:
    a11y._mark_front(page)
    return page.evaluate("() => document.querySelectorAll('[data-ak-audit] canvas.ak-live-figure').length")


@pytest.mark.parametrize("notebook", jlab.course_notebooks(), ids=lambda p: p.stem)
def test_a_slider_is_reached_by_tab_and_moved_by_arrows_and_the_description_follows(notebook, page):
    jlab.activate(page, notebook.name)
    jlab.wait_widgets_rendered(page)
    _wait_controls_named(page)
    n = _explorers(page)
    if n == 0:
        pytest.skip(f"{notebook.name} has no explorer")
    moved = sliders = 0
    for k in range(n):
        page.evaluate("() => document.querySelectorAll('[data-ak-keys]').forEach(n => delete n.dataset.akKeys)")
        if not page.evaluate(_FIRST_CONTROL, k):
            continue
        focus = page.evaluate(_FOCUSED)
        for _ in range(40):  # Tab, as a keyboard user does, until a slider has the focus
            if (focus["role"] == "slider" and not focus["disabled"]) or not focus["inside"]:
                break
            page.keyboard.press("Tab")
            focus = page.evaluate(_FOCUSED)
        if focus["role"] != "slider" or focus["disabled"] or not focus["inside"]:
            continue  # this explorer has no slider (a stepper's buttons)
        sliders += 1
        assert focus["name"].strip(), "the slider reached by Tab has no accessible name"
        before = page.evaluate(_PICTURE)
        assert before["label"], "the explorer's canvas has no aria-label"
        assert before["full"], "the explorer's canvas has no description"
        after = before
        for _ in range(3):  # a step that changes no shown number (a seed's twin) is allowed once or twice
            page.keyboard.press("ArrowRight")
            try:
                page.wait_for_function(
                    """(f) => { const c = document.querySelector('[data-ak-keys] canvas.ak-live-figure');
                               return c.dataset.frame !== f; }""", arg=before["frame"], timeout=5000)
            except Exception:
                page.keyboard.press("ArrowLeft")
                continue
            page.wait_for_timeout(800)  # the throttled description (at most one per 0.5 s)
            after = page.evaluate(_PICTURE)
            if after["full"] != before["full"]:
                break
        assert after["frame"] != before["frame"], f"ArrowRight on slider {focus['name']!r} drew no new picture"
        assert after["full"] != before["full"], f"the description did not follow slider {focus['name']!r}"
        assert after["live"], "nothing was put in the live region"
        moved += 1
    if not sliders:  # 06's head view: menus and a text box only
        pytest.skip(f"{notebook.name}'s explorers have no slider to move")
    assert moved, f"no explorer slider of {notebook.name} could be reached and moved from the keyboard"
