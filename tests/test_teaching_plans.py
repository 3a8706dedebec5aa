"""The plans of docs/teaching.md schedule what the exercises they set need (issue 45: the 3-week
plan set 07.3 and 09.3 but never scheduled 07 §3.1 and §4 or 09 §2–3; the 6-week plan never
scheduled 07 §3).

Each plan's table is read row by row: a notebook number (``07``) then ``section(s) ...`` (``1–3``,
``3.1, 4``, ``4 (with 4.1)``); a bare ``section 4`` belongs to the last notebook named in the row.
The sections an exercise needs are those its text builds on (NEEDS, from each exercise's cell in
the notebook: "Section 3's `my_tiled`", "section 4.1", "section 3's model", a sink cache). A
needed section is scheduled when it, or a part of it, or the section it is a part of, is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_kit.check import registry
from attention_kit.grading.__main__ import parse_exercises

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")

NEEDS = {
    "03.1": ["03 4"], "03.4": ["03 5"], "04.3": ["04 4.1"], "04.4": ["04 5"],
    "05.1": ["05 2"], "05.2": ["05 2"], "06.4": ["06 5"],
    "07.1": ["07 2", "07 3"], "07.2": ["07 3.2"], "07.3": ["07 4", "07 4.1"],
    "08.2": ["08 2"], "08.3": ["08 4"],
    "09.1": ["09 1"], "09.2": ["09 4"], "09.3": ["09 2", "09 3"], "09.4": ["09 4", "09 4.1"],
}
_SECTION = r"[1-9](?:\.[1-9])?\b"  # sections are 1 to 9, parts 1.1 to 9.9; "07" is a notebook
_TOKEN = re.compile(rf"(?P<nb>\b\d\d\b(?![.\d]))|sections? (?P<list>{_SECTION}(?:(?:–|, | and ){_SECTION})*)"
                    r"|\(with (?P<with>\d+\.\d+)\)")


def _sections(text: str) -> list[str]:
    out = []
    for item in re.split(r", | and ", text):
        if "–" in item:
            a, b = item.split("–")
            out += [str(k) for k in range(int(a), int(b) + 1)]
        else:
            out.append(item)
    return out


def _plan(heading: str) -> list[set[str]]:
    """The sections each week of the plan under ``heading`` schedules (``"07 3.1"``)."""
    text = GUIDE[GUIDE.index(heading):]
    rows = re.findall(r"^\| (\d+) \|(.*)\|$", text[: text.index("\n\n", text.index("| week"))], flags=re.M)
    weeks = []
    for _, row in rows:
        nb, got = None, set()
        for m in _TOKEN.finditer(row):
            if m.group("nb"):
                nb = m.group("nb")
            elif nb and m.group("list"):
                got |= {f"{nb} {s}" for s in _sections(m.group("list"))}
            elif nb and m.group("with"):
                got.add(f"{nb} {m.group('with')}")
        weeks.append(got)
    return weeks


def _scheduled(need: str, sections: set[str]) -> bool:
    return any(have == need or have.startswith(need + ".") or need.startswith(have + ".") for have in sections)


def _unmet(exercises, sections: set[str]) -> list[str]:
    return [f"{e} needs §{n}" for e in exercises for n in NEEDS.get(e, []) if not _scheduled(n, sections)]


def test_the_reader_of_the_plans():
    assert _sections("1–3, 4.1 and 5") == ["1", "2", "3", "4.1", "5"]
    assert [m.group("list") for m in _TOKEN.finditer("06 sections 1, 2 and 07 sections 1–2") if m.group("list")] \
        == ["1, 2", "1–2"]
    assert _scheduled("07 4.1", {"07 4"}) and _scheduled("07 3", {"07 3.1"}) and not _scheduled("07 3.2", {"07 3.1"})
    weeks = _plan("**3 weeks")
    assert len(weeks) == 3 and {"01 1", "01 6", "02 7", "03 1"} <= weeks[0]


def test_the_3_week_plan_schedules_what_its_exercises_need():
    weeks = _plan("**3 weeks")
    spec = re.search(r"`EXERCISES=` for this plan, graded once at the end:\n`([^`]+)`", GUIDE).group(1)
    exercises = list(parse_exercises(spec))
    assert {"07.1", "07.3", "09.3", "09.4"} <= set(exercises)
    assert _unmet(exercises, set().union(*weeks)) == []
    # the cases by name
    assert {"07 3.1", "07 4", "09 2", "09 3"} <= set().union(*weeks)


def test_the_6_week_plan_schedules_each_weeks_exercises_by_that_week():
    weeks = _plan("**6 weeks")
    line = GUIDE[GUIDE.index("Weekly grading, with the exercises of that week:"):]
    specs = re.findall(r"week (\d) `(?:EXERCISES=)?([^`]+)`", line[: line.index("\n\n")])
    assert [int(w) for w, _ in specs] == list(range(1, 7))
    for w, spec in specs:
        done = set().union(*weeks[: int(w)])
        assert _unmet(parse_exercises(spec), done) == [], f"week {w}"
    assert any(s.startswith("07 3") for s in set().union(*weeks))


@pytest.mark.parametrize("week", range(1, 10))
def test_the_9_week_plan_schedules_each_notebooks_exercises_in_its_week(week):
    weeks = _plan("**9 or 10 weeks")
    nb = registry.NOTEBOOKS[week - 1]
    assert _unmet([e for e, _ in nb.numbered()], set().union(*weeks[:week])) == []
