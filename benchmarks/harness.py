"""The browser benchmarks' one harness: one loop over notebooks, one way to press each control.

``every_control.py`` (every control of every explorer, in a row or in a learner's order) and
``latency_stages.py`` (one press split into stages) both use it:

* :func:`each_notebook`: one JupyterLab (127.0.0.1, throw-away settings, copies of the notebooks)
  and one headless Chromium for all the notebooks (and the ``interact`` baseline), a fresh page
  for each, its kernel shut down after it;
* :func:`open_sections`: open a notebook, Run All, wait for its widgets, the interactive cells;
* :func:`controls` and :func:`press`: every control of a cell and the one way to press it (a
  slider's ArrowRight / ArrowLeft, a menu's next / previous entry, a checkbox's Space, a button's
  Enter, a text box's new text and Enter); :func:`enable` / :func:`restore` for a control that a
  menu or checkbox of its cell enables (``presses.py``);
* :func:`install_probes` and :func:`timed_press`: the stamps of one press on both sides (the page's
  ``keydown``, message sent and received, the first ``ak-frame`` and the first frame whose pixels
  changed; the kernel's comm arrival and the stages of ``LiveFigure.trace``), merged per press
  (``stamps.py``).

This module is the loop; it hands on the names of ``presses.py`` and ``stamps.py``, so a benchmark
imports the one harness.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import jlab  # noqa: E402
import presses  # noqa: E402
from latency_probes import KERNEL_FETCH, KERNEL_RESET  # noqa: E402,F401  (handed on)
from presses import (  # noqa: E402,F401  (handed on)
    KINDS,
    disabled,
    enable,
    label,
    press,
    reach,
    restore,
    undo_first,
)
from stamps import (  # noqa: E402,F401  (handed on)
    STAGES,
    attach_kernel,
    fetch_stamps,
    install_probes,
    kernel_execute,
    merge,
    percentile,
    reset_stamps,
    stage_values,
    timed_press,
)

BASELINE_NAME = "00_interact_baseline.ipynb"
BASELINE_CELLS = [
    """\
%matplotlib inline
import numpy as np
import matplotlib.pyplot as plt
from ipywidgets import interact, FloatSlider
import attention_kit as ak
from attention_kit.plotting import heatmap

rng = np.random.default_rng(0)
tokens = "the cat sat on the mat and purred".split()
X2 = rng.normal(0, 1, (8, 2))  # 8 tokens in 2-D""",
    """\
def naive(v=0.0):
    X = X2.copy()
    X[0, 0] = v
    _, W = ak.self_attention(X, np.eye(2), np.eye(2), np.eye(2))  # (8, 8)
    fig, ax = plt.subplots(figsize=(6, 5), layout="constrained")
    heatmap(W, query_labels=tokens, key_labels=tokens, ax=ax, title="self-attention weights")
    plt.show()

interact(naive, v=FloatSlider(value=0.0, min=-2, max=2, step=0.05));""",
]

# --quick (make bench-quick): a scratch notebook with two small explorers instead of the course's
# notebooks; between them every kind of control (sliders, menus, a checkbox, buttons, text boxes)
QUICK_NAME = "00_quick_explorers.ipynb"
QUICK_CELLS = [
    "from attention_kit.widgets import AttentionExplorer, TilingStepper",
    """AttentionExplorer(q=[1.0, 0.4], K=[[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]],
                  V=[[1.5, -0.6], [-0.4, 1.5], [-1.2, -0.5]], key_labels=["k1", "k2", "k3"],
                  score="dot", align="hard")""",
    "TilingStepper(n=6, block_q=3, block_k=3, step=2)",
]
#: --quick: only the first PER_KIND controls of each kind in a cell (None: every control)
PER_KIND: int | None = None


def controls(cell) -> list[tuple[str, object]]:
    """Every visible control of ``cell`` (presses.controls), or the first PER_KIND of each kind."""
    found = presses.controls(cell)
    if PER_KIND is None:
        return found
    return [(k, h) for i, (k, h) in enumerate(found) if [k2 for k2, _ in found[:i]].count(k) < PER_KIND]


