"""An explorer's live announcement (issue 34): the control and its new value first, as the learner
sees them, then the few first changes, under a word cap; the whole description stays on the canvas."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_kit.widgets.announce import ANNOUNCE_WORDS, announcement_for  # noqa: E402

#: the cap a test allows: the control and its value, ANNOUNCE_WORDS of changes, the closing sentence
CAP = ANNOUNCE_WORDS + 20

TOKENS = ["the", "cat", "sat", "on", "the", "mat", "and", "slept"]



@pytest.fixture(autouse=True)
def _describe_at_once(monkeypatch):
    """Every step's words at once: without a kernel, a description younger than DESCRIBE_EVERY
    waits for a running event loop, and in the full suite one is running (left by the browser
    tests' playwright), where nothing ever runs it: the announcement stayed empty."""
    from attention_kit.widgets.live_figure import LiveFigure

    monkeypatch.setattr(LiveFigure, "DESCRIBE_EVERY", 0.0)
    monkeypatch.setattr(LiveFigure, "DESCRIBE_AFTER", 0.0)


def _head_view():
    from attention_kit.decoder.lm_training import rhyme_stream
    from attention_kit.decoder.tiny_lm import load_pretrained
    from attention_kit.widgets import HeadView

    p, cfg, _ = load_pretrained()
    return HeadView(p, cfg, rhyme_stream()[1], context="humpty dumpty sat on")


def explorer_factories():
    from attention_kit.widgets import (
        AttentionExplorer,
        AttentionTrainer,
        HeadExplorer,
        MaskExplorer,
        MultiHeadExplorer,
        PhaseChangeViewer,
        RopeExplorer,
        SelfAttentionExplorer,
        TilingStepper,
    )
    X = np.random.default_rng(0).normal(0, 1, (8, 4))
    return {
        "AttentionExplorer": lambda: AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]]),
        "SelfAttentionExplorer": lambda: SelfAttentionExplorer(
            np.random.default_rng(0).normal(0, 1, (8, 2)), labels=TOKENS),
        "MultiHeadExplorer": lambda: MultiHeadExplorer(X, TOKENS, n_heads=2),
        "MaskExplorer": lambda: MaskExplorer(["the", "cat", "sat", "on", "<pad>", "<pad>"], n_real=4,
                                             mask="causal", token=2, nudge=1.0),
        "AttentionTrainer": lambda: AttentionTrainer("reverse", lr=0.2),
        "HeadView": _head_view,
        "TilingStepper": lambda: TilingStepper(step=6),
        "HeadExplorer": lambda: HeadExplorer("induction", tokens="D J O B H M F D J O B H M",
                                             layer=1, head=0),
        "PhaseChangeViewer": lambda: PhaseChangeViewer(step=150),
        "RopeExplorer": lambda: RopeExplorer(m=8, n=5, pair=0),
    }


def _step(w):
    """One step of control ``w`` as a learner makes it, and the value it then shows, in words."""
    if isinstance(w, widgets.Checkbox):
        w.value = not w.value
        return "on" if w.value else "off"
    if isinstance(w, (widgets.Dropdown, widgets.SelectionSlider)):
        labels = list(w.options) if not isinstance(w.options[0], tuple) else [o[0] for o in w.options]
        k = w.index + 1 if w.index + 1 < len(labels) else w.index - 1
        w.index = k
        return str(labels[k])
    if isinstance(w, widgets.Text):
        w.value = "0.3"
        return "0.3"
    if isinstance(w, widgets.FloatLogSlider):
        e = np.log10(w.value) + w.step
        w.value = float(10 ** (e if e <= w.max else np.log10(w.value) - w.step))
        return format(w.value, w.readout_format)
    v = w.value + w.step if w.value + w.step <= w.max else w.value - w.step
    w.value = v
    return format(w.value, w.readout_format)


def _spoken(label: str, shown: str) -> str:
    """A control and its value as said: plain words, the name once ("head 1", not "head head 1")."""
    label, shown = label.replace("_", " "), shown.replace("_", " ")
    return shown if shown.lower().startswith(label.lower() + " ") else f"{label} {shown}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(explorer_factories()))
