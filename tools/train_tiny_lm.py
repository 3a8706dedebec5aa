"""Train the tiny language model of notebook 06 and write the weights shipped in the package.

    python tools/train_tiny_lm.py                 # the full run: writes attention_kit/data/tiny_lm.npz
    python tools/train_tiny_lm.py --steps 50 --out /tmp/x.npz   # a short run (what the test does)

Deterministic: the same seeds give the same losses (to floating-point rounding across BLAS builds).
The logged history (step, training loss, held-out loss) is stored in the file beside the weights,
so that tests/test_tiny_lm.py can check that the first steps of this script reproduce it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from attention_kit.learn.lm_training import evaluate, make_lm_data, train_lm
from attention_kit.learn.params import save_params
from attention_kit.learn.tiny_lm import TinyLMConfig, init_tiny_lm

ROOT = Path(__file__).resolve().parents[1]
STEPS, LR, SEED, LOG_EVERY = 2000, 0.01, 0, 25
SIZES = dict(d_model=32, n_heads=2, n_layers=1, d_ff=64, context=16)


def run(steps: int = STEPS, *, verbose: bool = False):
    """Train from the fixed seeds; return ``(params, config, data, history)``."""
    data = make_lm_data(SIZES["context"], seed=SEED)
    config = TinyLMConfig(vocab_size=len(data.vocab), **SIZES)
    params = init_tiny_lm(config, rng=np.random.default_rng(SEED))
    t0 = time.perf_counter()

    def show(step, train, held):
        if verbose:
            print(f"step {step:5d}  train loss {train:.4f}  held-out loss {held:.4f}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)

    history = train_lm(params, config, data, steps=steps, lr=LR, seed=SEED, log_every=LOG_EVERY,
                       callback=show)
    return params, config, data, history


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--out", type=Path, default=ROOT / "attention_kit" / "data" / "tiny_lm.npz")
    args = ap.parse_args()
    params, config, data, history = run(args.steps, verbose=True)
    loss, acc = evaluate(params, config, data.X_held, data.Y_held)
    print(f"held-out: loss {loss:.4f}, next-token accuracy {acc:.1%}")
    save_params(args.out, params, config, history=np.array(history), steps=args.steps, lr=LR,
                seed=SEED)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
