"""``SelfAttentionExplorer`` (notebook 02): self-attention of a few tokens, raw dot products,
weights and (in 2-D) the inputs and outputs drawn as arrows."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..i18n import N_, _
from ..mechanism import attention as _attention
from ..mechanism import scores as _scores
from ..plotting import OKABE_ITO, heatmap, plot_vectors, update_heatmap, update_vectors
from ..plotting.describe_matrix import label_names
from .axes import plane, random_projections, steady_box
from .base import Explorer
from .editor import VectorEditor

__all__ = ["SelfAttentionExplorer"]

class SelfAttentionExplorer(Explorer):
    """Self-attention of a few tokens: raw dot products, weights and (in 2-D) inputs and outputs.

    Parameters
    ----------
    X : array_like, shape (n, d)
        One token per row (d = 2 also draws the plane).
    labels : sequence of str, optional
        Token names (default ``x1 .. xn``).
    learned : bool
        Use seeded random ``W_q, W_k, W_v`` of shape (d, d) instead of the identity.
    seed : int
        Seed of those projections.
    temperature : float
        Extra divisor of the scores.
    scale : bool
        Divide the scores by ``sqrt(d_k)``.

    Attributes
    ----------
    state : dict
        ``dots`` (n, n) raw ``Q K^T``, ``weights`` (n, n), ``outputs`` (n, d), plus ``Q``, ``K``,
        ``V`` (n, d), ``X`` (n, d) and ``learned`` (bool).
    """

    _PLAIN = N_("SelfAttentionExplorer (interactive: run in JupyterLab to use the controls)")
    _scene_parts = ("_hm_dots", "_hm_w", "_ax_p", "_arr_x", "_arr_y")

    def __init__(self, X, *, labels=None, learned: bool = False, seed: int = 0,
                 temperature: float = 1.0, scale: bool = True):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X has shape {X.shape} but (n, d) was expected (rows are tokens)")
        n, d = X.shape
        self.n, self.d = n, d
        self.labels = list(labels) if labels is not None else [f"x{i + 1}" for i in range(n)]
        if len(self.labels) != n:
            raise ValueError(f"labels has {len(self.labels)} entries but X has {n} tokens")
        editor = VectorEditor({f"x{i + 1}": X[i] for i in range(n)})
        controls = {
            "learned": widgets.Checkbox(value=learned, description=_("learned W_q, W_k, W_v (random)"),
                                        indent=False),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description=_("seed")),
            "scale": widgets.Checkbox(value=scale, description=_("divide by √d_k"), indent=False),
            "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=-1, max=1,
                                                  step=0.05, description=_("temperature"),
                                                  readout_format=".2f",
                                                  style={"description_width": "initial"}),
        }
        fig = Figure(figsize=(13.5 if d == 2 else 10, 4.6), layout="constrained")
        self._assemble(controls, editor, fig, dpi=72 if n > 5 else 80)
        self.update()

    def _build(self) -> None:
        """The panels, drawn into ``self.figure``: one figure per setting of "learned" (see
        ``Explorer._show_scene``), each with its own score colour scale and plane, so that the
        checkbox switches between two backgrounds instead of redrawing one (80 ms in-process)."""
        self._build_figure(self.figure)
        dynamic = []
        for hm in (self._hm_dots, self._hm_w):
            dynamic += [hm.image, hm.grid] + ([hm.text_batch] if hm.text_batch else [])
        if self._ax_p is not None:
            dynamic += [*self._arr_x, *self._arr_y]
        # the titles name the temperature: redrawn on each change, not part of the background
        self.live.set_dynamic(dynamic + [self._hm_dots.ax.title, self._hm_w.ax.title])

    def _build_figure(self, fig: Figure) -> None:
        n, d = self.n, self.d
        self._arr_x = self._arr_y = None
        ncols = 3 if d == 2 else 2
        axes = fig.subplots(1, ncols, gridspec_kw={"width_ratios": [1, 1, 0.9][:ncols]})
        zeros = np.zeros((n, n))
        self._hm_dots = heatmap(zeros, query_labels=self.labels, key_labels=self.labels, ax=axes[0],
                                kind="scores", title=_("raw scores Q Kᵀ"))
        self._hm_w = heatmap(np.full((n, n), 1.0 / n), query_labels=self.labels,
                             key_labels=self.labels, ax=axes[1], title=_("weights"))
        self._ax_p = axes[2] if d == 2 else None
        if self._ax_p is not None:
            colors = [OKABE_ITO[i % len(OKABE_ITO)] for i in range(n)]
            plane(self._ax_p, _("inputs (solid), outputs (dashed):\nthe same colour and tip for x_i and y_i"))
            self._ax_p.yaxis.tick_right()  # ticks and label on the right, away from the colour bar's label
            self._ax_p.yaxis.set_label_position("right")
            self._arr_x = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=self.labels, color=colors,
                                       markers=True)
            # outputs sit close together near the middle: labels would pile up, the colour and the
            # tip's shape pair them (colour is never the only carrier)
            self._arr_y = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=[""] * n,
                                       color=colors, linestyle="--", markers=True,
                                       names=[f"y of {x}" for x in label_names(self.labels, n)])

    def _scene_choices(self) -> list:
        other = not self.controls["learned"].value
        return [(other, self._compute(learned=other))]

    def _compute(self, learned: bool | None = None) -> dict:
        c = self.controls
        X = self.editor.matrix([f"x{i + 1}" for i in range(self.n)])  # (n, d)
        d = self.d
        if learned is None:  # (given: the state of the other setting, for prepare_scenes)
            learned = bool(c["learned"].value)
            c["seed"].disabled = not learned
        if learned:
            W_q, W_k, W_v = random_projections(d, int(c["seed"].value))
        else:
            W_q = W_k = W_v = np.eye(d)
        T = float(c["temperature"].value)
        if not np.isfinite(T) or T <= 0:
            raise ValueError(f"temperature must be positive, got {T}")
        Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (n, d) each
        dots = _scores.dot_score(Q, K)  # (n, n)
        s = (1.0 / np.sqrt(K.shape[1]) if c["scale"].value else 1.0) / T
        outputs, weights = _attention.scaled_dot_product_attention(Q, K, V, scale=s)
        return {"X": X, "Q": Q, "K": K, "V": V, "dots": dots, "weights": weights, "outputs": outputs,
                "learned": learned}

    def _draw(self, st: dict) -> None:
        c = self.controls
        built = self._show_scene(st["learned"], self._build)
        # the scores' colour scale is kept while they fit (after the first picture): a seed or
        # vector step then does not redraw the colour bar, the axes and the whole background
        update_heatmap(self._hm_dots, st["dots"], steady=bool(self.state) and not built)
        update_heatmap(self._hm_w, st["weights"])
        div = []
        if c["scale"].value:
            div.append("√d_k")
        if abs(c["temperature"].value - 1.0) > 1e-9:
            div.append(f"{c['temperature'].value:.2f}")
        arg = "Q Kᵀ" + (" / " + "·".join(div) if div else "")
        self._hm_w.ax.set_title(_("weights softmax({arg})").format(arg=arg))
        src = "X W_q (X W_k)ᵀ" if st["learned"] else _("X Xᵀ (W = identity)")
        self._hm_dots.ax.set_title(_("raw scores Q Kᵀ = {src}").format(src=src))
        if self._ax_p is not None:
            X, Y = st["X"], st["outputs"]
            side = steady_box(self._ax_p, np.vstack([X, Y]))  # the data, not a square around 0
            update_vectors(self._arr_x, X, span=side / 2)
            update_vectors(self._arr_y, Y, span=side / 2)
