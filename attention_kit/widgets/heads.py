"""Notebook 08's explorers: the trained heads, and how they formed.

* :class:`HeadExplorer` - pick a trained model, a layer and a head, type a token sequence: the
  head's weights as a heatmap and its scores on that sequence as bars (previous token, same token,
  the token after an earlier copy, the first token).
* :class:`PhaseChangeViewer` - a slider over the training snapshots of the two-layer induction
  model: the loss curve with the step marked, and the four heads' patterns on the probe sequence.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..heads import diagnostics as D
from ..heads.model import run
from ..heads.tasks import BACKCOPY_NAMES, LETTERS
from ..heads.trained import RECIPES, load_trained
from ..i18n import N_, _
from ..plotting import OKABE_ITO, WEIGHTS_CMAP, heatmap, update_heatmap
from .axes import widest_first
from .base import Explorer, control_words
from .parsing import parse_tokens

__all__ = ["HeadExplorer", "PhaseChangeViewer", "SCORES"]

#: The bars of :class:`HeadExplorer`, top to bottom.
SCORES = (N_("previous token"), N_("same token"), N_("after an earlier copy"), N_("first token"))


def head_scores(w: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The four scores of :data:`SCORES` for one head's weights ``w`` (n, n) on ``ids`` (n,).

    Averaged over queries 1 .. n-1 (query 0 can only see itself); "after an earlier copy" over
    the queries whose token occurred before (0 when none did).
    """
    n = len(ids)
    rows = np.arange(1, n)
    same = (ids[:, None] == ids[None, :]) & np.tri(n, dtype=bool)  # (n, n): key j holds query i's token
    match = D.prefix_match_mask(ids)[0]  # (n, n)
    has = match.any(axis=1)
    prefix = float((w * match).sum(axis=1)[has].mean()) if has.any() else 0.0
    return np.array([w[rows, rows - 1].mean(), (w * same)[1:].sum(axis=1).mean(), prefix, w[1:, 0].mean()])


def _names(model: str) -> tuple[str, ...]:
    return BACKCOPY_NAMES if RECIPES[model]["task"] == "backcopy" else LETTERS


