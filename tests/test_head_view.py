"""HeadView driven without a browser: its state against the model, context edits, bad words."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_kit.decoder.lm_training import rhyme_stream  # noqa: E402
from attention_kit.decoder.tiny_lm import head_weights, load_pretrained, next_token_probs  # noqa: E402
from attention_kit.widgets import HeadView  # noqa: E402


@pytest.fixture(scope="module")
def model():
    p, cfg, _ = load_pretrained()
    return p, cfg, rhyme_stream()[1]


def test_state_matches_the_model(model):
    p, cfg, vocab = model
    hv = HeadView(p, cfg, vocab, context="humpty dumpty sat on", head=1)
    ids = vocab.encode("humpty dumpty sat on")
    np.testing.assert_allclose(hv.state["weights"], head_weights(p, cfg, ids)[0][1])
    np.testing.assert_allclose(hv.state["probs"], next_token_probs(p, cfg, ids))
    assert vocab.words[hv.state["top"][0]] == "a" and hv.state["token"] == 3
    assert hv.png()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_typing_a_context_changes_bars_and_weights(model):
    p, cfg, vocab = model
    hv = HeadView(p, cfg, vocab, context="humpty dumpty sat on")
    before = hv.state
    assert hv.set_context("little miss muffet sat on a")
    assert hv.state["tokens"][-1] == "a" and len(hv.state["weights"]) == 6
    assert vocab.words[hv.state["top"][0]] == "tuffet" != vocab.words[before["top"][0]]
    assert hv.controls["token"].value == 5  # the new last token is highlighted
    hv.controls["head"].value = 1
    np.testing.assert_allclose(hv.state["weights"], head_weights(p, cfg, vocab.encode("little miss muffet sat on a"))[0][1])


@pytest.mark.slow
def test_unknown_word_keeps_the_last_picture_and_lists_known_words(model):
    p, cfg, vocab = model
    hv = HeadView(p, cfg, vocab, context="humpty dumpty sat on")
    state = hv.state
    assert not hv.set_context("humpty zebra sat on")
    assert "zebra" in hv.message and "last good context" in hv.message
    assert "It knows only the" in hv.known.value and "muffet" in hv.known.value
    assert hv.state is state
    assert not hv.set_context("   ")
    assert "no words" in hv.message
    assert hv.set_context("jack and jill")  # a good context clears the message and the list
    assert hv.message == "" and hv.known.value == ""


@pytest.mark.slow
def test_long_context_keeps_the_last_tokens(model):
    p, cfg, vocab = model
    hv = HeadView(p, cfg, vocab)
    text = " ".join(["humpty dumpty sat on a wall ,"] * 4)
    assert hv.set_context(text)
    assert len(hv.state["tokens"]) == cfg.context
    assert hv.state["tokens"][-1] == ","


def test_no_highlight(model):
    p, cfg, vocab = model
    hv = HeadView(p, cfg, vocab, token=None)
    assert hv.state["token"] == -1


def test_the_description_says_which_query_is_highlighted(model):
    """The highlighted query is shown by a frame, bold type and strong lines; the description
    (what a screen reader is told) says it in words and follows the query menu (issue 34)."""
    view = HeadView(*model, context="humpty dumpty sat on")
    view.live.describe()
    first = view.live.description.split("\n")[1]
    assert first.startswith("Highlighted query 4 “on”")
    view.controls["token"].value = 1
    view.live.describe()
    w = view.state["weights"][1]
    j = int(np.argmax(w))
    assert (f"Highlighted query 2 “dumpty” (framed row, bold word, its lines drawn strong): largest "
            f"weight {w[j]:.2f} on key {j + 1} “{view.tokens[j]}”.") in view.live.description.split("\n")
    view.controls["token"].value = -1
    view.live.describe()
    assert "No query highlighted" in view.live.description
