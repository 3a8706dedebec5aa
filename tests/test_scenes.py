"""Controls that used to redraw the whole figure on every press (issue 23): a menu or checkbox
that changes the panels now switches between figures built once each (``Explorer._show_scene``),
and 07's causal checkbox keeps its axes' ranges. Checked by what is drawn, not by timing."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.learn.toy_tasks import Trainer
from attention_kit.widgets import AttentionTrainer, MultiHeadExplorer, SelfAttentionExplorer
from attention_kit.widgets.tiling import TilingStepper

#: make check leaves these to make test: every explorer's scenes built and switched (about 30 s in all at load 4)
pytestmark = pytest.mark.slow

X = np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]])


@pytest.mark.slow
def test_learned_checkbox_switches_between_two_figures():
    ex = SelfAttentionExplorer(X, labels=["x1", "x2", "x3"])
    identity, before = ex.figure, ex.png()
    ex.controls["learned"].value = True
    learned, full = ex.figure, ex.live.full_renders
    assert learned is not identity and ex.live.figure is learned
    # the learned figure is the picture a fresh explorer with learned projections draws
    assert ex.png() == SelfAttentionExplorer(X, labels=["x1", "x2", "x3"], learned=True).png()
    ex.controls["learned"].value = False
    assert ex.figure is identity and ex.png() == before
    ex.controls["learned"].value = True
    assert ex.figure is learned
    assert ex.live.full_renders == full  # neither way back drew a background again
    np.testing.assert_allclose(ex._hm_w.image.get_array(), ex.state["weights"])


@pytest.mark.slow
def test_a_scene_follows_edits_made_while_another_was_shown():
    ex = SelfAttentionExplorer(X, labels=["x1", "x2", "x3"])
    ex.controls["learned"].value = True
    ex.editor.set_text("x1", "0.4, -0.2")
    ex.controls["learned"].value = False  # back to the identity figure, with the new x1
    np.testing.assert_allclose(ex.state["X"][0], [0.4, -0.2])
    np.testing.assert_allclose(ex._hm_dots.image.get_array(), ex.state["X"] @ ex.state["X"].T)


@pytest.mark.slow
def test_trainer_menus_reuse_their_figures():
    lab = AttentionTrainer("reverse", lr=0.2)
    first = lab.figure
    lab.controls["task"].value = "rotate"
    rotate = lab.figure
    assert rotate is not first and len(lab._hms) == 1
    lab.controls["task"].value = "reverse"
    assert lab.figure is first
    full = lab.live.full_renders
    lab.controls["task"].value = "rotate"
    assert lab.figure is rotate and lab.live.full_renders == full
    np.testing.assert_array_equal(lab.state["weights"], Trainer("rotate", lr=0.2).probe_weights())
    lab.controls["n_heads"].value = 2
    assert len(lab._hms) == 2 and lab.figure not in (first, rotate)


@pytest.mark.slow
def test_scenes_are_bounded():
    ex = MultiHeadExplorer(np.eye(8)[:5], list("abcde"), n_heads=1)
    ex.MAX_SCENES = 2
    for h in (2, 4, 8, 1, 2):
        ex.controls["n_heads"].value = h
        assert len(ex._hms) == h
        assert len(ex._scenes) < 2 and len(ex.live._kept) <= len(ex._scenes)


def test_causal_checkbox_keeps_the_axes():
    st = TilingStepper()
    st.controls["causal"].value = not st.controls["causal"].value
    full = st.live.full_renders
    limits = [ax.get_ylim() for ax in (st._ax_m, st._ax_l, st._ax_o)]
    for _ in range(3):
        st.controls["causal"].value = not st.controls["causal"].value
        assert [ax.get_ylim() for ax in (st._ax_m, st._ax_l, st._ax_o)] == limits
    assert st.live.full_renders == full
    # and every value drawn is inside its axis
    for ax, ys in ((st._ax_m, st.state["m_all"]), (st._ax_l, st.state["l_all"]),
                   (st._ax_o, st.state["outs_all"])):
        lo, hi = ax.get_ylim()
        assert lo <= ys.min() and ys.max() <= hi


def test_head_view_keeps_a_figure_per_context():
    from attention_kit.decoder.lm_training import rhyme_stream
    from attention_kit.decoder.tiny_lm import load_pretrained
    from attention_kit.widgets import HeadView

    params, config, _ = load_pretrained()
    hv = HeadView(params, config, rhyme_stream()[1], context="humpty dumpty sat on")
    four, before = hv.figure, hv.png()
    assert hv.set_context("humpty dumpty sat")
    three = hv.figure
    assert three is not four and hv._hm.image.get_array().shape == (3, 3)
    full = hv.live.full_renders
    assert hv.set_context("humpty dumpty sat on")
    assert hv.figure is four and hv.png() == before and hv.live.full_renders == full
    np.testing.assert_allclose(hv._hm.image.get_array(), hv.state["weights"])
    assert not hv.set_context("humpty zebra")  # an unknown word: the last good picture stays
    assert hv.figure is four and "zebra" in hv.message


@pytest.mark.slow
def test_run_100_redraws_the_background_only_when_the_step_axis_doubles():
    lab = AttentionTrainer("reverse", lr=0.2)
    rights, fulls = [], []
    for _ in range(5):
        full = lab.live.full_renders
        lab.step(100)
        fulls.append(lab.live.full_renders - full)
        rights.append(lab.curves.ax_loss.get_xlim()[1])
        assert rights[-1] >= lab.trainer.steps  # every step is on the axis
    assert rights == [100, 200, 400, 400, 800]
    assert fulls[3] == 0  # 300 -> 400 steps: the curves only


@pytest.mark.slow
def test_prepared_scenes_make_the_first_switch_cheap_and_identical():
    rng = np.random.default_rng(0)
    X8 = rng.normal(size=(5, 8))
    plain = MultiHeadExplorer(X8, list("abcde"), n_heads=2)
    prepared = MultiHeadExplorer(X8, list("abcde"), n_heads=2)
    shown, page = prepared.figure, prepared.live.frame
    assert prepared.prepare_scenes() == 3  # 1, 4 and 8 heads, built without showing them
    assert prepared.figure is shown and prepared.live.frame == page  # nothing sent to the page
    assert prepared.png() == plain.png() and len(prepared._hms) == 2
    for h in (8, 1, 4, 2):
        full = prepared.live.full_renders
        prepared.controls["n_heads"].value = h
        plain.controls["n_heads"].value = h
        assert prepared.live.full_renders == full  # laid out and rendered already
        assert prepared.png() == plain.png()  # the same picture as building it on the press
    assert prepared.prepare_scenes() == 0  # every choice is built


@pytest.mark.slow
def test_a_prepared_scene_shows_edits_made_after_it_was_prepared():
    ex = SelfAttentionExplorer(X, labels=["x1", "x2", "x3"])
    assert ex.prepare_scenes() == 1 and ex.controls["seed"].disabled
    ex.editor.set_text("x3", "0.6, 0.2")
    ex.controls["learned"].value = True
    fresh = SelfAttentionExplorer(ex.editor.matrix(["x1", "x2", "x3"]), labels=["x1", "x2", "x3"],
                                  learned=True)
    np.testing.assert_allclose(ex.state["weights"], fresh.state["weights"])
    np.testing.assert_allclose(ex._hm_w.image.get_array(), fresh.state["weights"])
    assert not ex.controls["seed"].disabled


def test_the_page_asks_for_preparation_once():
    ex = MultiHeadExplorer(np.eye(8)[:5], list("abcde"), n_heads=2)
    calls = []
    ex.live.when_shown(lambda: calls.append(1))
    ex.live._page_message(ex.live, {"event": "shown"}, [])
    ex.live._page_message(ex.live, {"event": "shown"}, [])  # a second view of the same widget
    assert calls == [1]


@pytest.mark.slow
def test_trainer_prepares_every_task_and_head_count_without_touching_the_model():
    lab = AttentionTrainer("reverse", lr=0.2)
    lab.step(3)
    model, page = lab.trainer, lab.live.frame
    assert lab.prepare_scenes() == 4  # rotate, pair, lookup; and 2 heads
    assert lab.trainer is model and lab.trainer.steps == 3 and lab.live.frame == page
    plain = AttentionTrainer("reverse", lr=0.2)
    for task in ("pair", "lookup", "reverse"):
        full = lab.live.full_renders
        lab.controls["task"].value = task
        plain.controls["task"].value = task
        assert lab.live.full_renders == full and lab.png() == plain.png()


@pytest.mark.slow
def test_rope_pairs_switch_planes_without_redrawing():
    from attention_kit.widgets.rope import RopeExplorer

    ex = RopeExplorer()
    assert ex.prepare_scenes() == ex.d // 2 - 1  # one figure per pair
    full = ex.live.full_renders
    for i in range(ex.d // 2):
        ex.controls["pair"].value = i
        assert ex._ax_p.get_xlim() == (-ex._radius(i), ex._radius(i))
        assert ex.png() == RopeExplorer(pair=i).png()
    assert ex.live.full_renders == full


@pytest.mark.slow
def test_preparing_more_choices_than_are_kept_ends():
    from attention_kit.widgets.rope import RopeExplorer

    ex = RopeExplorer(d=32, pair=8)  # 16 pairs, more than the 8 figures an explorer keeps
    assert ex.prepare_scenes() == ex.MAX_SCENES - 1
    assert ex.prepare_scenes() == 0  # nothing left to do: the idle loop stops
    assert set(ex._scenes) == {4, 5, 6, 7, 9, 10, 11}  # the slider's neighbours



def test_new_scenes_are_placed_from_a_template_without_a_layout(monkeypatch):
    # issue 36: a new task (05) or pair (09) is placed where its template's panels went, so
    # neither a press nor an idle step runs constrained layout for it
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from attention_kit.widgets.rope import RopeExplorer

    lab, ex = AttentionTrainer("reverse", lr=0.2), RopeExplorer()
    runs = []
    original = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute",
                        lambda self, fig: runs.append(fig) or original(self, fig))
    for key, value in (("task", "pair"), ("n_heads", 2), ("task", "lookup")):
        lab.controls[key].value = value
    assert lab.prepare_scenes() >= 1
    ex.controls["pair"].value = 5
    assert ex.prepare_scenes() >= 1
    assert runs == []
