"""Issue 34: the course's colours stay readable with the common colour-vision deficiencies.

Each colour map is passed through Machado, Oliveira & Fernandes (2009), "A physiologically-based
model for simulation of color vision deficiency" (severity 1: protanopia, deuteranopia,
tritanopia), and its lightness (CIE L*) is checked: the weights' map must still go from dark to
light without turning back (a weight can be read from lightness alone), the scores' diverging map
must still be lightest at 0 and darker towards both ends. The values written in the cells must
contrast with every cell colour at WCAG AA's 4.5:1."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib import colormaps

from attention_kit.plotting.colours import SCORES_CMAP, WEIGHTS_CMAP
from attention_kit.plotting.heatmaps import WHITE_TEXT_BELOW, relative_luminance

MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
    "typical": np.eye(3).tolist(),
}
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
X = np.arange(256) / 255  # each of the maps' 256 colours once


def _linear(c):
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lightness(cmap: str, vision: str) -> np.ndarray:
    """CIE L* of the map's colours as seen with ``vision`` (the simulation works in linear RGB)."""
    rgb = np.clip(_linear(colormaps[cmap](X)[:, :3]) @ np.array(MACHADO[vision]).T, 0, 1)
    y = rgb @ np.array([0.2126, 0.7152, 0.0722])
    return np.where(y > 216 / 24389, 116 * np.cbrt(y) - 16, y * 24389 / 27)


@pytest.mark.parametrize("vision", list(MACHADO))
def test_the_weights_map_gets_lighter_all_the_way_with_each_deficiency(vision):
    L = lightness(WEIGHTS_CMAP, vision)
    assert np.all(np.diff(L) > 0), f"{WEIGHTS_CMAP}'s lightness turns back for {vision}"
    assert L[-1] - L[0] > 50  # 0 and 1 are far apart in lightness alone


@pytest.mark.parametrize("vision", list(MACHADO))
def test_the_scores_map_is_lightest_at_zero_and_darker_towards_both_ends(vision):
    L = lightness(SCORES_CMAP, vision)
    mid = len(X) // 2
    assert np.all(np.diff(L[:mid + 1]) > -0.5) and np.all(np.diff(L[mid:]) < 0.5)
    assert L[mid] - max(L[0], L[-1]) > 50


@pytest.mark.parametrize("cmap", [WEIGHTS_CMAP, SCORES_CMAP])
def test_cell_values_contrast_with_every_cell_colour(cmap):
    y = relative_luminance(colormaps[cmap](X))
    white = y < WHITE_TEXT_BELOW
    contrast = np.where(white, 1.05 / (y + 0.05), (y + 0.05) / 0.05)
    assert contrast.min() >= 4.5


# ---------------------------------------------------------------------------------------------
# Colour is never the only carrier: what the explorers tell apart by colour, they also tell
# apart by a shape (issue 34).
# ---------------------------------------------------------------------------------------------


def test_the_tiling_grid_marks_each_status_with_a_shape_as_well_as_a_colour():
    from attention_kit.widgets import TilingStepper
    from attention_kit.widgets.tiling import CURRENT, DONE, MASKED, SKIPPED, STATUS_MARKS

    shapes = [m[0] for m in STATUS_MARKS if m is not None]
    assert len(set(shapes)) == len(shapes) == 4  # computed, this step, skipped, masked
    ex = TilingStepper(causal=True, step=7)
    status = ex.state["status"]
    for k in (DONE, CURRENT, SKIPPED, MASKED):
        rows, cols = np.nonzero(status == k)
        assert rows.size, f"status {k} is not in this picture"
        mark = ex._marks[k]
        assert mark.get_marker() == STATUS_MARKS[k][0]
        assert sorted(zip(mark.get_ydata(), mark.get_xdata(), strict=True)) == sorted(
            zip(rows, cols, strict=True)), f"status {k}: the marks are not on its cells"
        assert mark in ex.live.dynamic  # drawn with every step
    ex.controls["causal"].value = False
    assert not len(ex._marks[MASKED].get_xdata())  # no mask, no masked marks