def _write(directory: Path, name: str, cells: list[str]) -> Path:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                     "outputs": [], "source": src} for i, src in enumerate(cells)],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = directory / name
    path.write_text(json.dumps(nb, indent=1))
    return path


def write_baseline(directory: Path) -> Path:
    """The naive interact notebook (two code cells) in ``directory``."""
    return _write(directory, BASELINE_NAME, BASELINE_CELLS)


@contextlib.contextmanager
def quick_notebook():
    """The --quick scratch notebook, in a temporary folder for as long as the block runs."""
    with tempfile.TemporaryDirectory(prefix="attn-quick-") as tmp:
        yield _write(Path(tmp), QUICK_NAME, QUICK_CELLS)


def failures(rows: list[dict], done_only: bool = False) -> list[str]:
    """What makes a --quick run fail (never a figure): a notebook or a control that raised, a control
    none of whose presses changed the picture. A menu of one entry, a control that stays disabled
    and a control without presses (the learner's order skipped it) are listed, not failures.
    ``done_only``: a row's presses are only those that reached a picture (latency_stages.py)."""
    out = []
    for r in rows:
        name = f"{r['notebook']} / {r['slider']}"
        tried = len(r["presses"]) + (r.get("missed", 0) if done_only else 0)
        if r.get("error"):
            out.append(f"{name}: {r['error'][:200]}")
        elif tried and r.get("missed", 0) >= tried:
            out.append(f"{name}: none of its {tried} presses changed the picture")
    return out


def each_notebook(notebooks: list[Path], baseline: bool, measure_one,
                  python: str = sys.executable, app: str = "lab") -> list[dict]:
    """The loop both benchmarks share: one JupyterLab and one Chromium for all the notebooks (and
    the interact baseline, written to a temporary folder); for each, a fresh page and
    ``measure_one(page, server, notebook)``'s rows, or one row with the error; then its kernel
    is shut down. ``python``: the environment JupyterLab and its kernels run in (another
    checkout's ``.venv/bin/python`` measures that checkout's attention_kit)."""
    from playwright.sync_api import sync_playwright

    chromium = jlab.find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium at /usr/bin/chromium (apt-get install -y chromium)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="attn-latency-") as tmp:
        extra = [write_baseline(Path(tmp))] if baseline else []
        with jlab.LabServer(list(notebooks) + extra, python=python, app=app) as server, \
                sync_playwright() as pw:
            browser = jlab.launch_browser(pw, chromium)
            try:
                for nb in list(notebooks) + extra:
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    try:
                        rows += measure_one(page, server, nb)
                    except Exception as exc:  # noqa: BLE001 (a notebook that fails is reported)
                        rows.append({"notebook": nb.name, "slider": "-", "presses": [],
                                     "missed": 0, "load": (os.getloadavg()[0],) * 2,
                                     "error": str(exc)})
                    finally:
                        page.close()
                    server.shutdown_kernels()
            finally:
                browser.close()
    return rows


def short_name(row: dict) -> str:
    nb = row["notebook"].removesuffix(".ipynb")
    return ("interact baseline" if row["notebook"] == BASELINE_NAME else nb[:18]) + \
        f" / {row['slider']}"


def open_sections(page, server, notebook: Path) -> list:
    """Open ``notebook``, Run All, wait for its widgets; its interactive cells (a widget with a
    picture; for the baseline, its widget)."""
    jlab.open_notebook(page, server, notebook.name)
    jlab.run_all_cells(page)
    cells = jlab.wait_widgets_rendered(page)
    interactive = [c for c in cells if c.is_interactive or (
        notebook.name == BASELINE_NAME and c.widget_outputs)]
    if not interactive:
        raise RuntimeError(f"{notebook.name}: no interactive section")
    return interactive
