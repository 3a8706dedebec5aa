"""``AttentionTrainer`` (notebook 05): train a one-layer attention model step by step, watching the
probe's weights and the curves; ``TrainingMonitor``: a progress bar and the curves of a training loop."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..errors import AttentionError, ParameterError
from ..i18n import N_, _
from ..learn.optim import check_learning_rate
from ..learn.toy_tasks import TASKS, WORDS, Trainer
from ..plotting import OKABE_ITO, head_grid, update_heatmap
from .base import Explorer
from .messages import friendly
from .parsing import VectorParseError, parse_vector

__all__ = ["AttentionTrainer", "TrainingMonitor"]

LR_RANGE = (1e-3, 10.0)  # the slider's range, and the range a typed learning rate must be in


def _history(trainer: Trainer) -> dict:
    """What the curves show: the loss of every step and the held-out accuracy at the checkpoints."""
    acc_steps, acc = np.array(trainer.checkpoints).T  # (2, number of checkpoints)
    return {"steps": trainer.steps, "losses": np.asarray(trainer.losses, dtype=float),
            "acc_steps": np.asarray(acc_steps), "acc": np.asarray(acc)}


class _Curves:
    """The training loss (log scale) and the held-out accuracy, drawn on two given axes."""

    def __init__(self, ax_loss, ax_acc, total: int):
        self.total = total
        self.ax_loss, self.ax_acc = ax_loss, ax_acc
        (self.loss_line,) = ax_loss.plot([], [], color=OKABE_ITO[0], lw=1.2)
        (self.acc_line,) = ax_acc.plot([], [], "o-", ms=3, color=OKABE_ITO[5])
        ax_loss.set_yscale("log")
        ax_loss.set(xlabel=_("step"), ylabel=_("loss (log scale)"), title=_("training loss"), ylim=(1e-5, 10))
        ax_acc.set(xlabel=_("step"), ylabel=_("accuracy"), title=_("held-out accuracy"), ylim=(0, 1.05))
        for ax in (ax_loss, ax_acc):
            ax.set_xlim(0, total)
            ax.grid(True, color="#e5e5e5", linewidth=0.6)

    @property
    def artists(self) -> list:
        return [self.loss_line, self.acc_line]

    def update(self, st: dict) -> None:
        # 0 has no place on a log scale, and a diverging run's 1e300 would squash everything else
        losses = np.clip(st["losses"], 1e-12, 1e4)
        self.loss_line.set_data(np.arange(1, len(losses) + 1), losses)
        self.loss_line.set_marker("o" if len(losses) < 20 else "")  # a single step still shows
        self.loss_line.set_markersize(3)
        self.acc_line.set_data(st["acc_steps"], st["acc"])
        # the step axis doubles when training passes its end (100, 200, 400, ...): a new axis is a new
        # background, so "Run 100" redraws only the curves on most presses
        right = self.total * 2 ** max(0, int(np.ceil(np.log2(max(st["steps"], 1) / self.total))))
        # the loss axis goes down a decade at a time (another background only when it does)
        low = min(1e-5, 10.0 ** np.floor(np.log10(losses.min() / 2))) if losses.size else 1e-5
        high = 1e4 if losses.size and losses.max() > 10 else 10
        if self.ax_loss.get_ylim() != (low, high):
            self.ax_loss.set_ylim(low, high)
        for ax in (self.ax_loss, self.ax_acc):
            if ax.get_xlim()[1] != right:
                ax.set_xlim(0, right)


class TrainingMonitor(Explorer):
    """A progress bar and the two curves of a ``Trainer``; call ``refresh()`` after training steps.

    Parameters
    ----------
    trainer : Trainer
    total : int
        The number of steps the loop will take (the bar's end and the curves' first x range).
    """

    _PLAIN = N_("TrainingMonitor (progress and curves: run the notebook in JupyterLab to watch them move)")

    def __init__(self, trainer: Trainer, *, total: int):
        if not isinstance(trainer, Trainer):
            raise ParameterError("trainer must be an attention_kit.learn.toy_tasks.Trainer")
        self.trainer = trainer
        self.bar = widgets.IntProgress(value=0, min=0, max=int(total), description=_("training"))
        self.count = widgets.Label()
        fig = Figure(figsize=(8.5, 2.8), layout="constrained")
        self.curves = _Curves(*fig.subplots(1, 2), total=int(total))
        self._assemble({}, None, fig, dpi=80)
        self.live.set_dynamic(self.curves.artists)
        self.update()

    def _top_controls(self):
        return [self.bar, self.count]

    def refresh(self) -> bool:
        """Redraw from the trainer's history (the same as ``update``)."""
        return self.update()

    def _compute(self) -> dict:
        return _history(self.trainer)

    def _draw(self, st: dict) -> None:
        self.curves.update(st)
        self.bar.value = min(st["steps"], self.bar.max)
        self.count.value = _("{done} / {total} steps").format(done=st["steps"], total=self.bar.max)


