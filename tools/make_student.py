"""Build the student edition: a self-contained folder with the notebooks as learners get them.

    python tools/make_student.py                   # -> student/ (make student)
    python tools/make_student.py --zip             # the same, plus student.zip (make student-zip)
    python tools/make_student.py -o handout notebooks/02_self_attention.ipynb

The folder holds the student copies of the notebooks (``NN_*.ipynb``), the ``attention_kit``
package, a README for learners, a ``Makefile`` whose ``make lab`` installs and opens them,
``environment.yml`` and ``pyproject.toml`` (so Binder and JupyterHub can build it),
``requirements/lab.txt`` (the lock file: the versions both install), and a ``.gitignore``: push it as a repository of its own, zip it, or point nbgitpuller at it (docs/teaching.md, "Publish the student edition").

A student copy is the full notebook minus every cell tagged ``solution`` (the worked solutions,
also every cell collapsed with ``"jupyter": {"source_hidden": true}``, and the sentences that
announce them) or ``answer-reveal`` (a cell that gives an answer away outside its solution), with
outputs, execution counts and saved widget state cleared. Cells tagged ``explorer-check`` stay,
under their collapsed "Check what you found" heading. The tags are set in the notebooks
themselves (docs/development.md, "The notebooks"). The committed notebooks are never modified. The build fails if
:func:`find_leaks` finds a solution's line, a tagged cell, a sentence about solutions or a pointer at what the
edition lacks (``teacher_only.py``), and warns about an exercise whose answer no cell defines (``make grade``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import zipfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from checker_source import record_only_checkers, strip_references  # noqa: E402
from teacher_only import TEACHER_COMMAND, TEACHER_ONLY, strip_package  # noqa: E402

TEMPLATES = ROOT / "tools" / "student_edition"
MARKER = ".attention-kit-language"  # attention_kit.i18n.MARKER: notebooks/zh/ speaks Chinese
SOLUTION_TAGS = {"solution", "solutions"}
DROP_TAGS = SOLUTION_TAGS | {"answer-reveal"}
RUN_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime")  # cell metadata that only describes a run
# Text that must not reach a learner: it points at solutions that are not there.
# "the solution" in any of its forms: the student edition has none to point at (issue 35: 08 told
# learners to "check your prediction against the measurement in the solution").
FORBIDDEN = re.compile(r"worked\s+solution|solution\s+follows|collapsed\s+cell|full\s+notebook"
                       r"|answer\s+key|class-answers"
                       r"|\b(?:in|from|against|see|with|under|to|than|of|at)\s+(?:the|its|each|their|our)"
                       r"\s+(?:\w+\s+)?solutions?\b"
                       r"|\bsolutions?\s+(?:cells?|below|above|shows?|says?|measures?|prints?)\b", re.I)
# Paths the student edition does not ship (issue 46: 08 and 09 pointed learners at tools/ and tests/).
MISSING_PATHS = re.compile(r"(?<![\w/.-])(?:tools|tests)/[\w./-]*\w")
ZIP_ROOT = "attention-course"


def _tags(cell) -> set[str]:
    return {str(t).lower() for t in cell.get("metadata", {}).get("tags", [])}


def is_solution(cell) -> bool:
    """A worked solution (collapsed, or tagged ``solution``), or Markdown announcing one."""
    hidden = bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))
    return hidden or bool(SOLUTION_TAGS & _tags(cell))


def is_dropped(cell) -> bool:
    """True for every cell the student copy leaves out."""
    return is_solution(cell) or bool(DROP_TAGS & _tags(cell))


def studentize(nb, name: str):
    """Return (student notebook, number of cells left out). ``nb`` is left unchanged."""
    out = nbformat.from_dict(nb)  # a deep copy
    cells = []
    removed = 0
    for cell in out.cells:
        if is_dropped(cell):
            removed += 1
            continue
        for key in RUN_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        else:
            if "attachments" in cell and not cell.attachments:
                del cell["attachments"]
            # the student edition keeps its README beside the notebooks
            cell.source = cell.source.replace("](../README.md", "](README.md")
        cells.append(cell)
    out.cells = cells
    out.metadata.pop("widgets", None)  # saved widget state belongs to a run
    nbformat.validate(out)
    return out, removed


def solution_lines(nb) -> set[str]:
    """Lines of ``nb``'s dropped cells that no kept cell has: what the student copy must not show."""
    kept = set()
    for cell in nb.cells:
        if not is_dropped(cell):
            kept.update(ln.strip() for ln in cell.source.splitlines())
    lines = set()
    for cell in nb.cells:
        if is_dropped(cell):
            for ln in cell.source.splitlines():
                ln = ln.strip()
                if len(ln) >= 12 and ln not in kept and not ln.startswith(("#", "with check.quietly")):
                    lines.add(ln)
    return lines


