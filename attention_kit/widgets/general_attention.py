"""``AttentionExplorer`` (notebook 01): one query against a few keys and values, with every score
and alignment function of the general attention model."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..i18n import N_, _
from ..mechanism import alignment as _alignment
from ..mechanism import attention as _attention
from ..mechanism import scores as _scores
from ..plotting import OKABE_ITO, plot_vectors, update_vectors
from ..plotting.fast_artists import add_fast_text
from .axes import nice_limit, plane, steady_limits
from .base import Explorer
from .editor import VectorEditor
from .messages import CONTEXT_COLOR

__all__ = ["AttentionExplorer"]

class AttentionExplorer(Explorer):
    """One 2-D query against a few 2-D keys and values: scores, weights and the context vector.

    Parameters
    ----------
    q : array_like, shape (2,)
        The query.
    K : array_like, shape (n, 2)
        The keys, one per row.
    V : array_like, shape (n, 2), optional
        The values (default: a copy of the keys).
    key_labels : sequence of str, optional
        Names of the keys in the bar charts (default ``k1 .. kn``).
    score, align : str
        Initial choices, names from ``SCORES`` and ``ALIGNMENTS``.
    temperature : float
        Divides the scores before the softmax.
    p : float, optional
        Centre of the local window (default: the middle key).
    D : int
        Half-width of the local window.
    seed : int
        Seeds the random weights of the additive / concat scores and hard-alignment sampling.

    Attributes
    ----------
    state : dict
        ``scores`` (n,), ``weights`` (n,), ``context`` (2,).
    """

    _PLAIN = N_("AttentionExplorer (interactive: run in JupyterLab to use the controls)")

    def __init__(self, q, K, V=None, *, key_labels=None, score: str = "dot", align: str = "soft",
                 temperature: float = 1.0, p: float | None = None, D: int = 1, seed: int = 0):
        q = np.asarray(q, dtype=float).reshape(-1)  # (2,)
        K = np.asarray(K, dtype=float)  # (n, 2)
        if q.shape != (2,) or K.ndim != 2 or K.shape[1] != 2:
            raise ValueError(f"AttentionExplorer works in the plane: q must have shape (2,) and K "
                             f"(n, 2), got q {q.shape} and K {K.shape}")
        V = K.copy() if V is None else np.asarray(V, dtype=float)  # (n, 2)
        if V.shape != K.shape:
            raise ValueError(f"V has shape {V.shape} but K has {K.shape}: one 2-D value per key")
        n = K.shape[0]
        if score not in _scores.SCORES:
            raise ValueError(f"unknown score {score!r}; choose one of {list(_scores.SCORES)}")
        if align not in _alignment.ALIGNMENTS:
            raise ValueError(f"unknown alignment {align!r}; choose one of {list(_alignment.ALIGNMENTS)}")
        self.n = n
        self.key_labels = list(key_labels) if key_labels is not None else [f"k{i + 1}" for i in range(n)]
        vecs = {"q": q}
        vecs.update({f"k{i + 1}": K[i] for i in range(n)})
        vecs.update({f"v{i + 1}": V[i] for i in range(n)})
        editor = VectorEditor(vecs)
        controls = {
            "score": widgets.Dropdown(options=list(_scores.SCORES), value=score, description=_("score"),
                                      layout=widgets.Layout(width="220px")),
            "align": widgets.Dropdown(options=list(_alignment.ALIGNMENTS), value=align,
                                      description=_("align"), layout=widgets.Layout(width="180px")),
            "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=-1, max=1,
                                                  step=0.05, description=_("temperature"),
                                                  readout_format=".2f",
                                                  style={"description_width": "initial"}),
            "D": widgets.IntSlider(value=D, min=1, max=max(1, n), description=_("D (window)"),
                                   style={"description_width": "initial"}),
            "p": widgets.FloatSlider(value=(n - 1) / 2 if p is None else p, min=0, max=max(n - 1, 0),
                                     step=0.1, description=_("p (centre)"), readout_format=".1f",
                                     style={"description_width": "initial"}),
            # (the checkbox before the seed it turns on: Tab reaches them in this order)
            "sample": widgets.Checkbox(value=False, description=_("hard: sample (else argmax)"),
                                       indent=False),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description=_("seed")),
        }
        fig = Figure(figsize=(10.5, 4.2), layout="constrained")
        self._build_figure(fig)
        self._assemble(controls, editor, fig, dpi=80)
        # the titles name the temperature and the sum: redrawn on each change, not the background
        self.live.set_dynamic([*self._bars_s, *self._bars_w, *self._txt_s, *self._txt_w,
                               *self._arr_k, *self._arr_v, *self._arr_q, *self._arr_c,
                               self._ax_s.title, self._ax_w.title])
        self.update()

    def _build_figure(self, fig: Figure) -> None:
        n = self.n
        gs = fig.add_gridspec(2, 2, width_ratios=[1.25, 1])
        self._ax_s = fig.add_subplot(gs[0, 0])
        self._ax_w = fig.add_subplot(gs[1, 0], sharex=self._ax_s)
        self._ax_p = fig.add_subplot(gs[:, 1])
        colors = [OKABE_ITO[i % 5] for i in range(n)]
        x = np.arange(n)
        self._bars_s = self._ax_s.bar(x, np.zeros(n), color=colors, width=0.6)
        self._bars_w = self._ax_w.bar(x, np.zeros(n), color=colors, width=0.6)
        self._ax_s.axhline(0, color="#555555", linewidth=0.8)
        # the bar values: FastText (the same pixels as ax.text, laid out once per string)
        self._txt_s = [add_fast_text(self._ax_s, i, 0, "", ha="center", va="baseline", fontsize=10,
                                 clip_on=False) for i in range(n)]
        self._txt_w = [add_fast_text(self._ax_w, i, 0, "", ha="center", va="bottom", fontsize=10,
                                 clip_on=False) for i in range(n)]
        self._ax_s.set_ylabel(_("score e"))
        self._ax_w.set_ylabel(_("weight a"))
        self._ax_w.set_ylim(0, 1.18)
        self._ax_w.set_yticks([0, 0.5, 1])
        self._ax_w.set_xticks(x)
        self._ax_w.set_xticklabels(self.key_labels)
        self._ax_s.tick_params(labelbottom=False)
        self._ax_w.set_xlabel(_("keys"))
        for ax in (self._ax_s, self._ax_w):
            ax.spines[["top", "right"]].set_visible(False)
        self._ax_s.set_title(" ")
        self._ax_w.set_title(" ")
        plane(self._ax_p, _("q, keys k (solid), values v (dashed), context c"))
        self._ax_p.title.set_fontsize(10.5)
        self._arr_k = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=[f"k{i + 1}" for i in range(n)],
                                   color=colors)
        self._arr_v = plot_vectors(self._ax_p, np.zeros((n, 2)), labels=[f"v{i + 1}" for i in range(n)],
                                   color=colors, linestyle="--", alpha=0.75,
                                   names=[f"v{i + 1}" for i in range(n)])
        self._arr_q = plot_vectors(self._ax_p, np.zeros((1, 2)), labels=["q"], color="black")
        self._arr_c = plot_vectors(self._ax_p, np.zeros((1, 2)), labels=["c"], color=CONTEXT_COLOR,
                                   linewidth=3.0)

    def _compute(self) -> dict:
        c = self.controls
        vals = self.editor.values
        n = self.n
        q = vals["q"]
        K = np.stack([vals[f"k{i + 1}"] for i in range(n)])  # (n, 2)
        V = np.stack([vals[f"v{i + 1}"] for i in range(n)])  # (n, 2)
        name, al = c["score"].value, c["align"].value
        seed = int(c["seed"].value)
        sparams = _scores.default_score_params(name, 2, 2, rng=np.random.default_rng(seed))
        aparams = {"temperature": float(c["temperature"].value)}
        if al == "local":
            aparams.update(p=float(c["p"].value), D=int(c["D"].value))
        elif al == "hard" and c["sample"].value:
            aparams["rng"] = np.random.default_rng(seed)
        context, weights, scores = _attention.general_attention(
            q, K, V, score=name, align=al, score_params=sparams, align_params=aparams,
            return_scores=True)
        self._enable(name, al)
        return {"q": q, "K": K, "V": V, "scores": scores, "weights": weights, "context": context}

    def _enable(self, score: str, align: str) -> None:
        c = self.controls
        c["D"].disabled = c["p"].disabled = align != "local"
        c["sample"].disabled = align != "hard"
        c["seed"].disabled = not (score in ("additive", "concat") or (align == "hard" and c["sample"].value))

    def _draw(self, st: dict) -> None:
        e, a = st["scores"], st["weights"]
        steady_limits(self._ax_s, nice_limit(e, minimum=1.0), "y")
        lim = self._ax_s.get_ylim()[1]
        for i, (bar, t, v) in enumerate(zip(self._bars_s, self._txt_s, e, strict=True)):
            bar.set_height(v)
            t.set_text(f"{v:.2f}")
            t.set_position((i, v + (0.04 * lim if v >= 0 else -0.04 * lim)))
            t.set_va("bottom" if v >= 0 else "top")
        for i, (bar, t, v) in enumerate(zip(self._bars_w, self._txt_w, a, strict=True)):
            bar.set_height(v)
            t.set_text(f"{v:.2f}")
            t.set_position((i, v + 0.02))
        c = self.controls
        # the seed is named wherever it changes what is drawn (random score weights, a sampled key),
        # so a press of the seed always changes the words as well as the picture
        seed = int(c["seed"].value)
        random_w = ", " + _("random W seed {seed}").format(seed=seed) if c["score"].value in ("additive", "concat") else ""
        self._ax_s.set_title(_("scores e = {score}(q, k)").format(score=c["score"].value) + random_w, fontsize=11)
        extra, how = "", _("{align} alignment").format(align=c["align"].value)
        if c["align"].value == "local":
            extra = f", p={c['p'].value:.1f}, D={c['D'].value}"
        elif c["align"].value == "hard" and c["sample"].value:
            extra, how = ", " + _("seed {seed}").format(seed=seed), _("hard sample")
        self._ax_w.set_title(_("weights a = {how} of e ({params}); sum = {total}")
                             .format(how=how, params=f"T={c['temperature'].value:.2f}{extra}", total=f"{a.sum():.2f}"),
                             fontsize=11)
        K, V, q, ctx = st["K"], st["V"], st["q"], st["context"]
        pts = np.vstack([K, V, q[None], ctx[None]])
        lim = nice_limit(pts, minimum=0.5, room=1.4)  # room for the tip labels
        steady_limits(self._ax_p, lim)
        lim = self._ax_p.get_xlim()[1]
        for i in range(self.n):  # labels first: update_vectors places them by their length
            same = np.allclose(K[i], V[i])
            self._arr_k.labels[i].set_text(f"k{i + 1}=v{i + 1}" if same else f"k{i + 1}")
            self._arr_v.labels[i].set_text("" if same else f"v{i + 1}")
            self._arr_v.arrows[i].set_visible(not same)
        update_vectors(self._arr_k, K, span=lim)
        update_vectors(self._arr_v, V, span=lim)
        update_vectors(self._arr_q, q[None], span=lim)
        update_vectors(self._arr_c, ctx[None], span=lim)
        for i in range(self.n):
            self._arr_v.arrows[i].set_linewidth(0.8 + 4.0 * float(a[i]))
