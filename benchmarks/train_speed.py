"""How long does one training step take? The tiny language model of notebook 06 and the attention
head of notebook 05, in attention_kit, and, when PyTorch happens to be installed, the same language
model in PyTorch (CPU autograd, float64) as a ratio.

* **tiny LM**: the shipped rhyme model's sizes (``attention_kit/data/tiny_lm.npz``: d_model 32,
  one layer, two heads, context 16), a batch of 32 windows of 16 tokens: forward, backward and one
  Adam step (``lm_loss_and_grads`` + ``Adam.step``, what ``train_lm`` runs per step).
* **notebook 05**: ``Trainer("reverse").step(1)``: one multi-head layer on the toy task, batch 64,
  SGD with momentum.
* **PyTorch** (optional, not a dependency): the same language model, weights copied from the numpy
  one, ``loss.backward()`` and ``torch.optim.Adam``. Printed only when ``import torch`` works; the
  ratio is attention_kit's median over PyTorch's (below 1.0: attention_kit is faster).

Each step is timed ``--steps`` times after a warm-up, by the CPU time of the process
(``time.process_time``: the work done, not the waiting, so a busy machine does not blur it;
``--wall`` for wall-clock time); the script prints the median and the quartiles in milliseconds. ``--threads N`` sets the BLAS (and PyTorch) thread count; the default,
1, is how the notebooks train (``train_lm`` limits BLAS to one thread: the matrices are small).

Run: ``python benchmarks/train_speed.py [--steps 200] [--threads 1] [--keep-heap]``; what it measured: ``benchmarks/TRAINING.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    ap.add_argument("--keep-heap", action="store_true",
                    help="glibc only: serve big arrays from the heap and keep freed memory (mallopt), "
                         "so a step's temporaries cause no page faults (see benchmarks/TRAINING.md)")
    return ap.parse_args()


def _quartiles(seconds: list[float]) -> tuple[float, float, float]:
    import numpy as np

    q1, med, q3 = np.percentile(np.array(seconds) * 1e3, [25, 50, 75])
    return float(med), float(q1), float(q3)


CLOCK = time.process_time


def _time(steps: list, n: int, chunk: int = 10) -> list[list[float]]:
    """Each step's ``n`` times, taken in turns of ``chunk`` steps (A, B, C, A, B, C, ...) so that
    a change of the machine's load in the meantime falls on every step alike: the ratios stay fair."""
    for step in steps:
        for _ in range(max(5, n // 10)):  # warm-up: caches, allocator, first-call imports
            step()
    out: list[list[float]] = [[] for _ in steps]
    while len(out[0]) < n:
        for step, times in zip(steps, out, strict=True):
            for _ in range(min(chunk, n - len(times))):
                t0 = CLOCK()
                step()
                times.append(CLOCK() - t0)
    return out


def tiny_lm_step(batch: int = 32):
    """A closure running one training step of the shipped model's sizes, and its config."""
    import numpy as np

    from attention_kit.decoder.lm_training import make_lm_data
    from attention_kit.decoder.tiny_lm import init_tiny_lm, lm_loss_and_grads, load_pretrained
    from attention_kit.learn.optim import Adam

    _, cfg, _ = load_pretrained()
    params = init_tiny_lm(cfg, rng=np.random.default_rng(0))
    data = make_lm_data(cfg.context, seed=0)
    rng = np.random.default_rng(1)
    opt = Adam(lr=0.01)

    def step():
        idx = rng.integers(0, len(data.X_train), size=batch)
        _, grads = lm_loss_and_grads(params, cfg, data.X_train[idx], data.Y_train[idx])
        opt.step(params, grads)

    return step, params, cfg, data


def toy_step():
    from attention_kit.learn.toy_tasks import Trainer

    trainer = Trainer("reverse", seed=0)
    return lambda: trainer.step(1)


def torch_step(params, cfg, data, batch: int = 32):
    """The same model and step in PyTorch (float64, CPU), or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    import numpy as np

    from attention_kit import sinusoidal_positions

    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    pos = torch.tensor(sinusoidal_positions(cfg.context, cfg.d_model))
    mask = torch.ones(cfg.context, cfg.context, dtype=torch.bool).tril()
    opt = torch.optim.Adam(P.values(), lr=0.01)
    rng = np.random.default_rng(1)
    ln = torch.nn.functional.layer_norm

    def forward(ids):
        X = P["E"][ids] + pos  # (B, n, d)
        for l in range(cfg.n_layers):
            A = ln(X, (cfg.d_model,), P[f"l{l}.ln1.g"], P[f"l{l}.ln1.b"], eps=1e-5)
            q, k, v = (torch.einsum("bnd,hde->bhne", A, P[f"l{l}.attn.{w}"]) for w in ("W_q", "W_k", "W_v"))
            heads = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, h, n, dh)
            X = X + heads.transpose(1, 2).reshape(X.shape) @ P[f"l{l}.attn.W_o"]
            M = ln(X, (cfg.d_model,), P[f"l{l}.ln2.g"], P[f"l{l}.ln2.b"], eps=1e-5)
            hid = torch.nn.functional.gelu(M @ P[f"l{l}.mlp.W1"] + P[f"l{l}.mlp.b1"], approximate="tanh")
            X = X + hid @ P[f"l{l}.mlp.W2"] + P[f"l{l}.mlp.b2"]
        F = ln(X, (cfg.d_model,), P["lnf.g"], P["lnf.b"], eps=1e-5)
        return F @ P["W_out"] + P["b_out"]

    def step():
        idx = rng.integers(0, len(data.X_train), size=batch)
        ids, y = torch.from_numpy(data.X_train[idx]), torch.from_numpy(data.Y_train[idx])
        logits = forward(ids)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def keep_heap() -> bool:
    """Ask glibc's malloc to serve arrays up to 64 MB from the heap (not a fresh ``mmap`` each, whose
    pages the kernel must zero and map again at every step) and to keep up to 128 MB of freed memory.
    The same settings as ``MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=134217728``. The
    whole process is affected, PyTorch included. False where there is no glibc (macOS, Windows)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 64 << 20)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 128 << 20))
    except (OSError, AttributeError):
        return False


