"""axe-core in the notebook in front (issue 34): the course's own output areas, and JupyterLab's
chrome counted apart. Plain functions (the browser test and ``python tests/browser/a11y.py``).

    .venv/bin/python tests/browser/a11y.py notebooks/02_self_attention.ipynb   # counts per rule

The engine is axe-core as shipped in the ``axe-playwright-python`` package (no download)."""

from __future__ import annotations

import json
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