def test_each_step_of_each_control_is_announced_by_its_name_and_new_value_and_is_short(name):
    ex = explorer_factories()[name]()
    assert ex.live.description
    stepped = 0
    for key, w in ex.controls.items():
        if getattr(w, "disabled", False) or len(getattr(w, "options", (0, 0))) < 2:
            continue
        said = ex.live.announcement
        shown = _step(w)
        if ex.message:  # a step the explorer refuses (and says why) is not a new picture
            continue
        label = ex.CONTROL_NAMES.get(key) or w.description
        words = ex.live.announcement
        assert words != said, (name, key)
        assert words.startswith(f"{_spoken(label, shown)}."), (name, key, words)
        assert "_" not in words.split(".")[0], (name, key, words)  # no identifiers spelled out
        assert len(words.split()) <= CAP, (name, key, len(words.split()), words)
        stepped += 1
    # every text box, also those outside ``controls`` (06's context, 08's tokens): type a shorter
    # text (its first word dropped, still valid) as a learner does, then Enter
    from attention_kit.widgets.live_figure import widgets_under

    for box in widgets_under([ex]):
        if not isinstance(box, widgets.Text) or box in ex.controls.values() or box.disabled:
            continue
        if box.description:  # a box of words
            typed = " ".join(box.value.split()[1:])
            said = f"{box.description} {typed}."
        else:  # a vector's box in the editor
            typed = ", ".join(["0.25"] * len(box.value.split(",")))
            said = "vector "
        box.value = typed
        assert not ex.message, (name, box.description, ex.message)
        assert ex.live.announcement.startswith(said), (name, ex.live.announcement)
        assert len(ex.live.announcement.split()) <= CAP, (name, ex.live.announcement)
        stepped += 1
    if ex.editor is not None:
        vec = ex.editor.names[0]
        ex.editor.set_component(vec, 0, 0.55)
        assert ex.live.announcement.startswith(f"{vec}[0] 0.55."), ex.live.announcement
        d = ex.editor.values[vec].size
        assert ex.editor.set_text(vec, ", ".join(["0.25"] * d))
        assert ex.live.announcement.startswith(f"vector {vec} 0.25"), ex.live.announcement
        stepped += 2
    assert stepped >= 1
    # the whole description stays (the canvas's aria-describedby), longer than what was said
    assert len(ex.live.description.split()) >= len(ex.live.announcement.split()) - 10


def test_the_trainers_buttons_and_the_multi_head_reset_are_announced():
    from attention_kit.widgets import AttentionTrainer, MultiHeadExplorer

    lab = AttentionTrainer("reverse", lr=0.2)
    lab.step(3)
    assert lab.live.announcement.startswith("3 training steps taken, now at step 3.")
    lab.reset()
    assert lab.live.announcement.startswith("Reset: a fresh model at step 0.")
    ex = MultiHeadExplorer(np.random.default_rng(0).normal(0, 1, (8, 4)), TOKENS, n_heads=2)
    ex.controls["dim0"].value = 1.0
    ex.reset()
    assert ex.live.announcement.startswith("reset embeddings")


def test_a_temperature_step_of_01_says_the_value_then_at_most_three_changes():
    from attention_kit.widgets import AttentionExplorer

    ex = AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]])
    before = set(ex.live.description.split("\n"))
    ex.controls["temperature"].value = 1.2
    words = ex.live.announcement
    assert words.startswith("temperature 1.20. ")
    changed = [ln for ln in ex.live.description.split("\n") if ln not in before]
    said = [ln for ln in changed if ln in words]
    assert 1 <= len(said) <= 3
    # the bars' new weights come before the panel titles that merely repeat T
    assert "Bars: k1 0.571" in words


def test_announcement_for_cuts_a_long_line_and_counts_what_it_left_out():
    long = " ".join(["word"] * 100)
    out = announcement_for("mask causal", [long, "b", "c"])
    assert out.startswith("mask causal. ")
    assert len(out.split()) <= CAP and "2 more changes" in out
    assert announcement_for("seed 3", []) == "seed 3. The description did not change."
    assert announcement_for("", ["a.", "b."]) == "a. b."


