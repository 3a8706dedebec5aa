"""Two notebook edits, each found by its text and safe to run twice:

* notebook 06 prints the loss of the run without residual paths to one decimal. That run is
  chaotic: after 150 steps its loss is 1.711 - 1.715 depending on the BLAS kernel and the SIMD
  width (measured over seven settings), so "1.71" failed nbval on a machine that computes 1.715.
  The run with residual paths is stable to 1e-14 and keeps two decimals.
* notebook 05 says that Run 100 draws as it trains (a picture every ten steps, issue 23).
* notebook 05 checks what "Adam at ten times its learning rate still trains" means on every
  machine: it never diverges and reaches 0.95 held-out accuracy (at step 10 under every setting
  of `make nbval-scan`). Its accuracy at step 200 was asserted >= 0.95, but at that rate it bounces
  after it has learned: 0.919 - 1.000 at step 200 depending on the BLAS kernel and the SIMD width.

Usage: python tools/edits/stable_and_run100.py, then make notebooks NB=<the notebook whose code changed>
"""

from __future__ import annotations

from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
EDITS = [  # (notebook, cell type, old text, new text)
    ("06_tiny_language_model.ipynb", "code",
     'print(f"training loss after 150 steps: with {end_with:.2f}, without {end_without:.2f}")',
     "# without residual paths the run is chaotic: its last digits differ from machine to machine\n"
     'print(f"training loss after 150 steps: with {end_with:.2f}, without {end_without:.1f}")'),
    ("05_how_attention_learns.ipynb", "markdown",
     "**Step** takes one training step, **Run 100** a hundred, and\n",
     "**Step** takes one training step, **Run 100** a hundred (the picture is redrawn every ten\n"
     "steps, so you watch the run happen), and\n"),
]


ADAM_OLD = ("assert not adam_big.diverged and adam_big.heldout_accuracy >= 0.95\n"
            'print("SGD + momentum, lr 0.8: diverged within 100 steps;"\n'
            '      " Adam, lr 0.1: held-out accuracy at step 200 at least 0.95")')
ADAM_NEW = ("adam_95 = next((step for step, acc in adam_big.checkpoints if acc >= 0.95), None)\n"
            "assert not adam_big.diverged and adam_95 is not None  # (at this rate it bounces once it has\n"
            "# learned: its accuracy at step 200 differs from machine to machine)\n"
            'print("SGD + momentum, lr 0.8: diverged within 100 steps;"\n'
            '      " Adam, lr 0.1: never diverged, held-out accuracy 0.95 reached within 200 steps")')
EDITS.append(("05_how_attention_learns.ipynb", "code", ADAM_OLD, ADAM_NEW))


def main() -> None:
    for name, kind, old, new in EDITS:
        path = NOTEBOOKS / name
        nb = nbformat.read(path, as_version=4)
        hits = [c for c in nb.cells if c.cell_type == kind and old in c.source]
        for cell in hits:
            cell.source = cell.source.replace(old, new)
        if hits:
            nbformat.write(nb, path)
        print(f"{name}: {len(hits)} cell(s) changed")


if __name__ == "__main__":
    main()
