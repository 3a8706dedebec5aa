"""A class graded in shards (``--shard i/N``) and merged (``merge``) writes the files of one run.

The split (``attention_kit/grading/shards.py``) is tested alone: stable (pinned values; a learner's
shard depends on their LMS id only, not on the class around them or the order of the files),
complete and disjoint. The merge's refusals are tested on a class of empty notebooks (no kernel
runs: an empty file "could not run"), graded through ``main`` as the teacher runs it. The last
test (slow: kernels) grades a small class in every layout, Canvas and Moodle ids, honest learners,
a notebook that raises, a file cut short, and a copy whose source is in another shard, once whole
and once in three shards, and compares every file of the merge with the whole run's, byte for
byte; the grading time is fixed with SOURCE_DATE_EPOCH, the one thing two runs may differ in.
"""

from __future__ import annotations

import csv
import json
import random
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest
import trust_class
from test_lms_identity import CANVAS, MOODLE
from test_similarity_groups import second_copy

from attention_kit.check import registry
from attention_kit.grading.__main__ import main
from attention_kit.grading.shards import Shard, parse_shard, shard_learners, shard_of, split_key
from attention_kit.grading.submissions import Learner, find_submissions

NB2, NB4, NB5 = (registry.notebook(n).file for n in ("02", "04", "05"))
EPOCH = "1767258000"  # 2026-01-01 09:00 UTC: every run's grading time, so that runs compare
COMMON = ["--exercises", "02,04", "--seed", "s3cret", "--late-penalty", "10"]


def _write_empty(folder: Path, names) -> None:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")


def _contents(folder: Path) -> dict[str, object]:
    """Every file under ``folder``: its bytes, and for a zip also its members in order (name,
    time, bytes)."""
    out: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            rel = path.relative_to(folder).as_posix()
            out[rel] = path.read_bytes()
            if path.suffix == ".zip":
                with zipfile.ZipFile(path) as zf:
                    out[rel + " (members)"] = [(i.filename, i.date_time, zf.read(i)) for i in zf.infolist()]
    return out


def _assert_same_files(whole: Path, merged: Path) -> None:
    a, b = _contents(whole), _contents(merged)
    assert sorted(a) == sorted(b), (sorted(set(a) ^ set(b)))
    differ = [name for name in a if a[name] != b[name]]
    assert not differ, f"differ from the whole run's: {differ}"
    for name in ("grades.csv", "summary.md", "canvas.csv", "canvas_reupload.zip", "moodle.csv",
                 "moodle_feedback.zip", "not_graded.csv", "grades.json"):
        assert name in a, name
    assert any(name.startswith("feedback/") for name in a)


# --- the split ---------------------------------------------------------------------------------

def _learners(n: int = 300) -> dict[str, Learner]:
    rng = random.Random(7)
    out = []
    for k in range(n):
        kind = k % 4
        out.append(Learner(f"learner{k}", canvas_id=str(100000 + k)) if kind == 0 else
                   Learner(f"Name {k}", moodle_id=str(4000 + k)) if kind == 1 else
                   Learner(f"anon_A{k}x", anonymous_id=f"A{k}x") if kind == 2 else Learner(f"plain{k}"))
    rng.shuffle(out)
    return {ln.key: ln for ln in out}


