"""vision.synth.render_generic: the invented game's printings that the look network also learns from."""

from pathlib import Path

import numpy as np
import pytest

from vision.synth.render import CARD_H, CARD_W, FONTS, _corner_alpha
from vision.synth.render_generic import CONFUSABLE, LABELS, GenericStyle, label_index, pick_labels, render_generic, split_suit


def test_same_seed_same_printing_and_faces():
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    style_a, style_b = GenericStyle.sample(a), GenericStyle.sample(b)
    assert style_a == style_b
    np.testing.assert_array_equal(render_generic("+6", a, style_a), render_generic("+6", b, style_b))
    assert pick_labels(a, 8) == pick_labels(b, 8)


@pytest.mark.parametrize("label", LABELS)
def test_every_label_is_drawn_as_a_card_face_with_its_own_symbol(label):
    rng = np.random.default_rng(LABELS.index(label))
    for _ in range(3):
        style = GenericStyle.sample(rng)
        face = render_generic(label, np.random.default_rng(1), style)
        assert face.shape == (CARD_H, CARD_W, 4) and face.dtype == np.uint8
        np.testing.assert_array_equal(face[..., 3], _corner_alpha())
        other = LABELS[(LABELS.index(label) + 1) % len(LABELS)]
        # Same printing, same per-copy noise: only the symbol (and what goes with it) differs.
        assert np.abs(face.astype(int) - render_generic(other, np.random.default_rng(1), style)).mean() > 0.5


def test_only_training_fonts_are_used():
    rng = np.random.default_rng(3)
    train = {str(Path(f).name) for f in FONTS["train"]}
    for _ in range(200):
        style = GenericStyle.sample(rng)
        assert Path(style.font).name in train and Path(style.word_font).name in train


def test_unknown_label_is_refused():
    with pytest.raises(ValueError, match="not a generic label"):
        render_generic("red-7", np.random.default_rng(0), GenericStyle.sample(np.random.default_rng(0)))


def test_picked_labels_are_distinct_and_often_confusable():
    rng = np.random.default_rng(5)
    with_group = 0
    for _ in range(200):
        picked = pick_labels(rng, 8)
        assert len(picked) == 8 == len(set(picked)) and set(picked) <= set(LABELS)
        with_group += any(len(set(picked) & set(group)) >= 2 for group in CONFUSABLE)
    assert with_group >= 150


def test_six_and_nine_differ_when_turned():
    """A turned 9 must not look like a 6 of the same printing (both marked, as real decks do)."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        style = GenericStyle.sample(rng)
        six = render_generic("6", np.random.default_rng(2), style)[..., :3].astype(int)
        nine = render_generic("9", np.random.default_rng(2), style)[..., :3].astype(int)
        assert np.abs(six - nine[::-1, ::-1]).mean() > 0.5


def _suited_style(seed: int) -> GenericStyle:
    rng = np.random.default_rng(seed)
    while (style := GenericStyle.sample(rng)).colour_mode != "suits":
        pass
    return style


def test_a_printing_of_suits_deals_symbols_in_several_suits_told_apart_by_colour_alone():
    """UNO's red 7 and orange 7 differ only in colour: the look network must see such twins."""
    rng = np.random.default_rng(8)
    for seed in range(20):
        style = _suited_style(seed)
        assert 2 <= len(style.suits) <= 4
        picked = pick_labels(rng, 8, style)
        assert len(picked) == 8 == len(set(picked)) == len({label_index(lab) for lab in picked})
        symbols = [split_suit(lab)[0] for lab in picked]
        assert all(split_suit(lab)[1] is not None for lab in picked)
        assert max(symbols.count(sym) for sym in symbols) >= 2  # colour twins among them
        sym = max(symbols, key=symbols.count)
        a, b = [lab for lab in picked if split_suit(lab)[0] == sym][:2]
        face_a = render_generic(a, np.random.default_rng(1), style)[..., :3].astype(int)
        face_b = render_generic(b, np.random.default_rng(1), style)[..., :3].astype(int)
        # Same symbol, same copy noise: what differs is the suit's colour.
        assert np.abs(face_a - face_b).max(axis=2).mean() > 1.0
    with pytest.raises(ValueError, match="not a generic label"):
        render_generic(f"7@{len(style.suits)}", np.random.default_rng(0), style)


def test_suited_labels_number_apart_from_plain_ones():
    assert label_index("7") == LABELS.index("7") and split_suit("7") == ("7", None)
    assert split_suit("+6@2") == ("+6", 2) and label_index("+6@2") == LABELS.index("+6") + 3 * len(LABELS)


def test_zeros_are_slashed_or_dotted_in_some_printings_and_the_mark_is_inked():
    from dataclasses import replace

    from vision.synth.render import FONT_DIR, ZERO_MARKS, _glyph_mask

    marks = [GenericStyle.sample(np.random.default_rng(seed)).zero for seed in range(300)]
    assert set(marks) == set(ZERO_MARKS) and 0.4 < marks.count("plain") / len(marks) < 0.7
    font = str(FONT_DIR / FONTS["train"][0])
    plain = _glyph_mask(font, "+10")
    for zero in ("slashed", "dotted"):
        marked = _glyph_mask(font, "+10", zero=zero)
        assert marked.shape == plain.shape  # the mark lies inside the zero: the glyph's box is unchanged
        assert marked.sum() > plain.sum() + 20  # ink added ...
        assert np.abs(marked[:, : marked.shape[1] // 2] - plain[:, : plain.shape[1] // 2]).max() < 1e-6  # ... in the 0 only
    # The same printing with its zeros marked: the 0 face changes, a face without a 0 does not.
    style = replace(GenericStyle.sample(np.random.default_rng(3)), zero="plain")
    for label, changes in (("0", True), ("+10", True), ("8", False)):
        faces = [render_generic(label, np.random.default_rng(1), replace(style, zero=z)) for z in ("plain", "slashed")]
        assert (np.abs(faces[0].astype(int) - faces[1]).mean() > 0.2) == changes


def test_the_training_renderer_draws_zeros_as_the_font_has_them(monkeypatch):
    import vision.synth.render as render
    from vision.synth.render import FONT_DIR, _fit_mask, _glyph_mask

    # The deck renderers never mark a zero: the mark is the generic printings' alone.
    def refuse(*args, **kwargs):
        raise AssertionError("a training card's zero was marked")

    with monkeypatch.context() as patch:
        patch.setattr(render, "_mark_zeros", refuse)
        render._glyph_mask.cache_clear()
        for deck, label in (("flip7", "0"), ("flip7", "10"), ("flip7", "+10"), ("flip7-vengeance", "10")):
            for seed in range(3):
                render.render_card(deck, label, np.random.default_rng(seed))
    render._glyph_mask.cache_clear()

    font = str(FONT_DIR / FONTS["train"][0])
    np.testing.assert_array_equal(_glyph_mask(font, "10"), _glyph_mask(font, "10", 0, 0.0, "plain"))
    assert _fit_mask(font, "10", 60, 40).shape == _fit_mask(font, "10", 60, 40, zero="dotted").shape
    with pytest.raises(ValueError, match="unknown zero mark"):
        _glyph_mask(font, "0", zero="crossed")