def main() -> int:
    global CLOCK
    args = _args()
    if args.keep_heap and not keep_heap():
        print("--keep-heap: no glibc mallopt here; measuring with the default allocator")
    CLOCK = time.perf_counter if args.wall else time.process_time
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)  # before numpy is imported
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    lm, params, cfg, data = tiny_lm_step()
    names = ["tiny LM (notebook 06): batch 32 x 16 tokens, fwd + bwd + Adam",
             "attention head (notebook 05): Trainer('reverse').step(1)"]
    steps = [lm, toy_step()]
    torch_lm = torch_step({k: v.copy() for k, v in params.items()}, cfg, data)
    if torch_lm is not None:
        import torch

        torch.set_num_threads(args.threads)
        names.append("tiny LM in PyTorch (float64, CPU autograd)")
        steps.append(torch_lm)
    rows = list(zip(names, _time(steps, args.steps), strict=True))
    clock = "wall-clock" if args.wall else "CPU"
    heap = ", heap kept (mallopt)" if args.keep_heap else ""
    print(f"training step, {args.threads} BLAS thread(s), {args.steps} steps, {clock} time{heap}: "
          "median [quartiles] in ms")
    for name, sec in rows:
        med, q1, q3 = _quartiles(sec)
        print(f"  {name:66s} {med:7.2f}  [{q1:.2f}, {q3:.2f}]")
    if torch_lm is not None:
        ratio = _quartiles(rows[0][1])[0] / _quartiles(rows[2][1])[0]
        print(f"  attention_kit / PyTorch: {ratio:.2f} (below 1.0: attention_kit is faster)")
    else:
        print("  PyTorch is not installed: no comparison (pip install torch to see the ratio)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
