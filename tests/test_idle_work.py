"""Idle work never holds a press up for a whole preparation (issue 36): an explorer prepares the
scenes of its menus in small steps (a build, a layout, one panel, the PNG), the kernel's queue runs
one step per turn and only while the controls are still, and a press between two steps finds the
explorer as the page shows it. Checked by counting steps and comparing pictures, never by timing."""

from __future__ import annotations

import numpy as np
import pytest

from attention_kit.widgets import MultiHeadExplorer
from attention_kit.widgets.idle import IdleWork

X8 = np.random.default_rng(0).normal(size=(5, 8))
TOKENS = list("abcde")


class FakeLoop:
    """call_later without an event loop: the callbacks wait until the test runs them."""

    def __init__(self, clock):
        self.clock, self.timers = clock, []

    def call_later(self, delay, callback):
        self.timers.append((self.clock.now + delay, callback))
        return object()

    def run_due(self) -> int:
        due = [t for t in self.timers if t[0] <= self.clock.now]
        self.timers = [t for t in self.timers if t[0] > self.clock.now]
        for _, callback in due:
            callback()
        return len(due)


class Clock:
    now = 100.0

    def __call__(self):
        return self.now


def counting(n, log):
    for i in range(n):
        log.append(i)
        yield


def test_the_queue_runs_one_step_per_turn_and_waits_for_still_controls():
    clock = Clock()
    loop = FakeLoop(clock)
    idle = IdleWork(quiet=0.3, gap=0.01, clock=clock, budget=0.0)  # one step per turn
    log = []
    idle.add(counting(5, log), loop)
    assert log == [] and loop.run_due() == 0  # nothing before the controls have been still
    clock.now += 0.3
    loop.run_due()
    assert log == [0]  # one step per turn
    clock.now += 0.01
    loop.run_due()
    assert log == [0, 1]
    idle.pressed()  # a press: the next turn runs no step...
    clock.now += 0.01
    loop.run_due()
    assert log == [0, 1]
    clock.now += 0.3  # ...until the controls are still again
    loop.run_due()
    assert log == [0, 1, 2]
    assert idle.run_all() == 2 and log == [0, 1, 2, 3, 4] and idle.pending == 0


def test_a_turn_runs_small_steps_together_up_to_its_budget():
    """Pieces of a panel are small (one artist): a turn runs them until they have taken the
    budget, then lets a press in. Without it the gap after every piece stretched 03's
    preparation by seconds, and Run All's first presses met its build and layout more often."""
    clock, timer = Clock(), Clock()
    loop = FakeLoop(clock)
    idle = IdleWork(quiet=0.3, gap=0.01, clock=clock, budget=0.008, timer=timer)
    log = []

    def pieces(n):
        for i in range(n):
            timer.now += 0.003  # each piece takes 3 ms
            log.append(i)
            yield

    idle.add(pieces(10), loop)
    clock.now += 0.3
    loop.run_due()
    assert log == [0, 1, 2]  # 9 ms >= the 8 ms budget: the turn ends
    clock.now += 0.01
    loop.run_due()
    assert log == [0, 1, 2, 3, 4, 5]
    idle.pressed()  # a press: no step until the controls are still again
    clock.now += 0.01
    loop.run_due()
    assert len(log) == 6


def test_a_failing_job_is_dropped_and_the_next_one_runs():
    def broken():
        yield
        raise RuntimeError("no figure")

    idle = IdleWork()
    log = []
    idle.add(broken())
    idle.add(counting(2, log))
    assert idle.run_all() == 3 and log == [0, 1]


def test_preparation_yields_between_a_build_the_layout_each_panel_and_the_png():
    ex = MultiHeadExplorer(X8, TOKENS, n_heads=2)
    shown, frame = ex.figure, ex.live.frame
    steps = ex.preparation(limit=1)  # the likeliest other choice first
    next(steps)  # its build
    assert ex.figure is shown and ex.live.figure is shown  # the page's scene is back at once
    (key, (figure, *_)), = ex._scenes.items()
    assert figure is not shown
    rest = sum(1 for _ in steps)
    panels = len(figure.axes)
    assert rest >= panels + 1  # the layout, then one step per panel (and the PNG)
    assert ex.live.frame == frame  # nothing was sent


