"""docs/teaching.md's worked example ("### An example", end of "Grading a class") is what a real
run prints and writes today: tests/guide_example.py builds the five learners, grades them as the
guide says, and renders the example; only the run's duration may differ. After a change to what
the grader prints or writes: ``python tests/guide_example.py --write``."""

from __future__ import annotations

import difflib

import editions
import pytest
from guide_example import guide_example, run, same_but_duration

from attention_kit.check import registry

pytestmark = pytest.mark.slow  # grades five learners in kernels (about a minute on 2 cores)


def test_the_guides_example_is_a_real_run_today(tmp_path, tmp_path_factory):
    student = editions.check(editions.student_edition(tmp_path_factory, into=tmp_path / "student"))
    new, old = run(tmp_path, student), guide_example()
    assert same_but_duration(new, old), "docs/teaching.md's example is out of date (python tests/guide_example.py " \
        "--write):\n" + "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1))


def test_the_example_has_the_columns_the_grader_writes():
    example = guide_example()
    assert ",late,late penalty,points,max points,percent,notes" in example
    ids = [[ex_id for ex_id, _ in registry.notebook(n).numbered()] for n in ("02", "04")]  # the registry's
    sets = ", ".join(f"{i[0]}-{i[-1]}" for i in ids)
    assert f'    Points Possible,,,,"exercises set: {sets}",{sum(map(len, ids))}' in example
