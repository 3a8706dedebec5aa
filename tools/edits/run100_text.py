"""Notebook 05: say that Run 100 draws as it trains (a picture every ten steps). Safe to run twice.
Usage: python tools/edits/run100_text.py, then make notebooks NB=notebooks/05_how_attention_learns.ipynb
"""

from __future__ import annotations

from pathlib import Path

import nbformat

NB = Path(__file__).resolve().parents[2] / "notebooks" / "05_how_attention_learns.ipynb"
OLD = "**Step** takes one training step, **Run 100** a hundred, and\n"
NEW = ("**Step** takes one training step, **Run 100** a hundred (the picture is redrawn every ten\n"
       "steps, so you watch the run happen), and\n")


def main() -> None:
    nb = nbformat.read(NB, as_version=4)
    hits = [c for c in nb.cells if c.cell_type == "markdown" and OLD in c.source]
    for cell in hits:
        cell.source = cell.source.replace(OLD, NEW)
    if hits:
        nbformat.write(nb, NB)
    print(f"{NB.name}: {len(hits)} cell(s) changed")


if __name__ == "__main__":
    main()
