"""Every notebook's header states how long it takes, within 5 minutes of tools/notebook_time.py's
measure (issue 26: prose at 120 words a minute, code at 15 lines a minute, 10 minutes per explorer,
5 to 8 per exercise), and the teaching guide states the same."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402
import notebook_time  # noqa: E402

NOTEBOOKS = make_student.course_notebooks()


def test_the_rule_on_a_small_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(" ".join(["word"] * 236) + "\n\n**Try this**"),  # 240 words
        nbformat.v4.new_code_cell("\n".join(f"x{i} = {i}" for i in range(30)) + "\n\n"),  # 30 lines
        nbformat.v4.new_code_cell("# checked\n" * 40, metadata={"tags": ["explorer-check"]}),
        nbformat.v4.new_code_cell("answer = 42\n" * 99, metadata={"tags": ["solution"]}),
        nbformat.v4.new_markdown_cell("### Exercise 1\n\nDo it."),
    ]
    path = tmp_path / "99_tiny.ipynb"
    nbformat.write(nb, path)
    m = notebook_time.measure(path)
    assert (m.words, m.code_lines, m.explorers, m.exercises) == (243, 30, 1, 1)
    assert m.low == pytest.approx(243 / 120 + 2 + 10 + 5) and m.high == pytest.approx(m.low + 3)
    assert m.rounded == (20, 20) and m.sentence().startswith("About 20–20 minutes: 5 to read")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_header_time_is_the_measured_time(path):
    claim = notebook_time.stated(path)
    assert claim is not None, f"{path.name}: no 'about N–M minutes' in the header"
    m = notebook_time.measure(path)
    assert abs(claim[0] - m.low) <= 5 and abs(claim[1] - m.high) <= 5, (
        f"{path.name}: the header says {claim[0]}–{claim[1]} minutes, the measure is "
        f"{m.low:.0f}–{m.high:.0f}: run python tools/notebook_time.py --write")


def test_the_guide_states_the_headers_times():
    guide = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        section = guide.split(f"({'../notebooks/' + path.name})", 1)
        assert len(section) == 2, f"docs/teaching.md has no section linking {path.name}"
        m = re.search(r"\*\*Time:\*\* about (\d+)–(\d+) minutes", section[1])
        assert m, f"docs/teaching.md: no '**Time:** about N–M minutes' for {path.name}"
        assert (int(m.group(1)), int(m.group(2))) == notebook_time.stated(path), path.name


def test_the_readme_states_the_headers_times():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        row = next((ln for ln in readme.splitlines() if f"(notebooks/{path.name})" in ln), None)
        assert row is not None, f"README.md has no row for {path.name}"
        m = re.search(r"\| (\d+)–(\d+) min \|\s*$", row)
        assert m and (int(m.group(1)), int(m.group(2))) == notebook_time.stated(path), row


def test_the_checklist_states_the_range_of_times():
    guide = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    m = re.search(r"notebook takes (\d+) to (\d+) minutes", guide)
    claims = [notebook_time.stated(p) for p in NOTEBOOKS]
    assert m and (int(m.group(1)), int(m.group(2))) == (min(c[0] for c in claims),
                                                        max(c[1] for c in claims))


def test_the_guide_repeats_each_headers_breakdown_and_sums_them():
    """Each notebook's "**Time:**" line in the guide is its header's sentence (the breakdown adds up
    to the time stated), and "All nine notebooks" is the sum of the notebooks' own times."""
    guide = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    lows, highs = 0, 0
    for path in NOTEBOOKS:
        section = guide.split(f"({'../notebooks/' + path.name})", 1)[1]
        m = re.search(r"\*\*Time:\*\* about (\d+)–(\d+) minutes: (\d+) to read and run, (\d+) for [^,]+, "
                      r"(\d+)–(\d+) for the", section)
        assert m, path.name
        low, high, reading, explorer, ex_low, ex_high = map(int, m.groups())
        assert abs(reading + explorer + ex_low - low) <= 5 and abs(reading + explorer + ex_high - high) <= 5, \
            (path.name, m.group(0))
        lows, highs = lows + low, highs + high
    total = re.search(r"All nine notebooks: about (\d+)–(\d+) minutes", guide)
    assert total and (int(total.group(1)), int(total.group(2))) == (lows, highs)
    # the same total from the notebooks' own headers
    headers = [notebook_time.stated(path) for path in NOTEBOOKS]
    assert (lows, highs) == (sum(h[0] for h in headers), sum(h[1] for h in headers))
