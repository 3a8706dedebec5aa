"""How close do attention_kit's attention functions come to the bare matrix products they need?

For each sequence length n (d_model 512, 8 heads, float64) this script times, in the same run and
interleaved round by round (so that a busy machine slows every candidate alike):

* ``multi_head_attention(X, X, params)``: self-attention with 8 heads;
* ``scaled_dot_product_attention(Q, K, V)`` on the per-head arrays (8, n, 64) that
  multi-head attention feeds it;
* the *BLAS floor* of each: only the matrix products the same computation needs, as plain numpy
  expressions on ready-made operands of the same shapes (projections ``X @ [W_q|W_k|W_v]``, scores
  ``Q_h @ K_h^T``, weighted sums ``A_h @ V_h``, output ``concat @ W_o``);
* one ``np.exp`` over the (8, n, n) score array: the softmax cannot do less work than this, and it
  is not a matrix product, so it shows how far above the floor any softmax-based code must stay.

It prints the median and the minimum over the repeats, in milliseconds, and the ratio
median(function) / median(floor). Run: ``python benchmarks/attention_speed.py [--sizes 256 1024]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import attention_kit as ak

D_MODEL, HEADS = 512, 8


def _timer(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def make_cases(n: int, rng: np.random.Generator) -> dict:
    """The timed callables for one sequence length (name -> zero-argument function)."""
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

    def floor_sdpa():
        Qh @ KhT  # (h, n, n)
        A @ Vh  # (h, n, d_head)

    def floor_mha():
        X @ W_qkv  # (n, 3 d_model)
        floor_sdpa()
        C @ W_o  # (n, d_model)

    return {
        "multi_head_attention": lambda: ak.multi_head_attention(X, X, params),
        "floor(mha)": floor_mha,
        "scaled_dot_product_attention": lambda: ak.scaled_dot_product_attention(Qh, Kh, Vh),
        "floor(sdpa)": floor_sdpa,
        "exp over (h, n, n)": lambda: np.exp(A),
    }


def run(sizes, repeats: int | None = None, seed: int = 0) -> dict:
    """Time every case for every n; return {n: {name: array of seconds}}."""
    rng = np.random.default_rng(seed)
    results = {}
    for n in sizes:
        cases = make_cases(n, rng)
        reps = repeats or (21 if n <= 256 else 11 if n <= 1024 else 5)
        for fn in cases.values():  # warm up: page in memory, load BLAS threads
            fn()
        times = {name: [] for name in cases}
        for _ in range(reps):  # interleaved rounds
            for name, fn in cases.items():
                times[name].append(_timer(fn))
        results[n] = {name: np.array(t) for name, t in times.items()}
    return results


def report(results: dict, load_before=None, load_after=None) -> str:
    lines = [f"d_model={D_MODEL}, heads={HEADS}, float64; times in ms (median / min over repeats)",
             f"cpus={os.cpu_count()}, numpy {np.__version__}"]
    if load_before is not None:
        lines.append(f"load average before/after: {load_before:.2f} / {load_after:.2f} "
                     "(other processes on the machine slow BLAS threads down: compare within one run)")
    for n, times in results.items():
        med = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
        mn = {k: float(np.min(v)) * 1e3 for k, v in times.items()}
        lines.append(f"\nn = {n}  ({len(next(iter(times.values())))} repeats)")
        for k in times:
            lines.append(f"  {k:<30s} {med[k]:9.2f} / {mn[k]:9.2f}")
        for fn, fl in (("multi_head_attention", "floor(mha)"),
                       ("scaled_dot_product_attention", "floor(sdpa)")):
            exp = med["exp over (h, n, n)"]
            lines.append(
                f"  ratio {fn} / {fl}: {med[fn] / med[fl]:.2f} (median), {mn[fn] / mn[fl]:.2f} (min)"
            )
            lines.append(
                f"    lower bound for any softmax code: (floor + exp pass / cpus) / floor = "
                f"{(med[fl] + exp / (os.cpu_count() or 1)) / med[fl]:.2f}"
            )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 2048])
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args(argv)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results = run(args.sizes, args.repeats)
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(report(results, load_before, load_after))


if __name__ == "__main__":
    main()
