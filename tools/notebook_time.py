"""How long a notebook takes a learner, measured from its text (issue 26's rule).

    python tools/notebook_time.py            # a table: every notebook's measure and its header's claim
    python tools/notebook_time.py --sections # minutes per section (the plans in docs/teaching.md)
    python tools/notebook_time.py --write    # after an edit: the headers, docs/teaching.md's **Time**
                                             # and the README's table say the measure

What a learner meets is the student copy (``tools/make_student.py``: no worked solutions, no
answer cells). Of it, the rule counts

* prose at 120 words a minute (Markdown, formulas included, word = what whitespace separates);
* code at 15 non-blank lines a minute (reading, running and looking at what it prints);
* 10 minutes per explorer (a "Try this" list under a widget; the cells under its collapsed "Check
  what you found" heading are part of those 10 minutes, not counted as code);
* 5 to 8 minutes per exercise (``attention_kit.check.registry``).

The low end is prose + code + explorers + 5 per exercise, the high end the same with 8, each rounded
to 5 minutes. ``tests/test_notebook_time.py`` holds every header's "about N–M minutes" to within
5 minutes of this measure.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402

WORDS_PER_MINUTE = 120
LINES_PER_MINUTE = 15
EXPLORER_MINUTES = 10
EXERCISE_MINUTES = (5, 8)
# "About 110–125 minutes" (en dash or hyphen) in the header
STATED = re.compile(r"[Aa]bout (\d+)\s*[–-]\s*(\d+) minutes")


@dataclass(frozen=True)
class Measure:
    words: int
    code_lines: int
    explorers: int
    exercises: int

    @property
    def reading(self) -> float:
        """Minutes for the prose and the code."""
        return self.words / WORDS_PER_MINUTE + self.code_lines / LINES_PER_MINUTE

    @property
    def exercise_minutes(self) -> tuple[int, int]:
        return (self.exercises * EXERCISE_MINUTES[0], self.exercises * EXERCISE_MINUTES[1])

    @property
    def low(self) -> float:
        return self.reading + self.explorers * EXPLORER_MINUTES + self.exercise_minutes[0]

    @property
    def high(self) -> float:
        return self.reading + self.explorers * EXPLORER_MINUTES + self.exercise_minutes[1]

    @property
    def rounded(self) -> tuple[int, int]:
        """(low, high), each rounded to 5 minutes."""
        return (5 * round(self.low / 5), 5 * round(self.high / 5))

    def sentence(self) -> str:
        """The header's line: 'About 110–125 minutes: 80 to read and run, 10 for the explorer, ...'."""
        low, high = self.rounded
        ex_low, ex_high = self.exercise_minutes
        explorer = "the explorer" if self.explorers == 1 else f"{self.explorers} explorers"
        return (f"About {low}–{high} minutes: {5 * round(self.reading / 5)} to read and run, "
                f"{self.explorers * EXPLORER_MINUTES} for {explorer}, {ex_low}–{ex_high} for the "
                f"{self.exercises} exercises.")


def _exercises(path: Path, nb) -> int:
    try:
        from attention_kit.check import registry

        return len(registry.notebook(path.name[:2]).exercises)
    except Exception:  # a notebook the registry does not know: count its exercise headings
        return sum(len(re.findall(r"^### Exercise", c.source, re.M)) for c in nb.cells
                   if c.cell_type == "markdown")


def measure(path: Path) -> Measure:
    nb = nbformat.read(path, as_version=4)
    student, _ = make_student.studentize(nb, path.name)
    words = sum(len(c.source.split()) for c in student.cells if c.cell_type == "markdown")
    lines = sum(1 for c in student.cells if c.cell_type == "code"
                and "explorer-check" not in c.metadata.get("tags", [])
                for ln in c.source.splitlines() if ln.strip())
    explorers = sum(c.cell_type == "markdown" and "**Try this**" in c.source for c in student.cells)
    return Measure(words, lines, explorers, _exercises(path, nb))


def sections(path: Path) -> list[tuple[str, float]]:
    """Minutes per "## " section of the student copy (prose and code by the rule, plus 10 per
    explorer and 6.5 per exercise, the middle of 5-8): what the plans in docs/teaching.md add up."""
    nb = nbformat.read(path, as_version=4)
    student, _ = make_student.studentize(nb, path.name)
    out: list[tuple[str, float]] = [("(header)", 0.0)]
    for cell in student.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    out.append((line[3:].strip(), 0.0))
            minutes = len(cell.source.split()) / WORDS_PER_MINUTE
            minutes += EXPLORER_MINUTES * ("**Try this**" in cell.source)
            minutes += sum(EXERCISE_MINUTES) / 2 * len(re.findall(r"^### Exercise", cell.source, re.M))
        elif "explorer-check" in cell.metadata.get("tags", []):
            minutes = 0.0
        else:
            minutes = sum(1 for ln in cell.source.splitlines() if ln.strip()) / LINES_PER_MINUTE
        out[-1] = (out[-1][0], out[-1][1] + minutes)
    return out


