"""Where the time of one slider press goes, stage by stage, in a real JupyterLab.

    python benchmarks/latency_stages.py                      # every notebooks/NN_*.ipynb
    python benchmarks/latency_stages.py --presses 30 --sliders 1 notebooks/02_self_attention.ipynb

For each notebook: start JupyterLab (127.0.0.1, throw-away settings, a copy of the notebook) and a
scratch notebook with the naive ``interact`` baseline (a fresh annotated 8 x 8 heatmap and
``plt.show()`` per change), open each in the system Chromium (headless, via playwright), run all
cells, take the first interactive section (a widget with a picture) and its first ``--sliders``
enabled sliders that redraw the picture, then press ArrowRight / ArrowLeft on each ``--presses``
times, one press at a time (the kernel goes idle in between).

Every press is stamped on both sides with the same clock (ms since the epoch: ``time.time()`` in
the kernel, ``performance.timeOrigin + performance.now()`` in the page; one machine):

=============  ============================================================================
stage          from -> to
=============  ============================================================================
key -> send    ``keydown`` -> the widget's ``comm_msg`` leaves the page (slider + model)
to kernel      that message sent -> the kernel's shell handler gets it (server, zmq)
dispatch       shell handler -> the explorer's callback starts (set_state, traitlets)
compute        callback -> new state computed (``_compute``)
artists        state -> artists updated (``_draw``)
render         artists -> the picture prepared: a ``LiveFigure`` records its moving artists as
               canvas drawing commands (and renders its background with Agg when that changed)
encode         -> the bytes to send: JSON of the commands (+ the background's PNG when new)
send back      -> the ``LiveFigure``'s state set and its ``comm_msg`` handed to the iopub thread
to page        kernel sent -> the page's kernel connection receives it (iopub, server, ws)
to picture     received -> the picture is set: a ``LiveFigure``'s ``<canvas>`` has been drawn
               (its "ak-frame" event), an ``<img>`` (the baseline) has its new ``src``
decode         new ``src`` -> the ``<img>`` ``load`` event (0 for a canvas: nothing to decode)
frame          drawn / loaded -> the next animation frame (the picture is painted in this frame)
paint          that frame's callbacks -> its style, layout and paint are done
round trip     the widget's message sent -> the new picture's message received
to frame       ``keydown`` -> that animation frame (the total of the first measurement)
total          ``keydown`` -> the frame painted (what benchmarks/browser_latency.py reports)
=============  ============================================================================

The kernel stamps come from ``LiveFigure.trace`` (attention_kit/widgets/live_figure.py) and a
wrapper around the kernel's ``comm_msg`` handler, both switched on only here. The naive baseline
has no kernel stamps (its rows show only the browser stages). Medians per stage, with the
machine's load average: on a busy machine every stage stretches.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402  (the shared loop, presses and stamps)
    BASELINE_NAME,
    KERNEL_FETCH,
    KERNEL_RESET,
    STAGES,
    attach_kernel,
    each_notebook,
    failures,
    install_probes,
    jlab,
    kernel_execute,
    open_sections,
    percentile,
    press,
    quick_notebook,
    short_name,
    stage_values,
)

BURST_SIZE, BURST_EVERY_MS = 10, 30  # a held arrow key repeats about every 30 ms

def _control_label(handle) -> str:
    """A control's name as the page shows it: a slider's or menu's label, a button's text."""
    try:
        if handle.evaluate("h => h.tagName") == "BUTTON":
            return handle.inner_text(timeout=1000).strip() or "?"
        box = handle.locator("xpath=ancestor::div[contains(@class, 'widget-inline-hbox')][1]")
        return box.locator(".widget-label").first.inner_text(timeout=1000).strip() or "?"
    except Exception:
        return "?"


#: The controls tried, in order (each pressed by harness.press: a slider's arrow keys, a menu's
#: next / previous entry, a button's Enter, e.g. the trainer's Step).
CONTROLS = ((".jupyter-widgets [role=slider]", "slider"), (".jupyter-widgets select", "menu"),
            (".jupyter-widgets button", "button"))


def _act(page, handle, key: tuple[str, bool]) -> None:
    """One press of a control: ``key`` is (kind, forward)."""
    press(page, key[0], handle, key[1])


def _redrawing_controls(page, cell, limit: int) -> list:
    """The first ``limit`` enabled, visible controls whose key press changes the picture: sliders
    first; menus, then buttons, for a widget without sliders that redraw it (05, 06)."""
    chosen = []
    for selector, kind in CONTROLS:
        right, left = (kind, True), (kind, False)
        for handle in cell.locator(selector).all():
            if len(chosen) >= limit:
                return chosen
            if not handle.is_visible() or handle.evaluate(
                    "h => !!h.closest('[disabled]') || !!h.disabled"):
                continue
            first, back = right, left  # (press turns at either end of a range or a menu)
            if kind == "menu" and handle.evaluate("h => h.options.length") < 2:
                continue
            before = jlab.image_srcs(cell)
            _act(page, handle, first)
            if jlab.wait_image_change(page, cell, before, timeout=3.0) is not None:
                chosen.append((handle, first, back))
                _act(page, handle, back)  # back to where it was (a button: one more step)
                jlab.wait_image_change(page, cell, jlab.image_srcs(cell), timeout=3.0)
        if chosen:  # sliders that redraw: menus and buttons are not needed
            return chosen
    return chosen


def _press(page, handle, keys: tuple[tuple, tuple], presses: int, gap_ms: int) -> tuple[list, int]:
    """Press the keys alternately; the stamps of each press that reached a new picture."""
    page.evaluate("() => { window.__st.done = []; window.__st.cur = null; }")
    handle.focus()
    missed = 0
    for i in range(presses):
        _act(page, handle, keys[i % 2])
        try:
            page.wait_for_function("n => window.__st.done.length > n", arg=i - missed,
                                   polling=20, timeout=10_000)
        except Exception:
            missed += 1
            page.evaluate("() => { window.__st.cur = null; }")
        page.wait_for_timeout(gap_ms)  # let the kernel go idle: one press at a time
    return page.evaluate("() => window.__st.done"), missed


def _bursts(page, handle, keys: tuple[tuple, tuple], bursts: int, size: int, every_ms: int,
            settle_ms: int = 1500) -> list[dict]:
    """Bursts of ``size`` presses ``every_ms`` apart (a held key, a quick drag): how many pictures
    the kernel drew, and the time from the last key press to the last picture painted."""
    out = []
    handle.focus()
    for b in range(bursts):
        kernel_execute(page, KERNEL_RESET)
        page.evaluate("() => { window.__st.keys = []; window.__st.painted = []; }")
        for _ in range(size):
            _act(page, handle, keys[b % 2])
            page.wait_for_timeout(every_ms)
        page.wait_for_timeout(settle_ms)  # the last picture has long arrived by then
        st = page.evaluate("() => ({keys: window.__st.keys, painted: window.__st.painted})")
        fetched = json.loads(ast.literal_eval(kernel_execute(page, "", KERNEL_FETCH)))
        last = st["keys"][-1] if st["keys"] else None
        after = [t for t in st["painted"] if last is not None and t >= last]
        out.append({"presses": len(st["keys"]), "pictures": len(st["painted"]),
                    "kernel_pictures": len(fetched["trace"]),
                    "last_key_to_picture": (after[-1] - last) if after else None})
    return out


TRACE_EVENTS = ("EventDispatch", "FunctionCall", "TimerFire", "UpdateLayoutTree", "Layout",
                "PrePaint", "Paint", "Layerize", "Commit", "Decode Image", "ImageDecodeTask",
                "Decode LazyPixelRef", "RasterTask", "HitTest", "ParseHTML")


def summarize_trace(raw: bytes, presses: int) -> dict[str, tuple[float, float]]:
    """Per press: ms spent in each kind of Chromium event, on the page's main thread and on other
    threads of the renderer (raster, image decoding), from a performance trace."""
    events = json.loads(raw)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M"
            and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    out: dict[str, list[float]] = {}
    for e in events:
        if e.get("ph") != "X" or e.get("name") not in TRACE_EVENTS:
            continue
        where = 0 if (e["pid"], e["tid"]) in main else 1
        out.setdefault(e["name"], [0.0, 0.0])[where] += e.get("dur", 0) / 1000.0
    return {k: (v[0] / presses, v[1] / presses) for k, v in out.items()}


def measure(page, server, notebook: Path, presses: int, sliders: int, gap_ms: int = 250,
            trace: bool = False, bursts: int = 0) -> list[dict]:
    """One row per slider: its label, the stamps of every press, misses, load averages (and,
    with ``trace``, a Chromium trace summary of the first slider's presses)."""
    interactive = open_sections(page, server, notebook)
    for c in interactive:  # the first section with a control that redraws its picture
        cell = jlab.cell_locator(page, c.index)
        cell.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        chosen = _redrawing_controls(page, cell, sliders)
        if chosen:
            break
    else:
        raise RuntimeError(f"{notebook.name}: no control in cells {[c.index for c in interactive]} "
                           "redraws the picture")
    install_probes(page, c.index)
    page.wait_for_timeout(500)
    rows = []
    for handle, first, back in chosen:
        kernel_execute(page, KERNEL_RESET)
        load = os.getloadavg()[0]
        tracing = trace and not rows
        if tracing:
            page.context.browser.start_tracing(page=page, categories=[
                "devtools.timeline", "disabled-by-default-devtools.timeline"])
        done, missed = _press(page, handle, (first, back), presses, gap_ms)
        summary = summarize_trace(page.context.browser.stop_tracing(), presses) if tracing else None
        fetched = json.loads(ast.literal_eval(kernel_execute(page, "", KERNEL_FETCH)))
        attach_kernel(done, fetched["trace"], fetched["arrivals"])
        held = first[0] != "menu"  # a menu has no held key
        burst = _bursts(page, handle, (first, back), bursts, BURST_SIZE, BURST_EVERY_MS) \
            if bursts and not rows and held else None
        rows.append({"notebook": notebook.name, "cell": c.index, "slider": _control_label(handle),
                     "presses": done, "missed": missed,
                     "load": (load, os.getloadavg()[0]), "trace": summary, "bursts": burst})
    return rows


def run(notebooks: list[Path], presses: int, sliders: int, baseline: bool = True,
        gap_ms: int = 250, trace: bool = False, bursts: int = 0) -> list[dict]:
    """Measure every notebook (and the interact baseline) in one JupyterLab; rows as measure()."""
    return each_notebook(notebooks, baseline, lambda page, server, nb: measure(
        page, server, nb, presses, 1 if nb.name == BASELINE_NAME else sliders, gap_ms, trace, bursts))


def print_stages(rows: list[dict]) -> None:
    names = [n for n, _, _ in STAGES]
    print("median ms per stage (a blank: no stamp for that stage, e.g. the baseline's kernel)")
    head = f"{'notebook / slider':34s} " + " ".join(f"{n[:9]:>9s}" for n in names) + \
        f" {'p95':>6s} {'KB':>5s} {'full':>4s} {'load':>9s}"
    print(head)
    for r in rows:
        if r.get("error"):
            print(f"{short_name(r)[:34]:34s} not measured: {r['error']}")
            continue
        cells = []
        for n in names:
            v = stage_values(r, n)
            cells.append(f"{statistics.median(v):9.1f}" if v else f"{'':9s}")
        total = stage_values(r, "total")
        kb = [p["bytes"] / 1024 for p in r["presses"] if "bytes" in p]
        full = sum(1 for p in r["presses"] if p.get("full"))
        print(f"{short_name(r)[:34]:34s} " + " ".join(cells)
              + f" {percentile(total, 95):6.0f} {statistics.median(kb) if kb else 0:5.0f}"
              + f" {full:4d} {r['load'][0]:4.1f}-{r['load'][1]:<4.1f}")


def print_traces(rows: list[dict]) -> None:
    traced = [r for r in rows if r.get("trace")]
    if not traced:
        return
    names = [n for n in TRACE_EVENTS if any(n in r["trace"] for r in traced)]
    print("Chromium trace, ms per press on the page's main thread (+ other renderer threads)")
    print(f"{'notebook / slider':34s} " + " ".join(f"{n[:14]:>14s}" for n in names))
    for r in traced:
        cells = [r["trace"].get(n, (0.0, 0.0)) for n in names]
        print(f"{short_name(r)[:34]:34s} " + " ".join(f"{a:7.1f} +{b:5.1f}" for a, b in cells))


def print_bursts(rows: list[dict]) -> None:
    rows = [r for r in rows if r.get("bursts")]
    if not rows:
        return
    print(f"bursts of {BURST_SIZE} presses {BURST_EVERY_MS} ms apart (first slider): pictures "
          "drawn per burst, ms from the last press to the last picture painted")
    for r in rows:
        lat = [b["last_key_to_picture"] for b in r["bursts"] if b["last_key_to_picture"] is not None]
        pics = [b["pictures"] for b in r["bursts"]]
        print(f"  {short_name(r)[:34]:34s} pictures {statistics.median(pics):4.0f} of "
              f"{BURST_SIZE}  last press -> picture median "
              + (f"{statistics.median(lat):6.1f} max {max(lat):6.1f}" if lat else "-")
              + f"  (n={len(r['bursts'])})")


def common_arguments(doc: str) -> argparse.ArgumentParser:
    """The options this script and browser_latency.py share."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--sliders", type=int, default=2,
                        help="enabled sliders measured per explorer (default 2)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the interact baseline")
    parser.add_argument("--bursts", type=int, default=0,
                        help=f"also time this many bursts of {BURST_SIZE} quick presses (a held key)")
    parser.add_argument("--json", type=Path, help="also write every stamp to this file")
    parser.add_argument("--quick", action="store_true",
                        help="one short round (make bench-quick): a scratch notebook of two small "
                             "explorers and the baseline, two presses; exit 1 when a notebook or a "
                             "control fails or a control never redraws (no figure is asserted)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = common_arguments(__doc__)
    parser.add_argument("--trace", action="store_true",
                        help="also record a Chromium trace of each first slider's presses "
                             "(tracing slows those presses down)")
    args = parser.parse_args(argv)
    if jlab.find_chromium() is None:
        print("latency_stages: skipped, no Chromium at /usr/bin/chromium")
        return 0
    if args.quick:
        args.presses, args.sliders = 2, 1
        with quick_notebook() as nb:
            rows = _main(args, [nb])
        failed = failures(rows, done_only=True)
        for f in failed:
            print(f"FAILED {f}")
        return 1 if failed else 0
    _main(args, args.notebooks or jlab.course_notebooks())
    return 0


def _main(args, notebooks: list[Path]) -> list[dict]:
    print(f"slider key press -> new picture, stage by stage ({args.presses} presses per slider; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start, "
          f"{time.strftime('%H:%M:%S')})")
    rows = run(notebooks, args.presses, args.sliders, baseline=not args.no_baseline,
               trace=args.trace, bursts=args.bursts)
    print_stages(rows)
    print_traces(rows)
    print_bursts(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return rows


if __name__ == "__main__":
    sys.exit(main())