def test_self_attention_pairs_x_i_and_y_i_by_tip_shape_as_well_as_colour():
    from attention_kit.widgets import SelfAttentionExplorer

    ex = SelfAttentionExplorer(np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]]))
    xs, ys = ex._arr_x.tips, ex._arr_y.tips
    assert [t.get_marker() for t in xs] == [t.get_marker() for t in ys]
    assert len({t.get_marker() for t in xs}) == 3  # each pair its own shape
    for tips, pts in ((xs, ex.state["X"]), (ys, ex.state["outputs"])):
        np.testing.assert_allclose([[t.get_xdata()[0], t.get_ydata()[0]] for t in tips], pts)


def test_rope_query_and_key_differ_by_line_and_tip_as_well_as_colour():
    from attention_kit.widgets import RopeExplorer

    ex = RopeExplorer()
    assert ex._q_line.get_linestyle() != ex._k_line.get_linestyle()
    assert ex._q_tip.get_marker() != ex._k_tip.get_marker()


# ---- two lines of one panel told apart only by colour (issue 34) -------------------------------

def test_the_check_flags_two_lines_that_differ_only_in_colour_and_the_describer_says_the_styles():
    from matplotlib.figure import Figure

    from attention_kit.plotting.describe import colour_only_lines, describe_figure

    fig = Figure()
    ax = fig.subplots()
    x = np.arange(5.0)
    ax.plot(x, x, color="C0", label="a")
    ax.plot(x, x ** 2, color="C1", label="b")
    ax.axhline(1.0, color="0.5")  # a reference line is not a curve
    assert colour_only_lines(fig) == [("", "a", "b")]
    ax.lines[1].set_linestyle("--")
    ax.lines[1].set_marker("o")
    assert colour_only_lines(fig) == []
    facts = " ".join(describe_figure(fig).facts)
    assert "a (solid):" in facts and "b (dashed, circles):" in facts


@pytest.mark.slow
def test_no_figure_the_package_draws_has_lines_that_differ_only_in_colour():
    import sys
    from pathlib import Path

    from attention_kit.learn.toy_tasks import Trainer
    from attention_kit.plotting.describe import colour_only_lines
    from attention_kit.widgets import TrainingMonitor

    sys.path.insert(0, str(Path(__file__).parent))
    from test_announcements import explorer_factories

    checked = 0
    for name, make in explorer_factories().items():
        ex = make()
        if hasattr(ex, "step") and hasattr(ex, "trainer"):
            ex.step(5)  # the training curves have points
        assert colour_only_lines(ex.figure) == [], name
        checked += 1
    monitor = TrainingMonitor(Trainer("reverse", lr=0.2), total=10)
    monitor.trainer.step(5)
    monitor.refresh()
    assert colour_only_lines(monitor.figure) == []
    assert checked == 10


_STYLE = r"(?:solid|dashed|dotted|dash-dot|patterned)(?:, [a-z ]+)?|[a-z ]+ only"
_CURVE = re.compile(r"^(Panel \d+: )?(.*?)(?: \((" + _STYLE + r")\))?: (?:\d+ points from|one point at|no points yet)")


def _stored_figure_facts(path):
    """The facts ("Describe this figure") of every figure in a notebook's stored outputs."""
    import html as _html
    import json

    nb = json.loads(path.read_text(encoding="utf-8"))
    for k, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            page = out.get("data", {}).get("text/html", "")
            page = "".join(page) if isinstance(page, list) else page
            for fig in re.findall(r'<div class="ak-figure">.*?</details>', page, flags=re.S):
                yield k, [_html.unescape(li) for li in re.findall(r"<li>(.*?)</li>", fig, flags=re.S)]


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
def test_no_stored_notebook_figure_has_curves_that_differ_only_in_colour(notebook):
    """Read from the stored outputs: the describer names each of several curves' line style and
    marker ("held-out (dashed)"); two curves of one panel with the same words differ only in colour.
    A panel of several curves without those words was stored before the describer said them."""
    for cell, facts in _stored_figure_facts(NOTEBOOKS / notebook):
        panels: dict = {}
        for f in facts:
            m = _CURVE.match(f)
            if m:
                panels.setdefault(m.group(1) or "", []).append((m.group(2), m.group(3)))
        for panel, curves in panels.items():
            if len(curves) < 2:
                continue
            styles = [s for _, s in curves]
            assert all(styles), f"{notebook} cell {cell}: re-execute it (curves without their styles)"
            assert len(set(styles)) == len(styles), f"{notebook} cell {cell} {panel}: {curves}"


