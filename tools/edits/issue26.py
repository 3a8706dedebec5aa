"""Issue 26, student edition: tag the cells that the hand-out copies must drop, and put the cells
that check an explorer's "try this" list under a collapsed "Check what you found" heading.

    python tools/edits/issue26.py            # edits notebooks/0[1-7]_*.ipynb in place; safe to run twice

Tags (read by tools/make_student.py):

* ``solution``: a worked solution (every cell collapsed with ``jupyter.source_hidden``), and the
  Markdown that announces one ("a worked solution follows ..."), split into a cell of its own.
* ``answer-reveal``: a cell that gives an exercise's answer away outside its solution (05's cell that
  trains *rotate* and asserts the pattern, the sentences of 06's summary that answer exercise 2).
* ``explorer-check``: a cell that verifies the "try this" items of an explorer. It stays in the
  student copy, under a heading collapsed by default (``jp-MarkdownHeadingCollapsed``), so a learner
  meets it after exploring.

Only Markdown cells and metadata change (no code cell is edited or moved), so the stored outputs stay
as they are and no notebook needs re-executing. Cells are found by their text, not their position.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

CHECK_HEADING = "### Check what you found"
COLLAPSED = "jp-MarkdownHeadingCollapsed"
# "A worked solution follows each one, hidden: click ...", "The worked solution sits in ..."
SOLUTION_SENTENCE = re.compile(r"(?:A|The)\s+worked\s+solution\s+(?:follows|sits)[^.]*\.")


def find(nb, text: str, *, kind: str | None = None, start: int = 0) -> int:
    """Index of the one cell (from ``start``) whose source contains ``text``."""
    hits = [i for i, c in enumerate(nb.cells) if i >= start and text in c.source
            and (kind is None or c.cell_type == kind)]
    if len(hits) != 1:
        raise SystemExit(f"expected one cell containing {text!r}, found {len(hits)}")
    return hits[0]


def tag(cell, name: str) -> None:
    tags = cell.metadata.setdefault("tags", [])
    if name not in tags:
        tags.append(name)


def markdown(cell_id: str, source: str, *tags: str):
    cell = nbformat.v4.new_markdown_cell(source, id=cell_id)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def has_id(nb, cell_id: str) -> bool:
    return any(c.get("id") == cell_id for c in nb.cells)


def tag_solutions(nb) -> None:
    for cell in nb.cells:
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            tag(cell, "solution")


def split_solution_sentence(nb, prefix: str) -> None:
    """Move "a worked solution follows ..." out of the exercises' introduction into a cell of its
    own, tagged ``solution``, just before the first exercise's heading."""
    cell_id = f"{prefix}-solution-note"
    if has_id(nb, cell_id):
        return
    i = next(i for i, c in enumerate(nb.cells)
             if c.cell_type == "markdown" and SOLUTION_SENTENCE.search(c.source))
    src = nb.cells[i].source
    m = SOLUTION_SENTENCE.search(src)
    sentence = " ".join(m.group(0).split())
    head = src[:m.start()].rstrip()
    rest = src[m.end():]
    # the rest of the paragraph (if any) stays with the introduction; a heading starts a new cell
    para_end = rest.find("\n\n")
    para, tail = (rest, "") if para_end < 0 else (rest[:para_end], rest[para_end:].strip("\n"))
    head = (head + " " + para.strip()).rstrip() if para.strip() else head
    nb.cells[i].source = head
    new = [markdown(cell_id, sentence, "solution")]
    if tail:
        new.append(markdown(f"{prefix}-exercise-1", tail))
    nb.cells[i + 1:i + 1] = new


def check_heading(nb, prefix: str, first_check: str, checks: list[str], intro: str = "",
                  *, move_from: tuple[str, str] | None = None) -> None:
    """Put a collapsed "Check what you found" heading before the cell containing ``first_check``
    and tag every cell containing one of ``checks`` as ``explorer-check``.

    ``move_from = (cell text, sentence)``: a sentence that introduced the check cell at the end of
    the "try this" list moves into the heading's cell (replaced by ``intro`` if given)."""
    cell_id = f"{prefix}-check-heading"
    for text in checks:
        tag(nb.cells[find(nb, text, kind="code")], "explorer-check")
    if has_id(nb, cell_id):
        return
    body = intro
    if move_from is not None:
        j = find(nb, move_from[0], kind="markdown")
        src = nb.cells[j].source
        if move_from[1] not in src:
            raise SystemExit(f"{prefix}: sentence not found: {move_from[1]!r}")
        nb.cells[j].source = src.replace(move_from[1], "").rstrip()
        body = body or move_from[1]
    heading = markdown(cell_id, CHECK_HEADING + ("\n\n" + body if body else ""))
    heading.metadata[COLLAPSED] = True
    i = find(nb, first_check, kind="code")
    nb.cells.insert(i, heading)


