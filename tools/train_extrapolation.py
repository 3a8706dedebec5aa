"""Train notebook 09's length-extrapolation models and write attention_kit/data/extrapolation.npz.

    python tools/train_extrapolation.py                     # every scheme, seeds 0 1 2 (some minutes)
    python tools/train_extrapolation.py --steps 40 --seeds 0 --out /tmp/x.npz   # a short run (the test)

Each scheme of attention_kit.long.extrapolation.SCHEMES trains the same model from the same seed on
the same batches (repeated random sequences of 24 tokens), then is evaluated at 24, 48, 96 and
192 tokens. The file keeps seed 0's weights (float32), every run's accuracies (``accuracy``: on the
targets induction can predict; ``boundary``: on the first token of the first repeat) and smoothed losses,
and seed 0's first losses exactly, so that the notebook and tests/test_long_models.py can check
that a short run reproduces them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from attention_kit.decoder.training import train_decoder
from attention_kit.long.extrapolation import SCHEMES, TRAINING, accuracy, batch, init_model

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (24, 48, 96, 192)
EVERY, FIRST = 25, 50


def train(scheme: str, seed: int, steps: int = TRAINING["steps"]):
    """``(params, log)`` of one run: the model of ``seed`` trained on the batches of ``seed``."""
    params = init_model(seed)
    log = train_decoder(params, batch, steps=steps, lr=TRAINING["lr"], seed=seed, **SCHEMES[scheme])
    return params, log


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=TRAINING["steps"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", type=Path, default=ROOT / "attention_kit" / "data" / "extrapolation.npz")
    args = ap.parse_args()
    S, R = list(SCHEMES), args.seeds
    acc = np.zeros((len(S), len(R), len(LENGTHS)))
    boundary = np.zeros_like(acc)
    losses = np.zeros((len(S), len(R), args.steps // EVERY))
    first = np.zeros((len(S), min(FIRST, args.steps)))
    arrays = {}
    for i, scheme in enumerate(S):
        for j, seed in enumerate(R):
            t0 = time.perf_counter()
            params, log = train(scheme, seed, args.steps)
            acc[i, j] = [accuracy(params, scheme, n) for n in LENGTHS]
            boundary[i, j] = [accuracy(params, scheme, n, positions="boundary") for n in LENGTHS]
            losses[i, j] = log.smoothed(EVERY)
            if j == 0:
                first[i] = log.losses[: first.shape[1]]
                arrays |= {f"param/{scheme}/{k}": v.astype(np.float32) for k, v in params.items()}
            print(f"{scheme:12s} seed {seed}: last loss {losses[i, j, -1]:.3f}, accuracy at "
                  + ", ".join(f"{n}: {a:.2f}" for n, a in zip(LENGTHS, acc[i, j], strict=True))
                  + f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    np.savez_compressed(args.out, schemes=np.array(S), seeds=np.array(R), lengths=np.array(LENGTHS),
                        accuracy=acc, boundary=boundary, losses=losses, every=EVERY, first_losses=first,
                        steps=args.steps, **arrays)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
