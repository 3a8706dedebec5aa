"""Time from a key press on a slider to the new picture, in a real JupyterLab, for every explorer.

    python benchmarks/browser_latency.py                     # every notebooks/NN_*.ipynb
    python benchmarks/browser_latency.py --presses 30 notebooks/02_self_attention.ipynb
    python benchmarks/browser_latency.py --stages            # also the per-stage breakdown

For each notebook: start JupyterLab (127.0.0.1, temporary settings, a copy of the notebook), open
it in the system Chromium (headless, via playwright), run all cells, take the first interactive
section whose controls redraw its picture, and its first ``--sliders`` such controls (sliders; for
a widget without them, menus, then buttons), then move each ``--presses`` times, one press at a
time: ArrowRight / ArrowLeft on a slider, the next / previous entry of a menu, Enter on a button.
The same run measures the naive baseline: ``ipywidgets.interact`` drawing a fresh annotated 8 x 8
heatmap with ``plt.show()`` on every change.

Each press is timed in the page, from the ``keydown`` event (or the menu choice) to the end of the
first frame painted after the new picture is on the page ("painted"): a ``LiveFigure``'s canvas
drawn (its "ak-frame" event), or the baseline's ``<img>`` loaded; "frame" is the start of that
frame. That covers the round trip browser -> kernel (recompute, drawing commands) -> browser
(draw, paint). The machinery and the per-stage breakdown are in ``benchmarks/latency_stages.py``,
the results in ``benchmarks/LATENCY.md``. Targets (issue 15): median <= 50 ms and 95th percentile
<= 100 ms for every explorer. The load average is printed beside every row:
the machine's other work stretches every stage.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import latency_stages as ls  # noqa: E402

TARGET_MEDIAN, TARGET_P95 = 50.0, 100.0


def summary(rows: list[dict]) -> list[str]:
    lines = [f"{'notebook / slider':40s} {'median':>7s} {'p95':>6s} {'min':>5s} {'max':>6s} "
             f"{'frame med':>9s} {'n':>3s} {'miss':>4s} {'load':>9s}  target"]
    explorers = []
    for r in rows:
        if r.get("error"):
            lines.append(f"{ls.short_name(r)[:40]:40s} not measured: {r['error']}")
            continue
        total = ls.stage_values(r, "total")
        frame = ls.stage_values(r, "to frame")
        if not total:
            lines.append(f"{ls.short_name(r)[:40]:40s} no press reached a new picture "
                         f"(missed {r['missed']})")
            continue
        med, p95 = statistics.median(total), ls.percentile(total, 95)
        baseline = r["notebook"] == ls.BASELINE_NAME
        ok = "" if baseline else ("ok" if med <= TARGET_MEDIAN and p95 <= TARGET_P95 else "MISSED")
        if not baseline:
            explorers += total
        lines.append(f"{ls.short_name(r)[:40]:40s} {med:7.1f} {p95:6.1f} {min(total):5.0f} "
                     f"{max(total):6.0f} {statistics.median(frame):9.1f} {len(total):3d} "
                     f"{r['missed']:4d} {r['load'][0]:4.1f}-{r['load'][1]:<4.1f}  {ok}")
    if explorers:
        lines.append(f"{'all explorer presses':40s} {statistics.median(explorers):7.1f} "
                     f"{ls.percentile(explorers, 95):6.1f} {min(explorers):5.0f} "
                     f"{max(explorers):6.0f} {'':9s} {len(explorers):3d}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = ls.common_arguments(__doc__)
    parser.add_argument("--stages", action="store_true", help="also print the stage breakdown")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or ls.jlab.course_notebooks()
    if ls.jlab.find_chromium() is None:
        print("browser_latency: skipped, no Chromium at /usr/bin/chromium "
              "(apt-get install -y chromium)")
        return 0
    if not notebooks:
        print("browser_latency: no notebooks")
        return 0
    print(f"key press on a slider -> new picture painted in JupyterLab, ms ({args.presses} presses "
          f"per slider; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')})")
    rows = ls.run(notebooks, args.presses, args.sliders, baseline=not args.no_baseline,
                  bursts=args.bursts)
    for line in summary(rows):
        print("  " + line)
    print(f"  targets: median <= {TARGET_MEDIAN:.0f} ms, p95 <= {TARGET_P95:.0f} ms per explorer "
          f"slider; load average {os.getloadavg()[0]:.1f} at the end")
    if args.stages:
        ls.print_stages(rows)
    ls.print_bursts(rows)
    if args.json:
        import json

        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
