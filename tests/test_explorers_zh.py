"""The explorers and the figures' text alternatives in Chinese (issue 47): under
``ATTENTION_KIT_LANG=zh`` every control still has a name, now the catalog's Chinese one; the
descriptions, announcements and still pictures say the same numbers as the English ones, in
Chinese sentences."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from test_announcements import explorer_factories  # noqa: E402  (tests/ is on sys.path)

from attention_kit.i18n import gettext  # noqa: E402

CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?")


@pytest.fixture(autouse=True)
def _describe_at_once(monkeypatch):
    from attention_kit.widgets.live_figure import LiveFigure

    monkeypatch.setattr(LiveFigure, "DESCRIBE_EVERY", 0.0)
    monkeypatch.setattr(LiveFigure, "DESCRIBE_AFTER", 0.0)


@pytest.fixture(autouse=True)
def _chinese_font():
    """The package adds a Chinese font when it is imported in zh; this process imported it in
    English, so add it here, for the test only (no glyph warning from the Chinese figures)."""
    from attention_kit.plotting import fonts

    with matplotlib.rc_context():
        fonts.use_cjk_font()
        yield


def _in(lang, monkeypatch, make):
    monkeypatch.setenv("ATTENTION_KIT_LANG", lang)
    try:
        return make()
    finally:
        monkeypatch.delenv("ATTENTION_KIT_LANG")


def _named_widgets(ex):
    """Every control a learner reaches, with the name a screen reader says for it."""
    from attention_kit.widgets.live_figure import widgets_under

    out = []
    for w in widgets_under([ex]):
        if isinstance(w, (widgets.Box, widgets.Label, widgets.HTML, widgets.Output)):
            continue
        if not isinstance(w, widgets.DOMWidget) or not hasattr(w, "value") and not isinstance(w, widgets.Button):
            continue
        out.append((w, (getattr(w, "description", "") or getattr(w, "tooltip", "") or
                        getattr(w, "placeholder", "") or "").strip()))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(explorer_factories()))
def test_every_control_of_every_explorer_is_named_in_chinese(name, monkeypatch):
    en = _in("en", monkeypatch, explorer_factories()[name])
    zh = _in("zh", monkeypatch, explorer_factories()[name])
    en_named, zh_named = _named_widgets(en), _named_widgets(zh)
    assert len(en_named) == len(zh_named) >= 1
    for (_w, said_en), (w, said_zh) in zip(en_named, zh_named, strict=True):
        assert said_zh, (name, type(w).__name__, "no accessible name in zh")
        translated = _in("zh", monkeypatch, lambda s=said_en: gettext(s))
        if translated != said_en:  # a name the catalog translates is shown translated
            assert said_zh == translated, (name, said_en, said_zh)
    translated = [s for _w, s in zh_named if CJK.search(s)]
    assert translated, (name, [s for _w, s in zh_named])
    # a menu's choices are the same values, and the explorer draws the same picture
    for key, w in en.controls.items():
        assert getattr(w, "value", None) == getattr(zh.controls[key], "value", None)


def test_a_chinese_explorer_describes_the_same_numbers_in_chinese(monkeypatch):
    from attention_kit.widgets import AttentionExplorer

    def make():
        return AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]])

    en = _in("en", monkeypatch, make)
    zh = _in("zh", monkeypatch, make)
    d_en, d_zh = en.live.description, zh.live.description
    assert "Bars: k1 0.612, k2 0.298, k3 0.0898." in d_en
    assert "子图 2：柱子：k1 0.612、k2 0.298、k3 0.0898。" in d_zh
    assert "。、" not in d_zh and "。 和" not in d_zh  # (a panel's kinds listed without their own "。")
    assert "子图 3：箭头：q = (1.00, 0.40)。" in d_zh
    assert sorted(NUMBER.findall(d_zh)) == sorted(NUMBER.findall(d_en))
    # the still picture (GitHub, an HTML export): its alt and its "Describe this figure"
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    html = zh._repr_mimebundle_()["text/html"]
    plain = zh._repr_mimebundle_()["text/plain"]
    assert "交互探索器的静态画面" in html and "<summary>描述此图</summary>" in html
    assert plain.startswith("AttentionExplorer（可交互")
    # the names the page makes up (live_figure.js): a slider's value box, a nameless control
    assert zh.live.words == {"slider": "滑块", "value": "{name}（数值）", "figure": "注意力图"}
    assert en.live.words == {"slider": "slider", "value": "{name} value", "figure": "attention figure"}


def test_a_chinese_announcement_says_the_control_then_what_changed(monkeypatch):
    from attention_kit.widgets import AttentionExplorer, AttentionTrainer, MaskExplorer

    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    ex = AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]])
    ex.controls["temperature"].value = 1.2
    words = ex.live.announcement
    assert words.startswith("温度 1.20。"), words
    assert "柱子：k1 0.5" in words, words
    ex.controls["seed"].value = 3  # a seed that changes nothing the description says
    assert ex.live.announcement in ("", "随机种子 3。 文字说明没有变化。"), ex.live.announcement
    m = MaskExplorer(["the", "cat", "sat", "on", "<pad>", "<pad>"], n_real=4, mask="causal", token=2)
    m.controls["mask"].value = "padding"
    assert m.live.announcement.startswith("掩码 填充。"), m.live.announcement
    m.controls["positions"].value = True
    assert m.live.announcement.startswith("加上位置编码 P 开。"), m.live.announcement
    lab = AttentionTrainer("reverse", lr=0.2)
    lab.step(3)
    assert lab.live.announcement.startswith("已训练 3 步，现在是第 3 步。"), lab.live.announcement
    assert lab.buttons["Step"].description == "单步"


def test_a_head_menu_says_its_choice_once_in_chinese(monkeypatch):
    from attention_kit.widgets.base import control_words

    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    w = widgets.Dropdown(options=[("第 1 层", 0), ("第 2 层", 1)], value=1, description="层")
    assert control_words(w) == "第 2 层"
    assert control_words(widgets.Checkbox(value=True, description="因果掩码")) == "因果掩码 开"


def _two_panels():
    from attention_kit.plotting import heatmap

    fig = Figure(figsize=(6, 3))
    a, b = fig.subplots(1, 2)
    w = np.array([[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.2, 0.3, 0.5]])
    heatmap(w, query_labels=["a", "b", "c"], key_labels=["a", "b", "c"], ax=a, title="weights",
            mask=np.tril(np.ones((3, 3), dtype=bool)))
    x = np.linspace(0, 4, 9)
    b.plot(x, np.where(x < 2.2, 0.0, 1.0), "o-", label="hard")
    b.plot(x, x / 4, "--", label="soft")
    b.set_xlabel("x")
    return fig


def test_a_figures_text_alternative_in_chinese_has_the_english_numbers(monkeypatch):
    from attention_kit.accessible import figure_html
    from attention_kit.plotting.describe import describe_figure

    en = _in("en", monkeypatch, lambda: describe_figure(_two_panels()))
    zh = _in("zh", monkeypatch, lambda: describe_figure(_two_panels()))
    assert sorted(NUMBER.findall(zh.lines)) == sorted(NUMBER.findall(en.lines))
    assert en.summary.startswith("A figure of 2 panels (1 heatmap)")
    assert zh.summary.startswith("一幅含 2 个子图的图（其中 1 个热力图）"), zh.summary
    assert "子图 1，查询 b：最大权重 0.70，在键 b 上。" in zh.facts, zh.facts
    assert any(f.startswith("子图 1：已掩蔽（画有斜线，标为 —）：3 个格子") or "已掩蔽（画有斜线，标为 —）" in f
               for f in zh.facts), zh.facts
    assert any("从 0 跃升到 1" in f for f in zh.facts), zh.facts
    assert not any(w in zh.lines for w in ("largest", "Panel", "points from", "masked", " and "))
    # the table a screen reader walks: its caption and its hidden cells in Chinese
    assert "每行一个查询，每列一个键" in zh.tables[0] and "<td>已掩蔽</td>" in zh.tables[0]
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    page = figure_html(_two_panels(), "AAAA")
    assert 'alt="一幅含 2 个子图的图' in page and "<summary>描述此图</summary>" in page


def test_the_announcement_finds_what_changed_in_chinese_lines(monkeypatch):
    from attention_kit.widgets.announce import announcement_for, changed_lines

    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    before = ["一幅含 2 个子图的图：权重；曲线。", "子图 1，查询 a：最大权重 0.50，在键 a 上。",
              "子图 1，查询 b：最大权重 0.90，在键 b 上。", "子图 2：另外画有：竖直线，位于 x = 1。"]
    after = ["一幅含 2 个子图的图：权重；曲线。", "子图 1，查询 a：最大权重 0.50，在键 a 上。",
             "子图 1，查询 b：最大权重 0.60，在键 c 上。"]
    lines = changed_lines(before, after, {before[0]}, "温度 2.00")
    # what went away first ("不再有：" a reference line), then the query whose key changed
    assert lines == ["不再有：子图 2：另外画有：竖直线，位于 x = 1。", "子图 1，查询 b：最大权重 0.60，在键 c 上。"], lines
    said = announcement_for("温度 2.00", lines)
    assert said.startswith("温度 2.00。 不再有：子图 2"), said
    assert announcement_for("随机种子 3", []) == "随机种子 3。 文字说明没有变化。"
    many = announcement_for("掩码 因果", ["甲。", "乙。", "丙。", "丁。", "戊。"])
    assert many.endswith("另有 2 处变化；“描述此图”列出全部。"), many
