"""``MaskExplorer`` (notebook 04): causal, padding and window masks, positions, and a nudge that
shows which output rows can move."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..i18n import N_, _
from ..mechanism import attention as _attention
from ..mechanism import masks as _masks
from ..mechanism import positions as _positions
from ..plotting import OKABE_ITO, heatmap, update_heatmap
from ..plotting.fast_artists import add_fast_text
from .axes import nice_limit, random_projections
from .base import Explorer

__all__ = ["MaskExplorer"]

class MaskExplorer(Explorer):
    """Masks and positions on a short padded sentence: which keys each query may see, the weights,
    and which output rows move when one token is edited.

    Self-attention with seeded random projections ``W_q, W_k, W_v`` (d_model x d_model) on
    embeddings that depend only on the word (so a repeated word has a repeated row), optionally
    plus the sinusoidal positional encoding.

    Parameters
    ----------
    tokens : sequence of str, length n
        The sentence, padding included (e.g. ``"<pad>"`` at the end).
    n_real : int, optional
        How many tokens are real (the rest is padding); default: every token not named ``"<pad>"``.
    mask : str
        One of ``MaskExplorer.MASKS``: "none", "causal", "padding", "causal + padding", "local window".
    positions : bool
        Add ``sinusoidal_positions(n, d_model)`` to the embeddings.
    d_model : int
        Width of the embeddings (even, at most 64).
    seed : int
        Seeds the projections (the embeddings are seeded separately, by ``embed_seed``).
    token : int
        The token that the ``nudge`` slider edits.
    D : int
        Half-width of the local window (the window of query i is keys ``i - D .. i + D``).
    embed_seed : int
        Seeds the word embeddings.
    nudge : float
        Initial position of the ``nudge`` slider, from -2 to 2.

    Attributes
    ----------
    state : dict
        ``X`` (n, d_model) the inputs after the nudge (and positions), ``mask`` (n, n) bool
        (all True for "none"), ``weights`` (n, n), ``output`` (n, d_model), ``output_base``
        (n, d_model) with no nudge, ``change`` (n,) the length of each output row's move, and
        ``reach`` the largest such move anywhere on the nudge slider (it sets the bars' scale).
    """

    _PLAIN = N_("MaskExplorer (interactive: run in JupyterLab to use the controls)")
    MASKS = (N_("none"), N_("causal"), N_("padding"), N_("causal + padding"), N_("local window"))
    PAD = "<pad>"

    def __init__(self, tokens, *, n_real: int | None = None, mask: str = "causal",
                 positions: bool = False, d_model: int = 8, seed: int = 0, token: int = 0,
                 D: int = 1, embed_seed: int = 0, nudge: float = 0.0):
        tokens = [str(t) for t in tokens]
        n = len(tokens)
        if not 1 <= n <= 12:
            raise ValueError(f"tokens has {n} words; give 1 to 12 so that the heatmap stays readable")
        if mask not in self.MASKS:
            raise ValueError(f"mask = {mask!r} is not one of {list(self.MASKS)}")
        if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) \
                or not 2 <= d_model <= 64 or d_model % 2:
            raise ValueError(f"d_model = {d_model!r} must be an even whole number from 2 to 64")
        if n_real is None:
            n_real = sum(t != self.PAD for t in tokens)
        if not 1 <= n_real <= n:
            raise ValueError(f"n_real = {n_real} must be between 1 and {n} (at least one real token)")
        if not 0 <= token < n:
            raise ValueError(f"token = {token} must be between 0 and {n - 1}")
        if not -2.0 <= float(nudge) <= 2.0:
            raise ValueError(f"nudge = {nudge} must be between -2 and 2")
        self.tokens, self.n, self.d = tokens, n, int(d_model)
        vocab = sorted(set(tokens))
        E = np.random.default_rng(embed_seed).normal(0.0, 1.0, (len(vocab), self.d))  # (vocab, d)
        self.X0 = E[[vocab.index(t) for t in tokens]]  # (n, d): a repeated word, a repeated row
        u = np.random.default_rng(10_000 + embed_seed).normal(size=self.d)
        self.direction = u / np.sqrt(np.mean(u * u))  # (d,), root mean square 1: the nudge direction
        self.P = _positions.sinusoidal_positions(n, self.d)  # (n, d)
        narrow = widgets.Layout(width="250px")
        controls = {
            "mask": widgets.Dropdown(options=[(_(m), m) for m in self.MASKS], value=mask, description=_("mask"),
                                     layout=widgets.Layout(width="230px")),
            "n_real": widgets.IntSlider(value=n_real, min=1, max=n, description=_("real tokens"),
                                        layout=narrow, style={"description_width": "80px"}),
            "D": widgets.IntSlider(value=D, min=0, max=max(1, n - 1), description=_("D (window)"),
                                   layout=narrow, style={"description_width": "80px"}),
            "positions": widgets.Checkbox(value=positions, description=_("add positions P"),
                                          indent=False, layout=widgets.Layout(width="150px")),
            "seed": widgets.IntSlider(value=seed, min=0, max=50, description=_("seed"), layout=narrow,
                                      style={"description_width": "80px"}),
            "token": widgets.Dropdown(options=[(f"{i}: {t}", i) for i, t in enumerate(tokens)],
                                      value=token, description=_("edit token"),
                                      layout=widgets.Layout(width="230px")),
            "nudge": widgets.FloatSlider(value=float(nudge), min=-2.0, max=2.0, step=0.1, description=_("nudge"),
                                         readout_format="+.1f", layout=narrow,
                                         style={"description_width": "80px"}),
        }
        fig = Figure(figsize=(9.6, 1.2 + 0.5 * n), layout="constrained")
        self._build_figure(fig)
        self._assemble(controls, None, fig, dpi=80 if n <= 8 else 72)
        dynamic = [self._hm.image, self._hm.grid] + ([self._hm.text_batch] if self._hm.text_batch else [])
        # the titles name the mask and the edited token: redrawn on each change, not part of the
        # background (a new mask or token was a full redraw, 90 - 110 ms in-process)
        # the bars' x axis (ticks, numbers, label) too: a seed, mask or token that changes the
        # bars' scale redraws it with the bars, not the whole figure (issue 36: such a step was a
        # full render, ~8x a nudge step in-process, and a press that came meanwhile waited for it)
        self.live.set_dynamic(dynamic + list(self._bars) + list(self._bar_texts)
                              + [self._hm.ax.title, self._ax_b.title, self._ax_b.xaxis])
        self.update()

    def _top_controls(self):
        c = self.controls
        row1 = widgets.HBox([c["mask"], c["n_real"], c["D"], c["positions"]])
        row2 = widgets.HBox([c["token"], c["nudge"], c["seed"]])
        return [widgets.VBox([row1, row2])]

    def _build_figure(self, fig: Figure) -> None:
        n = self.n
        ax_w, ax_b = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        self._hm = heatmap(np.full((n, n), 1.0 / n), query_labels=self.tokens, key_labels=self.tokens,
                           ax=ax_w, title=_("weights"))
        y = np.arange(n)
        self._bars = ax_b.barh(y, np.zeros(n), height=0.6, color=OKABE_ITO[0])
        self._bar_texts = [add_fast_text(ax_b, 0.0, i, "", va="center", ha="left", fontsize=9) for i in y]
        ax_b.set_yticks(y)
        ax_b.set_yticklabels(self.tokens)
        ax_b.set_ylim(n - 0.5, -0.5)  # the same rows as the heatmap, top to bottom
        ax_b.set_xlabel(_("|change of the output row|"))
        ax_b.spines[["top", "right"]].set_visible(False)
        self._ax_b = ax_b

    def _mask(self) -> np.ndarray | None:
        c = self.controls
        kind, n = c["mask"].value, self.n
        if kind == "none":
            return None
        m = np.ones((n, n), dtype=bool)
        if "causal" in kind:
            m &= _masks.causal_mask(n)
        if "padding" in kind:
            m &= _masks.padding_mask(int(c["n_real"].value), n)  # (1, n): pad keys, for every query
        if kind == "local window":
            m &= _masks.window_mask(n, n, center=np.arange(n), D=int(c["D"].value))
        return m

    def _compute(self) -> dict:
        c = self.controls
        kind = c["mask"].value
        c["n_real"].disabled = "padding" not in kind
        c["D"].disabled = kind != "local window"
        X = self.X0 + (self.P if c["positions"].value else 0.0)  # (n, d)
        t = int(c["token"].value)
        W_q, W_k, W_v = random_projections(self.d, int(c["seed"].value))
        mask = self._mask()

        def nudged(amount: float):
            """Token t moved by ``amount`` along the nudge direction: (inputs, output, weights)."""
            Xa = X.copy()
            Xa[t] += amount * self.direction
            return (Xa, *_attention.self_attention(Xa, W_q, W_k, W_v, mask=mask))  # (n, d), (n, d), (n, n)

        Xn, out, w = nudged(float(c["nudge"].value))
        _, base, _ = nudged(0.0)
        change = np.sqrt(np.sum((out - base) ** 2, axis=1))  # (n,)
        # the largest move over the slider's whole range fixes the bars' scale while dragging
        reach = max(float(np.sqrt(np.sum((nudged(end)[1] - base) ** 2, axis=1)).max())
                             for end in (c["nudge"].min, c["nudge"].max))
        full = np.ones((self.n, self.n), dtype=bool) if mask is None else mask
        return {"X": Xn, "mask": full, "weights": w, "output": out, "output_base": base,
                "change": change, "reach": reach}

    def _draw(self, st: dict) -> None:
        c = self.controls
        kind = c["mask"].value
        update_heatmap(self._hm, st["weights"], mask=None if kind == "none" else st["mask"])
        extra = " + " + _("positions") if c["positions"].value else ""
        self._hm.ax.set_title(_("weights, mask: {kind}").format(kind=_(kind)) + extra)  # the menu's words
        ch = st["change"]
        # one range for the whole nudge slider (room for the value labels), kept while it fits
        # and a quarter of it is used: a drag of the nudge (or, mostly, of the seed) redraws just
        # the bars, not the axes; every bar carries its value, so a shorter bar stays readable
        need = nice_limit(np.array([st["reach"], *ch]), minimum=0.5, room=1.3)
        left, lim = self._ax_b.get_xlim()
        if left != 0.0 or need > lim or need < 0.25 * lim:
            lim = need
            self._ax_b.set_xlim(0, lim)
        for b, txt, v in zip(self._bars, self._bar_texts, ch, strict=True):
            b.set_width(v)
            txt.set_x(v + 0.02 * lim)
            txt.set_text("0" if v < 1e-12 else f"{v:.2f}")
        t = int(c["token"].value)
        self._ax_b.set_title(_("which output rows move\nwhen “{token}” (token {t}) is nudged").format(token=self.tokens[t], t=t),
                             fontsize=10.5)