def replace_text(nb, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the one Markdown cell holding it (nothing if already done)."""
    hits = [c for c in nb.cells if c.cell_type == "markdown" and old in c.source]
    if not hits:
        if not any(new in c.source for c in nb.cells):
            raise SystemExit(f"neither {old!r} nor its replacement found")
        return
    for c in hits:
        c.source = c.source.replace(old, new)


TIME = re.compile(r"([Aa])bout \d+(?:\s*[–-]\s*\d+)? minutes[^.\n]*\.")


def header_time(nb, path: Path) -> None:
    """The header's "about N minutes" becomes the measure of tools/notebook_time.py (issue 26:
    prose at 120 words a minute, code at 15 lines, 10 minutes per explorer, 5-8 per exercise)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import notebook_time

    for cell in nb.cells[:3]:
        if cell.cell_type == "markdown" and (m := TIME.search(cell.source)):
            tmp = path.with_name(".issue26-time.ipynb")
            try:
                nbformat.write(nb, tmp)
                sentence = notebook_time.measure(tmp).sentence()
            finally:
                tmp.unlink(missing_ok=True)
            if m.group(1) == "a":
                sentence = "a" + sentence[1:]
            cell.source = cell.source[:m.start()] + sentence + cell.source[m.end():]
            return
    raise SystemExit(f"{path.name}: no 'about N minutes' in the header")


def nb01(nb) -> None:
    replace_text(nb, "**Try this** (the cell below checks each claim with `attention_kit`, on the "
                     "explorer's starting vectors):",
                 "**Try this** (then open **Check what you found** below: it checks each claim with "
                 "`attention_kit`, on the explorer's starting vectors):")
    check_heading(nb, "nb01", "# the explorer's starting vectors, and the same computation",
                  ["# the explorer's starting vectors, and the same computation"],
                  "Each claim of the list above, checked in code on the explorer's starting vectors. "
                  "Open it after you have tried them.")
    split_solution_sentence(nb, "nb01")


def nb02(nb) -> None:
    sentence = ("The cell below plays items 1, 3 and 5 through the explorer's own methods, checks "
                "items 2, 4 and 6\nwith `attention_kit`, and asserts what each one should show.")
    check_heading(nb, "nb02", 'ex = SelfAttentionExplorer(X, labels=labels)',
                  ['ex = SelfAttentionExplorer(X, labels=labels)'],
                  move_from=("**Try this**\n\n1. **Make two vectors equal.**", sentence))
    split_solution_sentence(nb, "nb02")


def nb03(nb) -> None:
    replace_text(nb, "(the cells below print the ranges)", "(**Check what you found** prints the ranges)")
    replace_text(nb, "(the cell below computes this case too)",
                 "(**Check what you found** computes this case too)")
    check_heading(nb, "nb03", "# What the explorer shows is attention_kit's multi-head attention",
                  ["# What the explorer shows is attention_kit's multi-head attention",
                   "# try this 3: 4 heads, seed 0"],
                  "The explorer's numbers, and the list above, checked in code. Open it after you "
                  "have tried them.")
    split_solution_sentence(nb, "nb03")


def nb04(nb) -> None:
    check_heading(nb, "nb04", "# The explorer computes what attention_kit computes:",
                  ["# The explorer computes what attention_kit computes:",
                   'demo = MaskExplorer(padded, mask="causal", token=2)'],
                  "The explorer's numbers, and the list above, checked in code. Open it after you "
                  "have tried them.")
    split_solution_sentence(nb, "nb04")


def nb05(nb) -> None:
    check_heading(nb, "nb05", 'big = Trainer("reverse", lr=1.0)', ['big = Trainer("reverse", lr=1.0)'],
                  move_from=("**Try this**\n\n1. **A learning rate that is too large.**",
                             "Each item, replayed with the same trainer code (without the widget), "
                             "checks what it says:"))
    split_solution_sentence(nb, "nb05")
    replace_text(nb, "Set\n`answer` to a list of six key indices, then run the cell after the solution "
                     "to train the head and see.",
                 "Set\n`answer` to a list of six key indices.")
    tag(nb.cells[find(nb, 'rotate = Trainer("rotate")', kind="code")], "answer-reveal")
    if not has_id(nb, "nb05-rotate-trained"):
        i = find(nb, 'rotate = Trainer("rotate")', kind="code")
        nb.cells.insert(i, markdown("nb05-rotate-trained",
                                    "The head of exercise 4, trained on *rotate*: where each query "
                                    "looks most.", "answer-reveal"))