def test_the_split_is_pinned_and_depends_on_the_lms_id_only():
    # pinned: a class graded again, on another machine or a later version, splits the same way
    assert [shard_of(Learner("x", canvas_id="123456"), n) for n in (2, 3, 4, 8)] == [1, 1, 1, 5]
    assert [shard_of(Learner("Dana Lee", moodle_id="4711"), n) for n in (2, 3, 4, 8)] == [2, 2, 4, 8]
    assert [shard_of(Learner("alice"), n) for n in (2, 3, 4, 8)] == [1, 2, 3, 7]
    # the id decides, not the name the LMS wrote (a renamed learner keeps the shard)
    assert shard_of(Learner("smithjohn", canvas_id="1050"), 7) == shard_of(Learner("john", canvas_id="1050"), 7)
    assert split_key(Learner("Participant", moodle_id="4715")) == "moodle:4715"
    assert split_key(Learner("anon_Ab3xZ", anonymous_id="Ab3xZ")) == "anon:Ab3xZ"
    assert split_key(Learner("Dana Lee")) == "key:Dana Lee"  # no id: the grader's key for them


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16])
def test_the_split_is_complete_disjoint_and_independent_of_the_class(n):
    info = _learners()
    shards = [shard_learners(info, Shard(i, n)) for i in range(1, n + 1)]
    assert sorted(k for s in shards for k in s) == sorted(info)  # everyone once
    assert all(shards), "with 300 learners no shard is empty"
    assert max(map(len, shards)) < 2.2 * len(info) / n  # roughly even
    reordered = dict(reversed(list(info.items())))  # another order of the files: the same shards
    assert [sorted(shard_learners(reordered, Shard(i, n))) for i in range(1, n + 1)] == list(map(sorted, shards))
    half = dict(list(info.items())[::2])  # a learner's shard does not depend on the others
    for i in range(1, n + 1):
        assert set(shard_learners(half, Shard(i, n))) == set(shards[i - 1]) & set(half)


def test_the_split_of_every_layout_of_a_download(tmp_path):
    _write_empty(tmp_path, [*CANVAS, *MOODLE, f"alice/{NB2}", f"bob__{NB2}"])
    info = find_submissions(tmp_path).info
    assert {k: split_key(v) for k, v in info.items() if not v.lms_id} == {"alice": "key:alice", "bob": "key:bob"}
    assert split_key(info["wangwei_1044"]) == "canvas:1044" and split_key(info["Ole Berg_4713"]) == "moodle:4713"
    three = [set(shard_learners(info, Shard(i, 3))) for i in (1, 2, 3)]
    assert set().union(*three) == set(info) and sum(map(len, three)) == len(info)


@pytest.mark.parametrize("text, shard", [("1/4", Shard(1, 4)), (" 4/4 ", Shard(4, 4)), ("1/1", Shard(1, 1)),
                                         ("", None), (None, None)])
def test_parse_shard(text, shard):
    assert parse_shard(text) == shard


@pytest.mark.parametrize("text, says", [("0/4", "there is no shard 0 of 4, the shards are 1/4 to 4/4"),
                                        ("5/4", "there is no shard 5 of 4"),
                                        ("1/0", "the number of shards N must be 1 or more"),
                                        ("x", "'x' is not a shard"), ("1/4/2", "is not a shard"),
                                        ("-1/4", "is not a shard"), ("1.5/4", "is not a shard")])
def test_a_bad_shard_exits_2_naming_the_problem_and_the_form(tmp_path, capsys, text, says):
    _write_empty(tmp_path / "subs", [f"alice/{NB2}"])
    assert main([str(tmp_path / "subs"), "--out", str(tmp_path / "g"), f"--shard={text}"]) == 2
    err = capsys.readouterr().err
    assert says in err and "give it as i/N" in err and "--shard 1/4" in err, err
    assert not (tmp_path / "g").exists()


# --- the merge's refusals, on a class of empty notebooks (no kernels) --------------------------

