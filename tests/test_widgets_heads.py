"""Notebook 08's explorers: HeadExplorer's scores are the diagnostics' on the typed sequence, its
menus follow the chosen model, a bad token keeps the last picture; PhaseChangeViewer shows the
shipped snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.heads import diagnostics as D
from attention_kit.heads.model import run
from attention_kit.heads.trained import load_trained
from attention_kit.widgets import HeadExplorer, PhaseChangeViewer
from attention_kit.widgets.heads import head_scores


@pytest.fixture(scope="module")
def explorer():
    return HeadExplorer("induction", tokens="D J O B H M F D J O B H M", layer=1, head=0)


def test_the_scores_are_the_diagnostics_on_the_typed_sequence(explorer):
    explorer.controls["model"].value = "induction"
    with explorer.hold():
        explorer.controls["layer"].value = 0
        explorer.controls["head"].value = 0
    assert explorer.set_tokens("A B C D E A B C D E A")
    ids = explorer.state["ids"]
    params, _, _ = load_trained("induction")
    logits, saved = run(params, ids)
    w = saved["weights"][0][0, 0]
    np.testing.assert_allclose(explorer.state["weights"], w)
    s = explorer.state["scores"]
    np.testing.assert_allclose(s[0], D.previous_token_score(w)[0])
    np.testing.assert_allclose(s[2], D.prefix_matching_score(w, ids)[0])
    np.testing.assert_allclose(s[3], D.sink_mass(w)[0])
    np.testing.assert_array_equal(explorer.state["predicted"], logits[0].argmax(-1))


def test_head_scores_on_hand_made_weights():
    ids = np.array([1, 2, 3, 1, 2])
    prev = np.eye(5, k=-1)
    prev[0, 0] = 1
    np.testing.assert_allclose(head_scores(prev, ids), [1.0, 0.0, 0.0, 0.25])
    np.testing.assert_allclose(head_scores(np.eye(5), np.arange(5))[[1, 2]], [1.0, 0.0])  # no repeat: 0


def test_the_menus_follow_the_model_and_bad_tokens_keep_the_picture(explorer):
    explorer.controls["model"].value = "sinks"
    assert [o[1] for o in explorer.controls["layer"].options] == [0]
    assert [o[1] for o in explorer.controls["head"].options] == [0]
    assert explorer.text.value.startswith("<s>") and explorer.message == ""
    before = explorer.state["weights"].copy()
    assert not explorer.set_tokens("<s> c Z")
    assert "'Z'" in explorer.message and "knows" in explorer.message
    np.testing.assert_array_equal(explorer.state["weights"], before)
    assert not explorer.set_tokens("<s>")
    assert "at least 2" in explorer.message
    assert explorer.set_tokens("<s> c d T1 e")
    explorer.controls["model"].value = "one_layer"  # the sink tokens mean nothing here: its own example
    assert [o[1] for o in explorer.controls["layer"].options] == [0]
    assert explorer.message == "" and explorer.state["model"] == "one_layer"


@pytest.mark.slow
def test_the_phase_change_viewer_shows_the_snapshots():
    v = PhaseChangeViewer(step=150)
    _, _, meta = load_trained("induction")
    v.controls["step"].value = 400
    i = int(np.flatnonzero(meta["snap_steps"] == 400)[0])
    np.testing.assert_allclose(v.state["patterns"], meta["snap_probe"][i].astype(float))
    assert v.state["accuracy"] > 0.9 and v.state["prefix_matching"] > 0.9
    with pytest.raises(ValueError, match="snapshots"):
        PhaseChangeViewer(step=13)
