"""``MultiHeadExplorer`` (notebook 03): the weights of every head side by side, and one token's
output, as the learner edits the embeddings."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..i18n import N_, _
from ..mechanism import multi_head_attention as _multihead
from ..plotting import OKABE_ITO, head_grid, update_heatmap
from .axes import nice_limit, steady_limits
from .base import Explorer

__all__ = ["MultiHeadExplorer"]

class MultiHeadExplorer(Explorer):
    """Multi-head self-attention of a short sentence: every head's weights, and how one edited
    token changes its output row.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
        Token embeddings, one row per token (d_model <= 8).
    tokens : sequence of str, length n
        The words.
    n_heads : int
        Initial number of heads (1, 2, 4 or 8, a divisor of d_model).
    seed : int
        Seeds ``init_multi_head``.
    token : int
        Index of the token whose embedding the sliders edit.
    feature_names : sequence of str, length d_model, optional
        Names of the embedding's features, shown on the sliders (default ``dim 0`` ...).
        The controls keep their keys ``dim0`` ... whatever the names.

    Attributes
    ----------
    state : dict
        ``weights`` (h, n, n), ``output`` (n, d_model), ``output_initial`` (n, d_model) for the
        initial embeddings with the same parameters, and ``X`` (n, d_model).
    """

    _scene_parts = ("_axes", "_hms", "_bars0", "_bars1", "_ax_out")

    _PLAIN = N_("MultiHeadExplorer (interactive: run in JupyterLab to use the controls)")

    def __init__(self, X, tokens, *, n_heads: int = 2, seed: int = 0, token: int = 0,
                 feature_names=None):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X has shape {X.shape} but (n, d_model) was expected (rows are tokens)")
        n, d = X.shape
        if d > 8:
            raise ValueError(f"d_model = {d}: the explorer shows one slider per component, so keep "
                             "d_model <= 8")
        tokens = [str(t) for t in tokens]
        if len(tokens) != n:
            raise ValueError(f"tokens has {len(tokens)} words but X has {n} rows")
        heads = [h for h in (1, 2, 4, 8) if d % h == 0]
        if n_heads not in heads:
            raise ValueError(f"n_heads = {n_heads} must be one of {heads} (divisors of d_model = {d})")
        if not 0 <= token < n:
            raise ValueError(f"token = {token} must be between 0 and {n - 1}")
        names = [f"dim {j}" for j in range(d)] if feature_names is None else [str(f) for f in feature_names]
        if len(names) != d:
            raise ValueError(f"feature_names has {len(names)} names but X has {d} features per token")
        self.n, self.d = n, d
        self.tokens = tokens
        self.X0 = X.copy()
        self._X = X.copy()
        lo = min(-2.0, float(np.floor(X.min())))
        hi = max(2.0, float(np.ceil(X.max())))
        controls = {
            "n_heads": widgets.Dropdown(options=heads, value=n_heads, description=_("heads"),
                                        layout=widgets.Layout(width="140px")),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description=_("seed")),
            "token": widgets.Dropdown(options=[(f"{i}: {t}", i) for i, t in enumerate(tokens)],
                                      value=token, description=_("edit token"),
                                      layout=widgets.Layout(width="220px")),
        }
        for j in range(d):
            controls[f"dim{j}"] = widgets.FloatSlider(
                value=float(X[token, j]), min=lo, max=hi, step=0.05, description=names[j],
                readout_format=".2f", continuous_update=True,
                layout=widgets.Layout(width="260px"), style={"description_width": "44px"})
        self.reset_button = widgets.Button(description=_("reset embeddings"),
                                           layout=widgets.Layout(width="150px"))
        self.reset_button.on_click(lambda _b: self.reset())
        fig = Figure(figsize=(12, 5.2), layout="constrained")
        self._assemble(controls, None, fig, dpi=72)
        self.update()

    def _top_controls(self):
        c = self.controls
        first = widgets.HBox([c["n_heads"], c["seed"], c["token"]])
        # the reset after the sliders it undoes (the order Tab reaches them in)
        sliders = widgets.HBox([*(c[f"dim{j}"] for j in range(self.d)), self.reset_button],
                               layout=widgets.Layout(flex_flow="row wrap"))
        return [widgets.VBox([first, sliders])]

    @property
    def X(self) -> np.ndarray:
        """The current embeddings, shape (n, d_model)."""
        return self._X.copy()

    def reset(self) -> None:
        """Back to the initial embeddings."""
        self._X = self.X0.copy()
        self._sync_sliders()
        self.live.cause = _("reset embeddings: back to the initial ones")
        self.update()

    def _sync_sliders(self) -> None:
        t = int(self.controls["token"].value)
        self._syncing = True
        try:
            for j in range(self.d):
                s = self.controls[f"dim{j}"]
                v = float(self._X[t, j])
                s.min, s.max = min(s.min, v), max(s.max, v)
                s.value = v
        finally:
            self._syncing = False

    def _control_changed(self, change) -> None:
        if getattr(self, "_syncing", False):
            return
        owner = change["owner"]
        if owner is self.controls["token"]:
            self._sync_sliders()
        else:
            for j in range(self.d):
                if owner is self.controls[f"dim{j}"]:
                    t = int(self.controls["token"].value)
                    self._X[t, j] = float(change["new"])
        if not self._busy:
            self.update()

    def _scene_choices(self) -> list:
        shown = int(self.controls["n_heads"].value)
        return [(h, self._compute(h)) for h in self.controls["n_heads"].options if h != shown]

    def _compute(self, h: int | None = None) -> dict:
        c = self.controls
        h = int(c["n_heads"].value) if h is None else h
        params = _multihead.init_multi_head(self.d, h, rng=np.random.default_rng(int(c["seed"].value)))
        X = self._X.copy()
        out, w = _multihead.multi_head_attention(X, X, params)  # (n, d), (h, n, n)
        out0, _ = _multihead.multi_head_attention(self.X0, self.X0, params)
        return {"X": X, "weights": w, "output": out, "output_initial": out0}

    def _build(self, h: int) -> None:
        fig = self.figure
        fig.clear()
        # one row of up to 4 heads; the figure's height follows the number of rows
        fig.set_size_inches(12, {1: 4.4, 2: 4.4, 4: 3.6}.get(h, 5.4))
        gs = fig.add_gridspec(1, 2, width_ratios=[3.2, 1])
        ncols = min(h, 4)
        zeros = np.full((h, self.n, self.n), 1.0 / self.n)
        _fig, self._axes, self._hms = head_grid(zeros, query_labels=self.tokens, key_labels=self.tokens,
                                             fig=fig, ncols=ncols, subplot_spec=gs[0, 0])
        self._hms[0].colorbar.ax.set_ylabel(_("attention weight"))
        sub = fig.add_subfigure(gs[0, 1])
        ax = sub.add_subplot()
        x = np.arange(self.d)
        # "initial" is hollow (an outline), "now" filled: told apart by more than colour (issue 34;
        # a hatch would cost a whole picture per step: the page's drawing commands have none)
        self._bars0 = ax.barh(x + 0.2, np.zeros(self.d), height=0.4, facecolor="none",
                              edgecolor="#555555", linewidth=1.6, label=_("initial (hollow)"))
        self._bars1 = ax.barh(x - 0.2, np.zeros(self.d), height=0.4, color=OKABE_ITO[0],
                              edgecolor="black", linewidth=0.6, label=_("now (filled)"))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8, frameon=False,
                  handlelength=1.2, columnspacing=1.0)
        ax.axvline(0, color="#555555", linewidth=0.8)
        ax.set_yticks(x)
        ax.set_yticklabels([f"dim {j}" for j in range(self.d)])
        ax.set_ylim(self.d - 0.5, -0.5)
        ax.set_xlabel(_("output value"))
        ax.spines[["top", "right"]].set_visible(False)
        self._ax_out = ax
        dynamic = []
        for hm in self._hms:
            dynamic += [hm.image, hm.grid] + ([hm.text_batch] if hm.text_batch else [])
        # the title names the token being edited: redrawn with the bars, not part of the background;
        # so is the bars' x axis, whose range follows the seed (issue 36: 5 of 15 seed steps
        # re-rendered the whole figure for it)
        self.live.set_dynamic(dynamic + [*self._bars0, *self._bars1, ax.title, ax.xaxis])
        self.live.relayout()

    def _draw(self, st: dict) -> None:
        w = st["weights"]
        h = w.shape[0]
        self._show_scene(h, lambda: self._build(h))
        for i, art in enumerate(self._hms):
            update_heatmap(art, w[i])
        t = int(self.controls["token"].value)
        o, o0 = st["output"][t], st["output_initial"][t]
        for b, v in zip(self._bars1, o, strict=True):
            b.set_width(v)
        for b, v in zip(self._bars0, o0, strict=True):
            b.set_width(v)
        steady_limits(self._ax_out, nice_limit(np.concatenate([o, o0]), minimum=0.5), "x")
        self._ax_out.set_title(_("output row of “{token}”\nfilled blue: now, hollow: initial").format(token=self.tokens[t]),
                               fontsize=10.5)
