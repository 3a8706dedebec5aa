"""Train notebook 09's rhyme models with rotary positions and write the weights shipped in the package.

    python tools/train_rope_lm.py                 # both: attention_kit/data/tiny_lm_rope{1,2}.npz
    python tools/train_rope_lm.py --layers 1 --steps 50 --out /tmp/x.npz   # a short run (the test)

Notebook 06's model (tools/train_tiny_lm.py: the same sizes, seed, learning rate and data) with
``positions="rope"`` instead of sinusoidal ones, once with one layer and once with two. The logged
history (step, training loss, held-out loss) is stored beside the weights, so that
tests/test_long_models.py can check that the first steps of this script reproduce it.
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
SIZES = dict(d_model=32, n_heads=2, d_ff=64, context=16)


def out_path(layers: int) -> Path:
    return ROOT / "attention_kit" / "data" / f"tiny_lm_rope{layers}.npz"


def run(steps: int = STEPS, *, layers: int = 1, verbose: bool = False):
    """Train from the fixed seeds; return ``(params, config, data, history)``."""
    data = make_lm_data(SIZES["context"], seed=SEED)
    config = TinyLMConfig(vocab_size=len(data.vocab), n_layers=layers, positions="rope", **SIZES)
    params = init_tiny_lm(config, rng=np.random.default_rng(SEED))
    t0 = time.perf_counter()

    def show(step, train, held):
        if verbose and step % 250 == 0:
            print(f"step {step:5d}  train loss {train:.4f}  held-out loss {held:.4f}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)

    history = train_lm(params, config, data, steps=steps, lr=LR, seed=SEED, log_every=LOG_EVERY,
                       callback=show)
    return params, config, data, history


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--layers", type=int, choices=(1, 2), nargs="*", default=[1, 2])
    ap.add_argument("--out", type=Path, default=None, help="only with one --layers")
    args = ap.parse_args()
    for layers in args.layers:
        params, config, data, history = run(args.steps, layers=layers, verbose=True)
        loss, acc = evaluate(params, config, data.X_held, data.Y_held)
        print(f"{layers} layer(s), held-out: loss {loss:.4f}, next-token accuracy {acc:.1%}")
        out = args.out if args.out is not None else out_path(layers)
        save_params(out, params, config, history=np.array(history), steps=args.steps, lr=LR, seed=SEED)
        print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
