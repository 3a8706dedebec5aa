"""The Chinese edition in a real JupyterLab (issue 47): notebooks/zh/ served as a learner gets it
(its marker file included, so the kernel speaks Chinese), two notebooks with explorers run top
to bottom, then in each:

* every rendered markdown cell sits in an element with ``lang="zh-CN"`` (WCAG 3.1.2, language of
  parts: JupyterLab's page is ``lang="en"``);
* axe-core finds no WCAG A/AA violation in the outputs, and every figure has a text alternative;
* the explorers speak Chinese: their controls' accessible names and the figures' text alternatives
  hold Chinese words;
* from the keyboard only, every control of every explorer is reached by Tab, has a name and is
  operated, and the picture and the description change (``a11y.keyboard_pass``).

Two notebooks, not nine: the code cells and the explorers are the English ones, which
``test_accessibility.py`` runs in full; what differs here is the words.
"""

from __future__ import annotations

import re

import a11y
import jlab
import pytest

pytest.importorskip("axe_playwright_python")

NOTEBOOKS = ("zh/02_self_attention.ipynb", "zh/04_masks_and_positions.ipynb")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh_page(browser, lab):
    """The browser tests' JupyterLab (conftest.py) serves notebooks/zh/ as zh/, marker file and
    all; the two notebooks open in a page of their own."""
    if not (lab.root / "zh" / "02_self_attention.ipynb").is_file():
        pytest.skip("no notebooks/zh/ to open")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        for name in NOTEBOOKS:
            jlab.open_notebook(page, lab, name)
            jlab.start_run_all(page)
        for name in NOTEBOOKS:
            jlab.activate(page, name)
            jlab.wait_run_all(page)
        yield page
    finally:
        context.close()
        for name in NOTEBOOKS:  # the English notebooks' kernels stay up for their page
            lab.shutdown_kernels(name)


_LANGS = """() => {
    const nb = window.jupyterapp.shell.currentWidget.node;
    const md = [...nb.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')].filter((e) => e.textContent.trim());
    return {cells: md.length, marked: md.filter((e) => e.querySelector(':scope > [lang="zh-CN"]')).length,
            page: document.documentElement.lang};
}"""

_NAMES = """(sel) => {
    const nb = window.jupyterapp.shell.currentWidget.node;
    const names = [];
    for (const a of nb.querySelectorAll(sel)) {
        for (const e of a.querySelectorAll('[aria-label], img[alt]')) {
            names.push(e.getAttribute('aria-label') || e.getAttribute('alt') || '');
        }
    }
    return names;
}"""


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_chinese_notebook_says_its_language_passes_axe_and_works_from_the_keyboard(zh_page, name):
    page = zh_page
    jlab.activate(page, name)
    jlab.wait_widgets_rendered(page)
    page.wait_for_timeout(500)

    langs = page.evaluate(_LANGS)
    assert langs["cells"] > 0 and langs["marked"] == langs["cells"], langs

    violations = a11y.run_axe(page)
    assert not violations, "axe found WCAG A/AA violations:\n" + "\n".join(
        f"  {v['id']} ({v['impact']}) x{len(v['nodes'])}: {v['nodes'][0]}" for v in violations)
    figs = a11y.figures_without_text(page)
    assert figs["figures"] > 0 and figs["unnamed"] == 0, figs

    names = page.evaluate(_NAMES, a11y.OUTPUTS)
    assert names, "no named control or figure in the outputs"
    chinese = [n for n in names if CJK.search(n)]
    assert len(chinese) >= len(names) // 2, f"mostly English names in {name}: {names[:12]}"

    n = a11y.explorer_count(page)
    assert n > 0, f"{name} shows no explorer"
    problems, operated = [], 0
    for k in range(n):
        r = a11y.keyboard_pass(page, k)
        print(f"zh {name} explorer {k + 1}/{n}: {r['controls']} controls, {r['reached']} reached, "
              f"{r['operated']} operated, {r['disabled']} disabled")
        operated += r["operated"]
        problems += [f"explorer {k + 1}: {f}" for f in r["failures"]]
        if r["unreached"]:
            problems.append(f"explorer {k + 1}: controls {r['unreached']} are not reached by Tab")
    assert not problems, f"{name}:\n  " + "\n  ".join(problems)
    assert operated, f"no control of {name}'s explorers could be operated from the keyboard"