def find_leaks(folder: Path, originals: list[Path] | None = None) -> list[str]:
    """Problems in a built student edition: a cell tagged ``solution``/``answer-reveal`` or
    collapsed as a solution, a stored output, text about solutions, or a line of a dropped cell of
    the full notebooks (``originals``, default ``notebooks/NN_*.ipynb``) in any notebook or text file."""
    originals = course_notebooks() if originals is None else originals
    secret = set()
    for src in originals:
        secret |= solution_lines(nbformat.read(src, as_version=4))
    from answers_above import answers_above

    problems = []
    for src in originals:
        if (folder / src.name).exists():
            problems += answers_above(nbformat.read(src, as_version=4), src.name, is_dropped=is_dropped)
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or ".venv" in path.parts or path.suffix in {".pyc", ".npz", ".js", ".pkl"}:
            continue
        rel = path.relative_to(folder)
        if path.suffix == ".py":
            # what `check.x??` or `help(...)` shows a learner: every shipped module's docstrings and comments
            if rel.parts[:1] == ("attention_kit",):
                text = path.read_text(encoding="utf-8")
                for pattern in (FORBIDDEN, MISSING_PATHS, TEACHER_ONLY, TEACHER_COMMAND):
                    if m := pattern.search(text):
                        problems.append(f"{rel}: says {m.group(0)!r}")
            continue
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            for k, cell in enumerate(nb.cells):
                if is_dropped(cell):
                    problems.append(f"{rel}: cell {k} is a solution or tagged answer-reveal")
                if cell.cell_type == "code" and cell.outputs:
                    problems.append(f"{rel}: cell {k} has stored outputs")
            texts = [c.source for c in nb.cells]
        elif path.suffix in {".md", ".txt", ".yml", ".toml", ""}:
            texts = [path.read_text(encoding="utf-8")]
        else:
            continue
        for text in texts:
            if m := FORBIDDEN.search(text):
                problems.append(f"{rel}: says {m.group(0)!r}")
            if path.suffix == ".ipynb" and (m := MISSING_PATHS.search(text)):
                problems.append(f"{rel}: points at {m.group(0)!r}, which the student edition does not have")
            if path.suffix == ".ipynb":
                for ln in text.splitlines():
                    if ln.strip() in secret:
                        problems.append(f"{rel}: a line of a worked solution or answer: {ln.strip()!r}")
    return problems


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


def notebook_table(paths: list[Path]) -> str:
    """A Markdown table of the notebooks: number, linked title."""
    rows = ["| # | notebook |", "|---|---|"]
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        first = next((c.source for c in nb.cells if c.cell_type == "markdown"), p.stem)
        title = first.splitlines()[0].lstrip("# ").strip() if first.strip() else p.stem
        number, _, rest = title.partition("·")
        rows.append(f"| {p.name[:2]} | [{rest.strip() or title}]({p.name}) |")
    return "\n".join(rows)


def _pyproject() -> str:
    """The project's pyproject.toml without the test tools and the test and lint settings."""
    keep, out = True, []
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            keep = not line.startswith(("[project.optional-dependencies]", "[tool.pytest",
                                        "[tool.ruff"))
        if keep:
            out.append(line)
    return "\n".join(out).rstrip() + "\n"


def _environment() -> str:
    """The project's environment.yml (what Binder builds), with a comment for learners."""
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    body = [ln for ln in lines if not ln.startswith("#")]
    head = ["# Binder, JupyterHub and conda: `conda env create -f environment.yml`, then `jupyter lab`."]
    return "\n".join(head + body) + "\n"


def record_data(*, record_predictions: bool = False) -> dict:
    """Every ``@recorded`` function of ``attention_kit.check``, called: ``recorded.pkl``. A
    prediction's table (``answers=True``) is sealed, or with ``record_predictions`` left out."""
    import importlib
    import pkgutil

    import attention_kit.check as check
    from attention_kit.check import recorded

    for info in pkgutil.iter_modules(check.__path__):
        importlib.import_module(f"attention_kit.check.{info.name}")
    functions = sorted(recorded.recorded_functions().items())
    withheld = [key for key, fn in functions if fn.answers and record_predictions]
    data = {key: recorded.store_entry(key) for key, _ in functions if key not in withheld}
    return {**data, recorded.WITHHELD: withheld} if record_predictions else data


def write_check_package(folder: Path, *, record_predictions: bool = False) -> None:
    """Turn ``folder`` (a copy of ``attention_kit/check``) into the student edition's: data
    instead of reference code, and, with ``record_predictions``, prediction checkers that only
    record."""
    from attention_kit.check.recorded import save_store

    if record_predictions:
        (folder / "class_settings.json").write_text(
            json.dumps({"predictions": "record"}) + "\n", encoding="utf-8")
    for module in sorted(folder.glob("*.py")):
        text = strip_references(module.read_text(encoding="utf-8"), module.name)
        if record_predictions:
            text = record_only_checkers(text)
        module.write_text(text, encoding="utf-8")
    save_store(folder / "recorded.pkl", record_data(record_predictions=record_predictions))


