"""Median time from a key press on a slider to the new image shown, in a real JupyterLab.

    python benchmarks/browser_latency.py                     # every notebooks/NN_*.ipynb
    python benchmarks/browser_latency.py --presses 30 notebooks/02_self_attention.ipynb

For each notebook: start JupyterLab (127.0.0.1, temporary settings, a copy of the notebook), open
it in the system Chromium (headless, via playwright), run all cells, take the first interactive
section (a widget with an image) and the first of its sliders that redraws the image, then press
ArrowRight / ArrowLeft on that slider's handle ``--presses`` times. Each press is timed in the page:
from the ``keydown`` event to the first animation frame after the widget's ``<img>`` has loaded
the new picture. That covers the round trip browser -> kernel (recompute, matplotlib render to
PNG) -> browser (decode). Presses are spaced so that they do not queue.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import jlab  # noqa: E402

_JS_INSTALL = """
(sel) => {
  const root = document.querySelector(sel);
  window.__lat = {down: null, results: []};
  if (!window.__latKey) {
    window.__latKey = true;
    document.addEventListener('keydown', () => { window.__lat.down = performance.now(); }, true);
  }
  for (const img of root.querySelectorAll('.jupyter-widgets img')) {
    img.addEventListener('load', () => {
      const t0 = window.__lat.down;
      if (t0 === null) return;
      window.__lat.down = null;
      requestAnimationFrame(() => window.__lat.results.push(performance.now() - t0));
    });
  }
}
"""


def _slider_label(handle) -> str:
    box = handle.locator("xpath=ancestor::div[contains(@class, 'widget-slider')][1]")
    try:
        return box.locator(".widget-label").first.inner_text(timeout=1000).strip() or "?"
    except Exception:
        return "?"


def measure(page, server, notebook: Path, presses: int) -> dict:
    jlab.open_notebook(page, server, notebook.name)
    jlab.run_all_cells(page)
    cells = jlab.wait_widgets_rendered(page)
    interactive = [c for c in cells if c.is_interactive]
    if not interactive:
        raise RuntimeError(f"{notebook.name}: no interactive section")
    c = interactive[0]
    cell = jlab.cell_locator(page, c.index)
    cell.scroll_into_view_if_needed()
    # Find the first slider whose key press redraws the image.
    chosen = None
    for handle in cell.locator(".jupyter-widgets [role=slider]").all():
        if not handle.is_visible():
            continue
        before = jlab.image_srcs(cell)
        handle.focus()
        page.keyboard.press("ArrowRight")
        if jlab.wait_image_change(page, cell, before, timeout=3.0) is not None:
            chosen = handle
            page.keyboard.press("ArrowLeft")  # back to where it was
            jlab.wait_image_change(page, cell, jlab.image_srcs(cell), timeout=3.0)
            break
    if chosen is None:
        raise RuntimeError(f"{notebook.name}: no slider in cell {c.index} redraws the image")
    page.wait_for_timeout(500)
    page.evaluate(_JS_INSTALL, jlab.cell_selector(page, c.index))
    chosen.focus()
    missed = 0
    for i in range(presses):
        n = len(page.evaluate("() => window.__lat.results"))
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        t0 = time.monotonic()
        while len(page.evaluate("() => window.__lat.results")) == n:
            if time.monotonic() - t0 > 10:
                missed += 1
                page.evaluate("() => { window.__lat.down = null; }")
                break
            page.wait_for_timeout(10)
        page.wait_for_timeout(250)  # let the kernel go idle: one press at a time
    ms = page.evaluate("() => window.__lat.results")
    return {"notebook": notebook.name, "cell": c.index, "slider": _slider_label(chosen),
            "ms": ms, "missed": missed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--presses", type=int, default=20)
    args = parser.parse_args(argv)
    notebooks = args.notebooks or jlab.course_notebooks()
    chromium = jlab.find_chromium()
    if chromium is None:
        print("browser_latency: skipped, no Chromium at /usr/bin/chromium "
              "(apt-get install -y chromium)")
        return 0
    if not notebooks:
        print("browser_latency: no notebooks")
        return 0
    from playwright.sync_api import sync_playwright

    print(f"key press on a slider -> new image shown in JupyterLab ({args.presses} presses each; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start)")
    rows = []
    with jlab.LabServer(notebooks) as server, sync_playwright() as pw:
        browser = jlab.launch_browser(pw, chromium)
        try:
            for nb in notebooks:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                try:
                    r = measure(page, server, nb, args.presses)
                finally:
                    page.close()
                rows.append(r)
                ms = sorted(r["ms"])
                print(f"  {r['notebook']:<36} cell {r['cell']:>2}, slider {r['slider']!r:<14} "
                      f"median {statistics.median(ms):6.0f} ms  min {ms[0]:5.0f}  "
                      f"p90 {ms[int(0.9 * (len(ms) - 1))]:5.0f}  max {ms[-1]:5.0f}  "
                      f"(n={len(ms)}, missed {r['missed']})")
        finally:
            browser.close()
    every = sorted(x for r in rows for x in r["ms"])
    if every:
        print(f"  {'all':<36} median {statistics.median(every):6.0f} ms over {len(every)} presses "
              f"(load average {os.getloadavg()[0]:.1f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