class HeadExplorer(Explorer):
    """One head of one of notebook 08's trained models, on a sequence the learner types.

    Parameters
    ----------
    model : str
        One of :data:`~attention_kit.heads.trained.RECIPES`: "induction", "one_layer",
        "fixed_period", "sinks".
    tokens : str
        The sequence, e.g. ``"D J O B H M F D J O B"`` (letters A-P; for "sinks" also ``<s>``,
        ``T1``, ``T2`` and c-o).
    layer, head : int

    Attributes
    ----------
    state : dict
        ``ids`` (n,), ``weights`` (n, n) of the shown head, ``scores`` (4,) in the order of
        :data:`SCORES`, ``predicted`` (n,) the model's most likely next token after each position.
    """

    _PLAIN = N_("HeadExplorer (interactive: run in JupyterLab to pick a model and a head, and type tokens)")
    _scene_parts = ("_hm", "_bars", "_bar_texts", "_pred_text")

    def __init__(self, model: str = "induction", *, tokens: str = "D J O B H M F D J O B H M",
                 layer: int = 1, head: int = 0):
        self.models = {name: load_trained(name)[0] for name in RECIPES}
        if model not in self.models:
            raise ValueError(f"model must be one of {', '.join(self.models)}, got {model!r}")
        self._ids = parse_tokens(tokens, _names(model), max_tokens=24, min_tokens=2)
        controls = {
            "model": widgets.Dropdown(options=list(self.models), value=model, description=_("model"),
                                      layout=widgets.Layout(width="230px")),
            "layer": widgets.Dropdown(options=self._layers(model), value=layer, description=_("layer"),
                                      layout=widgets.Layout(width="160px")),
            "head": widgets.Dropdown(options=self._heads(model, layer), value=head, description=_("head"),
                                     layout=widgets.Layout(width="160px")),
        }
        self.text = widgets.Text(value=tokens, continuous_update=False, description=_("tokens"),
                                 layout=widgets.Layout(width="620px"))
        self.text.observe(self._text_changed, names="value")
        fig = Figure(figsize=(11, 5.2), layout="constrained")
        self._assemble(controls, None, fig, dpi=72)
        self.children = (self.text, *self.children)
        self._place_scenes(self._template())  # every sequence's panels go where the widest one's do
        self.update()

    def _template(self) -> dict:
        """A state with the widest labels of any model: the widest token name at each of the 24
        places a sequence may have."""
        names = [(m, name) for m in RECIPES for name in _names(m)]
        model, name = names[widest_first(self.figure, [name for _, name in names])[0]]
        ids = np.full(24, _names(model).index(name))
        return {"ids": ids, "weights": np.full((24, 24), 1 / 24), "scores": np.zeros(len(SCORES)),
                "predicted": ids, "model": model, "layer": 0, "head": 0}

    def _layers(self, model):
        return [(_("layer {k}").format(k=l), l) for l in range(len(RECIPES[model]["n_heads"]))]

    def _heads(self, model, layer):
        return [(_("head {k}").format(k=h), h) for h in range(RECIPES[model]["n_heads"][layer])]

    def _control_changed(self, change) -> None:
        if self._busy:
            return
        c = self.controls
        if change["owner"] is c["model"]:  # a model of other sizes and other tokens: fit the menus
            model = change["new"]
            try:
                ids = parse_tokens(self.text.value, _names(model), max_tokens=24, min_tokens=2)
            except Exception:  # these tokens mean nothing to the new model: show its own example
                ids = np.array([0, 3, 4, 1, 3, 5, 6, 2, 5, 7, 3, 4]) if model == "sinks" else self._ids
            self._ids = ids
            with self.hold():
                c["layer"].options = self._layers(model)
                c["layer"].value = len(RECIPES[model]["n_heads"]) - 1
                c["head"].options = self._heads(model, c["layer"].value)
                c["head"].value = 0
                self.text.value = " ".join(_names(model)[i] for i in ids)
            return
        if change["owner"] is c["layer"]:
            with self.hold():
                c["head"].options = self._heads(c["model"].value, change["new"])
                c["head"].value = 0
            return
        self.update()

    def _text_changed(self, change) -> None:
        if not self._busy:  # typed by the learner (not set by a new model): "tokens <the tokens>"
            self.live.cause = control_words(self.text)
        self.set_tokens(change["new"])

    def set_tokens(self, text: str) -> bool:
        """Type ``text`` into the box. Returns whether it was accepted (else the message says why)."""
        if self.text.value != text:
            self.text.value = text  # (comes back here through the observer)
            return self.message == ""
        try:
            self._ids = parse_tokens(text, _names(self.controls["model"].value), max_tokens=24, min_tokens=2)
        except Exception as exc:
            self.error.value = f"⚠ {exc} (the picture shows the last good sequence)"
            return False
        return self.update()

    def _compute(self) -> dict:
        c = self.controls
        model, l, h = c["model"].value, int(c["layer"].value), int(c["head"].value)
        logits, saved = run(self.models[model], self._ids)
        w = saved["weights"][l][0, h]  # (n, n)
        return {"ids": self._ids.copy(), "weights": w, "scores": head_scores(w, self._ids),
                "predicted": logits[0].argmax(axis=-1), "model": model, "layer": l, "head": h}

    def _signatures(self):
        return (), ()  # fixed panels; a new sequence is a new scene

    def _draw(self, st: dict) -> None:
        toks = tuple(_names(st["model"])[i] for i in st["ids"])
        self._show_scene(toks, lambda: self._build(st, toks))
        update_heatmap(self._hm, st["weights"])
        for bar, text, v in zip(self._bars, self._bar_texts, st["scores"], strict=True):
            bar.set_width(v)
            text.set_x(min(v, 0.82) + 0.02)
            text.set_text(f"{v:.2f}")
        self._pred_text.set_text(self._caption(st))

    @staticmethod
    def _caption(st: dict) -> str:
        names = _names(st["model"])
        return (_("{model}, layer {layer} head {head}; the model's next-token guesses: {guesses}")
                .format(model=st["model"], layer=st["layer"], head=st["head"],
                        guesses=" ".join(names[i] for i in st["predicted"])))

    def _build(self, st: dict, toks: tuple) -> None:
        n = len(toks)
        gs = self.figure.add_gridspec(1, 2, width_ratios=[1.5, 1.0])
        ax_h, ax_b = self.figure.add_subplot(gs[0]), self.figure.add_subplot(gs[1])
        self._hm = heatmap(st["weights"], query_labels=[f"{i} {t}" for i, t in enumerate(toks)],
                           key_labels=list(toks), ax=ax_h, annotate=n <= 10, cbar=True,
                           title=_("the head's weights (rows: queries)"))
        y = np.arange(len(SCORES))
        self._bars = list(ax_b.barh(y, np.zeros(len(SCORES)), color=[OKABE_ITO[k] for k in (2, 0, 3, 5)]))
        self._bar_texts = [ax_b.text(0.02, yi, "", va="center", fontsize=10) for yi in y]
        ax_b.set_yticks(y, [_(s) for s in SCORES])
        ax_b.set_ylim(len(SCORES) - 0.5, -0.5)
        ax_b.set_xlim(0, 1)
        ax_b.set_xlabel(_("mean weight on that key (over the queries)"))
        ax_b.set_title(_("what this head looks at"), fontsize=11)
        self._pred_text = self.figure.suptitle(self._caption(st), fontsize=10)
        self.live.set_dynamic([self._hm.image, *([self._hm.text_batch] if self._hm.text_batch else []),
                               *self._bars, *self._bar_texts, self._pred_text])


