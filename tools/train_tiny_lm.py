"""Train the tiny language model of notebook 06, or notebook 09's rotary versions of it, and write
the weights shipped in the package.

    python tools/train_tiny_lm.py                       # notebook 06: attention_kit/data/tiny_lm.npz
    python tools/train_tiny_lm.py --positions rope      # notebook 09: data/tiny_lm_rope{1,2}.npz
    python tools/train_tiny_lm.py --steps 50 --out /tmp/x.npz   # a short run (what the tests do)

Notebook 09's models are notebook 06's (the same sizes, seed, learning rate and data) with
``positions="rope"`` instead of sinusoidal ones, once with one layer and once with two.
Deterministic: the same seeds give the same losses (to floating-point rounding across BLAS builds).
The logged history (step, training loss, held-out loss) is stored in the file beside the weights,
so that tests/test_tiny_lm.py and tests/test_long_models.py can check that the first steps of this
script reproduce it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from attention_kit.decoder.lm_training import evaluate, make_lm_data, train_lm
from attention_kit.decoder.tiny_lm import TinyLMConfig, init_tiny_lm
from attention_kit.learn.params import save_params

ROOT = Path(__file__).resolve().parents[1]
STEPS, LR, SEED, LOG_EVERY = 2000, 0.01, 0, 25
SIZES = dict(d_model=32, n_heads=2, d_ff=64, context=16)


def out_path(layers: int = 1, positions: str = "sinusoidal") -> Path:
    """Where the package keeps the model: tiny_lm.npz (notebook 06), tiny_lm_rope{layers}.npz (09)."""
    name = "tiny_lm.npz" if positions == "sinusoidal" else f"tiny_lm_{positions}{layers}.npz"
    return ROOT / "attention_kit" / "data" / name


def run(steps: int = STEPS, *, layers: int = 1, positions: str = "sinusoidal", verbose: bool = False):
    """Train from the fixed seeds; return ``(params, config, data, history)``."""
    data = make_lm_data(SIZES["context"], seed=SEED)
    config = TinyLMConfig(vocab_size=len(data.vocab), n_layers=layers, positions=positions, **SIZES)
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
    ap.add_argument("--positions", choices=("sinusoidal", "rope"), default="sinusoidal")
    ap.add_argument("--layers", type=int, choices=(1, 2), nargs="*", default=None,
                    help="default: 1 for sinusoidal (notebook 06), 1 and 2 for rope (notebook 09)")
    ap.add_argument("--out", type=Path, default=None, help="only with one model")
    args = ap.parse_args()
    layers = args.layers or ([1] if args.positions == "sinusoidal" else [1, 2])
    for n_layers in layers:
        params, config, data, history = run(args.steps, layers=n_layers, positions=args.positions,
                                            verbose=True)
        loss, acc = evaluate(params, config, data.X_held, data.Y_held)
        print(f"{args.positions}, {n_layers} layer(s), held-out: loss {loss:.4f}, "
              f"next-token accuracy {acc:.1%}")
        out = args.out if args.out is not None else out_path(n_layers, args.positions)
        save_params(out, params, config, history=np.array(history), steps=args.steps, lr=LR, seed=SEED)
        print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