@pytest.mark.slow
def test_a_press_between_two_steps_is_drawn_at_once_and_the_scenes_come_out_as_if_prepared_whole():
    sliced = MultiHeadExplorer(X8, TOKENS, n_heads=2)
    whole = MultiHeadExplorer(X8, TOKENS, n_heads=2)  # the same history, each scene prepared at once
    steps = sliced.preparation()
    for _ in range(3):  # a build, the layout, a panel of the first scene
        next(steps)
    assert whole.prepare_scenes(limit=1) == 1
    frame = sliced.live.frame
    sliced.controls["seed"].value = 3  # a press in the middle of the preparation...
    whole.controls["seed"].value = 3
    assert sliced.live.frame == frame + 1  # ...is drawn now, not after the preparation
    assert sliced.png() == whole.png()
    for _ in steps:
        pass
    assert whole.prepare_scenes() == 2
    for h in (4, 8, 1, 2):
        full = sliced.live.full_renders
        sliced.controls["n_heads"].value = h
        whole.controls["n_heads"].value = h
        assert sliced.live.full_renders == full  # prepared: no render on the press
        # (a prepared scene keeps a colour scale that still fits, as before: the same picture
        # as a scene prepared whole, not always as a fresh explorer's)
        assert sliced.png() == whole.png()


@pytest.mark.slow
def test_a_scene_shown_while_it_is_being_prepared_is_drawn_by_the_press():
    prepared = MultiHeadExplorer(X8, TOKENS, n_heads=2)
    plain = MultiHeadExplorer(X8, TOKENS, n_heads=2)
    steps = prepared.preparation(limit=1)
    next(steps)
    next(steps)  # built and laid out, its panels not drawn yet
    (key,) = prepared._scenes
    prepared.controls["n_heads"].value = key
    plain.controls["n_heads"].value = key
    assert prepared.png() == plain.png()
    assert sum(1 for _ in steps) <= 1  # the preparation of that scene stops
    prepared.controls["n_heads"].value = 2
    prepared.controls["n_heads"].value = key
    assert prepared.png() == plain.png()


@pytest.mark.slow
def test_04_a_seed_mask_or_token_that_rescales_the_bars_redraws_them_not_the_whole_figure():
    import io

    from PIL import Image

    from attention_kit.widgets import MaskExplorer

    def pixels(png):
        return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"), dtype=int)

    padded = ["the", "cat", "sat", "on", "the", "mat", "<pad>", "<pad>"]
    ex = MaskExplorer(padded, mask="causal", token=2, nudge=1.0)
    full, limits = ex.live.full_renders, set()
    steps = [("seed", s) for s in range(1, 13)] + [("mask", m) for m in MaskExplorer.MASKS] + \
        [("token", t) for t in (0, 5, 3)] + [("positions", True), ("nudge", -1.5)]
    for name, value in steps:
        ex.controls[name].value = value
        limits.add(ex._ax_b.get_xlim()[1])
        fast = pixels(ex.live.value)
        ex.live.invalidate()  # what a full redraw draws: the same picture
        np.testing.assert_array_equal(fast, pixels(ex.live.render()))
        ex.live.full_renders -= 1  # (the redraw forced here)
    assert len(limits) > 1  # the bars' scale did change on the way...
    assert ex.live.full_renders == full  # ...and no step redrew the figure's background


@pytest.mark.slow
def test_03_a_seed_that_rescales_the_output_bars_redraws_them_not_the_whole_figure():
    import io

    from PIL import Image

    def pixels(png):
        return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"), dtype=int)

    tokens = "the cat sat on the mat and purred".split()
    ex = MultiHeadExplorer(np.random.default_rng(0).normal(0, 1, (8, 8)), tokens, n_heads=2)
    full, limits = ex.live.full_renders, set()
    for seed in range(1, 16):
        ex.controls["seed"].value = seed
        limits.add(ex._ax_out.get_xlim())
        fast = pixels(ex.live.value)
        ex.live.invalidate()  # what a full redraw draws: the same picture
        np.testing.assert_array_equal(fast, pixels(ex.live.render()))
        ex.live.full_renders -= 1
    assert len(limits) > 1 and ex.live.full_renders == full


