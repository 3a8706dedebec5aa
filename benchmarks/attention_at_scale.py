"""Attention at scale (notebook 07): memory and time of plain vs tiled attention, and the cost per
generated token with and without a KV cache, all from one run.

* **Memory**: the peak traced by ``tracemalloc`` while ``scaled_dot_product_attention`` and
  ``tiled_attention`` (64 x 64 tiles) run on ``(n, 64)`` float64 inputs, for each ``n``, with the
  log-log slope of each curve (plain: about 2; tiled: below 1 at small n, where its fixed tiles weigh,
  tending to 1) and the ratio plain / tiled.
* **Time**: plain, tiled and tiled with a causal mask, timed in interleaved rounds (so that a busy
  machine slows each alike); medians over the rounds, and the ratios tiled / plain and
  causal / tiled.
* **Per-token cost of generation**: ``TinyDecoder`` (d_model 128, 8 heads, 2 layers) generates
  tokens with and without its KV cache, several times, alternating; for a few prefix lengths ``n``
  the median seconds per new token of each, their ratio, and the ratio of the counted multiply-adds.

Wall-clock time by default; ``--cpu-time`` uses the process CPU time with one BLAS thread (better on
a busy machine). The 1-minute load average is printed before and after: on a shared machine the
times mean little when it is above the number of cores.

Run: ``python benchmarks/attention_at_scale.py [--sizes 256 512 1024 2048] [--repeats 5]
[--tokens 128] [--cpu-time]`` (``make bench`` uses ``--cpu-time``).
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

from cpu_time import single_thread_blas

D, BLOCK = 64, 64


def load_average() -> str:
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "n/a"


def peak_bytes(fn, Q, K, V) -> int:
    tracemalloc.start()
    fn(Q, K, V)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def slope(xs, ys) -> float:
    import numpy as np

    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def attention_curves(sizes, repeats, clock):
    import numpy as np

    import attention_kit as ak

    cases = {
        "plain": lambda Q, K, V: ak.scaled_dot_product_attention(Q, K, V),
        "tiled": lambda Q, K, V: ak.tiled_attention(Q, K, V, block_q=BLOCK, block_k=BLOCK),
        "tiled causal": lambda Q, K, V: ak.tiled_attention(Q, K, V, block_q=BLOCK, block_k=BLOCK, causal=True),
    }
    rows = []
    for n in sizes:
        Q, K, V = np.random.default_rng(n).normal(size=(3, n, D))  # (n, d) each
        mem = {k: peak_bytes(cases[k], Q, K, V) for k in ("plain", "tiled")}
        times = {k: [] for k in cases}
        for _ in range(repeats):  # interleaved rounds
            for k, fn in cases.items():
                t0 = clock()
                fn(Q, K, V)
                times[k].append(clock() - t0)
        rows.append((n, mem, {k: float(np.median(v)) for k, v in times.items()}))
    return rows


def generation_costs(n_tokens, repeats, clock):
    import numpy as np

    import attention_kit as ak

    prompt = list(range(1, 17))
    dec = ak.TinyDecoder(256, 128, 8, 8, n_layers=2, rng=np.random.default_rng(0),
                         max_len=len(prompt) + n_tokens)
    secs = {True: [], False: []}
    madds = {}
    for _ in range(repeats):  # alternate, so that both see the same machine
        for cache in (False, True):
            _, _, m, s = dec.generate(prompt, n_tokens, cache=cache, clock=clock)  # s: per step
            secs[cache].append(s)
            madds[cache] = m
    med = {k: np.median(np.array(v), axis=0) for k, v in secs.items()}  # (n_tokens,) per step
    return len(prompt), med, madds


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=128, help="tokens to generate after a 16-token prompt")
    ap.add_argument("--cpu-time", action="store_true",
                    help="process CPU time with one BLAS thread instead of wall-clock time")
    args = ap.parse_args(argv)
    if args.cpu_time:
        single_thread_blas()
    import numpy as np

    clock = time.process_time if args.cpu_time else time.perf_counter
    print(f"attention at scale: d = {D}, float64, {BLOCK} x {BLOCK} tiles, {args.repeats} rounds, "
          f"{'process CPU time (1 BLAS thread)' if args.cpu_time else 'wall-clock time'}, "
          f"{os.cpu_count()} cpus, load average (1 min) before: {load_average()}")

    rows = attention_curves(args.sizes, args.repeats, clock)
    print("\nmemory (peak traced by tracemalloc, MiB) and time (median, ms)")
    print(f"{'n':>6} {'mem plain':>10} {'mem tiled':>10} {'plain/tiled':>11} | {'t plain':>9} {'t tiled':>9}"
          f" {'t causal':>9} {'tiled/plain':>11} {'causal/tiled':>12}")
    for n, mem, t in rows:
        print(f"{n:6d} {mem['plain'] / 2**20:10.2f} {mem['tiled'] / 2**20:10.2f} {mem['plain'] / mem['tiled']:11.1f} |"
              f" {t['plain'] * 1e3:9.2f} {t['tiled'] * 1e3:9.2f} {t['tiled causal'] * 1e3:9.2f}"
              f" {t['tiled'] / t['plain']:11.2f} {t['tiled causal'] / t['tiled']:12.2f}")
    ns = [r[0] for r in rows]
    if len(ns) >= 2:
        print(f"log-log slope of the peak memory: plain {slope(ns, [r[1]['plain'] for r in rows]):.2f}, "
              f"tiled {slope(ns, [r[1]['tiled'] for r in rows]):.2f}; of the median time: "
              f"plain {slope(ns, [r[2]['plain'] for r in rows]):.2f}, "
              f"tiled {slope(ns, [r[2]['tiled'] for r in rows]):.2f}")

    n0, med, madds = generation_costs(args.tokens, args.repeats, clock)
    print(f"\ngeneration: TinyDecoder d_model 128, 8 heads, 2 layers; {args.tokens} tokens after a {n0}-token "
          f"prompt, {args.repeats} runs each way; per new token, median over the runs")
    print(f"{'n':>6} {'ms no cache':>12} {'ms cache':>10} {'time ratio':>10} {'madds ratio':>12}")
    checkpoints = sorted({n0, *[n for n in (32, 64, 128, 256, 512, 1024) if n0 < n < n0 + args.tokens],
                          n0 + args.tokens - 1})
    for n in checkpoints:
        k = n - n0
        lo, hi = max(0, k - 4), min(args.tokens, k + 5)  # the median of nine steps around n
        a, b = float(np.median(med[False][lo:hi])), float(np.median(med[True][lo:hi]))
        print(f"{n:6d} {a * 1e3:12.3f} {b * 1e3:10.3f} {a / b:10.1f} {madds[False][k] / madds[True][k]:12.1f}")
    print(f"\nload average (1 min) after: {load_average()}")


if __name__ == "__main__":
    main()
