"""`make student`'s folder opens in a real JupyterLab: the learner's README and the package are
there, notebook 01 runs top to bottom from the folder's own attention_kit, every exercise prints a
✗ hint, no worked solution or sentence about one is on the page, and the cells that check the
"try this" list stay hidden under their collapsed "Check what you found" heading."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jlab
import pytest

sys.path.insert(0, str(jlab.ROOT / "tools"))
sys.path.insert(0, str(jlab.ROOT / "tests"))
import editions  # noqa: E402
import make_student  # noqa: E402

NB = "01_general_attention_model.ipynb"

# What the page shows (rendered Markdown and code editors) must not say any of this.
FORBIDDEN = re.compile(r"# Solution|worked solution|solution follows|collapsed cell|full notebook", re.I)

_JS_VISIBLE = """
() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.content.widgets.map((c, i) => ({
    index: i, type: c.model.type, hidden: c.isHidden,
    tags: c.model.getMetadata('tags') || [],
    source: c.model.sharedModel.getSource().slice(0, 120),
    collapsed: c.model.type === 'markdown' ? !!c.headingCollapsed : null,
  }));
}
"""


@pytest.fixture(scope="module")
def student_lab(tmp_path_factory):
    out = editions.check(editions.student_edition(tmp_path_factory))
    with jlab.LabServer([], folder=out) as server:
        yield server


def test_student_edition_opens_in_lab_without_solutions(browser, student_lab):
    server = student_lab
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        jlab.open_notebook(page, server, NB)
        listing = " ".join(page.locator(".jp-DirListing-item").all_inner_texts())
        for name in ("attention_kit", "README.md", "Makefile", "environment.yml", NB):
            assert name in listing, f"the file browser does not show {name}: {listing}"

        jlab.run_all_cells(page)
        cells = jlab.wait_widgets_rendered(page)
        errors = [(c.index, c.errors) for c in cells if c.errors and not c.expects_error]
        assert not errors, f"cells raised in the student copy: {errors}"
        assert any(c.is_interactive for c in cells), "the explorer did not render"
        exercises = [c for c in cells if "ok = check." in c.source]
        assert len(exercises) >= 3 and all("✗" in c.text for c in exercises), (
            [c.text[:80] for c in exercises])

        state = page.evaluate(_JS_VISIBLE)
        assert not any({"solution", "answer-reveal"} & set(c["tags"]) for c in state)
        heading = [c for c in state if c["source"].startswith("### Check what you found")]
        assert len(heading) == 1 and heading[0]["collapsed"], heading
        checks = [c for c in state if "explorer-check" in c["tags"]]
        assert checks and all(c["hidden"] for c in checks), (
            "the cells that check the try-this list are visible before the learner opens them")

        shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").inner_text()
        assert not FORBIDDEN.search(shown), FORBIDDEN.search(shown).group(0)
        jlab.SHOTS.mkdir(parents=True, exist_ok=True)
        jlab.cell_locator(page, heading[0]["index"]).scroll_into_view_if_needed()
        page.screenshot(path=str(jlab.SHOTS / "student-01-in-lab.png"))
    finally:
        context.close()
        server.shutdown_kernels()


def test_served_folder_is_the_student_edition(student_lab):
    root = Path(student_lab.root)
    assert (root / "attention_kit" / "__init__.py").is_file()
    assert make_student.find_leaks(root) == []
