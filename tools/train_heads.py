"""Train notebook 08's four models and write the weights shipped in the package.

    python tools/train_heads.py                       # all four: attention_kit/data/heads_<name>.npz
    python tools/train_heads.py --only sinks --out /tmp   # one model, written elsewhere
    python tools/train_heads.py --seed 1 --out /tmp --summary  # another seed, to check the claims

Each file holds the final weights, the loss of every step (``losses``) and the recipe's seed.
The induction model's file also holds what its snapshots (every 25 steps) did: the held-out
accuracy on the repeated part, the heads' scores, and every head's pattern on one probe sequence,
so that notebook 08 can show the phase change without training for long. Deterministic: the same
seed gives the same losses (to rounding across BLAS builds); tests/test_heads_trained.py checks
that the first steps of a fresh run reproduce the shipped log.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from attention_kit.heads import diagnostics as D
from attention_kit.heads.model import run
from attention_kit.heads.trained import RECIPES, held_out, train_recipe
from attention_kit.learn.layers import cross_entropy
from attention_kit.learn.params import save_params

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_EVERY = 25
#: the probe of the notebook's heatmaps: a segment of 7 distinct tokens, repeated
PROBE = np.array([3, 9, 14, 1, 7, 12, 5] * 4)[:24]


def snapshot_record(snapshots: dict, name: str) -> dict:
    """Per snapshot: held-out loss and accuracy, the heads' scores, and the probe's patterns."""
    ids, targets, rep = held_out(name)
    rec = {k: [] for k in ("snap_loss", "snap_acc", "snap_prev", "snap_prev_early", "snap_prefix", "snap_probe")}
    for step in sorted(snapshots):
        p = snapshots[step]
        logits, saved = run(p, ids)
        w = saved["weights"]
        rec["snap_loss"].append(cross_entropy(logits, targets)[0])
        rec["snap_acc"].append(D.accuracy(logits, targets, rep))
        rec["snap_prev"].append(np.concatenate([D.previous_token_score(x) for x in w]))
        rec["snap_prev_early"].append(np.concatenate([D.previous_token_score(x, queries=slice(1, 13)) for x in w]))
        rec["snap_prefix"].append(np.concatenate([D.prefix_matching_score(x, ids) for x in w]))
        rec["snap_probe"].append(np.stack([x[0] for x in run(p, PROBE)[1]["weights"]]))  # (L, h, n, n)
    out = {k: np.array(v) for k, v in rec.items()}
    out["snap_probe"] = out["snap_probe"].astype(np.float16)  # a picture: 3 digits are plenty
    out["snap_steps"] = np.array(sorted(snapshots))
    out["probe"] = PROBE
    return out


def summary(name: str, params: dict) -> str:
    """One line of what the model does on its held-out set."""
    ids, targets, counts = held_out(name)
    logits, saved = run(params, ids)
    w = saved["weights"]
    line = f"{name}: loss {cross_entropy(logits, targets)[0]:.3f} accuracy where it counts {D.accuracy(logits, targets, counts):.3f}"
    if RECIPES[name]["task"] == "repeated":
        line += f" (where the rule applies, queries whose token occurred before: {D.accuracy(logits, targets, D.seen_before(ids)):.3f})"
        line += "".join(f" | L{l} prev {np.round(D.previous_token_score(x), 2)} prev(1-12) "
                        f"{np.round(D.previous_token_score(x, queries=slice(1, 13)), 2)} prefix "
                        f"{np.round(D.prefix_matching_score(x, ids), 2)}" for l, x in enumerate(w))
        means = D.head_means(params, ids, positions="learned")
        for head in [h for h in means if h[0] == 0]:
            lg, _ = run(params, ids, replace_heads=D.mean_ablation(means, [head]))
            line += f" | ablate {head}: {D.accuracy(lg, targets, counts):.3f}"
    else:
        line += f" | sink mass {np.round(D.sink_mass(w[0], queries=~counts), 3)}"
        for sinks in (0, 1):
            line += f" | window 4 sinks {sinks}: loss {cross_entropy(run(params, ids, window=4, sinks=sinks)[0], targets)[0]:.3f}"
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(RECIPES), action="append")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "attention_kit" / "data")
    ap.add_argument("--summary", action="store_true", help="print what each model does; write nothing")
    args = ap.parse_args()
    for name in args.only or RECIPES:
        t0 = time.perf_counter()
        snap = SNAPSHOT_EVERY if name == "induction" else None
        params, config, log = train_recipe(name, seed=args.seed, snapshot_every=snap)
        print(f"{name}: {len(log.losses)} steps in {time.perf_counter() - t0:.0f} s; loss "
              f"{log.losses[0]:.3f} -> {log.smoothed(25)[-1]:.3f}", flush=True)
        print("  ", summary(name, params), flush=True)
        if args.summary:
            continue
        extra = snapshot_record(log.snapshots, name) if snap else {}
        path = args.out / f"heads_{name}.npz"
        save_params(path, params, config, losses=log.losses, seed=args.seed, **extra)
        print(f"   wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
