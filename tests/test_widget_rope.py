"""Notebook 09's RopeExplorer: its state is ak.rope's, the score depends on m - n only, and bad
settings are refused with a message."""

import numpy as np
import pytest

import attention_kit as ak
from attention_kit.widgets import RopeExplorer


@pytest.mark.slow
def test_state_is_ak_rope_and_the_score_depends_on_the_distance():
    e = RopeExplorer(m=8, n=5, pair=1, d=8, seed=3)
    st = e.state
    np.testing.assert_allclose(st["q"], ak.rope(e.q[None], [8])[0])
    np.testing.assert_allclose(st["k"], ak.rope(e.k[None], [5])[0])
    assert st["scores"][5] == pytest.approx(st["q"] @ st["k"] / np.sqrt(8))
    s = st["scores"][5]
    with e.hold():
        e.controls["m"].value, e.controls["n"].value = 30, 27
    assert e.message == ""
    assert e.state["scores"][27] == pytest.approx(s, abs=1e-12)
    np.testing.assert_allclose(e.state["trail"], ak.rope(np.broadcast_to(e.k, (65, 8)), np.arange(65))[:, 2:4])
    e.controls["pair"].value = 3
    assert e.state["pair"] == 3 and e.png()[:4] == b"\x89PNG"


@pytest.mark.parametrize("kw, words", [({"d": 5}, "even"), ({"m": 100}, "position"), ({"pair": 8}, "pair"),
                                       ({"max_position": 2}, "max_position")])
def test_bad_settings(kw, words):
    with pytest.raises(ValueError, match=words):
        RopeExplorer(**kw)