class PhaseChangeViewer(Explorer):
    """A slider over the snapshots of the two-layer induction model (every 25 training steps).

    Attributes
    ----------
    state : dict
        ``step``, ``patterns`` (2, 2, 24, 24) of the four heads on the probe, ``accuracy`` and the
        scores at that snapshot.
    """

    _PLAIN = N_("PhaseChangeViewer (interactive: run in JupyterLab to move through training)")

    def __init__(self, step: int = 150):
        meta = load_trained("induction")[2]
        self.meta = meta
        steps = meta["snap_steps"]
        if step not in steps:
            raise ValueError(f"step must be one of the snapshots: 0, 25, ..., {steps[-1]}")
        controls = {"step": widgets.SelectionSlider(options=[int(s) for s in steps], value=int(step),
                                                    description=_("step"), continuous_update=True,
                                                    layout=widgets.Layout(width="520px"))}
        controls["step"].add_class("ak-choice-slider")  # its readout is not a text box (live_figure.js)
        fig = Figure(figsize=(11, 5.4), layout="constrained")
        self._build(fig)
        self._assemble(controls, None, fig, dpi=72)
        self.live.set_dynamic([self._marker, self._title, *self._images])
        self.update()

    def _build(self, fig: Figure) -> None:
        m = self.meta
        probe = [LETTERS[i] for i in m["probe"]]
        gs = fig.add_gridspec(2, 4, height_ratios=[0.75, 1.25])
        ax = fig.add_subplot(gs[0, :])
        losses = m["losses"]
        width = 25
        smooth = losses[: len(losses) // width * width].reshape(-1, width).mean(axis=1)
        ax.plot(width * np.arange(1, len(smooth) + 1), smooth, color=OKABE_ITO[4], label=_("training loss"))
        ax2 = ax.twinx()
        ax2.plot(m["snap_steps"], m["snap_acc"], "o-", ms=3, color=OKABE_ITO[2], label=_("accuracy on the repeats"))
        ax2.set_ylim(0, 1.02)
        ax2.set_ylabel(_("accuracy"), color=OKABE_ITO[2])
        ax.set_ylabel(_("loss (nats)"), color=OKABE_ITO[4])
        ax.set_xlabel(_("training step"))
        self._marker = ax.axvline(0, color="k", lw=1.5)
        self._title = ax.set_title(_("step {step}: accuracy {accuracy}, layer 0 head 0 previous-token {prev}")
                                   .format(step=0, accuracy="0.00", prev="0.00"), fontsize=11)
        self._images = []
        for k, (l, h) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
            a = fig.add_subplot(gs[1, k])
            self._images.append(a.imshow(m["snap_probe"][0, l, h].astype(float), cmap=WEIGHTS_CMAP, vmin=0, vmax=1))
            a.set_xticks(range(24), probe, fontsize=5)
            a.set_yticks(range(24), probe, fontsize=5)
            a.set_title(_("layer {layer} head {head}").format(layer=l, head=h), fontsize=10)
            # rows are queries, columns keys: said in the picture and so in the words (issue 34)
            a.set_xlabel(_("keys"), fontsize=7, labelpad=1)
            a.set_ylabel(_("queries"), fontsize=7, labelpad=1)
        fig.colorbar(self._images[0], ax=fig.axes[-4:], fraction=0.015, pad=0.01, label=_("attention weight"))

    def _compute(self) -> dict:
        m = self.meta
        step = int(self.controls["step"].value)
        i = int(np.flatnonzero(m["snap_steps"] == step)[0])
        return {"step": step, "patterns": m["snap_probe"][i].astype(float), "accuracy": float(m["snap_acc"][i]),
                "previous_token": float(m["snap_prev_early"][i, 0]), "prefix_matching": float(m["snap_prefix"][i, 2])}

    def _draw(self, st: dict) -> None:
        self._marker.set_xdata([st["step"], st["step"]])
        self._title.set_text(_("step {step}: accuracy {accuracy}, layer 0 head 0 previous-token {prev} (queries 1-12), "
                               "layer 1 head 0 prefix-matching {prefix}")
                             .format(step=st["step"], accuracy=f"{st['accuracy']:.2f}",
                                     prev=f"{st['previous_token']:.2f}", prefix=f"{st['prefix_matching']:.2f}"))
        for img, w in zip(self._images, st["patterns"].reshape(4, 24, 24), strict=True):
            img.set_data(w)
