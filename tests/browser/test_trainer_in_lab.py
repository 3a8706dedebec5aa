"""Notebook 05's AttentionTrainer in a real JupyterLab: a Step click redraws the heatmap, and a bad
learning rate typed into its box shows a message and leaves the picture alone.

The heatmap is the left part of the widget's image (the curves are on the right), so the test
compares the pixels of that part before and after the click, not just the image as a whole.
"""

from __future__ import annotations

import io
import re

import jlab
import pytest

SHOTS = jlab.SHOTS
NOTEBOOK = "05_how_attention_learns.ipynb"
TIMEOUT = 30.0  # seconds from the click (or Enter) to the new picture or the message: none by then is "no response"
HEATMAP_SHARE = 0.55  # the heatmap and its colorbar fill the left 55 % of the one-head figure


def _notebook():
    found = [p for p in jlab.course_notebooks() if p.name == NOTEBOOK]
    if not found:
        pytest.skip(f"{NOTEBOOK} is not among the notebooks under test")
    return found[0]


def _left_pixels(cell):
    """The left part of the trainer's image, as an array of RGB pixels."""
    import numpy as np
    from matplotlib.image import imread

    shot = cell.locator(jlab.PICTURE).first.screenshot()
    rgb = imread(io.BytesIO(shot), format="png")[..., :3]
    return np.asarray(rgb[:, : int(rgb.shape[1] * HEATMAP_SHARE)])


def _trainer_cell(page):
    for c in jlab.cells(page):
        if "AttentionTrainer(" in c.source and c.widget_outputs:
            return jlab.cell_locator(page, c.index)
    return None


def _wait_text(page, cell, pattern: re.Pattern, timeout: float = TIMEOUT) -> str | None:
    for _ in range(int(timeout / 0.05)):
        text = cell.locator(".jp-OutputArea").inner_text()
        match = pattern.search(text)
        if match:
            return match.group(0)
        page.wait_for_timeout(50)
    return None


@pytest.mark.parametrize("notebook", [pytest.param(None, id="05_how_attention_learns")])
def test_trainer_step_and_bad_learning_rate(page, notebook):
    import numpy as np

    _notebook()
    jlab.activate(page, NOTEBOOK)
    jlab.wait_run_all(page)
    jlab.wait_widgets_rendered(page)
    cell = _trainer_cell(page)
    assert cell is not None, "no rendered AttentionTrainer in notebook 05"
    cell.scroll_into_view_if_needed()

    # -- a Step click changes the heatmap -----------------------------------------------------
    before_src = jlab.image_srcs(cell)
    before = _left_pixels(cell)
    cell.get_by_role("button", name="Step", exact=True).click()
    dt = jlab.wait_image_change(page, cell, before_src, timeout=TIMEOUT)
    assert dt is not None, f"a Step click did not change the picture within {TIMEOUT} s"
    page.wait_for_timeout(100)
    after = _left_pixels(cell)
    assert after.shape == before.shape and np.abs(after - before).max() > 0.05, \
        "the picture changed after Step, but not the heatmap of the probe's weights"
    print(f"Step: new picture after {dt * 1000:.0f} ms, heatmap pixels changed")

    # -- a bad learning rate typed into the box gets a clear message ---------------------------
    box = cell.locator(".jupyter-widgets input[type=text]").first
    assert re.fullmatch(r"[0-9.eE+-]+", box.input_value() or ""), "the learning-rate box was not found"
    page.wait_for_timeout(300)
    src = jlab.image_srcs(cell)
    for bad, expected in (("abc", r"'abc' is not a number; type one positive number such as 0\.1"),
                          ("-1", r"learning rate must be a positive number")):
        box.click()
        box.press("Control+a")
        box.press_sequentially(bad)
        box.press("Enter")
        message = _wait_text(page, cell, re.compile(expected))
        assert message, f"typing {bad!r} + Enter showed no message matching {expected!r}"
        print(f"typed {bad!r}: {message!r}")
    page.wait_for_timeout(500)  # a wrong redraw would show up by now
    assert jlab.image_srcs(cell) == src, "a bad learning rate changed the picture"
    assert not re.search(r"Traceback|Error\b", cell.locator(".jp-OutputArea").inner_text())
    SHOTS.mkdir(parents=True, exist_ok=True)
    cell.locator(".jp-OutputArea").screenshot(path=str(SHOTS / "05_how_attention_learns-trainer.png"))
