"""attention_kit's error messages and the grader's feedback in Chinese (issue 47).

A learner's bad input under ``ATTENTION_KIT_LANG=zh`` gets the same exception with a Chinese
message that names the problem and the fix with the English message's numbers and shapes; the
grader's feedback files and class summary have Chinese headings; what an LMS imports (the column
headers of canvas.csv and moodle.csv) stays exactly as the LMS expects it.
"""

from __future__ import annotations

import csv
import re
from collections import Counter

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.check import registry
from attention_kit.grading import (
    COULD_NOT_RUN,
    FAILED,
    MISSING,
    NOT_ATTEMPTED,
    PASSED,
    ExerciseGrade,
    NotebookGrade,
)
from attention_kit.grading.reports import (
    ClassGrades,
    feedback_markdown,
    summary_markdown,
    summary_text,
    write_reports,
)
from attention_kit.grading.submissions import Learner
from attention_kit.widgets.parsing import parse_tokens, parse_vector

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}\b")
CODE_FIX = re.compile(r"[A-Za-z_]\w*(?:\.T\b|\[None[^\]]*\]|\.astype\(bool\))")

rng = np.random.default_rng(0)
Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))

#: A learner's bad inputs: (what, the call). Each raises an AttentionError.
BAD_INPUTS = [
    ("K in the survey's column layout", lambda: ak.scaled_dot_product_attention(Q, K.T, V)),
    ("V with a row too few", lambda: ak.scaled_dot_product_attention(Q, K, V[:3])),
    ("a NaN in the queries", lambda: ak.scaled_dot_product_attention(np.where(np.arange(6).reshape(3, 2) == 3, np.nan, Q), K, V)),
    ("an empty sequence", lambda: ak.scaled_dot_product_attention(np.zeros((0, 2)), K, V)),
    ("a single vector where a matrix is due", lambda: ak.scaled_dot_product_attention(Q[0], K, V)),
    ("a mask of ints", lambda: ak.scaled_dot_product_attention(Q, K, V, mask=np.ones((3, 4), int))),
    ("a mask of the wrong shape", lambda: ak.scaled_dot_product_attention(Q, K, V, mask=np.ones((4, 3), bool))),
    ("words for numbers", lambda: ak.self_attention([["a", "b"]], np.eye(2), np.eye(2), np.eye(2))),
    ("an odd d_model", lambda: ak.sinusoidal_positions(4, 5)),
    ("a negative temperature", lambda: ak.soft_align([1.0, 2.0], temperature=-1)),
    ("an unknown score", lambda: ak.score("dots", Q, K)),
    ("a count that is not a whole number", lambda: ak.causal_mask(2.5)),
    ("heads that do not divide d_model", lambda: ak.init_multi_head(6, 4, rng=rng)),
    ("a word in a vector's text box", lambda: parse_vector("0.1, abc", length=2)),
    ("an empty text box", lambda: parse_vector("  ", length=2)),
    ("a number too many", lambda: parse_vector("1, 2, 3", length=2)),
    ("an unclosed bracket", lambda: parse_vector("[1, 2", length=2)),
    ("a token the model does not know", lambda: parse_tokens("A B Z", ["A", "B", "C"], max_tokens=8)),
]


def _raise(call):
    with pytest.raises(ak.AttentionError) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize("what, call", BAD_INPUTS, ids=[w for w, _c in BAD_INPUTS])
def test_a_learners_bad_input_gets_a_chinese_message_with_the_english_numbers(what, call, monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "en")
    kind, english = _raise(call)
    assert not CJK.search(english), english
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    zh_kind, chinese = _raise(call)
    assert zh_kind is kind  # the same exception: a notebook's except clause still catches it
    assert CJK.search(chinese), chinese
    assert not ENGLISH_SENTENCE.search(chinese), chinese  # no English sentence left over
    # the same numbers and shapes, and the same fix in code (K.T, Q[None, :], mask.astype(bool))
    assert Counter(re.findall(r"\d+", chinese)) == Counter(re.findall(r"\d+", english)), (english, chinese)
    assert set(CODE_FIX.findall(english)) <= set(CODE_FIX.findall(chinese)), (english, chinese)


def test_the_column_layout_is_named_in_chinese_with_its_fix(monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "en")
    english = _raise(lambda: ak.scaled_dot_product_attention(Q, K.T, V))[1]
    assert english == ("Q has d_k = 2 but K has d_k = 4 (Q (3, 2), K (2, 4)); queries and keys must have the "
                       "same width: project them to the same d_k. Did you pass K in the column layout "
                       "(d_k, n_k)? Use K.T")
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    assert _raise(lambda: ak.scaled_dot_product_attention(Q, K.T, V))[1] == (
        "Q 的 d_k = 2，但 K 的 d_k = 4（Q (3, 2)，K (2, 4)）；查询和键的宽度必须相同：请把它们投影到同一个 d_k"
        "。你是不是按列布局 (d_k, n_k) 传入了 K？请用 K.T")
    general = _raise(lambda: ak.self_attention(Q.T, np.eye(2), np.eye(2), np.eye(2)))[1]
    assert "列布局" in general and "X.T" in general, general


