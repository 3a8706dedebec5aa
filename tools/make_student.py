"""Write student copies of the course notebooks: outputs cleared, worked solutions removed.

    python tools/make_student.py                 # notebooks/NN_*.ipynb -> student/
    python tools/make_student.py -o handout notebooks/02_self_attention.ipynb

A solution cell is a cell whose metadata has ``"jupyter": {"source_hidden": true}`` (how the
course collapses its worked solutions) or a tag named ``solution``/``solutions``. Each one is
replaced by a short Markdown note, so the exercise text ("a worked solution follows ...") still
makes sense. Everything else is kept as it is, minus outputs, execution counts, execution
timings and saved widget state. Other files in ``notebooks/`` (pictures, data) are copied along.
The committed notebooks are never modified. Each student copy is checked against the exercise
registry (``attention_kit.check.registry``): a warning names any exercise whose answer no cell
defines, since the class grader (``make grade``) could not grade it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_TAGS = {"solution", "solutions"}
NOTE = ("*The worked solution is not in the student copy. When you are done, compare with the "
        "full notebook, `notebooks/{name}`, or ask your teacher.*")
# Cell metadata that only describes an execution.
RUN_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime")


def is_solution(cell) -> bool:
    meta = cell.get("metadata", {})
    hidden = bool(meta.get("jupyter", {}).get("source_hidden"))
    tagged = bool(SOLUTION_TAGS & {str(t).lower() for t in meta.get("tags", [])})
    return hidden or tagged


def studentize(nb, name: str):
    """Return (student notebook, number of solution cells removed). ``nb`` is left unchanged."""
    out = nbformat.from_dict(nb)  # a deep copy
    cells = []
    removed = 0
    for cell in out.cells:
        if is_solution(cell):
            removed += 1
            note = nbformat.v4.new_markdown_cell(NOTE.format(name=name),
                                                 id=f"solution-removed-{removed}")
            note.metadata["tags"] = ["solution-removed"]
            cells.append(note)
            continue
        for key in RUN_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        elif "attachments" in cell and not cell.attachments:
            del cell["attachments"]
        cells.append(cell)
    out.cells = cells
    out.metadata.pop("widgets", None)  # saved widget state belongs to a run
    nbformat.validate(out)
    return out, removed


def ungradable_exercises(nb, file_name: str) -> list[str]:
    """Registry exercises of ``file_name`` whose answer no code cell of ``nb`` defines."""
    from attention_kit.check import registry

    entry = next((n for n in registry.NOTEBOOKS if n.file == file_name), None)
    if entry is None:
        return []
    cells = registry.answer_cells([c.source for c in nb.cells if c.cell_type == "code"], entry)
    return [ex_id for ex_id, hits in cells.items() if not hits]


def with_solutions(student, original, file_name: str):
    """A copy of ``student`` with each worked solution of ``original`` written under its exercise,
    as a learner who solved everything would return it (for testing the grader)."""
    from attention_kit.check import registry

    entry = next(n for n in registry.NOTEBOOKS if n.file == file_name)
    solved = nbformat.from_dict(student)
    code = [c for c in solved.cells if c.cell_type == "code"]
    full = [c for c in original.cells if c.cell_type == "code"]
    mine = registry.answer_cells([c.source for c in code], entry)
    theirs = registry.answer_cells([c.source for c in full], entry)
    for ex_id, hits in mine.items():
        solution = next(full[k].source for k in theirs[ex_id] if is_solution(full[k]))
        code[hits[0]].source += "\n\n" + solution
    return solved


def course_notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to convert (default: notebooks/NN_*.ipynb)")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "student",
                        help="output folder (default: student/)")
    args = parser.parse_args(argv)
    sources = args.notebooks or course_notebooks()
    if not sources:
        print("no notebooks found", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for src in sources:
        nb = nbformat.read(src, as_version=4)
        student, removed = studentize(nb, src.name)
        if removed == 0:
            print(f"warning: {src.name} has no solution cells", file=sys.stderr)
        dst = args.out / src.name
        nbformat.write(student, dst)
        print(f"{dst}: {removed} solution cell(s) removed, outputs cleared")
        for ex_id in ungradable_exercises(student, src.name):
            print(f"warning: {dst.name}: no cell defines the answer of exercise {ex_id} "
                  "(attention_kit/check/registry.py); make grade cannot grade it", file=sys.stderr)
    # pictures or data files next to the notebooks, so relative links keep working
    for src_dir in sorted({s.parent for s in sources}):
        for extra in src_dir.iterdir():
            if extra.is_file() and extra.suffix != ".ipynb" and not extra.name.startswith("."):
                shutil.copy2(extra, args.out / extra.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