def _sups(fig: Figure) -> list:
    """The figure's and its subfigures' super title and axis labels (None where there is none),
    which constrained layout places."""
    return [getattr(f, name, None) for f in (fig, *fig.subfigs)
            for name in ("_suptitle", "_supxlabel", "_supylabel")]


def _sup_places(fig: Figure) -> list:
    return [None if t is None else t.get_position() for t in _sups(fig)]


def _scene_key(st: dict) -> tuple:
    """What decides the trainer's panels: the number of heads, the task and its probe."""
    tr = st["trainer"]
    return st["weights"].shape[0], tr.task.name, tuple(tr.probe)


class _Value:
    """A stand-in for a control, holding a value (``AttentionTrainer._new_trainer`` reads ``.value``)."""

    def __init__(self, value):
        self.value = value


class AttentionTrainer(Explorer):
    """Train the model of ``attention_kit.learn.toy_tasks`` by hand: Step, Run 100, Reset.

    Controls: the task, the number of heads, d_k, "scale by √d_k", and the learning rate (a slider,
    or a box to type it in). Changing the task, heads, d_k or the scaling starts a fresh model; the
    learning rate applies from the next step on. The figure shows the probe's attention weights (one
    panel per head, orange boxes where the task needs each query to look), the training loss and the
    held-out accuracy. Errors (a typed learning rate that is not a positive number, a training run that
    diverges) appear as a message in red, never as a traceback.

    Parameters
    ----------
    task : str
        One of ``AttentionTrainer.TASKS``.
    n_heads : int
        1 or 2.
    d_k : int, optional
        4, 16 or 64; None means d_model / n_heads.
    scaled : bool
        Divide the scores by sqrt(d_k).
    lr : float
        The learning rate of SGD with momentum 0.9, between 0.001 and 10.
    seed : int
        Seeds the model, the data and the held-out set.

    Attributes
    ----------
    trainer : Trainer
        The model being trained, with its history.
    state : dict
        ``weights`` (h, n, n) of the probe, ``steps``, ``losses``, ``acc_steps``, ``acc``, and the
        ``trainer`` they come from.
    """

    _PLAIN = N_("AttentionTrainer (interactive: run the notebook in JupyterLab to train it)")
    _scene_parts = ("_hms", "curves")
    TASKS = ("reverse", "rotate", "pair", "lookup")
    #: "Run 100" redraws every this many steps, so the run plays out on the page as it trains (the
    #: first picture after 10 steps instead of one picture after all 100)
    RUN_EVERY = 10
    D_K = (("d_model / h", 0), ("4", 4), ("16", 16), ("64", 64))

    CONTROL_NAMES = {"lr_text": N_("learning rate"), "d_k": N_("key size d k")}

    def __init__(self, task: str = "reverse", *, n_heads: int = 1, d_k: int | None = None,
                 scaled: bool = True, lr: float = 0.2, seed: int = 0):
        if task not in self.TASKS:
            raise ValueError(f"task = {task!r} is not one of {list(self.TASKS)}")
        if n_heads not in (1, 2):
            raise ValueError(f"n_heads = {n_heads!r} must be 1 or 2")
        if d_k not in (None, 4, 16, 64):
            raise ValueError(f"d_k = {d_k!r} must be None (d_model / h), 4, 16 or 64")
        lr = check_learning_rate(lr)
        if not LR_RANGE[0] <= lr <= LR_RANGE[1]:
            raise ValueError(f"lr = {lr} must be between {LR_RANGE[0]} and {LR_RANGE[1]}")
        self.seed = int(seed)
        small = widgets.Layout(width="170px")
        controls = {
            "task": widgets.Dropdown(options=self.TASKS, value=task, description=_("task"), layout=small),
            "n_heads": widgets.Dropdown(options=(1, 2), value=n_heads, description=_("heads"), layout=small),
            "d_k": widgets.Dropdown(options=self.D_K, value=d_k or 0, description="d_k",
                                    layout=widgets.Layout(width="200px")),
            "scaled": widgets.Checkbox(value=bool(scaled), description=_("scale by √d_k"), indent=False,
                                       layout=widgets.Layout(width="130px")),
            "lr": widgets.FloatLogSlider(value=lr, base=10, min=np.log10(LR_RANGE[0]),
                                         max=np.log10(LR_RANGE[1]), step=0.05, description=_("learning rate"),
                                         readout_format=".3g", continuous_update=False,
                                         style={"description_width": "90px"},
                                         layout=widgets.Layout(width="360px")),
            "lr_text": widgets.Text(value=f"{lr:g}", description=_("or type"), continuous_update=False,
                                    style={"description_width": "55px"}, layout=widgets.Layout(width="150px")),
        }
        self.buttons = {name: widgets.Button(description=_(name), layout=widgets.Layout(width="90px"))
                        for name in (N_("Step"), N_("Run 100"), N_("Reset"))}
        self.buttons["Step"].on_click(lambda _b: self.step(1))
        self.buttons["Run 100"].on_click(lambda _b: self.step(100, every=self.RUN_EVERY))
        self.buttons["Reset"].on_click(lambda _b: self.reset())
        self._syncing = False
        self.trainer = self._new_trainer(controls)
        self._assemble(controls, None, Figure(figsize=(10, 4.2), layout="constrained"), dpi=72)
        self._lay_out_templates()
        self.update()

    def _top_controls(self):
        c = self.controls
        return [widgets.VBox([
            widgets.HBox([*self.buttons.values(), c["lr"], c["lr_text"]]),
            widgets.HBox([c["task"], c["n_heads"], c["d_k"], c["scaled"]]),
        ])]

    def _new_trainer(self, c=None) -> Trainer:
        c = c or self.controls
        return Trainer(c["task"].value, n_heads=int(c["n_heads"].value), d_k=int(c["d_k"].value) or None,
                       scaled=bool(c["scaled"].value), lr=float(c["lr"].value), seed=self.seed)

    # ---------------------------------------------------------------- actions (plain methods)

    def step(self, n: int = 1, *, every: int | None = None) -> bool:
        """Take ``n`` training steps and redraw, also after every ``every`` steps on the way (the
        same steps as all ``n`` at once); False (and a message) if training diverged."""
        every = max(1, n if every is None else int(every))
        done, ok = 0, True
        while True:  # (step(0) still redraws once)
            k = min(every, n - done)
            try:
                with np.errstate(all="ignore"):
                    self.trainer.step(k)
            except AttentionError:
                ok = False  # Trainer.diverged holds the message; update() shows it
            done += k
            self.live.cause = (_("{done} training step taken, now at step {now}") if done == 1 else
                               _("{done} training steps taken, now at step {now}")).format(done=done, now=self.trainer.steps)
            self.update()
            if not ok or done >= n:
                break
        return ok

    def reset(self) -> None:
        """The same fresh model as at the start (same seed), with the current learning rate."""
        self.trainer.set_lr(float(self.controls["lr"].value))
        self.trainer.reset()
        self.live.cause = _("Reset: a fresh model at step 0")
        self.update()

    def set_lr_text(self, text: str) -> bool:
        """What typing ``text`` into the box does: set the learning rate, or show why not."""
        self.controls["lr_text"].value = text  # the box's observer does the work
        return not self.message

    def update(self) -> bool:
        ok = super().update()
        if self.trainer.diverged:
            self.error.value = friendly(ArithmeticError(self.trainer.diverged))
        return ok and not self.trainer.diverged

    # ---------------------------------------------------------------- control changes

    def _control_changed(self, change) -> None:
        if self._syncing:
            return
        owner, c = change["owner"], self.controls
        if owner is c["lr_text"]:
            self._typed_lr(change["new"])
            return
        if owner is c["lr"]:
            self.trainer.set_lr(float(owner.value))
            self._show_lr(float(owner.value))
        else:  # task, heads, d_k, scaling: a fresh model
            self.trainer = self._new_trainer()
        if not self._busy:
            self.update()

    def _show_lr(self, lr: float) -> None:
        self._syncing = True
        try:
            self.controls["lr_text"].value = f"{lr:.3g}"
        finally:
            self._syncing = False

    def _typed_lr(self, text: str) -> None:
        try:
            value = float(parse_vector(text, length=1)[0])  # the course's allow-list parser: no eval
        except VectorParseError:
            self.error.value = friendly(ParameterError(
                _("learning rate: {text!r} is not a number; type one positive number such as 0.1").format(text=str(text)[:20])))
            return
        try:
            lr = check_learning_rate(value)
            if not LR_RANGE[0] <= lr <= LR_RANGE[1]:
                raise ParameterError(_("the learning rate must be between {low:g} and {high:g} "
                                       "here, got {lr:g}; try 0.2").format(low=LR_RANGE[0], high=LR_RANGE[1], lr=lr))
        except ParameterError as exc:
            self.error.value = friendly(exc)
            return
        if self.controls["lr"].value != lr:
            self.controls["lr"].value = lr  # its observer sets the trainer's rate and redraws
        else:
            self.trainer.set_lr(lr)
            self.update()

    # ---------------------------------------------------------------- compute and draw

    def _scene_choices(self) -> list:
        """Each other task, and the other number of heads, as a fresh model would show them."""
        c, out = self.controls, []
        for name, value in [("task", t) for t in self.TASKS if t != c["task"].value] + \
                [("n_heads", h) for h in c["n_heads"].options if h != c["n_heads"].value]:
            values = {k: w.value for k, w in c.items()} | {name: value}
            st = self._compute(self._new_trainer({k: _Value(v) for k, v in values.items()}))
            out.append((_scene_key(st), st))
        return out

    def _compute(self, trainer: Trainer | None = None) -> dict:
        tr = self.trainer if trainer is None else trainer
        if tr.diverged and self.state:
            weights = self.state["weights"]  # the weights overflowed: keep the last good picture
        else:
            weights = tr.probe_weights()  # (h, n, n)
        return {"weights": weights, **_history(tr), "trainer": tr}

    def _lay_out_templates(self) -> None:
        """Lay out, once, a scene of each number of heads (the words and the probe's length are
        the same in every task, so only the heads change the layout), into figures of their own;
        every scene built later is placed as its number of heads' template was: no constrained
        layout per scene (340-490 ms of CPU in-process, one uninterruptible step of the idle
        preparation or of a press that comes first; issue 36)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        c = self.controls
        self._layouts = {}
        for h in c["n_heads"].options:
            values = {k: w.value for k, w in c.items()} | {"n_heads": h}
            fig = Figure(dpi=self.figure.dpi)
            FigureCanvasAgg(fig)
            st = self._compute(self._new_trainer({k: _Value(v) for k, v in values.items()}))
            hms, curves, _ = self._build_into(fig, h, st["trainer"])
            self._fill(hms, curves, st)  # (the titles and limits the scene will have)
            fig.set_layout_engine("constrained")
            fig.get_layout_engine().execute(fig)
            self._layouts[h] = ([sf.bbox_relative.frozen() for sf in fig.subfigs], _sup_places(fig),
                                [ax.get_position(original=True).frozen() for ax in fig.axes])

    def _build(self, h: int, tr: Trainer) -> None:
        self._hms, self.curves, dynamic = self._build_into(self.figure, h, tr)
        self.live.set_dynamic(dynamic)
        self.live.relayout()
        layout = getattr(self, "_layouts", {}).get(h)
        self._placements = None
        if layout is not None and len(layout[0]) == len(self.figure.subfigs):
            subfigs, sups, self._placements = layout  # (Explorer._show_scene places the axes)
            for sf, box in zip(self.figure.subfigs, subfigs, strict=True):
                sf._redo_transform_rel_fig(bbox=box)
            for text, xy in zip(_sups(self.figure), sups, strict=True):
                if text is not None and xy is not None:
                    text.set_position(xy)

    def _build_into(self, fig: Figure, h: int, tr: Trainer) -> tuple:
        """Draw the panels for ``h`` heads and ``tr``'s task into ``fig``: its heat maps, curves and
        moving artists."""
        fig.clear()
        fig.set_size_inches(6.6 + 3.3 * h, 4.2)
        gs = fig.add_gridspec(1, 2, width_ratios=[1.25 * h, 1.6])
        words = [WORDS[t] for t in tr.probe]
        start = np.full((h, len(words), len(words)), 1.0 / len(words))
        _fig, axes, hms = head_grid(start, query_labels=words, key_labels=words, fig=fig, ncols=h,
                                 subplot_spec=gs[0, 0])
        hms[0].colorbar.ax.set_ylabel(_("attention weight"))
        pattern = TASKS[tr.task.name].pattern
        boxes = []  # drawn with the cells (dynamic artists are drawn over the cached background)
        for ax in np.ravel(axes):
            for i, j in zip(*np.nonzero(pattern if pattern is not None else np.zeros((0, 0))), strict=True):
                boxes.append(ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec=OKABE_ITO[1],
                                                    lw=2.2, zorder=5, label="target")))
        need = _("orange boxes: where the task needs each query to look") if pattern is not None else \
            _("no single pattern can solve this task")
        fig.suptitle(_("{task}: {description}\nthe probe's weights ({need})")
                     .format(task=tr.task.name, description=_(tr.task.description), need=need), fontsize=10.5)
        sub = fig.add_subfigure(gs[0, 1])
        curves = _Curves(*sub.subplots(2, 1), total=100)
        # the loss title names the step and the learning rate: redrawn on each change, not part of
        # the background (a learning-rate step would otherwise redraw the whole figure)
        dynamic = [curves.loss_line, curves.acc_line, curves.ax_loss.title]
        for hm in hms:
            dynamic += [hm.image, hm.grid]
        dynamic += boxes + [hm.text_batch for hm in hms if hm.text_batch]
        return hms, curves, dynamic

    def _draw(self, st: dict) -> None:
        tr = st["trainer"]
        h = st["weights"].shape[0]
        self._show_scene(_scene_key(st), lambda: self._build(h, tr))
        self._fill(self._hms, self.curves, st)

    @staticmethod
    def _fill(hms, curves, st: dict) -> None:
        for i, art in enumerate(hms):
            update_heatmap(art, st["weights"][i])
        curves.update(st)
        curves.ax_loss.set_title(_("training loss (step {step}, lr {lr})").format(step=st["steps"], lr=f"{st['trainer'].lr:.3g}"),
                                 fontsize=10)
