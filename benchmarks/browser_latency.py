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
import every_control  # noqa: E402
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


def _pixels(rows: list[dict]) -> list[float]:
    return [v for r in rows if not r.get("error") and r["notebook"] != ls.BASELINE_NAME
            for v in ls.stage_values(r, "to pixels")]


def _cell(values: list[float]) -> str:
    if not values:
        return f"{'-':>7s} {'-':>6s} {'-':>4s}"
    return f"{statistics.median(values):7.1f} {ls.percentile(values, 95):6.1f} {len(values):4d}"


def summary_orders(runs: dict[str, list[dict]]) -> list[str]:
    """Per notebook and overall: median, p95 and presses to changed pixels, one column group per
    run (in a row, a learner's order, before / after)."""
    names = list(runs)
    lines = [f"{'notebook':28s} " + " ".join(f"{n[:20]:>19s}" for n in names),
             f"{'':28s} " + " ".join(f"{'median':>7s} {'p95':>6s} {'n':>4s}" for _ in names)]
    notebooks = sorted({r["notebook"] for rows in runs.values() for r in rows} - {ls.BASELINE_NAME})
    for nb in notebooks:
        cells = [_cell(_pixels([r for r in runs[n] if r["notebook"] == nb])) for n in names]
        loads = [r["load"] for n in names for r in runs[n] if r["notebook"] == nb]
        load = f"{min(a for a, _ in loads):.1f}-{max(b for _, b in loads):.1f}" if loads else ""
        lines.append(f"{nb.removesuffix('.ipynb')[:28]:28s} " + " ".join(cells) + f"  load {load}")
    lines.append(f"{'all presses':28s} " + " ".join(_cell(_pixels(runs[n])) for n in names))
    return lines


def summary_learner(rows: list[dict]) -> list[str]:
    """Per control in a learner's order: median, p95, max to changed pixels, presses, no change,
    and the control pressed before its slowest press."""
    lines = [f"{'notebook / control':52s} {'median':>7s} {'p95':>6s} {'max':>6s} {'n':>3s} "
             f"{'none':>4s}  slowest after"]
    for r in rows:
        px = [(p["pixels"] - p["key"], p.get("after")) for p in r["presses"] if "pixels" in p]
        name = f"{ls.short_name(r)} ({r.get('kind', '?')})"
        if not px:
            lines.append(f"{name[:52]:52s} {'':>7s} {'':>6s} {'':>6s} {0:3d} {r['missed']:4d}")
            continue
        v = [a for a, _ in px]
        slow = max(px, key=lambda t: t[0])
        lines.append(f"{name[:52]:52s} {statistics.median(v):7.1f} {ls.percentile(v, 95):6.1f} "
                     f"{max(v):6.0f} {len(v):3d} {r['missed']:4d}  {slow[1] or '(first)'}")
    return lines


#: ``--variants``: (name, pauses in s, code run in the kernel after Run All, the focus moved to
#: a control only with its key: a press right after the focus entered another cell then waits for
#: JupyterLab's activation of that cell)
VARIANTS = (
    ("pause .25", (0.25, 0.25), "", False),
    ("pause 1.5", (1.5, 1.5), "", False),
    ("no descr.", (0.0, 3.0),
     "from attention_kit.widgets.live_figure import LiveFigure as _L; _L._describe_soon = "
     "lambda self: None", False),
    ("no idle", (0.0, 3.0), "from attention_kit.widgets.idle import IDLE as _I; _I.quiet = 1e9",
     False),
    ("focus+key", (0.0, 3.0), "", True),
)