@pytest.fixture(scope="module")
def empty_class(tmp_path_factory):
    """A class of empty notebooks in every LMS layout, graded whole and as shards 1/2 and 2/2."""
    tmp = tmp_path_factory.mktemp("empty-class")
    subs = tmp / "subs"
    _write_empty(subs, [*CANVAS, *MOODLE, "stray.txt", f"alice/{NB2}", f"dora__{NB5}"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
        assert main([str(subs), "--out", str(tmp / "whole"), "--workers", "1", *COMMON]) == 0
        for i in (1, 2):
            assert main([str(subs), "--out", str(tmp / f"shard{i}"), "--workers", "1", "--shard", f"{i}/2",
                         *COMMON]) == 0
    return tmp


def _merge(*args) -> int:
    return main(["merge", *map(str, args)])


def test_an_empty_class_merges_to_the_whole_runs_files(empty_class, capsys):
    out = empty_class / "merged"
    capsys.readouterr()
    assert _merge(empty_class / "shard2", empty_class / "shard1", "--out", out) == 0  # any order
    assert "Merged 2 shards" in capsys.readouterr().out
    _assert_same_files(empty_class / "whole", out)
    # each shard held its own learners only, and the class's files not graded, all of them
    state = [json.loads((empty_class / f"shard{i}" / "grades.json").read_text("utf-8")) for i in (1, 2)]
    assert not set(state[0]["learners"]) & set(state[1]["learners"])
    assert state[0]["not_graded"] == state[1]["not_graded"] != []


def _refused(capsys, *args) -> str:
    capsys.readouterr()
    assert _merge(*args) == 2
    return capsys.readouterr().err


def test_a_missing_shard_or_one_given_twice_is_refused(empty_class, capsys, tmp_path):
    e, out = empty_class, tmp_path / "merged"
    err = _refused(capsys, e / "shard1", "--out", out)
    assert "shard 2/2 of the 2 is missing (given: 1/2)" in err, err
    shutil.copytree(e / "shard1", tmp_path / "again")
    err = _refused(capsys, e / "shard1", tmp_path / "again", e / "shard2", "--out", out)
    assert f"shard 1/2 is given twice: {e / 'shard1'} and {tmp_path / 'again'}" in err, err
    assert "given twice" in _refused(capsys, e / "shard1", e / "shard1", e / "shard2", "--out", out)
    assert "not a shard (--shard i/N)" in _refused(capsys, e / "whole", e / "shard2", "--out", out)
    assert "not a grades folder" in _refused(capsys, tmp_path / "nowhere", e / "shard2", "--out", out)
    assert "is one of the shards" in _refused(capsys, e / "shard1", e / "shard2", "--out", e / "shard2")
    assert not out.exists()  # nothing written


def _edit(folder: Path, change) -> None:
    path = folder / "grades.json"
    state = json.loads(path.read_text("utf-8"))
    change(state)
    path.write_text(json.dumps(state), encoding="utf-8")


def test_overlapping_learners_or_another_split_are_refused(empty_class, capsys, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(empty_class / "shard1", one)
    shutil.copytree(empty_class / "shard2", two)
    first = json.loads((one / "grades.json").read_text("utf-8"))
    learner = first["learners"][0]

    def overlap(state):  # shard 1's first learner graded in shard 2 too
        state["learners"].append(learner)
        state["info"][learner] = first["info"][learner]
        state["grades"] += [g for g in first["grades"] if g["learner"] == learner]

    _edit(two, overlap)
    err = _refused(capsys, one, two, "--out", tmp_path / "m")
    assert f"learner {learner} is in two shards: {one} (1/2) and {two} (2/2)" in err, err
    shutil.rmtree(two)
    shutil.copytree(empty_class / "shard2", two)
    _edit(two, lambda s: s["shard"].update(count=3))
    assert "the shards are of different splits" in _refused(capsys, one, two, "--out", tmp_path / "m")
    _edit(two, lambda s: s["shard"].update(count=2, class_learners=s["shard"]["class_learners"][1:]))
    err = _refused(capsys, one, two, "--out", tmp_path / "m")
    assert "graded from different submissions" in err and "the class's learners" in err, err


def test_each_learner_keeps_the_time_their_shard_was_graded(empty_class, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(empty_class / "shard1", one)
    shutil.copytree(empty_class / "shard2", two)
    _edit(one, lambda s: s.update(graded_at="2025-12-31T22:00:00+00:00"))  # graded the day before
    assert _merge(two, one, "--out", tmp_path / "m") == 0
    firsts = set(json.loads((one / "grades.json").read_text("utf-8"))["learners"])
    state = json.loads((tmp_path / "m" / "grades.json").read_text("utf-8"))
    assert state["graded_at"] == "2026-01-01T09:00:00+00:00"  # the whole grading's end
    assert set(state["modified"]) == firsts and set(state["modified"].values()) == {"2025-12-31T22:00:00+00:00"}
    rows = list(csv.DictReader(open(tmp_path / "m" / "moodle.csv", encoding="utf-8")))  # in learners' order
    times = dict(zip(state["learners"], (r["Last modified (grade)"] for r in rows), strict=True))
    assert times == {ln: "2025-12-31T22:00:00+00:00" if ln in firsts else "2026-01-01T09:00:00+00:00"
                     for ln in state["learners"]}


def test_shards_graded_with_other_settings_are_refused(empty_class, capsys, tmp_path):
    subs = empty_class / "subs"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
        assert main([str(subs), "--out", str(tmp_path / "other2"), "--workers", "1", "--shard", "2/2",
                     "--exercises", "02,04", "--seed", "other", "--late-penalty", "5",
                     "--cell-timeout", "30"]) == 0
    err = _refused(capsys, empty_class / "shard1", tmp_path / "other2", "--out", tmp_path / "m")
    assert "graded with different settings" in err, err
    for what in ("the seed (--seed", "the late penalty (--late-penalty", "the limits (--cell-timeout"):
        assert what in err, (what, err)
    assert "exercises" not in err  # only what differs is named


def test_a_shard_with_no_learners_is_graded_and_a_shard_is_not_regraded(empty_class, capsys, tmp_path):
    subs = empty_class / "subs"
    info = find_submissions(subs).info
    n = 40
    empty = next(i for i in range(1, n + 1) if not shard_learners(info, Shard(i, n)))
    assert main([str(subs), "--out", str(tmp_path / "g"), "--workers", "1", "--shard", f"{empty}/{n}", *COMMON]) == 0
    assert f"Graded 0 learners of shard {empty}/{n} ({len(info)} in the class" in capsys.readouterr().out
    rows = list(csv.DictReader(open(tmp_path / "g" / "grades.csv", encoding="utf-8")))
    assert [r["learner"] for r in rows] == ["", ""]  # the class's files not graded only (stray.txt, 05)
    assert main([str(subs), "--out", str(empty_class / "shard1"), "--learners", "alice", *COMMON]) == 2
    assert "holds shard 1/2 of a class: merge the shards first" in capsys.readouterr().err
    assert main([str(subs), "--out", str(tmp_path / "g"), "--learners", "alice", "--shard", "1/2"]) == 2
    assert "give --shard or --learners, not both" in capsys.readouterr().err


# --- a class in kernels: whole, and in three shards merged ------------------------------------

def _notebook(answers: list[str], first: str = "") -> nbformat.NotebookNode:
    """A small notebook holding the imports and these answer cells (what the grader reads)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(first + "import numpy as np\nimport attention_kit as ak\n"
                                          "from attention_kit import check")]
    nb.cells += [nbformat.v4.new_code_cell(src) for src in answers]
    return nb


def _honest(k: int, number: str = "02") -> list[str]:
    answers = [styles[k] for ex_id, styles in trust_class.HONEST.items() if ex_id.startswith(number)]
    return answers + [trust_class.VALUES["04.4"][k]] if number == "04" else answers


ZOE = f"Zoë Sand_4704_assignsubmission_file/{NB2}"           # Moodle 4.1+, shard 1 of 3
COPIER = f"wangwei_LATE_1044_9002_{NB2}"                      # Canvas, late, shard 2 of 3


def _build(subs: Path) -> None:
    def put(name: str, nb) -> None:
        (subs / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, subs / name)

    put(ZOE, _notebook(list(trust_class.ZOE.values())))
    put(COPIER, _notebook(second_copy()))  # Zoë's notebook renamed: the copy in another shard
    put(f"Dana Lee_4711_assignsubmission_file_/{NB2}", _notebook(_honest(0)))  # Moodle before 4.1
    put(f"smithjohn_1050_9004_{NB2}", _notebook(_honest(1)))                   # Canvas
    put(f"smithjohn_1050_9010_{NB4}", _notebook(_honest(1, "04")))
    put(f"bob/{NB2}", _notebook(_honest(2)))                                   # a plain folder
    put(f"eve__{NB2}", _notebook(_honest(3), first="1 / 0\n"))                  # raises in cell 1
    put(f"Ida Holm_4714_assignsubmission_file_{NB2}", _notebook(_honest(4)))   # cut short below
    raw = (subs / f"Ida Holm_4714_assignsubmission_file_{NB2}").read_bytes()
    (subs / f"Ida Holm_4714_assignsubmission_file_{NB2}").write_bytes(raw[: len(raw) // 3])
    _write_empty(subs, [f"anon_Ab3xZ_9005_{NB2}", "stray.txt", f"dora__{NB5}", f"bob/{NB2[:-6]} (1).ipynb"])


@pytest.mark.slow  # 7 notebooks in kernels, twice (about a minute on 2 cores)
def test_a_class_in_three_shards_merges_to_the_files_of_one_run(tmp_path, capsys):
    subs = tmp_path / "returned"
    _build(subs)
    info = find_submissions(subs).info
    shards = {key: shard_of(ln, 3) for key, ln in info.items()}
    assert shards["Zoë Sand_4704"] != shards["wangwei_1044"], "the copy and its source in two shards"
    assert sorted(set(shards.values())) == [1, 2, 3]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
        assert main([str(subs), "--out", str(tmp_path / "whole"), "--workers", "2", *COMMON]) == 0
        for i in (1, 2, 3):
            assert main([str(subs), "--out", str(tmp_path / f"grades-{i}"), "--workers", "2",
                         "--shard", f"{i}/3", *COMMON]) == 0
    capsys.readouterr()
    assert _merge(*(tmp_path / f"grades-{i}" for i in (3, 1, 2)), "--out", tmp_path / "grades") == 0
    assert "Similar answers were looked for across the whole class (1 group)" in capsys.readouterr().out
    _assert_same_files(tmp_path / "whole", tmp_path / "grades")
    # what was compared is the class meant: graded, flagged and named as the LMS names them
    rows = {r["learner"]: r for r in csv.DictReader(open(tmp_path / "grades" / "grades.csv", encoding="utf-8"))
            if r["learner"]}
    assert sorted(rows) == sorted(info)
    pair = "Zoë Sand_4704 and wangwei_1044: notebook 02, exercises 02.1, 02.2, 02.5, 02.6"
    assert pair in rows["wangwei_1044"]["notes"] and pair in rows["Zoë Sand_4704"]["notes"]
    assert not any("side by side" in r["notes"] for k, r in rows.items() if k not in ("wangwei_1044", "Zoë Sand_4704"))
    n02, n04 = (len(registry.notebook(n).exercises) for n in ("02", "04"))   # the counts: the registry's
    assert float(rows["Dana Lee_4711"][f"02 score (of {n02})"]) >= 3 and float(rows["smithjohn_1050"][f"04 score (of {n04})"]) >= 3
    assert "ZeroDivisionError" in rows["eve"]["notes"] and "not valid notebook JSON" in rows["Ida Holm_4714"]["notes"]
    assert rows["wangwei_1044"]["late"] == "02" and rows["smithjohn_1050"]["id"] == "1050"
    assert rows["Ida Holm_4714"]["id"] == "4714" and rows["anon_Ab3xZ"]["id"] == "Ab3xZ"
    # no shard alone could see the copy
    for i in (1, 2, 3):
        assert "side by side" not in (tmp_path / f"grades-{i}" / "summary.md").read_text("utf-8")
