"""TilingStepper: what it shows is what tiled attention computes, step by step; bad input is a message."""

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.widgets import TilingStepper


def _exact_row(w, row, causal):
    Q = w.Q.copy()
    Q[row] = w.editor.values["q"]
    mask = ak.causal_mask(w.n) if causal else None
    return ak.scaled_dot_product_attention(Q, w.K, w.V, mask=mask)[0][row]


def test_all_steps_done_gives_the_exact_row():
    w = TilingStepper(row=5)
    st = w.state
    assert st["step"] == len(st["steps"]) == 12  # ceil(12/4) x ceil(12/3) tiles
    np.testing.assert_allclose(st["partial"], _exact_row(w, 5, False), atol=1e-12)
    np.testing.assert_allclose(st["exact"], _exact_row(w, 5, False), atol=1e-15)
    assert np.all(st["status"][:8] == 1) and np.all(st["status"][8:, 9:] == 2)  # the last tile is current


def test_stepping_changes_the_picture_and_follows_the_row():
    w = TilingStepper(row=5, step=4)  # the first row block (queries 0-3) is done, row 5 not started
    assert w.state["keys_read"].size == 0 and np.all(w.state["partial"] == 0)
    before = w.png()
    w.next.click()
    assert w.state["step"] == 5 and w.png() != before
    assert w.state["keys_read"].tolist() == [3]
    assert (w.state["status"] == 2).sum() == 4 * 3  # the current tile
    for _ in range(3):
        w.advance(1)
    # after the row block's 4 tiles: m is the max of the row's scores, the output is exact
    Q = w.Q.copy()
    Q[5] = w.editor.values["q"]
    scores = w.K @ Q[5] / 2.0
    assert w.state["m"][-1] == pytest.approx(scores.max())
    assert w.state["l"][-1] == pytest.approx(np.exp(scores - scores.max()).sum())
    np.testing.assert_allclose(w.state["partial"], _exact_row(w, 5, False), atol=1e-12)
    assert np.any(np.diff(w.state["m"]) > 0)  # the default row's maximum rises on the way
    w.back.click()
    assert w.state["step"] == 7
    w.advance(-100)
    assert w.state["step"] == 0 and w.message == ""


def test_causal_skips_and_masks():
    w = TilingStepper(causal=True, block_q=4, block_k=4)
    counts = ak.tile_counts(12, 12, block_q=4, block_k=4, causal=True)
    assert w.state["counts"] == counts and counts.skipped == 3
    status = w.state["status"]
    assert (status == 3).sum() == 3 * 16  # three skipped 4x4 tiles
    assert (status == 4).sum() == 3 * 6  # the future half of each diagonal tile: masked pairs
    np.testing.assert_allclose(w.state["partial"], _exact_row(w, 5, True), atol=1e-12)


def test_changing_blocks_updates_the_number_of_steps():
    w = TilingStepper(block_q=4, block_k=3)
    w.controls["block_k"].value = 5  # does not divide 12
    assert w.controls["step"].max == 3 * 3 and w.state["step"] == 9  # was done, stays done
    w.controls["step"].value = 2
    w.controls["causal"].value = True
    assert w.controls["step"].max == 9 and w.state["step"] == 2
    assert w.state["counts"].skipped == ak.tile_counts(12, 12, block_q=4, block_k=5, causal=True).skipped


@pytest.mark.slow
def test_editing_the_query_changes_the_row_and_survives_a_row_switch():
    w = TilingStepper(row=5)
    old = w.state["exact"].copy()
    assert w.editor.set_text("q", "2, -1, 0.5, 3")
    np.testing.assert_allclose(w.state["exact"], _exact_row(w, 5, False))
    assert not np.allclose(w.state["exact"], old)
    w.controls["row"].value = 2
    assert np.allclose(w.Q[5], [2, -1, 0.5, 3])
    np.testing.assert_allclose(w.editor.values["q"], w.Q[2])
    np.testing.assert_allclose(w.state["partial"], _exact_row(w, 2, False), atol=1e-12)


@pytest.mark.slow
def test_bad_text_is_a_message_and_keeps_the_picture():
    w = TilingStepper()
    before, state = w.png(), w.state
    assert not w.editor.set_text("q", "0.5, oops")
    assert "oops" in w.editor.message("q") or w.editor.message("q")
    assert w.state is state and w.png() == before
    assert not w.editor.set_text("q", "1, 2")  # wrong length
    assert "4" in w.editor.message("q")


@pytest.mark.parametrize("kwargs, words", [
    ({"n": 40}, "from 2 to 16"),
    ({"block_q": 0}, "block_q"),
    ({"block_k": 20}, "block_k"),
    ({"row": 12}, "row"),
    ({"step": 99}, "number of tiles"),
])
def test_bad_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        TilingStepper(**kwargs)


def test_changes_inside_hold_keep_the_step_range_in_sync():
    w = TilingStepper(step=3)
    with w.hold():
        w.controls["block_q"].value = 1
        w.controls["block_k"].value = 1
        w.controls["step"].value = 64  # allowed only once the range has grown to 144
    assert w.controls["step"].max == 144 and w.state["step"] == 64
    assert w.state["keys_read"].tolist() == [1, 2, 3, 4]
    with w.hold():
        w.controls["row"].value = 7
        w.editor.set_text("q", "1, 1, 1, 1")
    assert w.state["row"] == 7 and not np.allclose(w.Q[5], [1, 1, 1, 1])
    np.testing.assert_allclose(w.state["exact"], _exact_row(w, 7, False))
