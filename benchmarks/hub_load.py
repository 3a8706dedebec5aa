"""A class on one machine: N learners on the course's JupyterHub at the same time (issue 48).

    python benchmarks/hub_load.py                          # N = 1, 10, 20, 30, one browser learner
    python benchmarks/hub_load.py --learners 1,10 --browsers 2 --presses 12
    python benchmarks/hub_load.py --quick                  # N = 2, one browser, a few presses

For each N, a fresh hub (``hub/hubctl.py``: configurable-http-proxy and JupyterHub on 127.0.0.1,
the learners' servers in the course's ``.venv``) and N learners who all at once:

1. log in and get their single-user server (the hub's REST API starts N servers at once; the
   browser learners log in through the hub's login page);
2. open notebooks 02 and 04 (a kernel each) and Run All in each (every code cell sent at once, as
   JupyterLab's Run All does);
3. press the explorers' controls in a learner's order (``every_control.learner_plan``: seeded,
   mixed across controls, a pause drawn from 0-3 s before each press), ``--presses`` presses per
   notebook.

``--browsers`` of them are real browsers (headless Chromium through playwright, every control of
every explorer in a learner's order, ``every_control.measure_learner``): a press is timed from the
key to the first frame whose pixels changed. The others drive the same comm messages without a
browser, through the proxy: a kernel websocket (``/user/<name>/api/kernels/<id>/channels``) per
notebook, a control's ``comm_msg`` update as the page sends it, timed from the send to the first
new picture (a LiveFigure ``frame``) the kernel sends back for it.

Reported per N: press latency (median, p95) of each kind of learner, presses whose picture did not
change, errors (a cell that failed in Run All, a press without an answer within 10 s, a server or
kernel that did not start), the kernels' memory (RSS) per learner after Run All and at the end,
the machine's CPU use during the presses, and the load average (``uptime``) before and after. The
machine is shared with other work: every figure is labelled with the load it was measured under.
Nothing here is asserted: a benchmark reports. Loopback only; bounded by ``--max-seconds`` per N.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hub"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import every_control  # noqa: E402
from hub_comm import NOTEBOOKS, comm_learner  # noqa: E402
from hubctl import Hub  # noqa: E402

TARGET_MEDIAN, TARGET_P95 = 50.0, 100.0


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    pos = (len(xs) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except OSError:
        return "load average: {:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg())


# -- learners in a real browser -----------------------------------------------------------------
class _UserServer:
    """What every_control's helpers need of a server: its base URL and a notebook's lab URL."""

    def __init__(self, base: str):
        self.base = base

    def lab_url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?reset"


def browser_learners(hub: Hub, names: list[str], rounds: int, seed: int,
                     start: threading.Event, results: dict) -> None:
    """Each name in its own page of one headless Chromium: log in through the hub's form, then
    every control of 02 and 04 in a learner's order (every_control.measure_learner)."""
    import jlab
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = jlab.launch_browser(pw, jlab.find_chromium())
        try:
            start.wait()
            for name in names:
                res = results[name]
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                try:
                    page.goto(f"{hub.url}/hub/login")
                    page.fill("input[name=username]", name)
                    page.fill("input[name=password]", hub.password)
                    page.click("input[type=submit], button[type=submit]")
                    page.wait_for_url(f"{hub.user_url(name)}/**", timeout=180_000)
                    server = _UserServer(hub.user_url(name))
                    for nb in NOTEBOOKS:
                        # straight to the notebook's address (a busy JupyterLab's file browser
                        # can be slow to take a double click); the other notebook's kernel runs on
                        page.goto("about:blank")
                        rows = every_control.measure_learner(page, server, Path(nb), rounds, seed)
                        for row in rows:
                            for p in row["presses"]:
                                if "pixels" in p and "key" in p:
                                    res["ms"].append(p["pixels"] - p["key"])
                                else:
                                    res["unchanged"] += 1
                        res["errors"] += [f"{nb} cell {c.index}: {e}" for c in jlab.cells(page)
                                          if not c.expects_error for e in c.errors]
                except Exception as exc:  # noqa: BLE001
                    res["errors"].append(f"{name} (browser): {type(exc).__name__}: {str(exc)[:200]}")
                finally:
                    page.close()
        finally:
            browser.close()


