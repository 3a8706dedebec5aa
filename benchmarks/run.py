"""The course's benchmarks, one entry point (``make bench``): what each one measures, and runs it.

    make bench                       # the list, then every benchmark in turn
    make bench NAME=list             # only the list
    make bench NAME=learner-order    # one benchmark (its name from the list)
    make bench NAME=learner-order ARGS="--rounds 3 notebooks/04_masks_and_positions.ipynb"
    make bench-quick                 # every benchmark's quick form (run.py --quick [NAME]): CI's
                                     # check that each still runs; exit 1 when one fails

Every benchmark prints the machine's load average beside its figures: on a shared machine compare
figures within one run (ratios, same-run columns), not across runs. Speed is reported here, never
asserted in the tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (script and its default arguments, what it measures)
BENCHMARKS: dict[str, tuple[list[str], str]] = {
    "attention-speed": (["attention_speed.py", "--cpu-time"],
                        "multi-head and scaled dot-product attention against the bare matrix "
                        "products they need (the BLAS floor), d_model 512, 8 heads"),
    "attention-at-scale": (["attention_at_scale.py", "--cpu-time"],
                           "notebook 07: memory and time of plain vs tiled attention, cost per "
                           "generated token with and without a KV cache"),
    "train-speed": (["train_speed.py"],
                    "one training step of notebook 06's tiny LM and notebook 05's head (and the "
                    "same LM in PyTorch when it is installed, as a ratio)"),
    "grade-speed": (["grade_speed.py"],
                    "make grade on a class of 30 learners x every notebook, and one notebook "
                    "against a plain nbconvert run"),
    "grade-cost": (["grade_cost.py"],
                   "make grade's cost per returned notebook (median of a class of 4 learners x every "
                   "notebook), what 5,000 learners x 9 notebooks need in machine-hours, sharded or "
                   "not, and the merge of 20 shards of a made-up class of 5,000"),
    "widget-latency": (["widget_latency.py"],
                       "in a kernel, no page: a slider's comm message -> the new picture leaving "
                       "the kernel, for four explorers and the naive interact baseline"),
    "every-control": (["browser_latency.py"],
                      "JupyterLab in headless Chromium: every control of every explorer pressed "
                      "6 times in a row, key press -> changed pixels (median, p95 per control)"),
    "learner-order": (["browser_latency.py", "--order", "both"],
                      "JupyterLab in headless Chromium: every control of every notebook in a "
                      "learner's order (mixed, seeded, 0-3 s pauses, right after Run All) beside "
                      "the in-a-row order; median and p95 per control, notebook and overall "
                      "(--compare DIR: the same with another attention_kit, before / after)"),
    "latency-stages": (["latency_stages.py"],
                       "JupyterLab in headless Chromium: one slider press split into its stages "
                       "(page, server, kernel dispatch, compute, render, encode, back, paint)"),
    "hub-load": (["hub_load.py"],
                 "a class on the course's JupyterHub: N = 1, 10, 20, 30 learners log in, Run All "
                 "in 02 and 04 and press controls at once (one real browser, the rest through the "
                 "kernels' websockets): press latency, errors, kernel memory, CPU"),
}


#: name -> its quick form (``run.py --quick``, ``make bench-quick``): one short round at the
#: smallest sizes through the same code, for CI; it fails on an error, a missing picture or a
#: control that never redraws, never on a figure
QUICK: dict[str, list[str]] = {
    "attention-speed": ["attention_speed.py", "--cpu-time", "--sizes", "64", "--repeats", "1"],
    "attention-at-scale": ["attention_at_scale.py", "--cpu-time", "--sizes", "64", "128",
                           "--repeats", "1", "--tokens", "4"],
    "train-speed": ["train_speed.py", "--steps", "10"],
    "grade-speed": ["grade_speed.py", "--notebooks", "01", "--learners", "1", "--repeats", "1",
                    "--workers", "1"],
    "grade-cost": ["grade_cost.py", "--learners", "1", "--notebooks", "01", "--workers", "1",
                   "--merge-learners", "20", "--merge-shards", "2"],
    "widget-latency": ["widget_latency.py", "--n", "2"],
    "every-control": ["browser_latency.py", "--quick"],
    "learner-order": ["browser_latency.py", "--order", "both", "--quick"],
    "latency-stages": ["latency_stages.py", "--quick"],
    "hub-load": ["hub_load.py", "--quick"],
}


def describe() -> str:
    width = max(map(len, BENCHMARKS))
    lines = ["benchmarks (make bench NAME=<name> [ARGS=...]):"]
    for name, (cmd, what) in BENCHMARKS.items():
        lines.append(f"  {name:{width}s}  {what}")
        lines.append(f"  {'':{width}s}  (python benchmarks/{' '.join(cmd)})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv[:1]
    argv = argv[1:] if quick else argv
    name, extra = (argv[0], argv[1:]) if argv else ("all", [])
    if name in ("list", "-h", "--help"):
        print(__doc__.strip().splitlines()[0])
        print(describe())
        return 0
    if name != "all" and name not in BENCHMARKS:
        print(f"no benchmark named {name!r}\n{describe()}", file=sys.stderr)
        return 2
    names = list(BENCHMARKS) if name == "all" else [name]
    if name == "all":
        print(describe())
    failed, took = [], {}
    for n in names:
        cmd, what = BENCHMARKS[n]
        cmd = QUICK[n] if quick else cmd
        print(f"\n== {n}{' (quick)' if quick else ''}: {what}", flush=True)
        start = time.perf_counter()
        rc = subprocess.call([sys.executable, str(HERE / cmd[0]), *cmd[1:], *extra])
        took[n] = time.perf_counter() - start
        if rc:
            failed.append(n)
        if quick:
            print(f"quick: {n} {'FAILED' if rc else 'ok'} in {took[n]:.1f} s", flush=True)
    if quick:
        print(f"quick: {len(names) - len(failed)} of {len(names)} ok in {sum(took.values()):.1f} s; "
              "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
