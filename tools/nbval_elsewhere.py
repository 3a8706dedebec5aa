"""Run nbval again as a different machine would compute: one BLAS thread, OpenBLAS's generic
x86-64 kernel (Prescott) and numpy without its AVX2/AVX-512 loops.

A stored output that prints rounding noise (an error against a reference, a difference that is
zero in exact arithmetic, -0.000) passes nbval on the machine that stored it and fails on the next,
whose BLAS kernel, thread count or SIMD width differs. `make test` runs this after the ordinary
nbval, so such an output fails here first.

    python tools/nbval_elsewhere.py [--show] [-- pytest arguments ...]
    python tools/nbval_elsewhere.py --scan [--show] [-- pytest arguments ...]

``--scan`` (``make nbval-scan``, for a notebook's author before a commit; a few minutes) runs
nbval once per setting of a small grid instead: each OpenBLAS kernel this CPU can run (the
machine's own, Prescott, Haswell, SkylakeX), with one BLAS thread and numpy's SIMD off, and with
the machine's threads and SIMD on. A printed number that one machine rounds one way and another
the other way fails under one of them (notebook 06's "1.71" failed only with the Haswell kernel and
numpy's baseline SIMD). It exits non-zero when any setting fails.

Each part of the setting that cannot take effect on this machine (numpy not built on OpenBLAS, a
CPU that is not x86-64, ...) is left out with the reason printed; the run itself never fails for
that reason. `--show` prints the setting and exits.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

PROBE = """
import json, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"blas": blas, "simd": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)],
                  "features": {k: bool(v) for k, v in __cpu_features__.items()}}))
"""


def probe(env: dict[str, str]) -> dict:
    """What numpy runs with under `env`: its BLAS libraries and the SIMD targets it dispatches to."""
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def describe(probed: dict) -> str:
    """What ``probe`` found, in words: the BLAS kernels and threads, numpy's SIMD."""
    kernels = ", ".join(f"{b.get('architecture')} ({b.get('num_threads')} threads)" for b in probed["blas"])
    return f"BLAS {kernels or 'none'}; numpy SIMD {' '.join(probed['simd']) or 'baseline only'}"