# -- memory and CPU ---------------------------------------------------------------------------
def kernels_rss(hub: Hub) -> dict[str, float]:
    """MB of resident memory of each learner's kernels (the processes below their server)."""
    homes = str(hub.state / "homes") + os.sep
    out: dict[str, float] = {}
    for p in psutil.process_iter(["cwd", "cmdline"]):
        try:
            cwd = p.info["cwd"] or ""
            if cwd.startswith(homes) and any("ipykernel" in a for a in p.info["cmdline"] or []):
                name = cwd[len(homes):].split(os.sep)[0]
                out[name] = out.get(name, 0.0) + p.memory_info().rss / 2**20
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def class_cpu_seconds(hub: Hub, seen: dict) -> float:
    """CPU seconds (user + system) the class's processes (learners' servers and kernels, below
    their homes) used since ``seen`` was last updated; ``seen`` keeps each process's total."""
    homes = str(hub.state / "homes") + os.sep
    used = 0.0
    for p in psutil.process_iter(["cwd", "cpu_times"]):
        try:
            if (p.info["cwd"] or "").startswith(homes):
                t = p.info["cpu_times"].user + p.info["cpu_times"].system
                key = (p.pid, p.create_time())
                used += t - seen.get(key, 0.0)
                seen[key] = t
        except (psutil.NoSuchProcess, psutil.AccessDenied, TypeError):
            continue
    return used


def servers_rss(hub: Hub) -> float:
    homes = str(hub.state / "homes") + os.sep
    total, n = 0.0, 0
    for p in psutil.process_iter(["cwd", "cmdline"]):
        try:
            if (p.info["cwd"] or "").startswith(homes) and any(
                    "jupyterhub-singleuser" in a for a in p.info["cmdline"] or []):
                total += p.memory_info().rss / 2**20
                n += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total / n if n else 0.0


def one_class(n: int, browsers: int, presses: int, rounds: int, seed: int, max_seconds: float,
              state: Path) -> dict:
    names = [f"learner{i:02d}" for i in range(n)]
    in_browser = names[:browsers]
    results = {name: {"ms": [], "unchanged": 0, "errors": []} for name in names}
    out = {"n": n, "browsers": len(in_browser), "uptime_before": uptime()}
    t0 = time.perf_counter()
    with Hub(state, expose_app=True, remove_state=True) as hub:
        tokens = {name: hub.add_learner(name) for name in names}

        async def main() -> None:
            # every server at once, as a class arriving
            starts = [asyncio.to_thread(hub.start_server, name) for name in names]
            done = await asyncio.gather(*starts, return_exceptions=True)
            for name, d in zip(names, done, strict=True):
                if isinstance(d, Exception):
                    results[name]["errors"].append(f"{name}: server: {d}")
            out["servers_s"] = time.perf_counter() - t0
            go = asyncio.Event()
            thread_go = threading.Event()
            thread = None
            if in_browser:
                thread = threading.Thread(target=browser_learners, args=(
                    hub, in_browser, rounds, seed, thread_go, results), daemon=True)
                thread.start()
            tasks = [asyncio.ensure_future(comm_learner(hub, name, tokens[name], presses,
                                                        seed + i, go, results[name]))
                     for i, name in enumerate(names) if name not in in_browser]
            psutil.cpu_percent(None)
            seen: dict = {}
            class_cpu_seconds(hub, seen)  # the servers' start so far: not the class's work
            cpu_t0 = time.perf_counter()
            go.set()
            thread_go.set()
            left = max_seconds - (time.perf_counter() - t0)
            _, pending = await asyncio.wait(tasks, timeout=max(left, 1)) if tasks else (None, [])
            for t in pending:
                t.cancel()
            if pending:
                out["cut"] = f"{len(pending)} comm learners stopped at --max-seconds"
            ran = [r.get("ran_all") for r in results.values() if r.get("ran_all")]
            out["run_all_s"] = (max(ran) - cpu_t0) if ran else None
            out["rss_after_run_all"] = kernels_rss(hub)
            if thread is not None:
                await asyncio.to_thread(thread.join, max(max_seconds - (time.perf_counter() - t0), 1))
            out["cpu_percent"] = psutil.cpu_percent(None)
            out["press_phase_s"] = time.perf_counter() - cpu_t0
            # the cores the class itself kept busy from Run All to the last press (the machine's
            # CPU % above includes everyone else's work on it)
            out["class_cores"] = class_cpu_seconds(hub, seen) / out["press_phase_s"]
            out["rss_end"] = kernels_rss(hub)
            out["server_rss"] = servers_rss(hub)

        asyncio.run(main())
    out["uptime_after"] = uptime()
    out["seconds"] = time.perf_counter() - t0
    comm = [r for name, r in results.items() if name not in in_browser]
    brow = [results[name] for name in in_browser]
    out["comm_ms"] = [x for r in comm for x in r["ms"]]
    out["browser_ms"] = [x for r in brow for x in r["ms"]]
    out["unchanged"] = sum(r["unchanged"] for r in results.values())
    out["controls"] = {nb: sorted({r.get("controls", {}).get(nb, 0) for r in comm}) for nb in NOTEBOOKS}
    out["errors"] = [e for r in results.values() for e in r["errors"]]
    out["open_s"] = max((r.get("open_s", 0.0) for r in comm), default=None)
    return out


