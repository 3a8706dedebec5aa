"""How close do attention_kit's attention functions come to the bare matrix products they need?

For each sequence length n (d_model 512, 8 heads, float64) this script times, in the same run and
interleaved round by round (so that a busy machine slows every candidate alike):

* ``multi_head_attention(X, X, params)``: self-attention with 8 heads;
* ``scaled_dot_product_attention(Q, K, V)`` on the per-head arrays (8, n, 64) that
  multi-head attention feeds it;
* the *BLAS floor* of each: only the matrix products the same computation needs, as plain numpy
  expressions on ready-made operands of the same shapes (projections ``X @ [W_q|W_k|W_v]``, scores
  ``Q_h @ K_h^T``, weighted sums ``A_h @ V_h``, output ``concat @ W_o``);
* one ``np.exp`` over the (8, n, n) score array. The softmax must compute these n^2 h
  exponentials and they are not a matrix product, so ``(floor + exp / cpus) / floor`` is a lower
  bound on the ratio that any softmax-based code can reach on this machine.

It prints the median and the minimum over the repeats, in milliseconds, and the ratios
median(function) / median(floor) and min / min.

Two clocks:

* default: wall-clock time (``time.perf_counter``), BLAS and the softmax on every core. This is
  what a user sees, but on a machine shared with other busy processes it is mostly noise.
* ``--cpu-time``: CPU time of the process (``time.process_time``) with BLAS and the softmax on one
  thread. This counts the work done, not the waiting, so it stays meaningful on a busy machine.

Run: ``python benchmarks/attention_speed.py [--sizes 256 1024 2048] [--repeats R] [--cpu-time]``.
"""

from __future__ import annotations

import argparse
import os
import time

from cpu_time import single_thread_blas

D_MODEL, HEADS = 512, 8


def make_cases(n: int, rng) -> dict:
    """The timed callables for one sequence length (name -> zero-argument function)."""
    import numpy as np

    import attention_kit as ak

    d_head = D_MODEL // HEADS
    X = rng.normal(size=(n, D_MODEL))  # (n, d_model)
    params = ak.init_multi_head(D_MODEL, HEADS, rng=rng)
    Qh, Kh, Vh = (rng.normal(size=(HEADS, n, d_head)) for _ in range(3))  # (h, n, d_head)
    # Operands of the floor: the same shapes, already laid out as the products want them.
    W_qkv = rng.normal(size=(D_MODEL, 3 * D_MODEL))  # (d_model, 3 * h * d_head)
    KhT = np.ascontiguousarray(np.swapaxes(Kh, -1, -2))  # (h, d_head, n)
    A = rng.random((HEADS, n, n))  # (h, n, n) stands in for the weights
    C = rng.normal(size=(n, D_MODEL))  # (n, h * d_head) stands in for the concatenated heads
    W_o = params.W_o  # (h * d_head, d_model)
    E = np.empty_like(A)  # exp writes here: no fresh pages to fault in, as in the softmax itself

    def floor_sdpa():
        Qh @ KhT  # (h, n, n)
        A @ Vh  # (h, n, d_head)

    def floor_mha():
        X @ W_qkv  # (n, 3 d_model)
        floor_sdpa()
        C @ W_o  # (n, d_model)

    cases = {
        "multi_head_attention": lambda: ak.multi_head_attention(X, X, params),
        "floor(mha)": floor_mha,
        "scaled_dot_product_attention": lambda: ak.scaled_dot_product_attention(Qh, Kh, Vh),
        "floor(sdpa)": floor_sdpa,
        "exp over (h, n, n)": lambda: np.exp(A, out=E),
    }
    return cases


def run(sizes, repeats: int | None = None, seed: int = 0, clock=time.perf_counter) -> dict:
    """Time every case for every n; return {n: {name: list of seconds}}."""
    import numpy as np

    rng = np.random.default_rng(seed)
    results = {}
    for n in sizes:
        cases = make_cases(n, rng)
        reps = repeats or (21 if n <= 256 else 11 if n <= 1024 else 5)
        for fn in cases.values():  # warm up: page in memory, start BLAS threads
            fn()
        times = {name: [] for name in cases}
        for _ in range(reps):  # interleaved rounds
            for name, fn in cases.items():
                t0 = clock()
                fn()
                times[name].append(clock() - t0)
        results[n] = times
    return results


def report(results: dict, *, cpus: int, clock_name: str, load=None) -> str:
    import numpy as np

    lines = [f"d_model={D_MODEL}, heads={HEADS}, float64; {clock_name}; ms as median / min over repeats",
             f"numpy {np.__version__}, {os.cpu_count()} cpus, {cpus} used by BLAS and the softmax"]
    if load is not None:
        lines.append(f"load average before / after: {load[0]:.2f} / {load[1]:.2f}")
    for n, times in results.items():
        med = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
        mn = {k: float(np.min(v)) * 1e3 for k, v in times.items()}
        lines.append(f"\nn = {n}  ({len(next(iter(times.values())))} repeats)")
        for k in times:
            lines.append(f"  {k:<30s} {med[k]:9.2f} / {mn[k]:9.2f}")
        for fn, fl in (("multi_head_attention", "floor(mha)"),
                       ("scaled_dot_product_attention", "floor(sdpa)")):
            lines.append(f"  ratio {fn} / {fl}: {med[fn] / med[fl]:.2f} (median), "
                         f"{mn[fn] / mn[fl]:.2f} (min)")
            bound = (med[fl] + med["exp over (h, n, n)"] / cpus) / med[fl]
            lines.append(f"    lower bound for any softmax code, (floor + exp / cpus) / floor: {bound:.2f}")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 2048])
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--cpu-time", action="store_true",
                    help="measure process CPU time with one BLAS/softmax thread (robust on a busy machine)")
    args = ap.parse_args(argv)
    if args.cpu_time:
        single_thread_blas()
    cpus = 1 if args.cpu_time else (os.cpu_count() or 1)
    clock = time.process_time if args.cpu_time else time.perf_counter
    clock_name = "process CPU time, 1 thread" if args.cpu_time else "wall-clock time"
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results = run(args.sizes, args.repeats, clock=clock)
    load = None if load0 is None else (load0, os.getloadavg()[0])
    print(report(results, cpus=cpus, clock_name=clock_name, load=load))


if __name__ == "__main__":
    main()