def nb06(nb) -> None:
    check_heading(nb, "nb06", 'demo = HeadView(params, cfg, vocab, context="little miss muffet',
                  ['demo = HeadView(params, cfg, vocab, context="little miss muffet'],
                  move_from=("**Try this**\n\n1. With the context above, switch between head 1",
                             "The cell below does the same from code, through the widget's own "
                             "controls, and checks each answer:"))
    # the next part of section 5 is no check: a heading of its own ends the collapsed part
    replace_text(nb, "**What the heads do, checked.** Reading a head",
                 "### What the heads do, checked\n\nReading a head")
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.strip() == "A worked solution follows (collapsed).":
            tag(cell, "solution")
    # the summary's bullet on the causal mask answers exercise 2: its answer goes to a tagged cell
    if not has_id(nb, "nb06-summary-mask"):
        i = find(nb, "## Summary", kind="markdown")
        src = nb.cells[i].source
        m = re.search(r"(predict\.) (At inference, .*?change\.)\n(\* .*)", src, re.S)
        if m is None:
            raise SystemExit("06: the summary's causal-mask bullet was not found")
        nb.cells[i].source = src[:m.start()] + m.group(1)
        nb.cells[i + 1:i + 1] = [
            markdown("nb06-summary-mask", " ".join(m.group(2).split()), "answer-reveal"),
            markdown("nb06-summary-rest", m.group(3)),
        ]


def nb07(nb) -> None:
    check_heading(nb, "nb07", "# The stepper computes what attention_kit computes:",
                  ["# The stepper computes what attention_kit computes:",
                   "demo = TilingStepper(step=6)"],
                  "The stepper's numbers, and the list above, checked in code. Open it after you "
                  "have tried them.")
    split_solution_sentence(nb, "nb07")


EDITS = {
    "01_general_attention_model.ipynb": nb01,
    "02_self_attention.ipynb": nb02,
    "03_multi_head_attention.ipynb": nb03,
    "04_masks_and_positions.ipynb": nb04,
    "05_how_attention_learns.ipynb": nb05,
    "06_tiny_language_model.ipynb": nb06,
    "07_attention_at_scale.ipynb": nb07,
}


def guide_times() -> None:
    """docs/teaching.md's "**Time:**" of each notebook, and the README's table, repeat the header."""
    import notebook_time

    guide = ROOT / "docs" / "teaching.md"
    text = guide.read_text(encoding="utf-8")
    for name in EDITS:
        link = f"(../notebooks/{name})"
        start = text.find(link)
        if start < 0:
            continue
        m = re.compile(r"\*\*Time:\*\* about \d+(?:\s*[–-]\s*\d+)? minutes[^.\n]*\.").search(text, start)
        if m is None:
            raise SystemExit(f"docs/teaching.md: no **Time:** after {link}")
        sentence = notebook_time.measure(NOTEBOOKS / name).sentence()
        text = text[:m.start()] + "**Time:** a" + sentence[1:] + text[m.end():]
    ranges = [notebook_time.measure(NOTEBOOKS / name).rounded for name in EDITS]
    text = re.sub(r"notebook takes \d+ to \d+ minutes",
                  f"notebook takes {min(r[0] for r in ranges)} to {max(r[1] for r in ranges)} minutes", text)
    if text != guide.read_text(encoding="utf-8"):
        guide.write_text(text, encoding="utf-8")
        print("edited docs/teaching.md")
    # the README's table of notebooks ends each row with the time
    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines(keepends=True)
    for k, line in enumerate(lines):
        for name in EDITS:
            if f"(notebooks/{name})" in line:
                low, high = notebook_time.measure(NOTEBOOKS / name).rounded
                lines[k] = re.sub(r"\| \d+–\d+ min \|(\s*)$", rf"| {low}–{high} min |\1", line)
    if "".join(lines) != readme.read_text(encoding="utf-8"):
        readme.write_text("".join(lines), encoding="utf-8")
        print("edited README.md")


def main(names: list[str]) -> int:
    for name, edit in EDITS.items():
        if names and name not in names and f"notebooks/{name}" not in names:
            continue
        path = NOTEBOOKS / name
        before = path.read_text(encoding="utf-8")
        nb = nbformat.reads(before, as_version=4)
        tag_solutions(nb)
        edit(nb)
        header_time(nb, path)
        nbformat.validate(nb)
        after = nbformat.writes(nb) + "\n"
        if after != before:
            path.write_text(after, encoding="utf-8")
            print(f"edited {path.relative_to(ROOT)}")
    guide_times()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
