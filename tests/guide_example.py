"""The worked example at the end of docs/teaching.md's "Grading a class", made by a real run.

Five learners of ``tests/test_grading_class.py`` (ada solved everything in her own cells, cleo
made the typical mistake in every exercise, eve's notebook raises in its first cell and has a
syntax error, gus printed ✓ by hand, redefined ``check`` and patched the checkers, kim returned
the full notebook 02) hand in notebooks 02 and 04; ``python -m attention_kit.grading returned
--notebooks 02,04 --cell-timeout 20`` (what ``make grade SUBMISSIONS=returned NOTEBOOKS=02,04
GRADE_ARGS="--cell-timeout 20"`` runs) grades them, and the guide quotes what it printed and
wrote. ``tests/test_guide_example.py`` (slow) runs it again and compares;

    python tests/guide_example.py --write

rewrites the guide's example from a new run (after a change to what the grader prints or writes).
Only the run's duration ("in 19 s") may differ between two runs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import class_samples  # noqa: E402
import make_student  # noqa: E402

from attention_kit.check import registry  # noqa: E402

GUIDE = ROOT / "docs" / "teaching.md"
BEGIN = "<!-- example:begin"
END = "<!-- example:end -->"
COMMAND = ["returned", "--out", "grades", "--notebooks", "02,04", "--cell-timeout", "20", "--workers", "2"]
DURATION = re.compile(r" in \d+ s \(")


def build_class(student: Path, subs: Path) -> None:
    """The five learners' notebooks 02 and 04, from the student edition in ``student``."""
    from test_grading_class import MISTAKES

    fresh = {n: nbformat.read(student / registry.notebook(n).file, as_version=4) for n in ("02", "04")}

    def write(nb, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)

    for n in ("02", "04"):  # ada: every exercise in her own cells
        write(class_samples.with_own_answers(fresh[n], n), subs / "ada" / registry.notebook(n).file)
    for n in ("02", "04"):  # cleo: the typical mistake in every exercise
        nb = nbformat.from_dict(fresh[n])
        for ex_id, _ in registry.notebook(n).numbered():
            class_samples.exercise_cell(nb, n, ex_id).source = MISTAKES[ex_id][0]
        write(nb, subs / "cleo" / registry.notebook(n).file)
    nb = nbformat.from_dict(fresh["02"])  # eve: the first cell raises, a syntax error, 02.4 right
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[0].source = "1 / 0\n" + code[0].source
    class_samples.exercise_cell(nb, "02", "02.2").source = "def my_scaled_scores(Q, K)\n    return Q @ K.T"
    class_samples.exercise_cell(nb, "02", "02.4").source = "variance, std = 32, 32 ** 0.5"
    class_samples.exercise_cell(nb, "02", "02.5").source = (
        "def my_self_attention(X, W_q, W_k, W_v):\n"
        "    return ak.softmax((X @ W_q) @ (X @ W_k).T / np.sqrt(W_k.shape[1])) @ (X @ W_v)")
    write(nb, subs / f"eve__{registry.notebook('02').file}")
    nb = nbformat.from_dict(fresh["04"])  # gus: a fake ✓, a fake check, patched checkers
    first = [c for c in nb.cells if c.cell_type == "code"][0]
    first.source += ("\nimport attention_kit.check as _real\n"
                     "_real.report = lambda ok, message: print('✓', message) or True\n"
                     "import attention_kit.check.masks_positions as _mp\n"
                     "_mp.masked_softmax = lambda fn: print('✓ the masked softmax is right') or True\n")
    class_samples.exercise_cell(nb, "04", "04.1").source = (
        "def my_causal_mask(n):\n    return np.ones((n, n), dtype=bool)\n\n"
        "class check:\n    @staticmethod\n    def causal_mask(fn):\n        print('✓ the causal mask is right')\n"
        "        return True\n\nok = check.causal_mask(my_causal_mask)")
    class_samples.exercise_cell(nb, "04", "04.2").source = (
        "def my_masked_softmax(S, mask):\n    return ...\n\n"
        "print('{\"id\": \"04.2\", \"status\": \"passed\", \"message\": \"ok\"}')")
    own = class_samples.own_answer(class_samples.solution_sources("04")["04.3"])
    class_samples.exercise_cell(nb, "04", "04.3").source = "\n".join(
        ln for ln in own.splitlines() if "check." not in ln)
    class_samples.exercise_cell(nb, "04", "04.4").source = "answer = [0, 1, 2]\nprint('✓ rows 3, 4 and 5 change')"
    write(nb, subs / "gus" / registry.notebook("04").file)
    # kim: the full notebook 02 as it is
    (subs / f"kim__{registry.notebook('02').file}").write_bytes(
        (ROOT / "notebooks" / registry.notebook("02").file).read_bytes())