def _learner_main(args, notebooks) -> list[dict]:
    print(f"every control -> changed pixels in JupyterLab, ms: a learner's order ({args.rounds} "
          f"presses per control, mixed, seed {args.seed}, pauses 0-3 s with the focus on the "
          "next control, from Run All" + (", Jupyter Notebook 7" if args.app == "notebook" else "") + ")"
          + (" and in a row" if args.order == "both" else "")
          + f"; {os.cpu_count()} cores; load average " + "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
          + f" at the start, {time.strftime('%Y-%m-%d %H:%M:%S')}")
    runs: dict[str, list[dict]] = {}
    for nb in notebooks:  # notebook by notebook, so that each run sees the same minutes' load
        if args.compare:
            saved = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = str(args.compare.resolve())  # (the server and its kernels)
            try:
                runs.setdefault("learner, before", []).extend(every_control.run_learner(
                    [nb], args.rounds, args.seed, pauses=args.pauses, app=args.app))
            finally:
                if saved is None:
                    os.environ.pop("PYTHONPATH", None)
                else:
                    os.environ["PYTHONPATH"] = saved
        runs.setdefault("learner" + (", after" if args.compare else ""), []).extend(
            every_control.run_learner([nb], args.rounds, args.seed, pauses=args.pauses, app=args.app))
        for name, pauses, setup, focus_at_press in (VARIANTS if args.variants else ()):
            if args.variant and name not in args.variant:
                continue
            runs.setdefault(name, []).extend(every_control.run_learner(
                [nb], args.rounds, args.seed, pauses=pauses, setup=setup,
                focus_at_press=focus_at_press, app=args.app))
        if args.order == "both":
            runs.setdefault("in a row", []).extend(
                every_control.run([nb], args.presses, baseline=False))
        if args.json:  # what is measured so far, in case the run is cut short
            import json

            args.json.write_text(json.dumps(runs, indent=1))
        print(f"  {time.strftime('%H:%M:%S')} {nb.name} done, load "
              + "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), file=sys.stderr, flush=True)
    for line in summary_orders(runs):
        print("  " + line)
    for name, rows in runs.items():
        if name.startswith("learner"):
            print(f"  per control, {name}:")
            for line in summary_learner(rows):
                print("    " + line)
    print(f"  targets: median <= {TARGET_MEDIAN:.0f} ms, p95 <= {TARGET_P95:.0f} ms; load average "
          + "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()) + " at the end")
    if args.json:
        import json

        args.json.write_text(json.dumps(runs, indent=1))
    return [r for rows in runs.values() for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = ls.common_arguments(__doc__)
    parser.add_argument("--stages", action="store_true", help="also print the stage breakdown")
    parser.add_argument("--first", action="store_true",
                        help="the earlier measurement: only the first --sliders controls of the "
                             "first explorer, timed to the ak-frame's paint")
    parser.add_argument("--order", choices=("row", "learner", "both"), default="row",
                        help="row: each control pressed --presses times in a row (default); "
                             "learner: every control in a mixed, seeded random order with 0-3 s "
                             "pauses, right after Run All; both: the two, per notebook, same run")
    parser.add_argument("--rounds", type=int, default=2,
                        help="learner's order: presses of each control (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="learner's order: the order's seed")
    parser.add_argument("--compare", metavar="DIR", type=Path,
                        help="also run the learner's order with the attention_kit in DIR first on "
                             "the kernel's path (e.g. `git archive main attention_kit | tar -x -C "
                             "DIR`), notebook by notebook in the same run: before / after")
    parser.add_argument("--variants", action="store_true",
                        help="learner's order: also, per notebook in the same run, with fixed "
                             "pauses of 0.25 s and 1.5 s, without the description, and without "
                             "idle work (where the extra time of a press after a pause goes), and "
                             "with the focus moved to each control only with its key")
    parser.add_argument("--app", choices=("lab", "notebook"), default="lab",
                        help="learner's order: in JupyterLab (default) or Jupyter Notebook 7")
    parser.add_argument("--variant", action="append", metavar="NAME",
                        help="with --variants: only this one (repeatable), e.g. 'focus+key'")
    parser.set_defaults(presses=None)  # 6 per control, 20 with --first
    args = parser.parse_args(argv)
    args.presses = args.presses or (20 if args.first else 6)
    args.pauses = every_control.PAUSE_S
    if ls.jlab.find_chromium() is None:
        print("browser_latency: skipped, no Chromium at /usr/bin/chromium "
              "(apt-get install -y chromium)")
        return 0
    if args.quick:  # one short round: two presses (one each way), the first control of each kind
        args.presses, args.rounds, args.pauses = 2, 1, (0.0, 0.3)
        every_control.hz.PER_KIND = 1
        with every_control.hz.quick_notebook() as nb:
            rows = _main(args, [nb])
        failed = every_control.hz.failures(rows)
        for f in failed:
            print(f"FAILED {f}")
        return 1 if failed else 0
    notebooks = args.notebooks or ls.jlab.course_notebooks()
    if not notebooks:
        print("browser_latency: no notebooks")
        return 0
    _main(args, notebooks)
    return 0


def _main(args, notebooks: list[Path]) -> list[dict]:
    """The measurement ``args`` asks for on ``notebooks``, printed; its rows."""
    if args.order != "row" and not args.first:
        return _learner_main(args, notebooks)
    if not args.first:
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
        return rows
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
    return rows


if __name__ == "__main__":
    sys.exit(main())
