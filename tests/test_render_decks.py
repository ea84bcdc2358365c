"""The Flip 7: Vengeance and UNO Flip face renderers (vision/synth/render_vengeance.py, vision/synth/render_uno.py)."""

import colorsys

import numpy as np
import pytest

from rules.cards import DECKS, UNO_DARK_COLORS, UNO_DARK_SYMBOLS, UNO_LIGHT_COLORS, UNO_LIGHT_SYMBOLS
from vision.synth import render_uno, render_vengeance
from vision.synth.render import CARD_H, CARD_W, RENDERERS, CardStyle, render_card

DECK_IDS = ("flip7-vengeance", "uno-flip")


@pytest.mark.parametrize("deck", DECK_IDS)
@pytest.mark.parametrize("split", ["train", "heldout"])
def test_every_label_renders_a_rounded_portrait_card(deck, split):
    rng = np.random.default_rng(11)
    style = CardStyle.sample(rng, split)
    faces = {}
    for label in DECKS[deck].labels:
        face = render_card(deck, label, rng, style)
        assert face.shape == (CARD_H, CARD_W, 4) and face.dtype == np.uint8
        assert face[0, 0, 3] == 0 and face[-1, -1, 3] == 0           # rounded corners are transparent
        assert face[CARD_H // 2, CARD_W // 2, 3] == 255 and face[CARD_H // 2, 0, 3] == 255
        faces[label] = face[::4, ::4, :3].astype(np.int16)
    # No silent fallback face: any two labels of one printing give clearly different pictures.
    labels = list(faces)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert np.abs(faces[a] - faces[b]).mean() > 3, (a, b)


@pytest.mark.parametrize("deck,label", [("flip7-vengeance", "unlucky-7"), ("uno-flip", "pink-skip-everyone"),
                                        ("uno-flip", "wild")])
def test_renderer_is_deterministic_by_seed(deck, label):
    a = render_card(deck, label, np.random.default_rng(5))
    b = render_card(deck, label, np.random.default_rng(5))
    c = render_card(deck, label, np.random.default_rng(6))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_decks_are_registered_and_label_lists_match_the_rules_decks():
    assert set(DECK_IDS) <= set(RENDERERS)
    # Vengeance: every label has exactly one kind of face.
    numbers = {str(n) for n in render_vengeance.NUMBER_COLORS}
    kinds = [numbers, set(render_vengeance.LABELS_SPECIAL), set(render_vengeance.MALUS),
             set(render_vengeance.ACTIONS)]
    assert sum(len(k) for k in kinds) == len(DECKS["flip7-vengeance"].labels) == 27
    assert set().union(*kinds) == set(DECKS["flip7-vengeance"].labels)
    assert set(render_vengeance.ACTION_WORDS) == set(render_vengeance.ACTIONS)
    # UNO Flip: 108 faces, each a known colour with a symbol of its side, or one of the four wilds.
    labels = DECKS["uno-flip"].labels
    assert len(labels) == 108
    parsed = [render_uno._parse(label) for label in labels]
    assert sum(c is None for c, _ in parsed) == 4
    for colour, symbol in parsed:
        if colour in UNO_LIGHT_COLORS:
            assert symbol.isdigit() or symbol in UNO_LIGHT_SYMBOLS
        elif colour in UNO_DARK_COLORS:
            assert symbol.isdigit() or symbol in UNO_DARK_SYMBOLS
    assert set(render_uno.FIELD_COLORS) == set(UNO_LIGHT_COLORS) | set(UNO_DARK_COLORS)


def test_renderer_rejects_labels_of_another_deck():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        render_card("flip7-vengeance", "0", rng)       # the Vengeance 0 is "zero"
    with pytest.raises(ValueError):
        render_card("uno-flip", "pink-skip", rng)      # the dark side has skip-everyone


def _field_hue(face: np.ndarray) -> float:
    """Hue (degrees) of the UNO field just inside the top border, between the corner copy and the logo
    and above the oval."""
    r, g, b = np.clip(np.median(face[20:26, 90:140, :3].reshape(-1, 3), axis=0) / 255.0, 0, 1)
    return colorsys.rgb_to_hsv(r, g, b)[0] * 360


def _hue_gap(a: np.ndarray, b: np.ndarray) -> float:
    d = np.abs(a[:, None] - b[None, :]) % 360
    return float(np.minimum(d, 360 - d).min())


@pytest.mark.parametrize("side", [UNO_LIGHT_COLORS, UNO_DARK_COLORS])
def test_uno_colours_stay_apart_in_every_printing(side):
    """Colour is what tells red-7 from blue-7: across many printings (hue, saturation and value
    jitter of the style), the field hues of the four colours of one side never come near each
    other. 20 degrees leaves room for a camera's white balance."""
    rng = np.random.default_rng(3)
    styles = [CardStyle.sample(rng, "train" if i % 2 else "heldout") for i in range(24)]
    # The face before print and wear (a stain or scratch under the sampled spot is not the ink).
    hues = {c: np.array([_field_hue(render_uno.render_uno(f"{c}-5", rng, s)) for s in styles]) for c in side}
    for i, a in enumerate(side):
        for b in side[i + 1:]:
            assert _hue_gap(hues[a], hues[b]) > 20, (a, b)


def test_uno_six_and_nine_differ_upside_down():
    """A 6 turned over is not a 9: the underline is at the other end."""
    style = CardStyle.sample(np.random.default_rng(8), "train")
    for colour in ("red", "purple"):
        six = render_card("uno-flip", f"{colour}-6", np.random.default_rng(1), style)[..., :3].astype(int)
        nine = render_card("uno-flip", f"{colour}-9", np.random.default_rng(1), style)[..., :3].astype(int)
        centre = (slice(90, 262), slice(50, 202))
        turned = six[::-1, ::-1][centre]
        assert np.abs(turned - nine[centre]).mean() > 8


def test_vengeance_printing_does_not_depend_on_where_the_repository_lies():
    """A printing's stock and frame metal come from the style alone: the held-out cards and the
    deal video of a fresh clone elsewhere are the same pictures."""
    from dataclasses import replace

    style = CardStyle.sample(np.random.default_rng(9003), "heldout")
    moved = replace(style, numeral_font="/elsewhere/fonts/" + style.numeral_font.rsplit("/", 1)[-1],
                    word_font="/elsewhere/fonts/" + style.word_font.rsplit("/", 1)[-1])
    assert render_vengeance._stock(style) == render_vengeance._stock(moved)
    a = render_card("flip7-vengeance", "7", np.random.default_rng(1), style)
    b = render_card("flip7-vengeance", "7", np.random.default_rng(1), moved)
    assert np.array_equal(a, b)