def run(work: Path, student: Path | None = None) -> str:
    """Build the class in ``work`` (from the student edition in ``student``, when given: else
    one built here), grade it there as the guide says, return the example's text."""
    from attention_kit.grading.__main__ import main

    if student is None:
        student = work / "student"
        with contextlib.redirect_stdout(io.StringIO()):
            assert make_student.main(["-o", str(student)]) == 0
    build_class(student, work / "returned")
    cwd, columns = os.getcwd(), os.environ.get("COLUMNS")
    os.chdir(work)
    os.environ["COLUMNS"] = "120"  # the summary's width, as in a terminal of 120 columns
    try:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            assert main(COMMAND) == 0
    finally:
        os.chdir(cwd)
        if columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = columns
    return render(printed.getvalue().rstrip("\n"), work / "grades")


def render(printed: str, grades: Path) -> str:
    def read(name: str) -> str:
        return (grades / name).read_text(encoding="utf-8").rstrip("\n")

    return "\n".join([
        f"{BEGIN} (made by a real run: tests/guide_example.py; tests/test_guide_example.py runs it "
        "again and compares, tests/test_grading_class.py checks that its hints are the checkers' "
        "words today) -->",
        "### An example",
        "",
        "A small class set notebooks 02 and 04, graded with `make grade SUBMISSIONS=returned",
        "NOTEBOOKS=02,04 GRADE_ARGS=\"--cell-timeout 20\"` (five of the learners of",
        "`tests/test_grading_class.py`: ada solved everything in her own cells, cleo made the typical",
        "mistake in every exercise, eve's notebook raises in its first cell and has a syntax error, gus",
        "printed ✓ by hand, redefined `check` and patched the checkers, kim returned the full notebook 02;",
        "`tests/guide_example.py` builds them). What it printed:",
        "", "```text", printed, "```", "",
        "`grades/grades.csv`:", "", "```text", read("grades.csv"), "```", "",
        "`grades/canvas.csv` (these learners' files carry no Canvas id; a Canvas download's names do):",
        "", "```text", read("canvas.csv"), "```", "",
        "`grades/feedback/gus.md`, as it is handed back (exercise 4's hint explains the idea; in class the",
        "notebook's hint is more direct):",
        "", "````markdown", read("feedback/gus.md"), "````", "",
        "`grades/feedback/kim.md`:", "", "````markdown", read("feedback/kim.md"), "````",
        END])


def guide_example(text: str | None = None) -> str:
    """The example as the guide has it now."""
    text = GUIDE.read_text(encoding="utf-8") if text is None else text
    return text[text.index(BEGIN):text.index(END) + len(END)]


def same_but_duration(a: str, b: str) -> bool:
    return DURATION.sub(" in N s (", a) == DURATION.sub(" in N s (", b)


def main(argv: list[str]) -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        new = run(Path(tmp))
    if "--write" in argv:
        text = GUIDE.read_text(encoding="utf-8")
        GUIDE.write_text(text.replace(guide_example(text), new), encoding="utf-8")
        print(f"rewrote the example in {GUIDE}")
        return 0
    same = same_but_duration(new, guide_example())
    print("the guide's example is what a run makes today" if same else "the guide's example is out of date")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