def write_edition(out: Path, notebooks: list[Path], *, record_predictions: bool = False) -> None:
    """Everything but the notebooks: package, README, Makefile, environment and project files.

    ``record_predictions``: the prediction exercises record the learner's prediction in class
    and are judged only by ``make grade`` (``attention_kit.check.prediction``)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "attention_kit", ignore_errors=True)
    shutil.copytree(ROOT / "attention_kit", out / "attention_kit",
                    # the grader (with its hidden cases and their references) stays with the teacher
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "grading"))
    write_check_package(out / "attention_kit" / "check", record_predictions=record_predictions)
    strip_package(out / "attention_kit")  # "make grade" in a comment becomes "the grader"
    readme = (TEMPLATES / "README.md").read_text(encoding="utf-8")
    (out / "README.md").write_text(readme.replace("{notebooks}", notebook_table(notebooks)),
                                   encoding="utf-8")
    shutil.copy2(TEMPLATES / "Makefile", out / "Makefile")
    shutil.copy2(TEMPLATES / "gitignore", out / ".gitignore")
    shutil.copy2(ROOT / "postBuild", out / "postBuild")  # Binder: the server extension
    (out / "pyproject.toml").write_text(_pyproject(), encoding="utf-8")
    (out / "environment.yml").write_text(_environment(), encoding="utf-8")
    # the lock: make lab and environment.yml install the versions the course was tested with
    (out / "requirements").mkdir(exist_ok=True)
    shutil.copy2(ROOT / "requirements" / "lab.txt", out / "requirements" / "lab.txt")


def write_zip(out: Path) -> Path:
    """``out`` as ``<out>.zip``, under one top folder, without a virtual environment."""
    archive = out.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(out.rglob("*")):
            rel = path.relative_to(out)
            if path.is_file() and not {".venv", "__pycache__", ".ipynb_checkpoints"} & set(rel.parts) \
                    and not rel.parts[0].endswith(".egg-info"):
                z.write(path, f"{ZIP_ROOT}/{rel.as_posix()}")
    return archive


def _place(out: Path, src: Path) -> Path:
    """Where a file goes in the edition: notebooks/zh/x to <out>/zh/x, anything else to <out>/x."""
    try:
        return out / src.resolve().parent.relative_to(ROOT / "notebooks") / src.name
    except ValueError:
        return out / src.name


def _rebuild(src: Path) -> str:
    lang = src.parent.name  # notebooks/zh/: the Chinese one, built from the English
    return "" if lang == "notebooks" else f"; notebooks/{lang}/{src.name} is built: make notebooks-{lang} STEMS={src.stem}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to convert (default: notebooks/NN_*.ipynb)")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "student",
                        help="output folder (default: student/)")
    parser.add_argument("--zip", action="store_true", help="also write <out>.zip")
    parser.add_argument("--record-predictions", action="store_true",
                        help="prediction exercises record the prediction in class (no ✓ or ✗ to "
                             "try answers against); make grade judges them")
    args = parser.parse_args(argv)
    # the translated editions too (notebooks/zh/, docs/translating.md), into <out>/zh/ with the
    # marker file that makes attention_kit speak the language there
    sources = args.notebooks or course_notebooks() + sorted((ROOT / "notebooks").glob("*/[0-9][0-9]_*.ipynb"))
    if not sources:
        print("no notebooks found", file=sys.stderr)
        return 1
    write_edition(args.out, course_notebooks(), record_predictions=args.record_predictions)
    for src in sources:
        nb = nbformat.read(src, as_version=4)
        student, removed = studentize(nb, src.name)
        dst = _place(args.out, src)
        if not any(is_solution(c) for c in nb.cells):
            print(f"warning: {dst.relative_to(args.out)} has no solution cells", file=sys.stderr)
        dst.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student, dst)
        print(f"{dst}: {removed} cell(s) left out (solutions, answers), outputs cleared")
        for ex_id in ungradable_exercises(student, src.name):
            print(f"warning: {dst.relative_to(args.out)}: no cell defines the answer of exercise {ex_id} (its declaration,"
                  " attention_kit/check/exercises_*.py); make grade cannot grade it" + _rebuild(src), file=sys.stderr)
    # pictures or data files next to the notebooks, so relative links keep working
    for src_dir in sorted({s.parent for s in sources}):
        into = _place(args.out, src_dir / "x").parent
        for extra in src_dir.iterdir():
            if extra.is_file() and extra.suffix != ".ipynb" and (not extra.name.startswith(".")
                                                                   or extra.name == MARKER):
                shutil.copy2(extra, into / extra.name)
    leaks = find_leaks(args.out, sources)
    for problem in leaks:
        print(f"error: {problem}", file=sys.stderr)
    if leaks:
        return 1
    print(f"{args.out}: the student edition (make lab inside it opens the notebooks)")
    if args.zip:
        print(f"wrote {write_zip(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
