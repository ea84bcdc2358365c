"""Flip 7: Vengeance card faces for the renderer (docs/cards.md, "Flip 7: Vengeance").

The deck is the Flip 7 family of layouts with a darker theme: dark card stock, a metallic frame,
a large inline numeral in the number's colour and its word on a ribbon banner. The three special
number cards are told apart by colour, as docs/cards.md says ("specially coloured"): `zero` on pale
silver stock, `unlucky-7` on blood red with a black numeral, `lucky-13` on gold with a green
numeral, each with its name on the banner. Malus cards show `÷2` or `-N` large; action cards
show their name on banners (French edition: JUSTE UNE DERNIÈRE, ÉCHANGE, VOL, DÉFAUSSE, QUATRE À
LA SUITE; the French names of the special cards are from the French rulebook).

The style's second language ("de" for Flip 7) prints the French edition here: Vengeance was
published in French and English. Choices that belong to one printing of the deck (stock colour,
frame metal) are drawn from the style, so the cards of one scene share them.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.synth.render import (CARD_H, CARD_W, RENDERERS, RGB, CardStyle, _banner, _base, _corner_index, _fan,
                           _frame, _jitter, _mini_card, _poly, _shade, _styled_text)

LABELS_SPECIAL = ("zero", "unlucky-7", "lucky-13")
MALUS = ("/2", "-2", "-4", "-6", "-8", "-10")
ACTIONS = ("just-one-more", "swap", "steal", "discard", "flip-four")

# Numeral colours on the dark stock: bright inks, and none of them near the special cards'
# colours (a regular 7 must not look like the red Unlucky 7, a 13 not like the gold Lucky 13).
NUMBER_COLORS: dict[int, RGB] = {
    1: (170, 170, 196), 2: (176, 214, 60), 3: (232, 60, 96), 4: (30, 190, 190), 5: (70, 196, 90),
    6: (170, 100, 230), 7: (90, 170, 250), 8: (150, 236, 130), 9: (250, 160, 50), 10: (250, 90, 70),
    11: (80, 120, 250), 12: (200, 180, 150), 13: (236, 90, 200),
}
# Dark stocks: charcoal, navy, plum, bottle green, oxblood.
DARK_STOCKS: tuple[RGB, ...] = ((34, 34, 40), (22, 30, 58), (46, 24, 54), (20, 44, 38), (56, 22, 26))
METALS: tuple[RGB, ...] = ((200, 164, 80), (186, 190, 200), (176, 112, 70))  # gold, silver, copper

NUMBER_WORDS = {
    "en": ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN", "ELEVEN",
           "TWELVE", "THIRTEEN"),
    "fr": ("ZÉRO", "UN", "DEUX", "TROIS", "QUATRE", "CINQ", "SIX", "SEPT", "HUIT", "NEUF", "DIX", "ONZE",
           "DOUZE", "TREIZE"),
}
SPECIAL_WORDS = {
    "zero": {"en": "ZERO", "fr": "ZÉRO"},
    "unlucky-7": {"en": "UNLUCKY", "fr": "PORTE-MALHEUR"},
    "lucky-13": {"en": "LUCKY", "fr": "PORTE-BONHEUR"},
}
# Each action name as the lines of its banners.
ACTION_WORDS = {
    "just-one-more": {"en": ("JUST ONE", "MORE"), "fr": ("JUSTE UNE", "DERNIÈRE")},
    "swap": {"en": ("SWAP",), "fr": ("ÉCHANGE",)},
    "steal": {"en": ("STEAL",), "fr": ("VOL",)},
    "discard": {"en": ("DISCARD",), "fr": ("DÉFAUSSE",)},
    "flip-four": {"en": ("FLIP", "FOUR"), "fr": ("QUATRE", "À LA SUITE")},
}
ACTION_COLORS: dict[str, RGB] = {
    "just-one-more": (236, 150, 40), "swap": (40, 160, 210), "steal": (40, 150, 90),
    "discard": (120, 110, 150), "flip-four": (200, 50, 140),
}
MALUS_TEXT = {"en": ("MALUS", "PENALTY", "GIVE TO A PLAYER"), "fr": ("MALUS", "PÉNALITÉ", "À DONNER")}


def _language(style: CardStyle) -> str:
    return "en" if style.language == "en" else "fr"


def _printing(style: CardStyle) -> np.random.Generator:
    """Randomness fixed by the style: the same for every card of one printing, in any process and
    in any checkout (the fonts count by file name, not by the folder the repository lies in)."""
    key = replace(style, numeral_font=Path(style.numeral_font).name, word_font=Path(style.word_font).name)
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _stock(style: CardStyle) -> tuple[RGB, RGB]:
    """(dark card stock, frame metal) of this printing."""
    p = _printing(style)
    stock = np.array(DARK_STOCKS[p.integers(len(DARK_STOCKS))], float) + p.normal(0, 5, 3)
    metal = METALS[p.integers(len(METALS))]
    return tuple(int(v) for v in np.clip(stock, 8, 80)), _jitter(style, metal)


def _vignette(canvas: np.ndarray, strength: float) -> None:
    """Darker edges: the moody look of the Vengeance faces."""
    yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
    r = ((xx / CARD_W - 0.5) ** 2 + (yy / CARD_H - 0.5) ** 2) * 2
    canvas *= (1 - strength * r)[..., None]


def _number_face(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    lang = _language(style)
    stock, metal = _stock(style)
    if label == "zero":
        n, face, colour, outline = 0, (214, 218, 226), (60, 60, 72), (20, 20, 28)
        word = SPECIAL_WORDS[label][lang]
    elif label == "unlucky-7":
        n, face, colour, outline = 7, (150, 18, 24), (20, 14, 16), (236, 214, 200)
        word = SPECIAL_WORDS[label][lang]
    elif label == "lucky-13":
        n, face, colour, outline = 13, (222, 180, 60), (24, 110, 50), (250, 240, 200)
        word = SPECIAL_WORDS[label][lang]
    else:
        n = int(label)
        face, colour = stock, NUMBER_COLORS[n]
        outline = _shade(colour, 0.35) if rng.random() < 0.5 else _shade(colour, 1.6)
        word = NUMBER_WORDS[lang][n]
    face, colour, outline = _jitter(style, face), _jitter(style, colour), _jitter(style, outline)
    canvas = _base(style, face, rng)
    _vignette(canvas, float(rng.uniform(0.1, 0.45)))
    _frame(canvas, style, metal if label not in LABELS_SPECIAL else _shade(colour, 1.2), rng, deco=True)
    if style.ornaments:
        r = 22 + rng.uniform(-4, 6)
        y = CARD_H * rng.uniform(0.42, 0.55)
        for x, d in ((style.frame_inset * 4 + 4, 0), (CARD_W - 1 - style.frame_inset * 4 - 4, 180)):
            _fan(canvas, (x, y), r, d, colour, _shade(colour, 0.5), ribs=int(rng.integers(5, 9)))
        if label == "lucky-13":
            for _ in range(int(rng.integers(2, 5))):
                _clover(canvas, rng.uniform(40, CARD_W - 40), rng.uniform(40, CARD_H * 0.2), rng.uniform(10, 18),
                        _shade(colour, 1.3))
        elif label == "unlucky-7":
            _cracks(canvas, rng, _shade(face, 0.45))
        elif label == "zero":
            ring = [_jitter(style, c) for c in ((228, 40, 40), (245, 160, 30), (60, 170, 70), (40, 110, 200))]
            for k, c in enumerate(ring):
                _disc(canvas, CARD_W / 2 + (k - 1.5) * 26, CARD_H * 0.14, 9, c)
    text = str(n)
    nh = int(CARD_H * style.numeral_scale)
    nw = int(CARD_W * (0.62 if n < 10 else 0.78))
    ny = int(CARD_H * (0.44 + style.numeral_dy) - nh / 2)
    _styled_text(canvas, style.numeral_font, text, ((CARD_W - nw) // 2, ny, nw, nh), colour, outline,
                 outline_px=float(rng.uniform(2.5, 5.5)), inline=_shade(colour, 1.6) if rng.random() < 0.7 else None,
                 inline_rel=style.inline_width, squash=float(rng.uniform(0.85, 1.1)),
                 shadow=(0, 0, 0) if rng.random() < 0.5 else None, weight=style.numeral_weight,
                 slant=style.numeral_slant)
    if n in (6, 9) and rng.random() < 0.5:
        # Some printings underline the 6 and the 9 as well as placing the banner below them.
        y = ny + nh - 4
        _poly(canvas, [(CARD_W / 2 - 30, y), (CARD_W / 2 + 30, y), (CARD_W / 2 + 30, y + 7),
                       (CARD_W / 2 - 30, y + 7)], colour, outline, 1)
    banner = _shade(colour, 0.8) if label not in LABELS_SPECIAL else _shade(face, 0.55)
    text_colour = _shade(face, 1.8) if label not in LABELS_SPECIAL else (250, 246, 236)
    width = CARD_W * (rng.uniform(0.58, 0.7) if len(word) < 9 else rng.uniform(0.72, 0.8))
    _banner(canvas, style, rng, CARD_H * rng.uniform(0.76, 0.82), width, rng.uniform(30, 38), banner, word,
            text_colour)
    if style.corner_index:
        _corner_index(canvas, style, text, colour)
    return canvas


def _clover(canvas, cx, cy, s, color: RGB) -> None:
    for a in (0, 90, 180, 270):
        t = np.radians(a)
        _disc(canvas, cx + np.cos(t) * s * 0.5, cy + np.sin(t) * s * 0.5, s * 0.45, color)
    _poly(canvas, [(cx, cy), (cx + s * 0.2, cy + s * 1.2), (cx + s * 0.05, cy + s * 1.2)], color)


def _disc(canvas, cx, cy, r, color: RGB) -> None:
    t = np.linspace(0, 2 * np.pi, 20)
    _poly(canvas, np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], 1), color)


def _cracks(canvas, rng: np.random.Generator, color: RGB) -> None:
    """Broken-mirror lines radiating from a point: the Unlucky 7's bad omen."""
    c = np.array([rng.uniform(0.2, 0.8) * CARD_W, rng.uniform(0.1, 0.3) * CARD_H])
    for _ in range(int(rng.integers(5, 9))):
        p, a = c.copy(), rng.uniform(0, 2 * np.pi)
        for _ in range(4):
            a += rng.normal(0, 0.35)
            q = p + rng.uniform(10, 30) * np.array([np.cos(a), np.sin(a)])
            cv2.line(canvas, tuple(int(v) for v in p), tuple(int(v) for v in q), color, 1, cv2.LINE_AA)
            p = q


