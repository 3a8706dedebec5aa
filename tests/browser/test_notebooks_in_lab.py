"""Every course notebook, run in a real JupyterLab in headless Chromium, used as a person would.

For each notebook: open it, Run > Run All Cells, wait for the kernel; no cell may show an error
output (cells tagged ``raises-exception`` excepted); every widget output must have rendered (no
"Loading widget...", no plain-text repr); in every interactive section (a widget with an image)
pressing ArrowRight on a slider handle, and typing a vector + Enter into a text box, must change
the image; a bad vector must show a message and leave the image alone. Each wait is for the event
(a new image, a message) with a generous limit for a busy machine, never a speed target: how fast
the picture changes is measured in benchmarks/ (LATENCY.md), and printed here. A screenshot of
each notebook after the interaction goes to artifacts/screenshots/.
"""

from __future__ import annotations

import re

import jlab
import pytest

SHOTS = jlab.SHOTS

CHANGE_TIMEOUT = 30.0  # seconds to wait for the new image or message: none by then is "no response"
MAX_SLIDERS_TRIED = 4  # a slider may legitimately do nothing (e.g. `seed` under soft alignment)
BAD_VECTOR = "0.5, oops"
PLAIN_REPR = re.compile(r"\b[A-Z]\w*\((children|value|layout|description|options)=")
ERROR_WORDS = re.compile(r"error|exception|traceback", re.IGNORECASE)


def _lines(text: str) -> set[str]:
    return {ln.strip() for ln in text.splitlines() if ln.strip()}


def _cell_text(cell) -> str:
    return cell.locator(".jp-OutputArea").inner_text()


def _press_sliders(page, cell, report: dict, problems: list[str], where: str) -> None:
    handles = [h for h in cell.locator(".jupyter-widgets [role=slider]").all() if h.is_visible()
               and not h.evaluate("h => !!h.closest('[disabled]')")]  # e.g. seed, when unused
    if not handles:
        report["slider"] = "no slider"
        return
    tried = []
    for handle in handles[:MAX_SLIDERS_TRIED]:
        now, top = handle.get_attribute("aria-valuenow"), handle.get_attribute("aria-valuemax")
        key = "ArrowLeft" if now is not None and now == top else "ArrowRight"
        before_text = _lines(_cell_text(cell))
        before = jlab.image_srcs(cell)
        handle.focus()
        page.keyboard.press(key)
        dt = jlab.wait_image_change(page, cell, before, timeout=CHANGE_TIMEOUT)
        tried.append(f"{now}->{handle.get_attribute('aria-valuenow')}")
        if dt is not None:
            report["slider"] = f"{key} on slider #{len(tried)}: image changed in {dt * 1000:.0f} ms"
            report.setdefault("latencies", []).append(dt)
            new = _lines(_cell_text(cell)) - before_text
            bad = [ln for ln in new if ERROR_WORDS.search(ln)]
            if bad:
                problems.append(f"{where}: after the slider key press the explorer shows {bad}")
            return
    problems.append(f"{where}: none of the first {len(tried)} sliders changed the image within "
                    f"{CHANGE_TIMEOUT} s of a key press (values {tried})")


def _vector_box(cell):
    return jlab.text_box(cell, jlab.VECTOR_TEXT.match)


_type = jlab.type_text


def _wait_message(page, cell, before_text: set[str]) -> str | None:
    """The lines that appear in the cell's output within CHANGE_TIMEOUT (None if none), after
    which a wrong redraw gets 0.5 s more to show up."""
    message = None
    for _ in range(int(CHANGE_TIMEOUT / 0.05)):  # returns as soon as a line appears
        new = _lines(_cell_text(cell)) - before_text
        if new:
            message = " | ".join(sorted(new))
            break
        page.wait_for_timeout(50)
    page.wait_for_timeout(500)  # give a wrong redraw the time to show up
    return message


def _type_vectors(page, cell, report: dict, problems: list[str], where: str) -> None:
    box = _vector_box(cell)
    if box is None:
        report["text"] = "no vector text box"
        return
    original = box.input_value()
    good = jlab.nudged_vector(original)
    before = jlab.image_srcs(cell)
    _type(box, good)
    dt = jlab.wait_image_change(page, cell, before, timeout=CHANGE_TIMEOUT)
    if dt is None:
        problems.append(f"{where}: typing {good!r} + Enter (was {original!r}) did not change the "
                        f"image within {CHANGE_TIMEOUT} s")
    else:
        report["text"] = f"typed {good!r} + Enter: image changed in {dt * 1000:.0f} ms"
        report.setdefault("latencies", []).append(dt)

    # A bad vector: a message must appear, the image must stay as it was.
    page.wait_for_timeout(300)
    before = jlab.image_srcs(cell)
    before_text = _lines(_cell_text(cell))
    _type(box, BAD_VECTOR)
    message = _wait_message(page, cell, before_text)
    if message is None:
        problems.append(f"{where}: typing the bad vector {BAD_VECTOR!r} showed no message")
    else:
        report["bad"] = f"{BAD_VECTOR!r} -> {message!r}"
    if jlab.image_srcs(cell) != before:
        problems.append(f"{where}: the bad vector {BAD_VECTOR!r} changed the image")


