"""``HeadView`` (notebook 06): inside a trained language model, in the spirit of BertViz.

The context typed in a text box is run through the model. Left: the tokens twice, queries on the
left and keys on the right, joined by lines whose strength is one head's attention weight (a
selected query's lines stand out). Middle: the same weights as a heatmap, the selected query's row
framed. Right: the model's probabilities for the next token.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..decoder.tiny_lm import TinyLMConfig, head_weights, next_token_probs
from ..i18n import N_, _
from ..learn.corpus import UnknownWordError, Vocab
from ..plotting import OKABE_ITO, WEIGHTS_CMAP, heatmap, update_heatmap
from .axes import widest_first
from .base import Explorer, control_words

__all__ = ["HeadView"]

TOP_K = 8


class HeadView(Explorer):
    """Attention lines, heatmap and next-token bars of a trained tiny language model.

    Parameters
    ----------
    params : dict of ndarrays
        The model's parameters (e.g. from ``load_pretrained()``).
    config : TinyLMConfig
    vocab : Vocab
    context : str
        The first text to show, e.g. ``"humpty dumpty sat on"``.
    layer, head : int
        Counted from 0 in code; the menus show them from 1.
    token : int
        The query to highlight (-1: the last token; None: no highlight).

    Attributes
    ----------
    state : dict
        ``tokens`` (list of str), ``weights`` (n, n) of the shown head, ``probs`` (vocab_size,),
        ``top`` (the ``TOP_K`` most likely next words), ``token`` (the highlighted query or -1).
    """

    _PLAIN = N_("HeadView (interactive: run in JupyterLab to type a context and pick a head)")
    _scene_parts = ("_ax_lines", "_ax_heat", "_ax_cbar", "_ax_bars", "_lines", "_query_texts", "_hm",
                    "_frame")

    def __init__(self, params: dict, config: TinyLMConfig, vocab: Vocab, *,
                 context: str = "humpty dumpty sat on", layer: int = 0, head: int = 0,
                 token: int | None = -1):
        if not isinstance(config, TinyLMConfig) or not isinstance(vocab, Vocab):
            raise TypeError("give the model's params, its TinyLMConfig and its Vocab, "
                            "e.g. HeadView(*load_pretrained()[:2], vocab)")
        self.params, self.config, self.vocab = params, config, vocab
        self._ids = self._encode(context)
        n = len(self._ids)
        controls = {
            "layer": widgets.Dropdown(options=[(_("layer {k}").format(k=l + 1), l) for l in range(config.n_layers)],
                                      value=layer, description=_("layer"),
                                      layout=widgets.Layout(width="170px")),
            "head": widgets.Dropdown(options=[(_("head {k}").format(k=h + 1), h) for h in range(config.n_heads)],
                                     value=head, description=_("head"), layout=widgets.Layout(width="170px")),
            "token": widgets.Dropdown(options=self._token_options(self._ids), description=_("query"),
                                      value=(n - 1 if token == -1 else -1 if token is None else token),
                                      layout=widgets.Layout(width="230px")),
        }
        self.text = widgets.Text(value=context, continuous_update=False, description=_("context"),
                                 placeholder=_("e.g. humpty dumpty sat on"),
                                 layout=widgets.Layout(width="480px"))
        self.text.observe(self._text_changed, names="value")
        self.known = widgets.HTML(value="", layout=widgets.Layout(display="none", max_width="900px"))
        fig = Figure(figsize=(11.5, 4.6), layout="constrained")
        self._assemble(controls, None, fig, dpi=72)
        self.live.describe_extra = self._highlight_words
        self.children = (widgets.VBox([self.text, self.known]), *self.children)
        self._place_scenes(self._template())  # every context's panels go where the widest one's do
        self.update()

    # -- the context ---------------------------------------------------------------------------
    def _encode(self, text: str) -> np.ndarray:
        ids = self.vocab.encode(text)  # raises UnknownWordError with the list of known words
        return ids[-self.config.context:]

    def _token_options(self, ids):
        return [(_("none"), -1)] + [(f"{i + 1} {w}", i) for i, w in enumerate(self.vocab.decode(ids))]

    def set_context(self, text: str) -> bool:
        """Type ``text`` into the box and press Enter. Returns whether it was accepted."""
        if self.text.value == text:
            return self._apply_text(text)
        self.text.value = text
        return self.message == ""

    def _text_changed(self, change) -> None:
        if not self._busy:  # typed by the learner: the announcement starts "context <the words>"
            self.live.cause = control_words(self.text)
        self._apply_text(change["new"])

    def _apply_text(self, text: str) -> bool:
        try:
            ids = self._encode(text)
        except UnknownWordError as exc:
            self.error.value = "⚠ " + _("{headline}: type only words of the rhymes (the picture shows the "
                                        "last good context)").format(headline=exc.headline)
            self.known.value = ("<div style='font-size:12px;line-height:1.3'><b>" + _(
                "It knows only the {size} words of its rhymes:").format(size=exc.size) + f"</b> {exc.known}</div>")
            self.known.layout.display = None
            return False
        except Exception as exc:  # empty text and the like
            self.error.value = f"⚠ {exc}"
            return False
        self.known.value, self.known.layout.display = "", "none"
        self._ids = ids
        n = len(ids)
        with self.hold():  # (a new context is drawn in a figure of its own: see _draw)
            self.controls["token"].options = self._token_options(ids)
            self.controls["token"].value = n - 1
        return self.message == ""

    def _template(self) -> dict:
        """A state with the widest labels this model can show: its widest word at each of its
        ``context`` places, and its ``TOP_K`` widest words as the next-word bars."""
        order = widest_first(self.figure, self.vocab.words)
        n, top = self.config.context, order[:TOP_K]
        probs = np.zeros(len(self.vocab.words))
        probs[top] = 1.0 / TOP_K
        return {"tokens": [self.vocab.words[order[0]]] * n, "weights": np.full((n, n), 1.0 / n),
                "probs": probs, "top": top, "token": n - 1, "layer": 0, "head": 0}

    @property
    def tokens(self) -> list[str]:
        return self.vocab.decode(self._ids)

    def _signatures(self) -> tuple[tuple, tuple]:
        return (), ()  # the axes have fixed places; a new context lays them out again

    def _highlight_words(self) -> list[str]:
        """The query menu's choice in words (the picture shows it by a frame, bold type and
        fainter lines for the other queries): the explorer's description says it first."""
        st = self.state
        if not st:
            return []
        sel = int(st["token"])
        if sel < 0:
            return [_("No query highlighted: every query's lines are drawn alike.")]
        w = st["weights"][sel]
        j = int(np.argmax(w))
        return [_("Highlighted query {q} “{query}” (framed row, bold word, its lines drawn strong): "
                  "largest weight {w} on key {k} “{key}”.").format(q=sel + 1, query=st["tokens"][sel],
                                                                  w=f"{w[j]:.2f}", k=j + 1, key=st["tokens"][j])]

    # -- compute and draw ----------------------------------------------------------------------
    def _compute(self) -> dict:
        c = self.controls
        l, h = int(c["layer"].value), int(c["head"].value)
        w = head_weights(self.params, self.config, self._ids)[l][h]  # (n, n)
        probs = next_token_probs(self.params, self.config, self._ids)  # (V,)
        top = np.argsort(-probs, kind="stable")[:TOP_K]
        tok = c["token"].value
        return {"tokens": self.tokens, "weights": w, "probs": probs, "top": top,
                "token": int(tok), "layer": l, "head": h}

    def _draw(self, st: dict) -> None:
        # a new context: new labels, new panels, in a figure of its own, kept for when the learner
        # comes back to that context (Explorer._show_scene; a new layout costs ~0.2 s in-process)
        self._show_scene(tuple(st["tokens"]), lambda: self._build(st))
        self._update_artists(st)

    def _line_segments(self, w: np.ndarray, sel: int, colour: str):
        """The query -> key lines of weights above 0.01: segments, RGBA colours, widths."""
        i, j = np.nonzero(w > 0.01)
        segs = [[(0.08, a), (0.92, b)] for a, b in zip(i, j, strict=True)]
        rgba = np.zeros((len(segs), 4))
        rgba[:, :3] = [int(colour[k:k + 2], 16) / 255 for k in (1, 3, 5)]
        faint = (sel >= 0) & (i != sel)  # another query's lines, when one is selected
        rgba[:, 3] = w[i, j] * np.where(faint, 0.12, 1.0)
        return segs, rgba, 0.5 + 4.5 * w[i, j]

    def _build(self, st: dict) -> None:
        """Draw every panel for a new context; the artists that follow the menus are then
        updated in place and sent to the page as drawing commands (LiveFigure.set_dynamic)."""
        toks, w = st["tokens"], st["weights"]
        n = len(toks)
        gs = self.figure.add_gridspec(1, 4, width_ratios=[1.0, 1.3, 0.05, 0.8])
        self._ax_lines, self._ax_heat, self._ax_cbar, self._ax_bars = (
            self.figure.add_subplot(gs[0, k]) for k in range(4))
        self.figure.colorbar(ScalarMappable(norm=Normalize(0, 1), cmap=WEIGHTS_CMAP),
                             cax=self._ax_cbar, label=_("attention weight"))
        # lines: query i (left, x = 0) to key j (right, x = 1), strength = weight
        ax = self._ax_lines
        self._lines = LineCollection([], linewidths=1.0)
        ax.add_collection(self._lines)
        self._query_texts = [ax.text(0.06, i, t, ha="right", va="center", fontsize=10)
                             for i, t in enumerate(toks)]
        for i, t in enumerate(toks):
            ax.text(0.94, i, t, ha="left", va="center", fontsize=10)
        for x, ha, name in ((0.06, "right", _("query")), (0.94, "left", _("key"))):
            ax.text(x, -0.9, name, ha=ha, va="center", fontsize=9, color="0.4", style="italic")
        ax.set_xlim(-0.55, 1.55)
        ax.set_ylim(max(n, 6) - 0.5, -1.2)
        ax.axis("off")
        ax.set_title(_("layer {layer}, head {head}: query → key").format(layer=1, head=1), fontsize=11)
        # heatmap, the selected query's row framed
        labels = [f"{i + 1} {t}" for i, t in enumerate(toks)]
        self._hm = heatmap(w, query_labels=labels, key_labels=toks, ax=self._ax_heat,
                           annotate=n <= 8, title=_("weights (rows: queries)"), cbar=False)
        self._frame = self._ax_heat.add_patch(Rectangle((-0.5, -0.5), n, 1, fill=False,
                                                        ec=OKABE_ITO[5], lw=2.5))
        # next-token probabilities (they depend on the context only), most likely on top
        ax = self._ax_bars
        top, p = st["top"], st["probs"][st["top"]]
        y = np.arange(len(top))
        ax.barh(y, p, color=OKABE_ITO[0])
        ax.set_yticks(y, [self.vocab.words[i] for i in top], fontsize=10)
        ax.set_ylim(len(top) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        for yi, pi in zip(y, p, strict=True):
            inside = pi > 0.8  # a long bar carries its number inside, in white
            ax.text(pi - 0.02 if inside else pi + 0.02, yi, f"{pi:.2f}", va="center", fontsize=9,
                    ha="right" if inside else "left", color="white" if inside else "black")
        ax.set_title(_("next word after “{word}”").format(word=toks[-1]), fontsize=11)
        ax.set_xlabel(_("probability"))
        hm = self._hm
        self.live.set_dynamic([self._lines, *self._query_texts, self._ax_lines.title, hm.image,
                               hm.grid, *([hm.text_batch] if hm.text_batch else []), self._frame])

    def _update_artists(self, st: dict) -> None:
        """The head's lines, the bold query, the title, the heatmap and its frame."""
        w, sel = st["weights"], st["token"]
        colour = OKABE_ITO[st["head"] % len(OKABE_ITO)]
        segs, rgba, widths = self._line_segments(w, sel, colour)
        self._lines.set_segments(segs)
        self._lines.set_color(rgba)
        self._lines.set_linewidths(widths)
        for i, t in enumerate(self._query_texts):
            t.set_fontweight("bold" if i == sel else "normal")
        self._ax_lines.title.set_text(_("layer {layer}, head {head}: query → key")
                                      .format(layer=st["layer"] + 1, head=st["head"] + 1))
        update_heatmap(self._hm, w)
        self._frame.set_visible(sel >= 0)
        self._frame.set_y(sel - 0.5)