def _malus_face(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    lang = _language(style)
    stock, metal = _stock(style)
    face = _jitter(style, (70, 20, 60))  # deep purple-black: the malus family
    canvas = _base(style, face, rng)
    _vignette(canvas, float(rng.uniform(0.1, 0.4)))
    light = _jitter(style, (214, 120, 220))
    _frame(canvas, style, light if rng.random() < 0.6 else metal, rng, deco=bool(rng.random() < 0.6))
    if style.ornaments:
        r = 26 + rng.uniform(-4, 6)
        inset = style.frame_inset * 4 + 3
        _fan(canvas, (CARD_W / 2, inset), r, 90, _shade(face, 1.4), _shade(light, 0.7))
        _fan(canvas, (CARD_W / 2, CARD_H - 1 - inset), r, -90, _shade(face, 1.4), _shade(light, 0.7))
    red = _jitter(style, (236, 40, 50))
    text = "÷2" if label == "/2" else label
    nh = int(CARD_H * style.numeral_scale * 0.85)
    nw = int(CARD_W * 0.8)
    ny = int(CARD_H * (0.5 + style.numeral_dy * 0.5) - nh / 2)
    outline = (250, 240, 240) if rng.random() < 0.5 else (10, 6, 10)
    _styled_text(canvas, style.numeral_font, text, ((CARD_W - nw) // 2, ny, nw, nh), red, outline,
                 outline_px=float(rng.uniform(2.5, 5)), inline=light if rng.random() < 0.4 else None,
                 inline_rel=style.inline_width, weight=style.numeral_weight, slant=style.numeral_slant)
    ink = _shade(light, 1.2)
    for y in (CARD_H * 0.22, CARD_H * 0.78):
        line = MALUS_TEXT[lang][int(rng.integers(len(MALUS_TEXT[lang])))]
        _styled_text(canvas, style.word_font, line, (40, int(y - 9), CARD_W - 80, 18), ink, None, 0)
    return canvas


def _arrow(canvas, p0, p1, color: RGB, width: int, head: float) -> None:
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    d = (p1 - p0) / (np.linalg.norm(p1 - p0) + 1e-6)
    n = np.array([-d[1], d[0]])
    cv2.line(canvas, tuple(int(v) for v in p0), tuple(int(v) for v in p1 - d * head * 0.6), color, width,
             cv2.LINE_AA)
    _poly(canvas, [p1, p1 - d * head + n * head * 0.6, p1 - d * head - n * head * 0.6], color)


def _action_picture(canvas, label: str, rng: np.random.Generator, cx: float, cy: float, s: float,
                    face: RGB, edge: RGB) -> None:
    paper = (236, 232, 222)
    w = max(2, int(s * 0.06))
    if label == "just-one-more":
        _mini_card(canvas, cx, cy, s, rng.uniform(-10, 10), paper, edge)
        _arrow(canvas, (cx + s * 0.5, cy + s * 0.4), (cx + s * 0.5, cy - s * 0.5), edge, w, s * 0.25)
    elif label == "swap":
        _mini_card(canvas, cx - s * 0.45, cy, s * 0.8, -12, paper, edge)
        _mini_card(canvas, cx + s * 0.45, cy, s * 0.8, 12, _shade(face, 1.4), edge)
        _arrow(canvas, (cx - s * 0.4, cy - s * 0.6), (cx + s * 0.4, cy - s * 0.6), edge, w, s * 0.22)
        _arrow(canvas, (cx + s * 0.4, cy + s * 0.6), (cx - s * 0.4, cy + s * 0.6), edge, w, s * 0.22)
    elif label == "steal":
        _mini_card(canvas, cx - s * 0.2, cy, s, 8, paper, edge)
        # A grabbing hook pulling the card away.
        cv2.ellipse(canvas, (int(cx + s * 0.35), int(cy - s * 0.1)), (int(s * 0.25), int(s * 0.25)), 0, 180, 450,
                    edge, w + 1, cv2.LINE_AA)
        _arrow(canvas, (cx + s * 0.2, cy + s * 0.35), (cx + s * 0.9, cy + s * 0.35), edge, w, s * 0.22)
    elif label == "discard":
        # A card dropping into a bin.
        _poly(canvas, [(cx - s * 0.4, cy), (cx + s * 0.4, cy), (cx + s * 0.3, cy + s * 0.7), (cx - s * 0.3, cy + s * 0.7)],
              _shade(face, 0.7), edge, w)
        _mini_card(canvas, cx, cy - s * 0.35, s * 0.6, rng.uniform(-25, 25), paper, edge)
    else:  # flip-four: four fanned cards
        for k in range(4):
            _mini_card(canvas, cx + (k - 1.5) * s * 0.28, cy + abs(k - 1.5) * s * 0.06, s * 0.85,
                       (k - 1.5) * 14 + rng.uniform(-4, 4), paper, edge)


def _action_face(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    lang = _language(style)
    stock, metal = _stock(style)
    colour = _jitter(style, ACTION_COLORS[label])
    # Dark stock washed with the action's colour: darker theme, still clearly coloured.
    face = tuple(int(0.45 * a + 0.55 * b) for a, b in zip(colour, stock))
    canvas = _base(style, face, rng)
    _vignette(canvas, float(rng.uniform(0.1, 0.4)))
    edge = (16, 12, 16)
    _frame(canvas, style, metal if rng.random() < 0.6 else colour, rng, deco=bool(rng.random() < 0.5))
    n_pics = int(rng.integers(1, 3)) if style.ornaments else 1
    for i in range(n_pics):
        s = rng.uniform(70, 95) if i == 0 else rng.uniform(30, 45)
        x = CARD_W * (rng.uniform(0.42, 0.58) if i == 0 else rng.choice([0.22, 0.78]))
        y = CARD_H * (rng.uniform(0.3, 0.38) if i == 0 else rng.uniform(0.14, 0.2))
        _action_picture(canvas, label, rng, x, y, s, colour, edge)
    words = ACTION_WORDS[label][lang]
    slant = float(rng.uniform(-8, 8))
    banner = _shade(colour, 0.75)
    y0 = CARD_H * (rng.uniform(0.68, 0.74) if len(words) == 1 else rng.uniform(0.62, 0.67))
    for k, w in enumerate(words):
        width = CARD_W * (0.72 if len(w) < 8 else 0.84)
        _banner(canvas, style, rng, y0 + k * 44, width, 38 if len(words) == 1 else 34, banner, w, (252, 248, 240),
                angle=slant)
    return canvas


def render_vengeance(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    if label in MALUS:
        return _malus_face(label, rng, style)
    if label in ACTIONS:
        return _action_face(label, rng, style)
    return _number_face(label, rng, style)


RENDERERS["flip7-vengeance"] = render_vengeance