def setting(base: dict[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The variables to set, each checked to take effect, and one line per part: used or why not."""
    base = dict(os.environ if base is None else base)
    chosen: dict[str, str] = {}
    notes: list[str] = []
    now = probe(base)
    openblas = [b for b in now["blas"] if b.get("internal_api") == "openblas"]
    if not openblas:
        names = ", ".join(b.get("internal_api", "?") for b in now["blas"]) or "none found"
        notes.append(f"skipped the OpenBLAS settings: numpy's BLAS is not OpenBLAS ({names})")
    else:
        chosen["OPENBLAS_NUM_THREADS"] = "1"
        if base.get("OPENBLAS_CORETYPE"):
            # some machines set it because their CPU breaks other kernels: never override that
            notes.append(f"kept OPENBLAS_CORETYPE={base['OPENBLAS_CORETYPE']}: this machine sets it itself")
        elif platform.machine().lower() in ("x86_64", "amd64"):
            chosen["OPENBLAS_CORETYPE"] = "Prescott"
        else:
            notes.append(f"skipped OPENBLAS_CORETYPE=Prescott: this CPU is {platform.machine()}, not x86-64")
    if now["simd"]:
        chosen["NPY_DISABLE_CPU_FEATURES"] = " ".join(now["simd"])
    else:
        notes.append("skipped NPY_DISABLE_CPU_FEATURES: numpy dispatches to no SIMD target beyond its baseline here")

    after = probe({**base, **chosen})
    blas = [b for b in after["blas"] if b.get("internal_api") == "openblas"]
    before = [b.get("architecture") for b in openblas]
    kernels = [b.get("architecture") for b in blas]
    if "OPENBLAS_CORETYPE" in chosen and kernels == before and "Prescott" not in before:
        # OpenBLAS names the generic kernel after the build (Prescott, or Katmai in numpy's wheels)
        chosen.pop("OPENBLAS_CORETYPE")
        notes.append(f"skipped OPENBLAS_CORETYPE=Prescott: this OpenBLAS ignores it (still {kernels})")
    elif "OPENBLAS_CORETYPE" in chosen:
        notes.append(f"OpenBLAS kernel {before} -> {kernels} (its generic x86-64 kernel)")
    if "OPENBLAS_NUM_THREADS" in chosen and not all(b.get("num_threads") == 1 for b in blas):
        chosen.pop("OPENBLAS_NUM_THREADS")
        notes.append("skipped OPENBLAS_NUM_THREADS=1: OpenBLAS still reports more than one thread")
    if "NPY_DISABLE_CPU_FEATURES" in chosen and after["simd"]:
        chosen.pop("NPY_DISABLE_CPU_FEATURES")
        notes.append(f"skipped NPY_DISABLE_CPU_FEATURES: numpy still dispatches to {after['simd']}")
    notes.insert(0, f"this machine: {describe(now)}")
    return chosen, notes


#: --scan's OpenBLAS kernels beside the machine's own, each with the CPU feature it needs (numpy's
#: name): a kernel this CPU lacks would stop on an illegal instruction, so it is left out
SCAN_KERNELS = (("Prescott", None), ("Haswell", "AVX2"), ("SkylakeX", "AVX512F"))

def scan_settings(base: dict[str, str] | None = None) -> tuple[list[tuple[str, dict[str, str]]], list[str]]:
    """--scan's grid: ``[(label, variables), ...]`` this machine can run, and a line per kernel left out."""
    base = dict(os.environ if base is None else base)
    now = probe(base)
    openblas = any(b.get("internal_api") == "openblas" for b in now["blas"])
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    notes: list[str] = []
    kernels: list[str | None] = [None]  # None: the machine's own (or the one it sets itself)
    if openblas and x86:
        features = now["features"]
        own = {str(b.get("architecture", "")).lower() for b in now["blas"]} | {base.get("OPENBLAS_CORETYPE", "").lower()}
        for kernel, need in SCAN_KERNELS:
            if kernel.lower() in own:
                continue  # the machine's own already
            if need is None or features.get(need):
                kernels.append(kernel)
            else:
                notes.append(f"left out the {kernel} kernel: this CPU has no {need}")
    elif not openblas:
        notes.append("numpy's BLAS is not OpenBLAS: only its own kernel")
    else:
        notes.append(f"this CPU is {platform.machine()}: only its own OpenBLAS kernel")
    grid = []
    for kernel in kernels:
        name = kernel or "own kernel"
        variables = {"OPENBLAS_CORETYPE": kernel} if kernel else {}
        grid.append((f"{name}, its threads, SIMD on", variables))
        off = dict(variables)
        if openblas:
            off["OPENBLAS_NUM_THREADS"] = "1"
        if now["simd"]:
            off["NPY_DISABLE_CPU_FEATURES"] = " ".join(now["simd"])
        if off != variables:
            grid.append((f"{name}, one thread, SIMD off", off))
    return grid, notes


def scan(pytest_args: list[str], show: bool) -> int:
    grid, notes = scan_settings()
    for line in notes:
        print(f"nbval scan: {line}")
    failed = []
    for label, variables in grid:
        env = {**os.environ, **variables}
        print(f"nbval scan: {label}: {describe(probe(env))}", flush=True)
        if not show and subprocess.call([sys.executable, "-m", "pytest", *pytest_args], env=env) != 0:
            failed.append(label)
    if not show:
        print(f"nbval scan: {len(grid) - len(failed)} of {len(grid)} settings passed"
              + (f"; failed: {'; '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    show = "--show" in argv
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    if "--scan" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        return scan(pytest_args, show)
    chosen, notes = setting()
    for line in notes:
        print(f"nbval elsewhere: {line}")
    print("nbval elsewhere: running under " + (" ".join(f"{k}={v!r}" for k, v in chosen.items()) or "no change"))
    if show:
        return 0
    env = {**os.environ, **chosen}
    return subprocess.call([sys.executable, "-m", "pytest", *pytest_args], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
