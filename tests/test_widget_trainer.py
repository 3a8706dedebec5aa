"""AttentionTrainer and TrainingMonitor (notebook 05), driven through their plain methods."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.learn.toy_tasks import Trainer
from attention_kit.widgets import AttentionTrainer, TrainingMonitor

#: make check leaves these to make test: notebook 05's trainer: each test builds and trains a model (3-8 s of setup each, at load 4)
pytestmark = pytest.mark.slow


@pytest.fixture
def lab():
    return AttentionTrainer("reverse", lr=0.2)


@pytest.mark.slow
def test_the_widget_trains_what_a_plain_trainer_trains(lab):
    ref = Trainer("reverse", lr=0.2)
    np.testing.assert_array_equal(lab.state["weights"], ref.probe_weights())
    before = lab.png()
    assert lab.step(1) and lab.step(100)
    ref.step(101)
    assert lab.trainer.steps == 101 and lab.state["steps"] == 101
    assert lab.trainer.losses == ref.losses
    np.testing.assert_array_equal(lab.state["weights"], ref.probe_weights())
    assert lab.png() != before
    assert lab.message == ""


@pytest.mark.slow
def test_run_100_plays_out_on_the_page_and_trains_the_same_steps(lab):
    """The "Run 100" button redraws every 10 steps: ten pictures, the first after 10 steps, and
    the same weights and losses as 100 steps taken at once."""
    ref = Trainer("reverse", lr=0.2)
    frames, steps_shown = lab.live.frame, []
    lab.live.observe(lambda ch: steps_shown.append(lab.trainer.steps), names="frame")
    lab.buttons["Run 100"].click()
    assert lab.live.frame - frames == 10 and steps_shown == list(range(10, 101, 10))
    ref.step(100)
    assert lab.trainer.losses == ref.losses and lab.trainer.checkpoints == ref.checkpoints
    np.testing.assert_array_equal(lab.state["weights"], ref.probe_weights())
    assert lab.state["steps"] == 100 and lab.message == ""


def test_a_run_that_diverges_stops_at_the_picture_where_it_did(lab):
    lab.set_lr_text("3")
    lab.reset()
    frames = lab.live.frame
    assert lab.step(100, every=10) is False
    assert "training diverged at step" in lab.message
    assert lab.trainer.steps < 100 and lab.live.frame - frames == -(-(lab.trainer.steps + 1) // 10)


def test_step_changes_the_heatmap_and_reset_restores_it(lab):
    w0 = lab.state["weights"].copy()
    lab.step(1)
    assert not np.array_equal(lab.state["weights"], w0)
    lab.reset()
    assert lab.trainer.steps == 0
    np.testing.assert_array_equal(lab.state["weights"], w0)


@pytest.mark.parametrize("text, words", [
    ("abc", "'abc' is not a number; type one positive number such as 0.1"),
    ("0.1, 0.2", "is not a number"),
    ("", "is not a number"),
    ("nan", "is not a number"),
    ("__import__('os')", "is not a number"),
    ("-1", "must be a positive number"),
    ("0", "must be a positive number"),
    ("50", "between 0.001 and 10"),
])
def test_a_bad_learning_rate_gets_a_message_and_changes_nothing(lab, text, words):
    lab.step(1)
    png, lr = lab.png(), lab.trainer.lr
    assert lab.set_lr_text(text) is False
    assert lab.message.startswith("⚠") and words in lab.message, lab.message
    assert lab.trainer.lr == lr and lab.controls["lr"].value == pytest.approx(lr)
    assert lab.png() == png


def test_a_typed_learning_rate_moves_the_slider_and_is_used(lab):
    lab.set_lr_text("abc")
    assert lab.set_lr_text(" 0.05 ") is True
    assert lab.message == ""  # the old message is gone
    assert lab.trainer.lr == 0.05 and lab.controls["lr"].value == pytest.approx(0.05)
    lab.controls["lr"].value = 0.5  # the slider writes the box
    assert lab.trainer.lr == 0.5 and lab.controls["lr_text"].value == "0.5"


def test_divergence_is_a_message_not_a_traceback(lab):
    lab.set_lr_text("3")
    lab.reset()
    png = lab.png()
    assert lab.step(100) is False
    assert "training diverged at step" in lab.message and "Reset" in lab.message
    assert np.isfinite(lab.state["weights"]).all()  # the last good weights stay on show
    assert lab.step(1) is False and "diverged" in lab.message
    assert lab.png() != png  # the curves show the steps up to the divergence
    lab.set_lr_text("0.2")
    assert "diverged" in lab.message  # until Reset
    lab.reset()
    assert lab.message == "" and lab.step(5)


@pytest.mark.parametrize("name, value, check", [
    ("n_heads", 2, lambda lab: lab.state["weights"].shape == (2, 6, 6)),
    ("task", "lookup", lambda lab: lab.trainer.task.name == "lookup"),
    ("d_k", 64, lambda lab: lab.trainer.model.params.W_q.shape == (1, 16, 64)),
    ("scaled", False, lambda lab: lab.trainer.model.scaled is False),
])
def test_model_controls_start_a_fresh_model(lab, name, value, check):
    lab.step(10)
    lab.controls[name].value = value
    assert lab.trainer.steps == 0 and check(lab) and lab.message == ""
    assert lab.step(3)


def test_without_scaling_the_first_weights_are_sharper():
    sharp = AttentionTrainer(d_k=64, scaled=False).state["weights"].max(axis=-1).mean()
    soft = AttentionTrainer(d_k=64, scaled=True).state["weights"].max(axis=-1).mean()
    assert sharp > 0.7 > 0.5 > soft


def test_bad_constructor_arguments():
    for kw in (dict(task="sort"), dict(n_heads=3), dict(d_k=5), dict(lr=20.0)):
        with pytest.raises(ValueError):
            AttentionTrainer(**kw)


def test_static_picture_where_no_kernel_runs(lab):
    data = lab._repr_mimebundle_()
    assert data["text/plain"].startswith("AttentionTrainer (interactive")
    assert '<img src="data:image/png;base64,' in data["text/html"] and ' alt="A still picture' in data["text/html"]


def test_monitor_follows_the_trainer():
    tr = Trainer("reverse")
    mon = TrainingMonitor(tr, total=50)
    first = mon.png()
    tr.step(20)
    assert mon.refresh()
    assert mon.bar.value == 20 and mon.count.value == "20 / 50 steps"
    assert mon.png() != first
    tr.step(60)  # past the planned total: the bar stops at its end, the curves' x range grows
    mon.refresh()
    assert mon.bar.value == 50 and mon.curves.ax_loss.get_xlim()[1] == 100
    assert mon._repr_mimebundle_()["text/plain"].startswith("TrainingMonitor")
    with pytest.raises(Exception, match="Trainer"):
        TrainingMonitor("not a trainer", total=10)