def test_a_result_in_a_title_is_said_first_and_an_unchanged_summary_never():
    """Review 2026-11-26 (F3): 09's "m − n = 4, score +0.70", 07's tile and 04's masked-cell count
    sat in titles or mask facts behind "N more changes"; 05's learning rate re-read its summary."""
    from attention_kit.widgets import AttentionTrainer, MaskExplorer, RopeExplorer, TilingStepper

    ex = RopeExplorer(m=8, n=5, pair=0)
    ex.controls["m"].value = 9
    assert ex.live.announcement.startswith("query position m 9. "), ex.live.announcement
    assert "m − n = 4, score +0.70" in ex.live.announcement
    ex = TilingStepper(step=6)
    ex.controls["step"].value = 7
    assert "query block 1, key block 2" in ex.live.announcement, ex.live.announcement
    ex = MaskExplorer(["the", "cat", "sat", "on", "the", "mat", "<pad>", "<pad>"], mask="causal", token=2,
                      nudge=1.0)
    ex.controls["mask"].value = "padding"
    assert "masked (drawn hatched, marked —): 16 of 64 cells" in ex.live.announcement, ex.live.announcement
    ex.controls["mask"].value = "none"
    assert "No longer: masked" in ex.live.announcement, ex.live.announcement
    ex.controls["mask"].value = "none"
    assert "No longer: masked" in ex.live.announcement, ex.live.announcement
    from attention_kit.widgets import PhaseChangeViewer

    ex = PhaseChangeViewer(step=150)
    ex.controls["step"].index += 1
    words = ex.live.announcement
    assert words.startswith("step 175. accuracy 0.27") and "prefix-matching" in words, words
    assert "vertical line at training step = 175" not in words, words  # repeats the control's value
    lab = AttentionTrainer("reverse", lr=0.2)
    lab.controls["lr"].value = 0.3
    words = lab.live.announcement
    assert "reverse" not in words and len(words.split()) <= 12, words


def test_a_control_is_said_in_plain_words_and_its_name_once():
    """Review 2026-11-26 (F5): "head head 1", "block_q 5", "score scaled_dot"."""
    from attention_kit.widgets import AttentionExplorer, HeadExplorer, TilingStepper

    ex = TilingStepper(step=6)
    ex.controls["block_q"].value = 5
    assert ex.live.announcement.startswith("query block size 5."), ex.live.announcement
    ex = HeadExplorer("induction", tokens="D J O B H M F D J O B H M", layer=1, head=0)
    ex.controls["head"].value = 1
    assert ex.live.announcement.startswith("head 1."), ex.live.announcement
    ex = AttentionExplorer([1.0, 0.4], [[1.2, 0.3], [0.2, 1.0], [-0.8, 0.5]])
    ex.controls["score"].value = "scaled_dot"
    assert ex.live.announcement.startswith("score scaled dot."), ex.live.announcement


def test_the_lines_that_changed_most_are_said_first():
    """Issue 34's "not yet": the changed lines were said in the description's order, so 04's nudge
    read out the first queries' weights (changed in the second decimal) and left the query whose
    largest weight moved to another key, and the output rows' bars, to "N more changes"."""
    from attention_kit.widgets.announce import by_change, changed_lines

    before = ["Panel 1, query a: largest weight 0.50 on key a.",
              "Panel 1, query b: largest weight 0.40 on key a.",
              "Panel 1, query c: largest weight 0.60 on key c.",
              "Panel 1, values range from 0.10 to 0.60.",
              "Panel 2: Bars: a 0, b 0.2, c 0.4."]
    after = ["Panel 1, query a: largest weight 0.51 on key a.",      # 0.01 / 0.51
             "Panel 1, query b: largest weight 0.45 on key b.",      # another key
             "Panel 1, query c: largest weight 0.50 on key c.",      # 0.10 / 0.60
             "Panel 1, values range from 0.10 to 0.61.",             # 0.01 / 0.61
             "Panel 2: Bars: a 0, b 0.9, c 0.4.",                    # 0.7 / 0.9
             "Panel 3: a new panel."]                                # new
    assert by_change(after, before) == [after[5], after[1], after[4], after[2], after[0], after[3]]
    assert changed_lines(before, after, set()) == [after[5], after[1], after[4], after[2], after[0], after[3]]


