"""Every control of every explorer, timed until the pixels on the page change (issue 23).

Used by ``benchmarks/browser_latency.py`` (its default). Two orders (issue 36):

* **in a row** (``run``): for each interactive cell of a notebook (a widget with a picture), each
  control in turn is pressed ``presses`` times, one press at a time, alternating direction, after
  the kernel has gone idle (the presses of one control never see another control's cost);
* **a learner's order** (``run_learner``): right after Run All (no wait for the explorers'
  idle-time preparation), every control of the notebook pressed ``rounds`` times in a seeded random
  order, mixed across controls, with a pause drawn from 0-3 s before each press. As a keyboard
  learner does, the focus moves to the next control (Tab, or a click on it) when its pause begins,
  and the key comes when the pause ends (``focus_at_press``: both at once, as before 2026-11-27;
  a press right after the focus entered another cell then also waits for JupyterLab's activation
  of that cell, ``presses.reach``).

How each control is pressed (``harness.press``):

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

import os
import random
import sys

import harness as hz


def measure_notebook(page, server, notebook, presses: int, gap_ms: int = 250) -> list[dict]:
    """In a row: one row per control of every interactive cell of ``notebook``."""
    interactive = hz.open_sections(page, server, notebook)
    rows = []
    for c in interactive:
        cell = _show_cell(page, c.index)
        for kind, handle in hz.controls(cell):
            label = hz.label(handle, kind)
            base = {"notebook": notebook.name, "cell": c.index, "kind": kind, "slider": label,
                    "presses": [], "missed": 0, "load": (os.getloadavg()[0],) * 2}
            restore = None
            if kind == "menu" and handle.evaluate("h => h.options.length") < 2:
                rows.append(dict(base, single=True))
                continue
            if hz.disabled(handle):
                restore = hz.enable(page, cell, handle)
                if restore is None:
                    rows.append(dict(base, disabled=True))
                    continue
            try:
                rows.append(_measure_control(page, c, kind, handle, restore, presses, gap_ms, base))
            except Exception as exc:  # one control that fails is reported, the rest measured
                rows.append(dict(base, error=str(exc)[:200]))
            print(f"  measured {notebook.name} / {label} ({kind})", file=sys.stderr, flush=True)
            if restore is not None:
                hz.restore(page, restore)
    return rows


def _show_cell(page, index: int):
    """Scroll cell ``index`` into view and put the probes on it; its locator."""
    cell = hz.jlab.cell_locator(page, index)
    cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    hz.install_probes(page, index)
    page.wait_for_timeout(300)
    return cell


def _measure_control(page, c, kind, handle, restore, presses, gap_ms, base) -> dict:
    """One control of cell ``c`` pressed ``presses`` times, alternately forward and back; a reset
    button gets something to undo before each press (not timed, see harness.undo_first)."""
    hz.reset_stamps(page)
    load = os.getloadavg()[0]
    undo = hz.undo_first(hz.jlab.cell_locator(page, c.index), base["slider"])
    pixel = []
    for i in range(presses):
        if undo is not None:
            hz.press(page, *undo, i % 2 == 0)
            page.wait_for_timeout(400 + gap_ms)  # its picture drawn before the timed press
        pixel.append(hz.timed_press(page, kind, handle, i % 2 == 0))
        page.wait_for_timeout(gap_ms)  # the kernel goes idle: one press at a time
    merged = hz.fetch_stamps(page, pixel)
    return dict(base, presses=merged, missed=sum(1 for p in merged if "pixels" not in p),
                enabled_by=None if restore is None else hz.label(restore[1], restore[0]),
                load=(load, os.getloadavg()[0]))


def run(notebooks, presses: int, baseline: bool = True, gap_ms: int = 250,
        python: str = sys.executable) -> list[dict]:
    """Every control of every notebook (and the interact baseline) in one JupyterLab, in a row."""
    return hz.each_notebook(notebooks, baseline, lambda page, server, nb: measure_notebook(
        page, server, nb, presses, gap_ms), python=python)


# ---------------------------------------------------------------------------------------------
# A learner's order (issue 36)

PAUSE_S = (0.0, 3.0)


def learner_plan(names: list[str], rounds: int, seed: int,
                 pauses: tuple[float, float] = PAUSE_S) -> list[tuple[str, bool, float]]:
    """``rounds`` presses of each control in ``names``, in a seeded random order mixed across
    controls, each with a direction (forward or back, at random) and the pause after it (s, drawn
    uniformly from PAUSE_S). A control is never pressed twice in a row when another one is left."""
    rng = random.Random(seed)
    bag = [n for n in names for _ in range(rounds)]
    rng.shuffle(bag)
    for i in range(1, len(bag)):  # mix: swap a repeat with a later, different control
        if bag[i] == bag[i - 1]:
            j = next((j for j in range(i + 1, len(bag)) if bag[j] != bag[i]), None)
            if j is not None:
                bag[i], bag[j] = bag[j], bag[i]
    return [(n, rng.random() < 0.5, rng.uniform(*pauses)) for n in bag]


def measure_learner(page, server, notebook, rounds: int, seed: int,
                    pauses: tuple[float, float] = PAUSE_S, setup: str = "",
                    focus_at_press: bool = False) -> list[dict]:
    """A learner's order in ``notebook``: one row per control, its presses as they came in the
    mixed order (each record names the control pressed before it, ``after``). ``pauses``: the
    range the pause before each press is drawn from (s), during which the focus is already on the
    control to press (unless ``focus_at_press``: then it moves there with the key); ``setup``: code
    run in the kernel right after Run All (e.g. to switch idle work off,
    ``browser_latency.py --variants``)."""
    interactive = hz.open_sections(page, server, notebook)  # Run All: no wait for idle work
    if setup:
        hz.kernel_execute(page, setup)
    load0 = os.getloadavg()[0]
    rows = []
    for c in interactive:
        cell = _show_cell(page, c.index)
        found = {}
        for kind, handle in hz.controls(cell):
            if kind == "menu" and handle.evaluate("h => h.options.length") < 2:
                continue
            name = hz.label(handle, kind)
            while name in found:
                name += "'"
            found[name] = (kind, handle)
        hz.reset_stamps(page)
        pixel, before = [], None
        plan = learner_plan(list(found), rounds, seed + c.index, pauses)
        # the pause before each press: the first one's drawn like the others (its own stream, so
        # that the plan is the same as before), then each press's pause is the next one's
        waits = [random.Random(f"{seed} {c.index}").uniform(*pauses)] + [p for _, _, p in plan]
        for (name, forward, _), wait in zip(plan, waits, strict=False):  # (one wait more)
            kind, handle = found[name]
            if hz.disabled(handle):  # ("real tokens" without a padding mask): not a press
                continue
            if not focus_at_press:
                hz.reach(kind, handle)  # the learner reaches the control, then pauses
            page.wait_for_timeout(int(wait * 1000))
            try:
                r = hz.timed_press(page, kind, handle, forward)
            except Exception as exc:  # noqa: BLE001
                print(f"  {notebook.name} / {name}: {exc}", file=sys.stderr)
                continue
            r.update(control=name, kind=kind, after=before, pause=wait)
            pixel.append(r)
            before = name
        page.wait_for_timeout(int(waits[-1] * 1000))
        merged = hz.fetch_stamps(page, pixel)
        load1 = os.getloadavg()[0]
        for name, (kind, _) in found.items():
            mine = [p for p in merged if p.get("control") == name]
            rows.append({"notebook": notebook.name, "cell": c.index, "kind": kind, "slider": name,
                         "presses": mine, "missed": sum(1 for p in mine if "pixels" not in p),
                         "load": (load0, load1), "order": "learner"})
        print(f"  learner's order: {notebook.name} cell {c.index}, {len(merged)} presses",
              file=sys.stderr, flush=True)
    return rows


def run_learner(notebooks, rounds: int = 2, seed: int = 0, python: str = sys.executable,
                pauses: tuple[float, float] = PAUSE_S, setup: str = "",
                focus_at_press: bool = False, app: str = "lab") -> list[dict]:
    """Every control of every notebook in a learner's order, in one JupyterLab (``app``:
    "notebook" for Jupyter Notebook 7)."""
    return hz.each_notebook(notebooks, False, lambda page, server, nb: measure_learner(
        page, server, nb, rounds, seed, pauses, setup, focus_at_press), python=python, app=app)
