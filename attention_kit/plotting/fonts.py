"""A font for the figures' Chinese text (the Chinese edition).

matplotlib's default font, DejaVu Sans, has no Chinese glyphs. In Chinese (``ATTENTION_KIT_LANG=zh``
or the folder's marker file), importing :mod:`attention_kit.plotting` calls :func:`use_cjk_font`,
which adds the first Chinese font this machine has to the *end* of ``rcParams["font.family"]``:
matplotlib (>= 3.6) then draws every glyph in the first font of the list that has it, so Latin
letters, digits and signs stay DejaVu Sans, as in the English figures, and only the Chinese
characters come from the Chinese font. In English nothing is changed.

The fonts looked for, in order (:data:`CJK_FAMILIES`): Noto Sans CJK SC / Source Han Sans SC (Debian's
and Ubuntu's ``fonts-noto-cjk``, which Binder installs from ``apt.txt`` and CI from ``.ci/run``),
the fonts Windows and macOS ship (Microsoft YaHei, PingFang SC, Hiragino Sans GB, Heiti), the
WenQuanYi fonts, ... A font installed after matplotlib built its font cache is found too: the
system's font files whose names look Chinese are added for this session.

With none of them, the figures still draw (the Chinese as empty boxes), matplotlib's warning per
missing glyph is silenced, and one :class:`MissingCJKFontWarning` says how to install a font.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["CJK_FAMILIES", "MissingCJKFontWarning", "cjk_family", "use_cjk_font"]

#: Chinese font families, the first one found is used: simplified Chinese ones first, then
#: Japanese and pan-Unicode ones whose glyphs cover Chinese (matplotlib < 3.10 reads only the first
#: face of a ``.ttc`` collection, which for Noto Sans CJK is the Japanese one).
CJK_FAMILIES = (
    "Noto Sans CJK SC", "Source Han Sans SC", "Noto Sans SC", "Source Han Sans CN",
    "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC", "STHeiti",
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Droid Sans Fallback", "SimHei", "Heiti TC",
    "Noto Sans CJK JP", "Source Han Sans", "Noto Sans CJK TC", "Arial Unicode MS",
)

#: Parts of font file names (lower case, without spaces, dashes and underscores) that hold one of
#: :data:`CJK_FAMILIES`: looked for when matplotlib's font cache knows none of them.
_FILE_HINTS = ("notosanscjk", "notosanssc", "sourcehansans", "msyh", "pingfang", "hiraginosansgb",
               "stheiti", "heiti", "wqy", "droidsansfallback", "simhei", "arialuni")

#: matplotlib's warning for a character its fonts cannot draw (silenced when no Chinese font exists:
#: one per character and figure would bury the notebook).
_MISSING_GLYPH = r"Glyph \d+ .*missing from"

_warned = False


class MissingCJKFontWarning(UserWarning):
    """No Chinese font was found: the figures' Chinese text is drawn as empty boxes."""


def _known_family() -> str | None:
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    return next((f for f in CJK_FAMILIES if f in names), None)


def _squash(name: str) -> str:
    return name.lower().replace(" ", "").replace("-", "").replace("_", "")


def cjk_family() -> str | None:
    """The Chinese font family matplotlib will use here, or None when the machine has none.

    Looks in matplotlib's font cache, then among the system's font files (a font installed after
    the cache was built: ``fonts-noto-cjk`` on a machine where matplotlib already ran)."""
    found = _known_family()
    if found is not None:
        return found
    from matplotlib import font_manager

    try:
        files = font_manager.findSystemFonts()
    except Exception:  # an unreadable font folder: nothing more to find
        return None
    added = False
    for path in files:
        if any(h in _squash(os.path.basename(path)) for h in _FILE_HINTS):
            try:
                font_manager.fontManager.addfont(path)
                added = True
            except Exception:  # a file FreeType cannot read: try the next
                continue
    return _known_family() if added else None


def _install_hint() -> str:
    from ..i18n import _

    return _("No Chinese font found for matplotlib: the Chinese text in the figures will show as "
             "empty boxes. Install one and restart the kernel: on Debian or Ubuntu "
             "`sudo apt-get install fonts-noto-cjk`, on Fedora `sudo dnf install "
             "google-noto-sans-cjk-fonts`, on Arch `sudo pacman -S noto-fonts-cjk`; Windows and "
             "macOS come with one (Microsoft YaHei, PingFang SC). Fonts looked for: {families}."
             ).format(families=", ".join(CJK_FAMILIES))


def use_cjk_font() -> str | None:
    """Let matplotlib draw Chinese: append this machine's Chinese font to ``rcParams["font.family"]``
    (Latin text keeps the fonts before it). Returns the family, or None when there is none; then
    warns once (:class:`MissingCJKFontWarning`) how to install one, and silences matplotlib's
    warning per missing glyph. Calling it again changes nothing more."""
    global _warned
    import matplotlib as mpl

    family = cjk_family()
    if family is None:
        warnings.filterwarnings("ignore", message=_MISSING_GLYPH, category=UserWarning)
        if not _warned:
            _warned = True
            warnings.warn(_install_hint(), MissingCJKFontWarning, stacklevel=2)
        return None
    families = list(mpl.rcParams["font.family"])
    if family not in families:
        mpl.rcParams["font.family"] = families + [family]
    return family
