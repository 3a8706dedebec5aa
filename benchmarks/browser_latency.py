"""Time from a key press on every control to the new picture, in a real JupyterLab, for every explorer.

    python benchmarks/browser_latency.py                     # every notebooks/NN_*.ipynb, 6 presses per control (~14 min)
    python benchmarks/browser_latency.py --presses 10 notebooks/02_self_attention.ipynb
    python benchmarks/browser_latency.py --stages            # also the per-stage breakdown
    python benchmarks/browser_latency.py --first             # the earlier, first-explorer run

By default (issue 23, ``benchmarks/every_control.py``): for each notebook, start JupyterLab
(127.0.0.1, temporary settings, a copy of the notebook), open it in the system Chromium (headless,
via playwright), run all cells, and drive **every** control of every interactive section (sliders,
menus, checkboxes, buttons, text boxes; a disabled one after the menu or checkbox of its section
that enables it) ``--presses`` times, one press at a time. Each press is timed from the ``keydown``
(or the menu choice) to the first animation frame whose pictures differ, pixel for pixel, from the
ones before the press (a hash of the canvas read in a ``requestAnimationFrame`` loop), so a frame
that draws nothing new does not count; beside it the first ``ak-frame`` event and the kernel's part
(the explorer's callback to the message sent). Printed per control: median, p95, max, full
redraws, presses without a change, the load average before and after. The same run measures the
naive baseline: ``ipywidgets.interact`` drawing a fresh annotated 8 x 8 heatmap with
``plt.show()`` on every change.

``--first`` is the earlier measurement (issue 15): the first interactive section whose controls
redraw its picture and its first ``--sliders`` such controls, from the ``keydown`` to the end of
the first frame painted after the new picture ("painted": a ``LiveFigure``'s "ak-frame", the
baseline's ``<img>`` loaded). The machinery and the per-stage breakdown are in
``benchmarks/latency_stages.py``, the results in ``benchmarks/LATENCY.md``. Targets (issues 15,
23): median <= 50 ms and 95th percentile <= 100 ms for every control. The load average is printed:
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


def _median(values: list[float], width: int) -> str:
    return f"{statistics.median(values):{width}.1f}" if values else f"{'-':>{width}s}"


def summary_every_control(rows: list[dict]) -> list[str]:
    """Per control: key press -> changed pixels (median, p95), the first ak-frame (median), the
    kernel's part (callback -> message sent, median), the pixel probe's own cost per frame
    (median), full redraws, presses, no change, load."""
    lines = [f"{'notebook / control':52s} {'pixels':>7s} {'p95':>6s} {'max':>6s} {'akframe':>7s} "
             f"{'kernel':>6s} {'hash':>5s} {'full':>4s} {'n':>3s} {'none':>4s} {'load':>9s}  target"]
    explorers = []
    for r in rows:
        name = f"{ls.short_name(r)} ({r.get('kind', '?')})"
        if r.get("enabled_by"):
            name += f" [{r['enabled_by']}]"
        if r.get("error"):
            lines.append(f"{name[:52]:52s} not measured: {r['error']}")
            continue
        if r.get("single"):
            lines.append(f"{name[:52]:52s} one entry: nothing to choose")
            continue
        if r.get("disabled"):
            lines.append(f"{name[:52]:52s} disabled: nothing in its cell enables it")
            continue
        px = ls.stage_values(r, "to pixels")
        ak = ls.stage_values(r, "to ak-frame")
        kern = [p["sent"] - p["callback"] for p in r["presses"] if "sent" in p and "callback" in p]
        hashing = [p["hash_ms"] for p in r["presses"] if "hash_ms" in p]
        full = sum(1 for p in r["presses"] if p.get("full"))
        frames = sum(p.get("frames", 0) for p in r["presses"] if "pixels" not in p)
        none = len(r["presses"]) - len(px)
        if not px:
            lines.append(f"{name[:52]:52s} no press changed the pixels ({none} presses, "
                         f"{frames} frames drawn)")
            continue
        med, p95 = statistics.median(px), ls.percentile(px, 95)
        baseline = r["notebook"] == ls.BASELINE_NAME
        ok = "" if baseline else ("ok" if med <= TARGET_MEDIAN and p95 <= TARGET_P95 else "MISSED")
        if not baseline:
            explorers += px
        lines.append(f"{name[:52]:52s} {med:7.1f} {p95:6.1f} {max(px):6.0f} {_median(ak, 7)} "
                     f"{_median(kern, 6)} {_median(hashing, 5)} {full:4d} {len(px):3d} {none:4d} "
                     f"{r['load'][0]:4.1f}-{r['load'][1]:<4.1f}  {ok}")
    if explorers:
        lines.append(f"{'all explorer presses':52s} {statistics.median(explorers):7.1f} "
                     f"{ls.percentile(explorers, 95):6.1f} {max(explorers):6.0f} {'':7s} {'':6s} "
                     f"{'':5s} {'':4s} {len(explorers):3d}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = ls.common_arguments(__doc__)
    parser.add_argument("--stages", action="store_true", help="also print the stage breakdown")
    parser.add_argument("--first", action="store_true",
                        help="the earlier measurement: only the first --sliders controls of the "
                             "first explorer, timed to the ak-frame's paint")
    parser.set_defaults(presses=None)  # 6 per control, 20 with --first
    args = parser.parse_args(argv)
    args.presses = args.presses or (20 if args.first else 6)
    notebooks = args.notebooks or ls.jlab.course_notebooks()
    if ls.jlab.find_chromium() is None:
        print("browser_latency: skipped, no Chromium at /usr/bin/chromium "
              "(apt-get install -y chromium)")
        return 0
    if not notebooks:
        print("browser_latency: no notebooks")
        return 0
    if not args.first:
        import every_control

        print(f"every control -> changed pixels in JupyterLab, ms ({args.presses} presses per "
              f"control; {os.cpu_count()} cores; load average "
              + "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
              + f" at the start, {time.strftime('%Y-%m-%d %H:%M:%S')})")
        rows = every_control.run(notebooks, args.presses, baseline=not args.no_baseline)
        for line in summary_every_control(rows):
            print("  " + line)
        print(f"  targets: median <= {TARGET_MEDIAN:.0f} ms, p95 <= {TARGET_P95:.0f} ms per control; "
              "load average " + "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()) + " at the end")
        if args.stages:
            ls.print_stages(rows)
        if args.json:
            import json

            args.json.write_text(json.dumps(rows, indent=1))
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
