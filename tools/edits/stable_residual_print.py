"""Notebook 06: print the loss of the run without residual paths to one decimal.

That run is chaotic: after 150 steps its loss is 1.711 - 1.715 depending on the BLAS kernel and the
SIMD width (measured over seven settings), so "1.71" failed nbval on a machine that computes 1.715.
The run with residual paths is stable to 1e-14 and keeps two decimals. Safe to run twice.
Usage: python tools/edits/stable_residual_print.py, then make notebooks NB=notebooks/06_tiny_language_model.ipynb
"""

from __future__ import annotations

from pathlib import Path

import nbformat

NB = Path(__file__).resolve().parents[2] / "notebooks" / "06_tiny_language_model.ipynb"
OLD = 'print(f"training loss after 150 steps: with {end_with:.2f}, without {end_without:.2f}")'
NEW = ("# without residual paths the run is chaotic: its last digits differ from machine to machine\n"
       'print(f"training loss after 150 steps: with {end_with:.2f}, without {end_without:.1f}")')


def main() -> None:
    nb = nbformat.read(NB, as_version=4)
    hits = [c for c in nb.cells if c.cell_type == "code" and OLD in c.source]
    for cell in hits:
        cell.source = cell.source.replace(OLD, NEW)
    if hits:
        nbformat.write(nb, NB)
    print(f"{NB.name}: {len(hits)} cell(s) changed")


if __name__ == "__main__":
    main()
