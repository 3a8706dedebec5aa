"""The Chinese edition is in step with the English one, and a stale translation fails here.

``tools/translate.py check`` is the gate: every published notebook's markdown translated, none
fuzzy (its English changed since), none still in English, no code, formula, link or number lost,
code cells identical to the English ones and executed; the package's marked strings translated.
The tests below also run the catalog machinery on a small notebook of their own, so a change in
the English is seen to mark its translation out of date.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import translate  # noqa: E402

from attention_kit import i18n  # noqa: E402


def test_the_chinese_edition_is_in_step_with_the_english_one():
    problems = translate.check("zh") + translate.check_package("zh")
    assert problems == [], "\n".join(problems[:40])


def test_the_glossarys_ruled_out_words_appear_in_no_catalog():
    table = (ROOT / "docs" / "glossary-zh.md").read_text(encoding="utf-8")
    never = set()
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("English", "---"):
            never |= {w.strip() for w in cells[3].split(",") if w.strip()}
    assert {"询问", "令牌", "关键字"} <= never  # the table was read
    catalogs = sorted((ROOT / "translations" / "zh").glob("*.po")) + [translate.package_catalog_path("zh")]
    found = []
    for path in catalogs:
        for m in translate.read_catalog(path, "zh"):
            for word in never:
                if m.id and m.string and word in m.string:
                    found.append(f"{path.name} {m.context or m.id[:30]!r}: {word}")
    assert found == []


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course of one English notebook, with its own notebooks/ and translations/ folders."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 01 · Scores\n\nA **key** is compared with a `q`."),
                nbformat.v4.new_code_cell("print(1 + 1)", execution_count=1,
                                          outputs=[nbformat.v4.new_output("stream", text="2\n")]),
                nbformat.v4.new_markdown_cell("The weights sum to 1 for every one of the 3 queries: $a_l$.")]
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
    nbformat.write(nb, notebooks / "01_scores.ipynb")
    monkeypatch.setattr(translate, "NOTEBOOKS", notebooks)
    monkeypatch.setattr(translate, "TRANSLATIONS", tmp_path / "translations")
    monkeypatch.setattr(translate, "ROOT", tmp_path)
    return notebooks


def _translate_all(stem="01_scores"):
    text = ("@@ cell-0\n# 01 · 分数\n\n把一个**键**与 `q` 比较。\n\n"
            "@@ cell-2\n对 3 个查询中的每一个，权重之和都是 1：$a_l$。\n")
    assert translate.load("zh", stem, text) == []


def test_a_new_notebook_is_published_once_translated_and_then_in_step(course):
    assert translate.update("zh", []) == ["01_scores cell-0: new", "01_scores cell-2: new"]
    assert translate.build("zh", []) == ["01_scores: not translated yet, not published in notebooks/zh/"]
    assert translate.published("zh") == []
    _translate_all()
    notes = translate.build("zh", [])
    assert notes == ["zh/01_scores.ipynb cell-1: code changed, run make notebooks-zh"]
    built = nbformat.read(course / "zh" / "01_scores.ipynb", as_version=4)
    assert built.cells[0].source.startswith("# 01 · 分数")
    assert built.cells[1].source == "print(1 + 1)"
    assert (course / "zh" / i18n.MARKER).read_text().strip() == "zh"
    assert translate.check("zh") == ["zh/01_scores.ipynb cell-1: not executed (make notebooks-zh)"]
    built.cells[1].execution_count = 1
    nbformat.write(built, course / "zh" / "01_scores.ipynb")
    assert translate.check("zh") == []


def test_a_changed_english_cell_makes_its_translation_fuzzy_and_the_check_fail(course):
    translate.update("zh", [])
    _translate_all()
    translate.build("zh", [])
    built = nbformat.read(course / "zh" / "01_scores.ipynb", as_version=4)
    built.cells[1].execution_count = 1
    nbformat.write(built, course / "zh" / "01_scores.ipynb")
    assert translate.check("zh") == []

    nb = nbformat.read(course / "01_scores.ipynb", as_version=4)
    nb.cells[2].source = "The weights sum to 1 for every one of the 4 queries: $a_l$."
    nbformat.write(nb, course / "01_scores.ipynb")
    problems = translate.check("zh")
    assert any("cell cell-2" in p and "catalog out of step" in p for p in problems), problems
    assert translate.update("zh", []) == ["01_scores cell-2: English changed (fuzzy)"]
    entry = {m.context: m for m in translate.read_catalog(translate.catalog_path("zh", "01_scores"), "zh")}
    assert entry["cell-2"].fuzzy and entry["cell-2"].string.startswith("对 3 个查询")
    po_text = translate.catalog_path("zh", "01_scores").read_text(encoding="utf-8")
    assert '#| msgid "The weights sum to 1 for every one of the 3 queries: $a_l$."' in po_text
    translate.build("zh", [])
    built = nbformat.read(course / "zh" / "01_scores.ipynb", as_version=4)
    assert built.cells[2].source == nb.cells[2].source  # never the stale translation
    problems = translate.check("zh")
    assert problems == ["01_scores cell cell-2 ('The weights sum to 1 for every one of the 4 querie'): "
                        "the English changed since it was translated (fuzzy)"]
    # the translator's fix clears it
    translate.load("zh", "01_scores", "@@ cell-2\n对 4 个查询中的每一个，权重之和都是 1：$a_l$。\n")
    translate.build("zh", [])
    assert translate.check("zh") == []


def test_a_translation_that_loses_code_a_formula_or_a_number_is_named(course):
    translate.update("zh", [])
    translate.load("zh", "01_scores", "@@ cell-0\n# 01 · 分数\n\n把一个键与 q 比较。\n\n"
                   "@@ cell-2\n对每一个查询，权重之和都是 1：a_l。\n")
    translate.build("zh", [])
    built = nbformat.read(course / "zh" / "01_scores.ipynb", as_version=4)
    built.cells[1].execution_count = 1
    nbformat.write(built, course / "zh" / "01_scores.ipynb")
    problems = " | ".join(translate.check("zh"))
    assert "lost inline code 'q'" in problems
    assert "lost formula '$a_l$'" in problems
    assert "lost number '3'" in problems


def test_an_english_text_left_as_its_translation_is_named(course):
    translate.update("zh", [])
    nb = nbformat.read(course / "01_scores.ipynb", as_version=4)
    translate.load("zh", "01_scores", f"@@ cell-0\n{nb.cells[0].source}\n\n@@ cell-2\n{nb.cells[2].source}\n")
    translate.build("zh", ["01_scores"])
    assert any(p.endswith("still in English") for p in translate.check("zh"))


def test_links_stay_usable_one_folder_deeper():
    english = "See the [overview](../README.md) and [02](02_self_attention.ipynb)."
    assert translate.lost_in_translation(english, "见[总览](../../README.md)与 [02](02_self_attention.ipynb)。") == []
    assert translate.lost_in_translation(english, "见总览与 [02](02_self_attention.ipynb)。") == ["link 'README.md'"]


def test_the_language_comes_from_the_environment_or_the_folders_marker(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTENTION_KIT_LANG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert i18n.language() == "en"
    folder = tmp_path / "zh"
    folder.mkdir()
    (folder / i18n.MARKER).write_text("zh\n")
    monkeypatch.chdir(folder)
    assert i18n.language() == "zh"
    msg = "your function returned None: did you forget `return`?"
    assert i18n._(msg) == "你的函数返回了 None：是不是忘了写 `return`？"
    assert i18n._("a sentence no catalog has") == "a sentence no catalog has"
    monkeypatch.setenv("ATTENTION_KIT_LANG", "en")
    assert i18n._(msg) == msg
    monkeypatch.setenv("ATTENTION_KIT_LANG", "fr")
    with pytest.raises(ValueError, match="ATTENTION_KIT_LANG='fr'.*en, zh"):
        i18n.language()


def test_a_checker_speaks_the_notebooks_language(monkeypatch, capsys):
    from attention_kit.check import general

    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    assert general.softmax_by_hand([0.665, 0.245, 0.09]) is True
    assert general.dot_scores(lambda q, K: (K @ q) / len(q) ** 0.5) is False
    out = capsys.readouterr().out
    assert "✓ softmax([2.0, 1.0, 0.0]) = [0.665, 0.245, 0.09]：权重都是正数，且总和为 1" in out
    assert "✗ 你除以了 sqrt(d)：那是缩放点积" in out
    assert not re.search(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}", out), out  # no English sentence left


def test_every_translation_keeps_the_templates_fields():
    for m in translate.read_catalog(translate.package_catalog_path("zh"), "zh"):
        if m.id and m.string:
            assert set(re.findall(r"\{[^{}]*\}", m.id)) == set(re.findall(r"\{[^{}]*\}", m.string)), m.id


@pytest.mark.slow  # grades a notebook in a kernel
def test_the_grader_writes_the_checkers_hints_in_its_environments_language(tmp_path):
    import os
    import subprocess

    import make_student

    nb = nbformat.read(ROOT / "notebooks" / "01_general_attention_model.ipynb", as_version=4)
    student, _removed = make_student.studentize(nb, "01_general_attention_model.ipynb")
    cell = next(c for c in student.cells if c.cell_type == "code" and "def my_dot_scores" in c.source)
    cell.source = cell.source.replace("return ...", "return K @ q / np.sqrt(len(q))")  # scaled: wrong
    (tmp_path / "sub" / "alice").mkdir(parents=True)
    nbformat.write(student, tmp_path / "sub" / "alice" / "01_general_attention_model.ipynb")
    env = {**os.environ, "ATTENTION_KIT_LANG": "zh"}
    run = subprocess.run([sys.executable, "-m", "attention_kit.grading", str(tmp_path / "sub"), "--out",
                          str(tmp_path / "grades"), "--notebooks", "01", "--workers", "1"],
                         env=env, check=True, capture_output=True, text=True, timeout=300)
    feedback = (tmp_path / "grades" / "feedback" / "alice.md").read_text(encoding="utf-8")
    assert "✗ **练习 2，dot scores**：还没通过 — 你除以了 sqrt(d)：那是缩放点积" in feedback
    # the headings, the grade and the summary in Chinese too; what Canvas imports as it expects it
    assert "：给 alice 的反馈\n" in feedback.splitlines(keepends=True)[0], feedback[:200]
    assert "**你的成绩：" in feedback and "## 01 · The general attention model：5 道通过了 " in feedback
    summary = (tmp_path / "grades" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# 全班总结：") and "1 名学习者" in summary, summary[:300]
    assert "最常见的提示（学习者人数）" in run.stdout, run.stdout
    canvas = (tmp_path / "grades" / "canvas.csv").read_text(encoding="utf-8")
    assert canvas.startswith("Student,ID,SIS User ID,SIS Login ID,Section,"), canvas[:200]