def test_04s_nudge_says_the_query_whose_weights_moved_most_before_the_others():
    """On 04's explorer: after a nudge, of the queries' lines the announcement says, the first is
    the one whose row of weights moved most (by the explorer's own state), or one whose largest
    weight went to another key."""
    from attention_kit.widgets import MaskExplorer

    e = MaskExplorer(TOKENS, mask="causal", token=2, nudge=1.0)
    for value in (1.5, 2.0, -1.0, 0.5):
        w0 = e.state["weights"].copy()
        top0 = w0.argmax(axis=1)
        e.controls["nudge"].value = value
        w1 = e.state["weights"]
        said = [t for t in e.live.announcement.split(". ") if ", query " in t]
        assert said, e.live.announcement
        first = said[0].split(", query ")[1].split(":")[0]
        rows = [i for i, t in enumerate(TOKENS) if first in (t, f"{t} ({i})")]
        assert rows, first
        moved = np.abs(w1.max(axis=1) - w0.max(axis=1))  # what the line says: the largest weight
        switched = w1.argmax(axis=1) != top0
        i = rows[0]
        assert switched[i] or switched.sum() == 0 and moved[i] >= moved.max() - 0.006, \
            (value, first, moved.round(3), switched)


def test_a_change_is_measured_on_its_own_line_and_its_amounts():
    """rev43: a line without ":" ("Panel 2, values range from ...") was compared with panel 1's
    range (their heads lost the panel's number), and the names' numbers (the panel's, a key's
    position "the (3)") counted as amounts: panel 2's range moving 0.30 -> 0.31 came before a
    query whose largest weight fell 0.50 -> 0.40 on key "the (3)"."""
    from attention_kit.widgets.announce import by_change, change_size

    before = ["Panel 1, values range from 0.10 to 0.90.", "Panel 2, values range from 0.20 to 0.30.",
              "Panel 1, query cat: largest weight 0.50 on key the (3).", "Panel 1: Bars: out[0] 0.1, out[1] 0.2."]
    after = ["Panel 2, values range from 0.20 to 0.31.", "Panel 1, query cat: largest weight 0.40 on key the (3).",
             "Panel 1: Bars: out[0] 0.1, out[1] 0.21."]
    assert by_change(after, before) == [after[1], after[2], after[0]]
    assert abs(change_size(after[0], [before[1]]) - 0.01 / 0.31) < 1e-9
    assert abs(change_size(after[1], [before[2]]) - 0.1 / 0.5) < 1e-9
    assert abs(change_size(after[2], [before[3]]) - 0.01 / 0.21) < 1e-9


def test_a_near_tie_is_a_change_of_numbers_and_another_the_is_another_key():
    """rev43: on 02's explorer at temperature 3, "query x2: largest weight 0.34 on key x2" becoming
    "about 0.33, on keys x1, x2 and x3" (its weights moved by 0.007) counted as another key and
    was said before query x3, whose weights moved by 0.245; and, once a key's position was no
    amount, 04's "on key the (3)" -> "on key the (0)" must still be another key."""
    from attention_kit.widgets.announce import change_size

    was = "Panel 2, query x1: largest weight 0.40 on key x1."
    assert change_size("Panel 2, query x1: largest weight about 0.34, on keys x1 and x2.", [was]) == \
        pytest.approx(0.06 / 0.40)
    assert change_size("Panel 2, query x1: largest weight 0.45 on key x2.", [was]) == 1.5
    was = "Panel 1, query the (4): largest weight 0.40 on key the (3)."
    assert change_size("Panel 1, query the (4): largest weight 0.45 on key the (0).", [was]) == 1.5
    X = np.array([[0.1, 0.5], [0.3, 0.4], [0.8, 0.0]])
    from attention_kit.widgets import SelfAttentionExplorer

    ex = SelfAttentionExplorer(X, labels=["x1", "x2", "x3"])
    w0 = ex.state["weights"].copy()
    ex.controls["temperature"].value = 3.0
    moved = np.abs(ex.state["weights"] - w0).max(axis=1)
    first = [t for t in ex.live.announcement.split(". ") if ", query " in t][0]
    assert first.startswith(f"Panel 2, query x{int(moved.argmax()) + 1}:"), (ex.live.announcement, moved)
    was = "Panel 1, query the (0): largest weight 0.52 on key mat."  # 04's token "on" is a key
    assert change_size("Panel 1, query the (0): largest weight 0.37 on key on.", [was]) == 1.5