def stated(path: Path) -> tuple[int, int] | None:
    """The "about N–M minutes" of the notebook's header (its first three cells), or None."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells[:3]:
        if cell.cell_type == "markdown" and (m := STATED.search(cell.source)):
            return int(m.group(1)), int(m.group(2))
    return None


TIME = re.compile(r"([Aa])bout \d+(?:\s*[–-]\s*\d+)? minutes[^.\n]*\.")


def header_text(path: Path) -> str:
    """The notebook's file as :func:`write_header` leaves it: the header's "about N–M minutes ..."
    sentence says the measure."""
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    for cell in nb.cells[:3]:
        if cell.cell_type == "markdown" and (m := TIME.search(cell.source)):
            sentence = measure(path).sentence()
            sentence = ("a" + sentence[1:]) if m.group(1) == "a" else sentence
            cell.source = cell.source[:m.start()] + sentence + cell.source[m.end():]
            after = nbformat.writes(nb) + "\n"
            return after
    raise SystemExit(f"{path.name}: no 'about N minutes' in the header")


def write_header(path: Path) -> bool:
    """The header's "about N–M minutes ..." sentence becomes the measure (a Markdown cell only: the
    stored outputs stay, no re-execution is needed). True if the notebook changed."""
    before = path.read_text(encoding="utf-8")
    after = header_text(path)
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


def guide_texts(paths: list[Path]) -> dict[Path, str]:
    """docs/teaching.md and README.md as :func:`write_guides` leaves them."""
    guide = ROOT / "docs" / "teaching.md"
    text = guide.read_text(encoding="utf-8")
    for path in paths:
        start = text.find(f"(../notebooks/{path.name})")
        m = re.compile(r"\*\*Time:\*\* about \d+(?:\s*[–-]\s*\d+)? minutes[^.\n]*\.").search(text, max(start, 0))
        if start < 0 or m is None:
            raise SystemExit(f"docs/teaching.md: no **Time:** after a link to {path.name}")
        text = text[:m.start()] + "**Time:** a" + measure(path).sentence()[1:] + text[m.end():]
    ranges = [measure(path).rounded for path in paths]
    text = re.sub(r"notebook takes \d+ to \d+ minutes",
                  f"notebook takes {min(r[0] for r in ranges)} to {max(r[1] for r in ranges)} minutes", text)
    if len(paths) == len(make_student.course_notebooks()):  # the whole course: its total too
        low, high = sum(r[0] for r in ranges), sum(r[1] for r in ranges)
        text = re.sub(r"All nine notebooks: about \d+–\d+ minutes \(\d+–\d+ hours\)",
                      f"All nine notebooks: about {low}–{high} minutes ({low // 60}–{-(-high // 60)} hours)", text)
    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines(keepends=True)
    for k, line in enumerate(lines):
        for path in paths:
            if f"(notebooks/{path.name})" in line:
                low, high = measure(path).rounded
                lines[k] = re.sub(r"\| \d+–\d+ min \|(\s*)$", rf"| {low}–{high} min |\1", line)
    return {guide: text, readme: "".join(lines)}


def write_guides(paths: list[Path]) -> None:
    """docs/teaching.md's "**Time:**" of each notebook, and the README's table, repeat the measure."""
    for path, text in guide_texts(paths).items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def main() -> int:
    if "--write" in sys.argv:
        paths = make_student.course_notebooks()
        for path in paths:
            if write_header(path):
                print(f"edited {path.relative_to(ROOT)}")
        write_guides(paths)
        return 0
    if "--sections" in sys.argv:
        for path in make_student.course_notebooks():
            print(path.name)
            for title, minutes in sections(path):
                print(f"  {minutes:5.0f}  {title}")
        return 0
    print(f"{'notebook':34} {'words':>5} {'code':>4} {'expl':>4} {'ex':>3} {'estimated':>9} {'header':>9}")
    for path in make_student.course_notebooks():
        m = measure(path)
        claim = stated(path)
        low, high = m.rounded
        print(f"{path.name:34} {m.words:5} {m.code_lines:4} {m.explorers:4} {m.exercises:3} "
              f"{low:4}–{high:<4} {'%d–%d' % claim if claim else '-':>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