@pytest.mark.parametrize("notebook", jlab.course_notebooks(), ids=lambda p: p.stem)
def test_notebook_runs_renders_and_responds_in_jupyterlab(notebook, page):
    problems: list[str] = []
    jlab.activate(page, notebook.name)
    seconds = jlab.wait_run_all(page)  # Run All was clicked when the notebooks were opened
    cells = jlab.wait_widgets_rendered(page)
    print(f"{notebook.name}: run all done after {seconds:.1f} s, {len(cells)} code cells")

    # -- errors ---------------------------------------------------------------------------
    for c in cells:
        if c.errors and not c.expects_error:
            problems.append(f"cell {c.index} shows an error: {c.errors} (source: {c.source[:80]!r})")
        if c.expects_error and c.count is not None and not c.errors:
            problems.append(f"cell {c.index} is tagged raises-exception but raised nothing")
    not_run = [c.index for c in cells if c.count is None and c.source.strip()]
    if not_run:
        problems.append(f"cells {not_run} did not run (run all stops at the first error)")

    # -- every widget rendered --------------------------------------------------------------
    n_widgets = 0
    for c in cells:
        if not c.widget_outputs:
            continue
        n_widgets += c.widget_outputs
        where = f"cell {c.index}"
        if c.widget_views < c.widget_outputs:
            problems.append(f"{where}: {c.widget_outputs} widget output(s) but "
                            f"{c.widget_views} rendered widget view(s)")
        for bad in ("Loading widget", "Error displaying widget", "Model not found"):
            if bad in c.text:
                problems.append(f"{where} shows {bad!r}")
        plains = [o["plain"].strip()[:60] for o in c.outputs
                  if jlab.WIDGET_MIME in o["mimes"] and o["plain"] and o["plain"].strip()]
        if PLAIN_REPR.search(c.text) or any(p in c.text for p in plains):
            problems.append(f"{where} shows a plain-text widget repr: {c.text[:120]!r}")
    seen = getattr(page, "console_errors_seen", 0)  # one page for every notebook
    new_js_errors = page.console_errors[seen:]
    page.console_errors_seen = len(page.console_errors)
    if new_js_errors:
        problems.append(f"JavaScript errors on the page: {new_js_errors[:3]}")

    # -- every interactive section responds ---------------------------------------------------
    interactive = [c for c in cells if c.is_interactive]
    if not interactive:
        problems.append(f"no interactive section (a widget with an image) among {n_widgets} "
                        "widget output(s)")
    jlab.iopub_errors(page, reset=True)  # the errors of run all are checked above
    SHOTS.mkdir(parents=True, exist_ok=True)
    reports = []
    for c in interactive:
        where = f"cell {c.index}"
        cell = jlab.cell_locator(page, c.index)
        cell.scroll_into_view_if_needed()
        if any(s.endswith("#unloaded") for s in jlab.image_srcs(cell)):
            problems.append(f"{where}: an image in the widget did not load")
        report: dict = {"cell": c.index}
        _press_sliders(page, cell, report, problems, where)
        _type_vectors(page, cell, report, problems, where)
        reports.append(report)
        cell.locator(".jp-OutputArea").screenshot(
            path=str(SHOTS / f"{notebook.stem}-cell{c.index:02d}.png"))
    errors = jlab.iopub_errors(page)
    if errors:
        problems.append(f"the kernel reported errors during the interaction: {errors[:3]}")

    if interactive:
        first = jlab.cell_locator(page, interactive[0].index)
        first.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(200)
    page.screenshot(path=str(SHOTS / f"{notebook.stem}.png"))
    for r in reports:
        print("  ", {k: v for k, v in r.items() if k != "latencies"})
    assert not problems, "\n".join(problems)


STEPPER_NOTEBOOKS = [p for p in jlab.course_notebooks() if p.name.startswith("07_")]


@pytest.mark.parametrize("notebook", STEPPER_NOTEBOOKS, ids=lambda p: p.stem)
def test_tiling_stepper_buttons_and_a_bad_query(notebook, page):
    """Notebook 07's TilingStepper: a click on next ▶ or ◀ back redraws the picture; a query of
    the wrong length shows a message naming the length and leaves the picture alone."""
    jlab.activate(page, notebook.name)
    jlab.wait_run_all(page)
    found = [c for c in jlab.wait_widgets_rendered(page) if c.is_interactive and "TilingStepper(" in c.source]
    assert found, "no rendered TilingStepper in notebook 07"
    cell = jlab.cell_locator(page, found[0].index)
    cell.scroll_into_view_if_needed()
    problems = []
    for label in ("next ▶", "◀ back"):
        before = jlab.image_srcs(cell)
        cell.get_by_role("button", name=label).click()
        dt = jlab.wait_image_change(page, cell, before, timeout=CHANGE_TIMEOUT)
        if dt is None:
            problems.append(f"a click on {label!r} did not change the picture within {CHANGE_TIMEOUT} s")
        else:
            print(f"  {label}: picture changed in {dt * 1000:.0f} ms")
    page.wait_for_timeout(300)
    box = cell.locator(".jupyter-widgets input[type=text]").first  # the query box (it may hold
    assert box.is_visible(), "the stepper has no query box"        # the other test's bad text)
    before, before_text = jlab.image_srcs(cell), _lines(_cell_text(cell))
    _type(box, "1, 2")
    message = _wait_message(page, cell, before_text)
    if message is None or "expected 4 numbers" not in message:
        problems.append(f"typing a 2-number query showed {message!r}, not a message asking for 4 numbers")
    else:
        print(f"  '1, 2' -> {message!r}")
    if jlab.image_srcs(cell) != before:
        problems.append("the bad query changed the picture")
    cell.screenshot(path=str(SHOTS / f"{notebook.stem}-stepper.png"))
    assert not problems, "\n".join(problems)
