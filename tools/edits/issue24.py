"""Issue 24: write notebook 08, *What trained heads do*, and link notebook 07 to it.

    python tools/edits/issue24.py      # rewrites notebooks/08_what_heads_learn.ipynb; safe to run twice

Notebook 08 is written whole from the cells below (its outputs come from
``make notebooks NB=notebooks/08_what_heads_learn.ipynb``); notebook 07 only gets its "Next:" link,
so its outputs stay as they are.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "notebooks" / "08_what_heads_learn.ipynb"
NB07 = ROOT / "notebooks" / "07_attention_at_scale.ipynb"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from issue24_cells import CELLS  # noqa: E402


def build() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
    }
    for k, (kind, source, tags) in enumerate(CELLS):
        cell_id = f"nb08-{k:02d}"
        if kind == "md":
            cell = nbformat.v4.new_markdown_cell(source.strip("\n"), id=cell_id)
        else:
            cell = nbformat.v4.new_code_cell(source.strip("\n"), id=cell_id)
        if tags:
            cell.metadata["tags"] = [t for t in tags if t != "hidden"]
        if "hidden" in tags or "solution" in tags and kind == "code":
            cell.metadata["jupyter"] = {"source_hidden": True}
        if "collapsed-heading" in tags:
            cell.metadata["tags"].remove("collapsed-heading")
            cell.metadata["jp-MarkdownHeadingCollapsed"] = True
        if not cell.metadata.get("tags"):
            cell.metadata.pop("tags", None)
        nb.cells.append(cell)
    return nb


def keep_outputs(new, old) -> None:
    """Carry the stored outputs over to code cells whose source did not change (a no-op rerun)."""
    by_source = {c.source: c for c in old.cells if c.cell_type == "code"}
    for c in new.cells:
        if c.cell_type == "code" and c.source in by_source:
            c.outputs = by_source[c.source].outputs
            c.execution_count = by_source[c.source].execution_count


def link_07() -> None:
    nb = nbformat.read(NB07, as_version=4)
    old = "Next: none yet."
    new = "Next: [08 · What trained heads do](08_what_heads_learn.ipynb)."
    for c in nb.cells:
        if c.cell_type == "markdown" and old in c.source:
            c.source = c.source.replace(old, new)
            nbformat.write(nb, NB07)
            return


def header_time(nb) -> None:
    """The header's "about N minutes" becomes the measure of tools/notebook_time.py."""
    sys.path.insert(0, str(ROOT / "tools"))
    import notebook_time

    tmp = NB.with_name(".issue24-time.ipynb")
    try:
        nbformat.write(nb, tmp)
        sentence = notebook_time.measure(tmp).sentence()
    finally:
        tmp.unlink(missing_ok=True)
    head = nb.cells[0]
    m = re.search(r"about \d+(?:–\d+)? minutes[^.\n]*\.", head.source)
    head.source = head.source[:m.start()] + "a" + sentence[1:] + head.source[m.end():]


def main() -> None:
    nb = build()
    if NB.exists():
        keep_outputs(nb, nbformat.read(NB, as_version=4))
        nb.metadata = nbformat.read(NB, as_version=4).metadata or nb.metadata
    header_time(nb)
    nbformat.write(nb, NB)
    link_07()
    print(f"wrote {NB.relative_to(ROOT)} ({len(nb.cells)} cells)")


if __name__ == "__main__":
    main()