def _stats(ms: list[float]) -> str:
    if not ms:
        return "-"
    return f"{statistics.median(ms):.0f} / {percentile(ms, 95):.0f} ({len(ms)})"


def table(rows: list[dict]) -> list[str]:
    lines = ["| N learners (browsers) | browser key → pixels ms, median / p95 (presses) | "
             "comm send → picture ms, median / p95 (presses) | no new picture | errors | "
             "kernel RSS MB per learner (after Run All / end) | learner server RSS MB | "
             "machine CPU % (all users) / cores the class used, Run All to last press | "
             "s to all servers up / to every comm learner's Run All done / longest kernel start "
             "(a notebook opened to its kernel connected) | load before → after |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("skipped"):
            lines.append(f"| {r['n']} | not run: {r['skipped']} |" + " |" * 8)
            continue
        a = list(r["rss_after_run_all"].values())
        b = list(r["rss_end"].values())
        load = lambda s: s.split("load average:")[-1].strip()  # noqa: E731
        lines.append(
            f"| {r['n']} ({r['browsers']}) | {_stats(r['browser_ms'])} | {_stats(r['comm_ms'])} | "
            f"{r['unchanged']} | {len(r['errors'])} | "
            f"{statistics.median(a) if a else 0:.0f} / {statistics.median(b) if b else 0:.0f} | "
            f"{r['server_rss']:.0f} | {r['cpu_percent']:.0f} / {r.get('class_cores', float('nan')):.2f} | "
            f"{r['servers_s']:.0f} / {r['run_all_s'] or 0:.0f} / "
            f"{'-' if r.get('open_s') is None else format(r['open_s'], '.0f')} | "
            f"{load(r['uptime_before'])} → {load(r['uptime_after'])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", default="1,10,20,30", help="the class sizes N, comma-separated")
    ap.add_argument("--browsers", type=int, default=1, help="how many of them are real browsers")
    ap.add_argument("--presses", type=int, default=12,
                    help="presses per notebook of each learner without a browser")
    ap.add_argument("--rounds", type=int, default=1,
                    help="presses of every control per notebook of each browser learner")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=900, help="the bound of one class size")
    ap.add_argument("--quick", action="store_true", help="N = 2, one browser, 3 presses")
    ap.add_argument("--memory-margin", type=float, default=0.8,
                    help="run a class size only if its memory (measured per learner at the size "
                         "before) fits in this share of the memory available now")
    ap.add_argument("--out", default=None, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    if args.quick:
        args.learners, args.browsers, args.presses, args.max_seconds = "2", 1, 3, 400
    sizes = [int(x) for x in args.learners.split(",")]
    print(f"hub load test on {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GB; "
          f"{uptime()}", flush=True)
    rows = []
    per_learner_mb = None  # measured at the size before: its kernels' and server's RSS
    for n in sizes:
        if per_learner_mb is not None:
            need, have = n * per_learner_mb, psutil.virtual_memory().available / 2**20
            if need > args.memory_margin * have:  # other people's work shares this machine: never push it to OOM
                print(f"N={n}: not run: {n} learners x {per_learner_mb:.0f} MB (measured at the "
                      f"size before) = {need / 1024:.1f} GB, more than 80 % of the "
                      f"{have / 1024:.1f} GB available now", flush=True)
                rows.append({"n": n, "skipped": f"needs {need / 1024:.1f} GB, "
                             f"{have / 1024:.1f} GB available"})
                continue
        with tempfile.TemporaryDirectory(prefix="attn-hub-load-") as tmp:
            r = one_class(n, min(args.browsers, n), args.presses, args.rounds, args.seed,
                          args.max_seconds, Path(tmp) / "state")
        rows.append(r)
        ends = list(r["rss_end"].values())
        if ends:
            per_learner_mb = max(ends) + r["server_rss"]
        print(f"N={n}: browser {_stats(r['browser_ms'])}, comm {_stats(r['comm_ms'])} ms "
              f"(median / p95 (presses)), {len(r['errors'])} errors, "
              f"CPU {r['cpu_percent']:.0f} %, {r['seconds']:.0f} s; {r['uptime_after']}", flush=True)
        print(f"  controls the comm learners found: {r['controls']}", flush=True)
        for e in r["errors"][:10]:
            print(f"  error: {e}", flush=True)
        if r.get("cut"):
            print(f"  {r['cut']}", flush=True)
    print("\n".join(table(rows)))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, default=str))
    if args.quick:  # make bench-quick: the load test still runs end to end (no figure judged)
        r = rows[0]
        broken = r["errors"] or not r["comm_ms"] or not r["browser_ms"]
        print(f"quick: {'FAILED' if broken else 'ok'}: {len(r['errors'])} errors, "
              f"{len(r['browser_ms'])} browser and {len(r['comm_ms'])} comm presses timed")
        return 1 if broken else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