def test_plain_numpys_message_and_shape_text_in_chinese(monkeypatch, capsys):
    from attention_kit.check import shape_text
    from attention_kit.check.plain import plain_numpy

    @plain_numpy()
    def plain_checker(answer):
        return True

    @plain_numpy(allow=("softmax",))
    def softmax_allowed(answer):
        return True

    def answer(n):
        return ak.causal_mask(n)

    def attention_answer(X):
        return ak.self_attention(X, np.eye(2), np.eye(2), np.eye(2))

    monkeypatch.setenv("ATTENTION_KIT_LANG", "en")
    assert plain_checker(answer) is False
    assert "this exercise asks for plain numpy, without attention_kit: your answer uses `" in capsys.readouterr().out
    assert shape_text([[1, 2], [3]]) == "a ragged list with no single shape"
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    assert plain_checker(answer) is False
    out = capsys.readouterr().out
    assert "这道练习要求只用 numpy，不用 attention_kit：你的答案用了 `" in out, out
    assert "请自己写出这个计算；检查器会拿它与 attention_kit 比较" in out, out
    assert softmax_allowed(attention_answer) is False
    out = capsys.readouterr().out
    assert "这道练习要求用 numpy，attention_kit 中只能用 `ak.softmax`：你的答案用了 `" in out, out
    assert shape_text([[1, 2], [3]]) == "一个长短不一、没有统一形状的 list"
    assert shape_text(3.0) == "()（一个 float）"


def test_notebook_03s_parameter_count_tick_in_both_languages(monkeypatch, capsys):
    from attention_kit.check import multi_head

    monkeypatch.setenv("ATTENTION_KIT_LANG", "en")
    assert multi_head.n_parameters(1_050_624, d_model=512, n_heads=8, bias=True) is True
    assert multi_head.n_parameters(67_108_864, d_model=1024, n_heads=128, d_head=128) is True
    out = capsys.readouterr().out
    assert ("1,050,624 parameters: W_q, W_k, W_v are 512 x 512 in total, W_o is 512 x 512, plus 2,048 "
            "biases; the head count does not change it") in out
    assert "67,108,864 parameters: W_q, W_k, W_v are 1024 x 16384 in total, W_o is 16384 x 1024\n" in out
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    assert multi_head.n_parameters(1_050_624, d_model=512, n_heads=8, bias=True) is True
    out = capsys.readouterr().out
    assert ("1,050,624 个参数：W_q、W_k、W_v（所有头合在一起）各为 512 x 512，W_o 为 512 x 512，另加 2,048 个偏置；"
            "头的个数不改变这个数") in out


def _grades() -> ClassGrades:
    """alice returned 01 (one exercise of each verdict) from Canvas, late; bob 01 from Moodle."""
    nb1 = registry.notebook("01")
    statuses = [PASSED, FAILED, NOT_ATTEMPTED, COULD_NOT_RUN, MISSING]
    alice = NotebookGrade("alice", "01", "alice_123_456_01_general_attention_model.ipynb", [
        ExerciseGrade(i, ex.title, st, f"message {i}") for (i, ex), st in zip(nb1.numbered(), statuses, strict=True)])
    alice.late = True
    bob = NotebookGrade("bob", "01", "bob_4711_assignsubmission_file_/01.ipynb", [
        ExerciseGrade(i, ex.title, FAILED, "你除以了 sqrt(d)") for i, ex in nb1.numbered()])
    info = {"alice": Learner("alice", canvas_id="123", late=True), "bob": Learner("bob", moodle_id="4711")}
    return ClassGrades(["alice", "bob"], [alice, bob], info=info, notebooks=["01", "02"],
                       assignment="Week 1", late_penalty=50)


def test_the_feedback_and_the_summary_have_chinese_headings(monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    grades = _grades()
    alice = feedback_markdown(grades, "alice")
    assert alice.startswith("# Week 1：给 alice (123) 的反馈\n")
    assert "你通过了 **" in alice and "✓ 通过，✗ 还没通过（附提示）" in alice
    assert "**你的成绩：" in alice and "迟交：笔记本 01；迟交的扣分是迟交笔记本分数的 50 %" in alice
    assert "## 01 · The general attention model：5 道通过了 1 道" in alice
    assert "- ✗ **练习 2，dot scores**：还没通过 — message 01.2" in alice
    assert "- · **练习 3，dot and cosine winners**：未作答\n" in alice
    assert "## 02 · Self-attention：未交" in alice
    assert not ENGLISH_SENTENCE.search(alice.replace("The general attention model", "")), alice
    summary = summary_markdown(grades)
    assert summary.startswith("# 全班总结：Week 1\n\n2 名学习者；布置的笔记本：01, 02")
    assert "| 学习者人数 | 提示 |" in summary and "| 1 | 你除以了 sqrt(d) |" in summary
    assert "## 迟交" in summary
    text = summary_text(grades)
    assert text.splitlines()[0].startswith("练习")
    assert "平均分" in text and "抄解答 = 含有课程的参考解答，不计分" in text


def test_the_lms_files_keep_the_headers_their_importers_expect(tmp_path, monkeypatch):
    """canvas.csv and moodle.csv under zh: the same header rows as under en, Chinese comments."""
    files = {}
    for lang in ("en", "zh"):
        monkeypatch.setenv("ATTENTION_KIT_LANG", lang)
        write_reports(_grades(), tmp_path / lang)
        files[lang] = {name: list(csv.reader(open(tmp_path / lang / name, encoding="utf-8")))
                       for name in ("canvas.csv", "moodle.csv", "grades.csv")}
    for name in ("canvas.csv", "moodle.csv", "grades.csv"):
        assert files["zh"][name][0] == files["en"][name][0], name
    assert files["en"]["moodle.csv"][0][:2] == ["Identifier", "Full name"]
    assert files["en"]["canvas.csv"][0][:2] == ["Student", "ID"]
    comment = files["zh"]["moodle.csv"][1][-1]
    assert "道练习通过了" in comment and "你的反馈文件逐一讲解了每道练习" in comment, comment
    assert files["en"]["moodle.csv"][1][-1].endswith("Your feedback file explains each exercise.")
    assert files["zh"]["grades.csv"][1][2] == PASSED  # grades.csv holds the statuses, in English