_LIES_ON = re.compile(r"^(?:Panel \d+: )?.*? \((" + _STYLE + r")\): .*; it lies on .*? \((" + _STYLE + r")\)(?:,| exactly)")


def hidden_curves(facts) -> list[str]:
    """The curves whose words say they lie on another ("it lies on tiled ... within 0.1 %") but that
    have no marker of their own, or the same one: drawn on top of each other, one cannot be seen."""
    out = []
    for f in facts:
        m = _LIES_ON.match(f)
        if m:
            mine, theirs = (s.split(", ")[1] if ", " in s else s.removesuffix(" only") if "only" in s else ""
                            for s in m.groups())
            if not mine or mine == theirs:
                out.append(f)
    return out


def test_a_curve_that_lies_on_another_is_drawn_with_its_own_marker():
    """Review 2026-11-26 (F12): 07 cell 5's dash-dot reference line lay under the tiled curve (the
    same values to 4 digits), in the same colour, and could not be seen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attention_kit.plotting.describe import describe_figure

    ns = np.array([256, 512, 1024, 2048])
    tiled, ref = [0.47359, 0.72377, 1.22382, 2.22386], [0.47364, 0.72364, 1.22364, 2.22364]
    facts = {}
    for how, style in (("before", dict(fmt="-.", color="#E69F00")),
                       ("now", dict(fmt="D-.", color="#000000", mfc="none", ms=11, zorder=3))):
        fig, ax = plt.subplots()
        ax.loglog(ns, tiled, "s-", color="#E69F00", label="tiled")
        ax.loglog(ns, ref, style.pop("fmt"), label="fixed + 1024 per token", **style)
        facts[how] = describe_figure(fig).facts
        plt.close(fig)
    assert len(hidden_curves(facts["before"])) == 1 and not hidden_curves(facts["now"]), facts


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
def test_no_stored_notebook_figure_hides_a_curve_under_another(notebook):
    for cell, facts in _stored_figure_facts(NOTEBOOKS / notebook):
        assert not hidden_curves(facts), f"{notebook} cell {cell}: {hidden_curves(facts)}"


def test_08s_curves_that_lie_together_have_markers_large_enough_and_not_on_the_same_steps():
    """Review 2026-11-26 (F13): in 08 cell 30, prefix-matching (dashed, squares) and accuracy (dotted,
    triangles) lie on top of each other for hundreds of steps and their 3-point markers blurred into
    one line. Draws the cell's figure (its own code, on made-up scores) and checks the markers."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nb = json.loads((NOTEBOOKS / "08_what_heads_learn.ipynb").read_text(encoding="utf-8"))
    code = next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
                and "ax.plot(st, pm10" in "".join(c["source"]))
    code = code[:code.index("plt.show()")]
    st = np.arange(0, 801, 25)
    rise = 1 / (1 + np.exp(-(st - 250) / 30.0))
    meta2 = {"snap_steps": st, "snap_prev_early": np.stack([0.2 + 0.7 * rise] * 2, axis=1),
             "snap_prefix": np.stack([0.1 + 0.89 * rise] * 4, axis=1), "snap_acc": 0.06 + 0.93 * rise}
    scope = {"np": np, "plt": plt, "meta2": meta2, "band": (200, 350)}
    exec(compile(code, "08 cell 30", "exec"), scope)  # noqa: S102 - the notebook's own drawing code
    lines = [ln for ln in scope["ax"].get_lines() if ln.get_marker() not in ("None", "", None)]
    plt.close("all")
    assert len(lines) == 3
    assert all(ln.get_markersize() >= 6 for ln in lines), [ln.get_markersize() for ln in lines]
    at = []
    for ln in lines:
        every = ln.get_markevery()
        idx = np.arange(len(st))[slice(every[0], None, every[1])] if isinstance(every, tuple) else \
            np.arange(len(st)) if every is None else np.arange(len(st))[every]
        at.append(set(idx.tolist()))
    assert not (at[1] & at[2]), "prefix-matching and accuracy put their markers on the same steps"
