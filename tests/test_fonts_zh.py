"""The figures in Chinese (docs/translating.md, "The font"): a CJK font found and added after DejaVu
Sans, Chinese titles and labels drawn with no missing glyph, English figures unchanged, and one
clear warning (no wall of glyph warnings) on a machine without a Chinese font.

CI installs ``fonts-noto-cjk`` (``.ci/run``), so there a missing font fails instead of skipping."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib as mpl  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from attention_kit.plotting import fonts, head_grid, heatmap  # noqa: E402

MISSING = "missing from"  # matplotlib: "Glyph 38190 (\N{CJK UNIFIED IDEOGRAPH-952E}) missing from font(s) DejaVu Sans."


def _cjk_or_skip() -> str:
    family = fonts.cjk_family()
    if family is None:
        reason = ("no Chinese font on this machine (install one: sudo apt-get install fonts-noto-cjk); "
                  f"looked for {', '.join(fonts.CJK_FAMILIES)}")
        if os.environ.get("CI"):
            pytest.fail("CI must have a Chinese font (.ci/run installs fonts-noto-cjk): " + reason)
        pytest.skip(reason)
    return family


def _draw(fig) -> list[str]:
    """Render ``fig`` to PNG; the texts of every warning raised while drawing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    return [str(w.message) for w in caught]


def _chinese_figure():
    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.add_subplot()
    art = heatmap([[0.7, 0.3], [0.4, 0.6]], query_labels=["猫", "坐"], key_labels=["猫", "坐"], ax=ax,
                  title="注意力权重（行：查询）")
    ax.plot([], [], label="训练损失")
    ax.legend()
    return fig, art


def test_the_check_can_fail_dejavu_alone_cannot_draw_chinese():
    """Without the Chinese font, the same figure warns of missing glyphs: the test below can fail."""
    with mpl.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, _ = _chinese_figure()
        assert any(MISSING in m for m in _draw(fig))


def test_chinese_title_and_axis_labels_draw_without_missing_glyphs(monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    family = _cjk_or_skip()
    with mpl.rc_context():
        before = list(mpl.rcParams["font.family"])
        assert fonts.use_cjk_font() == family
        assert fonts.use_cjk_font() == family  # a second call adds nothing
        assert mpl.rcParams["font.family"] == before + [family]  # Latin text: the fonts before it
        fig, art = _chinese_figure()
        # the package's own labels, translated: heatmap axes and colour bar, head_grid's titles
        assert (art.ax.get_xlabel(), art.ax.get_ylabel()) == ("键", "查询")
        assert art.colorbar.ax.get_ylabel() == "注意力权重"
        grid, axes, _ = head_grid([[[0.5, 0.5], [0.2, 0.8]]] * 2)
        assert [a.get_title() for a in axes] == ["第 1 个头", "第 2 个头"]
        for f in (fig, grid):
            assert [m for m in _draw(f) if MISSING in m] == []


def test_every_explorer_draws_its_chinese_figure_without_missing_glyphs(monkeypatch):
    """The explorers' titles, labels and legends in Chinese, each drawn with no missing glyph."""
    from test_announcements import explorer_factories  # (tests/ is on sys.path)

    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    _cjk_or_skip()
    with mpl.rc_context():
        fonts.use_cjk_font()
        for name, make in explorer_factories().items():
            ex = make()
            texts = [t.get_text() for t in ex.figure.findobj(matplotlib.text.Text) if t.get_text()]
            assert any("\u4e00" <= ch <= "\u9fff" for t in texts for ch in t), f"{name}: no Chinese text in {texts}"
            assert [m for m in _draw(ex.figure) if MISSING in m] == [], name


def test_english_figures_keep_their_english_labels(monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "en")
    fig = Figure()
    art = heatmap([[1.0]], ax=fig.add_subplot())
    assert (art.ax.get_xlabel(), art.ax.get_ylabel(), art.colorbar.ax.get_ylabel()) == \
        ("keys", "queries", "attention weight")


def test_without_a_chinese_font_one_clear_warning_and_no_glyph_warnings(monkeypatch):
    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    monkeypatch.setattr(fonts, "CJK_FAMILIES", ("No Such Font SC",))
    monkeypatch.setattr(fonts, "_FILE_HINTS", ("nosuchfontfile",))
    monkeypatch.setattr(fonts, "_warned", False)
    with mpl.rc_context({"font.family": ["DejaVu Sans"]}), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fonts.use_cjk_font() is None
        assert fonts.use_cjk_font() is None  # said once
        assert mpl.rcParams["font.family"] == ["DejaVu Sans"]
        fig, _ = _chinese_figure()
        fig.savefig(io.BytesIO(), format="png")  # still draws
    said = [w for w in caught if issubclass(w.category, fonts.MissingCJKFontWarning)]
    assert len(said) == 1
    text = str(said[0].message)
    assert "sudo apt-get install fonts-noto-cjk" in text and "No Such Font SC" in text
    assert "找不到中文字体" in text  # in the course's language
    assert [str(w.message) for w in caught if MISSING in str(w.message)] == []


@pytest.mark.slow
def test_importing_plotting_in_chinese_adds_only_the_font():
    """In Chinese, importing the plotting and widget modules changes one rcParam: font.family gets
    the Chinese font at its end (in English nothing changes: test_plotting)."""
    family = _cjk_or_skip()
    code = ("import matplotlib as mpl; before = dict(mpl.rcParams); "
            "import attention_kit.plotting, attention_kit.widgets; "
            "print(sorted(k for k in before if mpl.rcParams[k] != before[k])); "
            "print(mpl.rcParams['font.family'][-1])")
    env = {**os.environ, "ATTENTION_KIT_LANG": "zh"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.splitlines() == ["['font.family']", family]


def test_binder_and_ci_install_the_font_the_figures_look_for_first():
    """apt.txt (read by repo2docker on Binder, and by .ci/run) installs Debian's fonts-noto-cjk,
    whose simplified Chinese face is the first family looked for."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    packages = [ln.strip() for ln in (root / "apt.txt").read_text().splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    assert packages == ["fonts-noto-cjk"]
    assert fonts.CJK_FAMILIES[0] == "Noto Sans CJK SC"
    assert "apt.txt" in (root / ".ci" / "run").read_text()


def test_a_chinese_axis_label_gets_no_english_plural_in_the_text_alternative(monkeypatch):
    """The text alternatives name the rows and columns by the axis labels, which are Chinese in zh:
    "2 个键", never an English plural "键s"."""
    from attention_kit import describe_figure

    monkeypatch.setenv("ATTENTION_KIT_LANG", "zh")
    fig = Figure()
    heatmap([[0.5, 0.5], [0.2, 0.8]], ax=fig.add_subplot())
    words = str(describe_figure(fig))
    assert "2 个键" in words and "2 个查询" in words, words
    assert "键s" not in words and "查询s" not in words, words
