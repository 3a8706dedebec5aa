"""The widgets package: every documented name imports from its documented path (the size of every
module of the package is held by tests/test_package_layout.py)."""

import importlib
from pathlib import Path

import pytest

import attention_kit

PUBLIC = {
    "attention_kit.widgets": ["VectorParseError", "parse_vector", "format_vector", "VectorEditor",
                              "LiveFigure", "encode_png", "AttentionExplorer",
                              "SelfAttentionExplorer", "MultiHeadExplorer", "MaskExplorer",
                              "AttentionTrainer", "TrainingMonitor", "TilingStepper", "HeadView",
                              "RopeExplorer", "HeadExplorer", "PhaseChangeViewer"],
    "attention_kit.widgets.parsing": ["VectorParseError", "parse_vector", "format_vector"],
    "attention_kit.plotting.fast_artists": ["CellImage", "FastText", "TextBatch", "add_fast_text",
                                            "glyphs"],
    "attention_kit.widgets.editor": ["VectorEditor"],
    "attention_kit.widgets.live_figure": ["LiveFigure", "picture_first"],
    "attention_kit.widgets.raster": ["encode_png", "text_cached", "data_url"],
    "attention_kit.widgets.announce": ["ANNOUNCE_LINES", "ANNOUNCE_WORDS", "announcement_for"],
    "attention_kit.widgets.draw_ops": ["record_ops", "Unsupported"],
    "attention_kit.widgets.kernel_status": ["quiet_control_status", "kernel_loop"],
    "attention_kit.widgets.base": ["Explorer"],
    "attention_kit.widgets.axes": ["nice_limit", "plane", "steady_limits", "steady_box",
                                   "random_projections", "widest_first"],
    "attention_kit.widgets.messages": ["MessageLabel", "friendly"],
    "attention_kit.widgets.general_attention": ["AttentionExplorer"],
    "attention_kit.widgets.self_attention": ["SelfAttentionExplorer"],
    "attention_kit.widgets.multi_head": ["MultiHeadExplorer"],
    "attention_kit.widgets.masks": ["MaskExplorer"],
    "attention_kit.widgets.trainer": ["AttentionTrainer", "TrainingMonitor"],
    "attention_kit.widgets.tiling": ["TilingStepper"],
    "attention_kit.widgets.head_view": ["HeadView"],
    "attention_kit.widgets.rope": ["RopeExplorer"],
    "attention_kit.widgets.heads": ["HeadExplorer", "PhaseChangeViewer", "SCORES"],
}
PACKAGE = Path(attention_kit.__file__).parent


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_documented_names_import(module):
    mod = importlib.import_module(module)
    for name in PUBLIC[module]:
        assert hasattr(mod, name), f"{module} has no {name}"


def test_package_reexports_the_explorers_classes_themselves():
    from attention_kit import widgets
    from attention_kit.widgets.masks import MaskExplorer
    from attention_kit.widgets.multi_head import MultiHeadExplorer

    assert widgets.MaskExplorer is MaskExplorer
    assert widgets.MultiHeadExplorer is MultiHeadExplorer
    assert set(widgets.__all__) == set(PUBLIC["attention_kit.widgets"]) | set(
        n for n in widgets.__all__ if n not in PUBLIC["attention_kit.widgets"])


def test_old_single_file_is_gone():
    assert not (PACKAGE / "widgets.py").exists()
    assert (PACKAGE / "widgets" / "__init__.py").exists()


def test_every_public_name_of_the_package_is_listed_here():
    from attention_kit import widgets

    missing = [n for n in widgets.__all__ if n not in PUBLIC["attention_kit.widgets"]]
    assert not missing, f"add {missing} to PUBLIC with their documented module"