def _prepared_background(ex):
    """Prepare ``ex``'s likeliest other scene in steps; its figure, the steps taken, and its
    background's pixels as the pieces drew them."""
    steps = list(ex.preparation(limit=1))
    figure = next(f for f, *_ in ex._scenes.values() if f is not ex.figure)
    return figure, len(steps), np.asarray(figure.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("make", ["rope", "multi_head"])
def test_a_background_drawn_in_pieces_is_the_one_figure_draw_draws(make):
    """Issue 36: idle work must not hold a press up for more than a frame. A panel was one step
    (40-70 ms here, most of it its axes' ticks and labels); it is now its start and one step per
    artist. The pixels are the same as matplotlib's own draw of the figure (its moving artists,
    animated, left out by both)."""
    from attention_kit.widgets import RopeExplorer

    ex = RopeExplorer(m=8, n=5, pair=0) if make == "rope" else MultiHeadExplorer(X8, TOKENS, n_heads=2)
    figure, n_steps, sliced = _prepared_background(ex)
    panels = [ax for ax in figure.axes if ax.get_visible()]
    artists = sum(len([a for a in ax.get_children() if not a.get_animated()]) for ax in panels)
    assert n_steps >= artists  # one step per artist (and the panels' starts and ends)
    figure.canvas.draw()  # the whole background at once, as matplotlib draws it
    assert np.array_equal(np.asarray(figure.canvas.buffer_rgba()), sliced)


def test_a_panel_that_draws_itself_otherwise_is_one_piece():
    """A rasterized panel, or one with a rasterization zorder, is drawn whole (its draw does more
    than the pieces would)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from attention_kit.widgets.pieces import pieces

    fig = Figure()
    FigureCanvasAgg(fig)
    a, b, c = fig.subplots(1, 3)
    b.set_rasterized(True)
    c.set_rasterization_zorder(0)
    for ax in (a, b, c):
        ax.plot([0, 1], [1, 0])
    r = fig.canvas.get_renderer()
    drawn = []
    for p in pieces(fig, r):
        p.draw(r)
        drawn.append(p)
    assert b in drawn and c in drawn and a not in drawn
    assert a.xaxis in drawn and a.lines[0] in drawn


@pytest.mark.slow
def test_05_a_press_that_shows_another_scene_prepares_the_new_choices(monkeypatch):
    """Issue 36: 05's preparation was queued once, when the page showed the explorer. After a new
    number of heads, the other tasks' scenes for it were never prepared, and the next task press
    built one (361-456 ms to the picture in JupyterLab). A press that shows another scene now
    queues the preparation again, one job at a time; a press that keeps the scene queues nothing."""
    from attention_kit.widgets import AttentionTrainer, base

    clock = Clock()
    queue = IdleWork(clock=clock)
    monkeypatch.setattr(base, "IDLE", queue)
    lab = AttentionTrainer("reverse", n_heads=1, seed=0)
    lab._idle_loop = FakeLoop(clock)  # as when the page showed it
    assert queue.add_once(lab, lab.preparation, lab._idle_loop)
    assert not queue.add_once(lab, lab.preparation, lab._idle_loop)  # one job at a time
    queue.run_all()
    lab.controls["lr"].value = 0.3  # the same scene: nothing to prepare
    assert queue.pending == 0
    c = lab.controls
    c["n_heads"].value = next(h for h in c["n_heads"].options if h != c["n_heads"].value)
    assert queue.pending == 1  # the new heads' other tasks
    queue.run_all()
    for task in [t for t in lab.TASKS if t != c["task"].value]:
        full = lab.live.full_renders
        c["task"].value = task
        assert lab.live.full_renders == full, task  # prepared: no render on the press
        queue.run_all()
