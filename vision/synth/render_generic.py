"""Generic card printings: random layouts that belong to no deck, for the look network's data.

The look network (vision.training.train_look) must learn what tells the cards of *any* printing apart,
not what the three training renderers (vision.synth.render, render_vengeance, render_uno) draw. This
module draws printings of an invented card game whose faces share a style and differ by their
symbol: a number 0-13, a +N / -N / x2 / ÷2 modifier, or a pictogram for an action (drawn here, in
simple shapes of its own). A printing (`GenericStyle.sample`) picks, once for all its cards:

* a background: plain, a gradient, a pattern (stripes, dots, checks, hatching, waves) or a
  full-bleed field, light or dark, with or without a margin of another colour;
* a frame (none, a line, a double line, a thick rim, an inset panel) and bands (top, bottom,
  both, a side strip, a corner sash), sometimes with a fixed word in them (the game's name);
* where the big symbol sits (centre, higher, lower, left, right), its size, whether it sits in
  a container shape (a tilted ellipse, a diamond, a rounded square, a hexagon, a shield) and how
  it is inked (solid, outlined, hollow, with a shadow, with an inline);
* copies of the symbol: none, corner indices (two corners, turned, or four, or along one edge),
  or a playing-card-like second copy turned half round;
* a word for the value (the number's name, the action's, BONUS / MALUS) and where it is;
* a palette and how colour is dealt: one ink for every card, a colour per value, a colour per
  kind (numbers, modifiers, actions), or suits: 2-4 colours, some close on the wheel (as UNO's
  red / orange or pink / purple), each symbol printed in every suit, so a label is a symbol in a
  suit (`7@2`) and only its colour tells it from its twins; 6 and 9 are marked (a bar, a dot) so a
  turned card can be read, as real decks do;
* a font from vision.synth.render's *training* fonts only, a weight, a slant and a width; zeros as the
  font draws them, or slashed or dotted (one stroke from an 8).

Only the symbol (and what is derived from it: its word, its colour when colour is dealt per
value) and the suit differ between the cards of a printing; each copy gets its own grain, ink spread and
scuffs. Nothing here draws like vision.synth.render_foreign (its layouts, stroke fonts and pictograms
stay unseen by every network, so vision.evaluation.foreign_eval stays honest).

`render_generic(label, rng, style)` returns an RGBA face like vision.synth.render.render_card (same
size, transparent rounded corners), so vision.synth.scenes.make_scene can lay it on a table.
`pick_labels(rng, n, style)` deals n distinct labels of one printing with confusable ones among
them (+4 / +6 / +8, 6 / 9, 1 / 7 / 11, ...; in a printing of suits, symbols in two or more of
its suits): the look network's hard negatives.

    python -m vision.synth.render_generic OUT.png [SEED]     # a contact sheet of 6 printings
"""

from __future__ import annotations

import colorsys
import functools
from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.render import CARD_H, CARD_W, FONT_DIR, FONTS, ZERO_MARKS, _corner_alpha, _fit_mask, _paint
from vision.synth.render_uno import _arrow as uno_arrow

NUMBERS = tuple(str(n) for n in range(14))
MODIFIERS = ("+1", "+2", "+4", "+5", "+6", "+8", "+10", "x2", "/2", "-2", "-4", "-6", "-8", "-10")
PICTURES = ("freeze", "flip-three", "flip-four", "second-chance", "just-one-more", "swap", "steal", "discard",
            "reverse", "skip", "skip-everyone", "flip", "wild", "draw-color")
LABELS = NUMBERS + MODIFIERS + PICTURES

# Labels that a network easily takes for one another: a printing often holds several of a group.
CONFUSABLE = (("+2", "+4", "+6", "+8", "+10"), ("-2", "-4", "-6", "-8", "-10"), ("6", "9", "8", "0"),
              ("1", "7", "11", "12", "13"), ("3", "8", "5", "6"), ("2", "12", "+2", "x2", "/2", "-2"),
              ("10", "11", "12", "13", "+10", "-10"), ("4", "+4", "-4", "1", "7"), ("+1", "+5", "1", "5"),
              ("skip", "skip-everyone", "reverse", "swap"), ("flip", "flip-three", "flip-four", "discard",
                                                              "just-one-more", "draw-color"),
              ("second-chance", "freeze", "steal", "wild"))

WORDS = {str(n): w for n, w in enumerate(("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT",
                                          "NINE", "TEN", "ELEVEN", "TWELVE", "THIRTEEN"))}
WORDS.update({"freeze": "FREEZE", "flip-three": "FLIP THREE", "flip-four": "FLIP FOUR",
              "second-chance": "SECOND CHANCE", "just-one-more": "ONE MORE", "swap": "SWAP", "steal": "STEAL",
              "discard": "DISCARD", "reverse": "REVERSE", "skip": "SKIP", "skip-everyone": "SKIP ALL",
              "flip": "FLIP", "wild": "WILD", "draw-color": "DRAW"})
# Invented game names, printed the same on every card of a printing (they tell no card apart).
NAME_PARTS = ("TA", "LO", "MI", "RA", "KO", "VE", "NU", "SPI", "DRA", "ZU", "PE", "QUA", "BLI", "MO", "XA")

BACKGROUNDS = ("plain", "gradient", "pattern", "fullbleed")
PATTERNS = ("stripes", "dots", "checks", "hatch", "waves")
FRAMES = ("none", "line", "double", "thick", "panel")
BANDS = ("none", "none", "top", "bottom", "both", "side", "sash")
CONTAINERS = ("none", "none", "ellipse", "diamond", "rounded", "hexagon", "shield")
INKS = ("solid", "outlined", "hollow", "shadow", "inline")
COPIES = ("none", "corners2", "corners4", "edge", "double")
WORD_PLACES = ("none", "top", "bottom", "under")
COLOUR_MODES = ("single", "per_label", "per_kind", "suits")
SUIT = "@"  # a suited label: symbol@suit index
MARKS = ("bar", "dot")
# Zeros slashed or dotted in a share of printings (as many typefaces draw them): a 0 and an 8
# then differ by one stroke, and the look network has to see that stroke.
ZERO_MARK_SHARES = (0.55, 0.3, 0.15)  # plain, slashed, dotted

RGB = tuple[int, int, int]


def _hsv(h: float, s: float, v: float) -> RGB:
    return tuple(int(round(c * 255)) for c in colorsys.hsv_to_rgb(h % 1.0, float(np.clip(s, 0, 1)),
                                                                  float(np.clip(v, 0, 1))))


def _mix(a, b, t: float) -> RGB:
    return tuple(int(round(x + (y - x) * t)) for x, y in zip(a, b))


def _luma(c) -> float:
    return 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2]


@dataclass(frozen=True)
class GenericStyle:
    """One printing of the invented game: everything about a face's look that is not its label."""
    font: str
    word_font: str
    weight: int                # stroke made bolder (>0) or thinner (<0), px at 160 px glyph size
    slant: float
    squash: float              # width factor of the symbol
    background: str
    pattern: str
    pattern_angle: float
    pattern_step: float
    dark: bool                 # dark stock (light inks)
    paper: RGB
    paper2: RGB                # second background colour (gradient, pattern)
    ink: RGB                   # words, outlines
    accent: RGB                # frame, bands
    margin: int                # px of a border of margin_colour around the field (0: none)
    margin_colour: RGB
    frame: str
    band: str
    band_size: int
    game_name: str             # printed in a band (or nowhere)
    symbol_x: float            # centre of the big symbol, fractions of the card
    symbol_y: float
    symbol_h: float            # height of the big symbol's box, fraction of the card height
    symbol_w: float
    container: str
    container_tilt: float
    container_colour: RGB
    ink_style: str
    outline_px: float
    copies: str
    copy_size: int             # px height of a corner index
    word_place: str
    colour_mode: str
    suits: tuple[tuple[float, float, float], ...]  # (hue, saturation, value) of each suit ("suits" mode)
    hue0: float
    palette_order: tuple[int, ...]
    mark: str                  # how 6 and 9 are told apart
    grain: float
    wear: float
    zero: str = "plain"        # digit 0 as the font draws it, slashed or dotted (vision.synth.render.ZERO_MARKS)

    @classmethod
    def sample(cls, rng: np.random.Generator) -> "GenericStyle":
        fonts = FONTS["train"]  # never the held-out fonts: vision.evaluation.evaluate measures those
        font = str(FONT_DIR / fonts[rng.integers(len(fonts))])
        word_font = font if rng.random() < 0.5 else str(FONT_DIR / fonts[rng.integers(len(fonts))])
        dark = bool(rng.random() < 0.3)
        h0 = float(rng.random())
        if dark:
            paper = _hsv(h0, rng.uniform(0, 0.6), rng.uniform(0.05, 0.3))
            ink = _hsv(rng.random(), rng.uniform(0, 0.3), rng.uniform(0.85, 1.0))
        else:
            paper = _hsv(h0, rng.uniform(0, 0.25) if rng.random() < 0.7 else rng.uniform(0.3, 0.8),
                         rng.uniform(0.8, 1.0))
            ink = _hsv(rng.random(), rng.uniform(0, 0.7), rng.uniform(0.0, 0.35))
        paper2 = _mix(paper, _hsv(rng.random(), rng.uniform(0.2, 0.9), rng.uniform(0.2, 1.0)), rng.uniform(0.15, 0.6))
        accent = _hsv(rng.random(), rng.uniform(0.4, 1.0), rng.uniform(0.35, 0.95))
        background = BACKGROUNDS[rng.integers(len(BACKGROUNDS))]
        margin = int(rng.integers(6, 22)) if rng.random() < (0.6 if background == "fullbleed" else 0.25) else 0
        margin_colour = (_hsv(0, 0, rng.uniform(0.9, 1.0)) if rng.random() < 0.5 else
                         _hsv(0, 0, rng.uniform(0.0, 0.15)) if rng.random() < 0.6 else accent)
        symbol_h = float(rng.uniform(0.26, 0.5))
        positions = ((0.5, 0.5), (0.5, 0.4), (0.5, 0.6), (0.42, 0.47), (0.58, 0.53), (0.5, 0.33))
        px, py = positions[rng.integers(len(positions))]
        name = "".join(NAME_PARTS[i] for i in rng.integers(len(NAME_PARTS), size=int(rng.integers(2, 4))))
        # Suits: neighbours on the wheel 25-110 degrees apart, so some pairs are as close as UNO
        # Flip's red / orange or pink / purple; a pair that close often differs in lightness too.
        hues = np.cumsum(rng.uniform(0.07, 0.3, int(rng.integers(2, 5)))) + rng.random()
        suits = tuple((float(h % 1.0), float(rng.uniform(0.55, 1.0)), float(rng.uniform(0.5, 0.95))) for h in hues)
        return cls(
            font=font, word_font=word_font,
            weight=int(rng.integers(-2, 7)), slant=float(rng.uniform(-0.2, 0.2)) if rng.random() < 0.3 else 0.0,
            squash=float(rng.uniform(0.75, 1.15)),
            background=background, pattern=PATTERNS[rng.integers(len(PATTERNS))],
            pattern_angle=float(rng.uniform(0, 180)), pattern_step=float(rng.uniform(8, 26)),
            dark=dark, paper=paper, paper2=paper2, ink=ink, accent=accent,
            margin=margin, margin_colour=margin_colour,
            frame=FRAMES[rng.integers(len(FRAMES))], band=BANDS[rng.integers(len(BANDS))],
            band_size=int(rng.integers(24, 56)), game_name=name if rng.random() < 0.5 else "",
            symbol_x=float(px + rng.normal(0, 0.02)), symbol_y=float(py + rng.normal(0, 0.02)),
            symbol_h=symbol_h, symbol_w=float(np.clip(symbol_h * CARD_H / CARD_W * rng.uniform(0.8, 1.2), 0.3, 0.85)),
            container=CONTAINERS[rng.integers(len(CONTAINERS))], container_tilt=float(rng.uniform(-35, 35)),
            container_colour=_hsv(rng.random(), rng.uniform(0, 0.9), rng.uniform(0.2, 1.0)),
            ink_style=INKS[rng.integers(len(INKS))], outline_px=float(rng.uniform(1.5, 5.0)),
            copies=COPIES[rng.integers(len(COPIES))], copy_size=int(rng.integers(22, 40)),
            word_place=WORD_PLACES[rng.integers(len(WORD_PLACES))],
            colour_mode=COLOUR_MODES[rng.integers(len(COLOUR_MODES))], suits=suits, hue0=float(rng.random()),
            palette_order=tuple(int(i) for i in rng.permutation(len(LABELS))),
            mark=MARKS[rng.integers(len(MARKS))], grain=float(rng.uniform(0.5, 5)), wear=float(rng.beta(1.2, 5.0)),
            # drawn last, so the rest of a seed's printing stays as it was before zeros were marked
            zero=ZERO_MARKS[int(rng.choice(len(ZERO_MARKS), p=ZERO_MARK_SHARES))],
        )


def pick_labels(rng: np.random.Generator, n: int, style: GenericStyle | None = None) -> list[str]:
    """n distinct labels for one printing; most often several of them from confusable groups, and
    in a printing of suits most often symbols in two or more suits (its colour twins)."""
    picked: list[str] = []
    for _ in range(int(rng.choice([0, 1, 2, 2], p=[0.15, 0.35, 0.25, 0.25]))):
        group = CONFUSABLE[rng.integers(len(CONFUSABLE))]
        k = int(rng.integers(2, min(len(group), max(2, n // 2)) + 1))
        for i in rng.permutation(len(group))[:k]:
            if group[i] not in picked and len(picked) < n:
                picked.append(group[i])
    rest = [lab for lab in LABELS if lab not in picked]
    picked += [rest[i] for i in rng.permutation(len(rest))[:n - len(picked)]]
    picked = [picked[i] for i in rng.permutation(len(picked))]
    if style is None or style.colour_mode != "suits":
        return picked
    # The first few symbols in several suits each, the rest in one suit each.
    suits = len(style.suits)
    suited: list[str] = []
    for symbol in picked:
        ways = int(rng.integers(2, suits + 1)) if len(suited) < n // 2 + 1 else 1
        for suit in rng.permutation(suits)[:ways]:
            if len(suited) < n:
                suited.append(f"{symbol}{SUIT}{suit}")
    return [suited[i] for i in rng.permutation(len(suited))]


def split_suit(label: str) -> tuple[str, int | None]:
    """(symbol, suit index or None) of a generic label."""
    symbol, _, suit = label.partition(SUIT)
    return symbol, (int(suit) if suit else None)


def label_index(label: str) -> int:
    """A number for each generic label: its symbol's place in LABELS, offset per suit."""
    symbol, suit = split_suit(label)
    return LABELS.index(symbol) + (0 if suit is None else len(LABELS) * (suit + 1))


# ---------------------------------------------------------------------------------------------
# symbols as float masks (0..1)

def _kind(label: str) -> int:
    return 0 if label in NUMBERS else 1 if label in MODIFIERS else 2


def _label_colour(style: GenericStyle, label: str) -> RGB:
    """The ink that carries the value: one for every card, one per label, one per kind, or the suit's."""
    label, suit = split_suit(label)
    if suit is not None:
        h, sat, val = style.suits[suit]
        return _hsv(h, sat, val)
    if style.colour_mode == "single":
        k = 0
    elif style.colour_mode == "per_kind":
        k = _kind(label) * 5 + 1
    else:
        k = style.palette_order[LABELS.index(label)]
    h = style.hue0 + k * 0.618034
    if style.dark:
        return _hsv(h, 0.55 + 0.4 * ((k * 7) % 3) / 2, 0.95 - 0.2 * (k % 2))
    return _hsv(h, 0.7 + 0.3 * ((k * 7) % 3) / 2, 0.75 - 0.25 * (k % 3) / 2)


def _arrow(m: np.ndarray, p0, p1, t: int, head: float) -> None:
    """vision.synth.render_uno's arrow in this game's proportions (the look network's data were drawn so)."""
    uno_arrow(m, p0, p1, t, head, shaft=0.6, spread=0.6, subpixel=False)


def _card_outline(m, cx, cy, w, h, angle, t, fill: bool = False) -> None:
    a = np.radians(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    pts = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]) @ rot.T + (cx, cy)
    pts = np.round(pts).astype(np.int32)
    if fill:
        cv2.fillPoly(m, [pts], 0.0, cv2.LINE_AA)  # hide what lies under this card
    cv2.polylines(m, [pts], True, 1.0, t, cv2.LINE_AA)


@functools.lru_cache(maxsize=256)
def _picture(name: str, weight: int) -> np.ndarray:
    """A pictogram of an action, drawn in simple shapes on a 200 x 200 float mask."""
    s = 200
    m = np.zeros((s, s), np.float32)
    c, r = s // 2, 80
    t = max(3, 14 + 2 * weight)
    if name == "freeze":  # a thermometer
        cv2.line(m, (c, 20), (c, 130), 1.0, t + 10, cv2.LINE_AA)
        cv2.line(m, (c, 24), (c, 130), 0.0, max(2, t - 4), cv2.LINE_AA)
        cv2.circle(m, (c, 150), 32, 1.0, -1, cv2.LINE_AA)
        for y in (50, 75, 100):
            cv2.line(m, (c + 18, y), (c + 38, y), 1.0, max(2, t // 2), cv2.LINE_AA)
    elif name in ("flip-three", "flip-four"):  # cards fanned from one pivot
        n = 3 if name == "flip-three" else 4
        for i, a in enumerate(np.linspace(-30, 30, n)):
            rad = np.radians(a)
            _card_outline(m, c + 55 * np.sin(rad), 150 - 55 * np.cos(rad) - 10, 70, 105, a, max(2, t // 2), fill=i > 0)
    elif name == "second-chance":  # a filled heart
        u = np.linspace(0, 2 * np.pi, 60)
        x = 16 * np.sin(u) ** 3
        y = -(13 * np.cos(u) - 5 * np.cos(2 * u) - 2 * np.cos(3 * u) - np.cos(4 * u))
        cv2.fillPoly(m, [np.round(np.stack([c + x * 5, c + 5 + y * 5], 1)).astype(np.int32)], 1.0, cv2.LINE_AA)
    elif name == "just-one-more":  # a card with an arrow up out of it
        _card_outline(m, c - 10, c + 25, 80, 110, 0, max(2, t // 2))
        _arrow(m, (c + 40, c + 30), (c + 40, 10), max(3, t // 2 + 2), 40)
    elif name == "swap":  # two arcs chasing each other round a circle
        for a0 in (20, 200):
            cv2.ellipse(m, (c, c), (r - 10, r - 10), 0, a0, a0 + 130, 1.0, max(3, t // 2 + 2), cv2.LINE_AA)
            a1 = np.radians(a0 + 140)
            tip = (c + (r - 10) * np.cos(a1), c + (r - 10) * np.sin(a1))
            tail = (c + (r - 10) * np.cos(a1 - 0.4), c + (r - 10) * np.sin(a1 - 0.4))
            _arrow(m, tail, tip, max(3, t // 2 + 2), 34)
    elif name == "steal":  # a cut gem
        pts = np.array([(c - 70, c - 25), (c - 40, c - 60), (c + 40, c - 60), (c + 70, c - 25), (c, c + 75)], np.int32)
        cv2.fillPoly(m, [pts], 1.0, cv2.LINE_AA)
        for p, q in (((c - 70, c - 25), (c + 70, c - 25)), ((c - 20, c - 25), (c, c + 70)),
                     ((c + 20, c - 25), (c, c + 70))):
            cv2.line(m, p, q, 0.0, max(2, t // 3), cv2.LINE_AA)
    elif name == "discard":  # a card struck through
        _card_outline(m, c, c, 90, 130, 8, max(2, t // 2))
        cv2.line(m, (c - 60, c - 70), (c + 60, c + 70), 1.0, t, cv2.LINE_AA)
        cv2.line(m, (c + 60, c - 70), (c - 60, c + 70), 1.0, t, cv2.LINE_AA)
    elif name == "reverse":  # two diagonal arrows, one each way
        _arrow(m, (c - 60, c + 30), (c + 40, c - 70), max(3, t // 2 + 2), 45)
        _arrow(m, (c + 60, c - 30), (c - 40, c + 70), max(3, t // 2 + 2), 45)
    elif name == "skip":  # a ring with a bar across
        cv2.circle(m, (c, c), r, 1.0, t, cv2.LINE_AA)
        cv2.line(m, (int(c - r * 0.7), int(c + r * 0.7)), (int(c + r * 0.7), int(c - r * 0.7)), 1.0, t, cv2.LINE_AA)
    elif name == "skip-everyone":  # an arrow going almost all the way round
        cv2.ellipse(m, (c, c), (r - 5, r - 5), 0, -60, 230, 1.0, t, cv2.LINE_AA)
        a1 = np.radians(-60)
        tip = (c + (r - 5) * np.cos(a1) - 8, c + (r - 5) * np.sin(a1) - 14)
        _arrow(m, (tip[0] - 25, tip[1] + 25), tip, t, 46)
    elif name == "flip":  # a page with its corner turned
        pts = np.array([(c - 55, c - 80), (c + 25, c - 80), (c + 60, c - 45), (c + 60, c + 80), (c - 55, c + 80)],
                       np.int32)
        cv2.polylines(m, [pts], True, 1.0, max(3, t // 2 + 1), cv2.LINE_AA)
        cv2.fillPoly(m, [np.array([(c + 25, c - 80), (c + 25, c - 45), (c + 60, c - 45)], np.int32)], 1.0, cv2.LINE_AA)
        cv2.fillPoly(m, [np.array([(c - 55, c + 80), (c + 60, c + 80), (c + 60, c + 20)], np.int32)], 1.0, cv2.LINE_AA)
    elif name == "wild":  # four petals
        for a in (0, 90, 180, 270):
            rad = np.radians(a)
            cv2.ellipse(m, (int(c + 42 * np.cos(rad)), int(c + 42 * np.sin(rad))), (44, 26), a, 0, 360, 1.0, -1,
                        cv2.LINE_AA)
    elif name == "draw-color":  # a stack of cards and a plus
        for k in range(3):
            _card_outline(m, c - 30 + 14 * k, c + 30 - 14 * k, 70, 100, 0, max(2, t // 2), fill=k > 0)
        cv2.line(m, (c + 55, 15), (c + 55, 75), 1.0, max(3, t // 2 + 2), cv2.LINE_AA)
        cv2.line(m, (c + 25, 45), (c + 85, 45), 1.0, max(3, t // 2 + 2), cv2.LINE_AA)
    else:
        raise ValueError(f"no generic picture for {name!r}")
    ys, xs = np.nonzero(m > 0.05)
    return m[ys.min():ys.max() + 1, xs.min():xs.max() + 1].copy()


def _text(label: str) -> str:
    return {"/2": "÷2", "x2": "×2"}.get(label, label)


def _symbol_mask(label: str, style: GenericStyle, w: int, h: int, word_ok: bool = True) -> np.ndarray:
    """The label's symbol fitted into w x h (a float mask of that size, the symbol centred); 6 and
    9 carry the printing's mark under or beside them."""
    w, h = max(4, w), max(4, h)
    out = np.zeros((h, w), np.float32)
    if label in PICTURES:
        pic = _picture(label, style.weight)
        scale = min(w / pic.shape[1], h / pic.shape[0])
        m = cv2.resize(pic, (max(1, int(pic.shape[1] * scale)), max(1, int(pic.shape[0] * scale))),
                       interpolation=cv2.INTER_AREA)
    else:
        marked = label in ("6", "9")
        hh = int(h * 0.8) if marked and style.mark == "bar" else h
        ww = int(w * 0.82) if marked and style.mark == "dot" else w
        m = _fit_mask(style.font, _text(label), ww, hh, style.squash, style.weight, round(style.slant, 2), style.zero)
        if marked:
            mh, mw = m.shape
            if style.mark == "bar":
                big = np.zeros((min(h, mh + max(3, int(0.2 * mh))), mw), np.float32)
                big[:mh] = m
                cv2.rectangle(big, (int(mw * 0.1), mh + max(1, int(0.07 * mh))),
                              (int(mw * 0.9), big.shape[0] - 1), 1.0, -1)
            else:
                big = np.zeros((mh, min(w, mw + max(4, int(0.3 * mw)))), np.float32)
                big[:, :mw] = m
                rad = max(2, int(0.09 * mh))
                cv2.circle(big, (min(big.shape[1] - rad - 1, mw + rad + 2), mh - rad - 1), rad, 1.0, -1, cv2.LINE_AA)
            m = big
    mh, mw = min(m.shape[0], h), min(m.shape[1], w)
    y0, x0 = (h - mh) // 2, (w - mw) // 2
    out[y0:y0 + mh, x0:x0 + mw] = m[:mh, :mw]
    return out


# ---------------------------------------------------------------------------------------------
# painting

def _inked(canvas, mask, x, y, fill: RGB, style: GenericStyle, edge: RGB, scale: float = 1.0) -> None:
    """Paint a symbol mask in the printing's ink style."""
    px = max(1.0, style.outline_px * scale)
    binary = (mask > 0.5).astype(np.uint8)
    if style.ink_style == "shadow":
        d = max(2, int(round(px)))
        _paint(canvas, mask * 0.6, _mix(edge, (0, 0, 0), 0.4), x + d, y + d)
        _paint(canvas, mask, fill, x, y)
    elif style.ink_style in ("outlined", "inline"):
        ring = np.clip(px + 0.5 - cv2.distanceTransform(1 - binary, cv2.DIST_L2, 3), 0, 1)
        _paint(canvas, np.maximum(ring, mask), edge, x, y)
        _paint(canvas, mask, fill, x, y)
        if style.ink_style == "inline":
            d_in = cv2.distanceTransform(binary, cv2.DIST_L2, 3)
            depth = d_in.max()
            if depth > 3:
                line = np.clip(1 - np.abs(d_in - depth * 0.45) / max(0.6, depth * 0.12), 0, 1) * (d_in > 0)
                _paint(canvas, line.astype(np.float32), _mix(fill, (255, 255, 255), 0.75), x, y)
    elif style.ink_style == "hollow":
        d_in = cv2.distanceTransform(binary, cv2.DIST_L2, 3)
        stroke = max(4.0, px * 1.4)  # ~1 px or more at the networks' input size
        hollow = mask * np.clip(stroke + 0.5 - d_in, 0, 1) if d_in.max() > 2 * stroke else mask
        _paint(canvas, hollow.astype(np.float32), fill, x, y)
    else:
        _paint(canvas, mask, fill, x, y)


def _background(style: GenericStyle, field: RGB, rng: np.random.Generator) -> np.ndarray:
    c = np.empty((CARD_H, CARD_W, 3), np.float32)
    yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
    a = np.radians(style.pattern_angle)
    u = xx * np.cos(a) + yy * np.sin(a)
    if style.background == "gradient":
        t = (u - u.min()) / (u.max() - u.min() + 1e-6)
        c[:] = np.asarray(field, np.float32) * (1 - t[..., None]) + np.asarray(style.paper2, np.float32) * t[..., None]
    elif style.background == "pattern":
        c[:] = field
        step = style.pattern_step
        v = -xx * np.sin(a) + yy * np.cos(a)
        if style.pattern == "stripes":
            on = (u % step) < step * 0.45
        elif style.pattern == "dots":
            on = ((u % step - step / 2) ** 2 + (v % step - step / 2) ** 2) < (step * 0.22) ** 2
        elif style.pattern == "checks":
            on = ((u // step + v // step) % 2) == 0
        elif style.pattern == "hatch":
            on = ((u % step) < 2.0) | ((v % step) < 2.0)
        else:  # waves
            on = ((u + 6 * np.sin(v / step * 2)) % step) < step * 0.3
        second = _mix(field, style.paper2, 0.6)
        c[on] = second
    else:
        c[:] = field
    return c


def _field_colour(style: GenericStyle, label: str) -> RGB:
    if style.background == "fullbleed":
        colour = _label_colour(style, label)
        return _mix(colour, (0, 0, 0), 0.35) if style.dark else colour
    return style.paper


def _container(canvas, style: GenericStyle, cx, cy, w, h, colour: RGB) -> None:
    kind = style.container
    mask = np.zeros((CARD_H, CARD_W), np.float32)
    a = np.radians(style.container_tilt)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    if kind == "ellipse":  # never a plain circle: the foreign evaluation uses discs
        cv2.ellipse(mask, (int(cx), int(cy)), (int(w * 0.62), int(h * 0.42)), style.container_tilt - 90, 0, 360,
                    1.0, -1, cv2.LINE_AA)
    else:
        if kind == "diamond":
            pts = np.array([(0, -h * 0.68), (w * 0.66, 0), (0, h * 0.68), (-w * 0.66, 0)])
        elif kind == "rounded":
            from vision.synth.render import _rounded_rect_pts
            pts = _rounded_rect_pts(-w * 0.55, -h * 0.58, w * 0.55, h * 0.58, min(w, h) * 0.2, 5)
            rot = np.eye(2)
        elif kind == "hexagon":
            angles = np.radians(np.arange(0, 360, 60) + 30)
            pts = np.stack([w * 0.62 * np.cos(angles), h * 0.62 * np.sin(angles)], 1)
        else:  # shield
            pts = np.array([(-w * 0.55, -h * 0.6), (w * 0.55, -h * 0.6), (w * 0.55, h * 0.1), (0, h * 0.68),
                            (-w * 0.55, h * 0.1)])
            rot = np.eye(2)
        pts = np.asarray(pts, np.float64) @ rot.T + (cx, cy)
        cv2.fillPoly(mask, [np.round(pts * 4).astype(np.int32)], 1.0, cv2.LINE_AA, shift=2)
    _paint(canvas, mask, colour, 0, 0)


def _word_mask(style: GenericStyle, text: str, w: int, h: int) -> np.ndarray:
    m = _fit_mask(style.word_font, text, w, h)
    out = np.zeros((h, w), np.float32)
    y0, x0 = (h - m.shape[0]) // 2, (w - m.shape[1]) // 2
    out[y0:y0 + m.shape[0], x0:x0 + m.shape[1]] = m
    return out


def _word(label: str) -> str:
    if label in WORDS:
        return WORDS[label]
    return {"+": "BONUS", "-": "MALUS", "x": "DOUBLE", "/": "HALF"}[label[0]]


def render_generic(label: str, rng: np.random.Generator, style: GenericStyle) -> np.ndarray:
    """RGBA uint8 (CARD_H, CARD_W, 4) face of `label` in the generic printing `style`."""
    symbol, suit = split_suit(label)
    if symbol not in LABELS or (suit is not None and not 0 <= suit < len(style.suits)):
        raise ValueError(f"{label!r} is not a generic label of this printing")
    colour = _label_colour(style, label)
    field = _field_colour(style, label)
    label = symbol  # the suit shows only in the colours
    canvas = _background(style, field, rng)
    on_colour = style.background == "fullbleed" and style.colour_mode != "single"
    # Inks: the value's colour on a plain stock; light or dark on a field of the value's colour.
    if on_colour:
        fill = (250, 250, 250) if _luma(field) < 150 else (20, 20, 20)
        edge = (15, 15, 15) if _luma(fill) > 128 else (240, 240, 240)
    else:
        fill, edge = colour, style.ink
        if abs(_luma(fill) - _luma(field)) < 50:
            fill = _mix(fill, (0, 0, 0) if _luma(field) > 128 else (255, 255, 255), 0.6)
    # Margin, frame, bands.
    if style.margin:
        m = style.margin
        border = np.ones((CARD_H, CARD_W), np.float32)
        border[m:CARD_H - m, m:CARD_W - m] = 0
        _paint(canvas, border, style.margin_colour, 0, 0)
    inset = style.margin + 6
    if style.frame == "line":
        cv2.rectangle(canvas, (inset, inset), (CARD_W - 1 - inset, CARD_H - 1 - inset), style.accent, 2, cv2.LINE_AA)
    elif style.frame == "double":
        for d, t in ((inset, 3), (inset + 7, 1)):
            cv2.rectangle(canvas, (d, d), (CARD_W - 1 - d, CARD_H - 1 - d), style.accent, t, cv2.LINE_AA)
    elif style.frame == "thick":
        cv2.rectangle(canvas, (inset, inset), (CARD_W - 1 - inset, CARD_H - 1 - inset), style.accent, 9)
    elif style.frame == "panel":
        d = inset + 10
        panel = _mix(field, (255, 255, 255) if _luma(field) < 128 else (0, 0, 0), 0.12)
        cv2.rectangle(canvas, (d, d + 20), (CARD_W - 1 - d, CARD_H - 1 - d - 20), panel, -1)
    b = style.band_size
    name_boxes = []
    if style.band in ("top", "both"):
        canvas[inset:inset + b, inset:CARD_W - inset] = style.accent
        name_boxes.append((inset + 8, inset + 4, CARD_W - 2 * inset - 16, b - 8))
    if style.band in ("bottom", "both"):
        canvas[CARD_H - inset - b:CARD_H - inset, inset:CARD_W - inset] = style.accent
        name_boxes.append((inset + 8, CARD_H - inset - b + 4, CARD_W - 2 * inset - 16, b - 8))
    if style.band == "side":
        canvas[inset:CARD_H - inset, inset:inset + b // 2 + 8] = style.accent
    if style.band == "sash":
        sash = np.zeros((CARD_H, CARD_W), np.float32)
        cv2.line(sash, (CARD_W - 110, 0), (CARD_W, 110), 1.0, b // 2 + 6, cv2.LINE_AA)
        _paint(canvas, sash, style.accent, 0, 0)
    band_ink = (250, 250, 250) if _luma(style.accent) < 140 else (20, 20, 20)
    if style.game_name and name_boxes:
        x, y, w, h = name_boxes[0]
        _paint(canvas, _word_mask(style, style.game_name, w, max(6, h)), band_ink, x, y)
    # The big symbol, in its container.
    sw, sh = int(style.symbol_w * CARD_W), int(style.symbol_h * CARD_H)
    cx, cy = style.symbol_x * CARD_W, style.symbol_y * CARD_H
    if style.copies == "double":  # two copies, the lower one turned: the card reads both ways up
        sh = min(sh, int(CARD_H * 0.3))
        cy = CARD_H * 0.3
    if style.container != "none":
        cont = style.container_colour
        if abs(_luma(cont) - _luma(fill)) < 60:
            cont = _mix(cont, (0, 0, 0) if _luma(fill) > 128 else (255, 255, 255), 0.7)
        _container(canvas, style, cx, cy, sw * 1.05, sh * 1.05, cont)
    mask = _symbol_mask(label, style, sw, sh)
    _inked(canvas, mask, int(cx - sw / 2), int(cy - sh / 2), fill, style, edge)
    if style.copies == "double":
        turned = np.ascontiguousarray(canvas[::-1, ::-1])
        if style.container != "none":
            _container(turned, style, cx, cy, sw * 1.05, sh * 1.05, cont)
        _inked(turned, mask, int(cx - sw / 2), int(cy - sh / 2), fill, style, edge)
        canvas = np.ascontiguousarray(turned[::-1, ::-1])
    # The value's word.
    word_ink = edge if not on_colour else fill
    if style.word_place != "none" and style.copies != "double":
        ww, wh = int(CARD_W * 0.62), 22
        wy = {"top": inset + (style.band_size if style.band in ("top", "both") else 0) + 10,
              "bottom": CARD_H - inset - (style.band_size if style.band in ("bottom", "both") else 0) - 10 - wh,
              "under": int(min(cy + sh / 2 + 6, CARD_H - inset - wh - 4))}[style.word_place]
        _paint(canvas, _word_mask(style, _word(label), ww, wh), word_ink, (CARD_W - ww) // 2, wy)
    # Corner indices.
    if style.copies in ("corners2", "corners4", "edge"):
        s = style.copy_size
        small = _symbol_mask(label, style, int(s * 0.9), s)
        d = inset + 5
        spots = [(d, d, False), (CARD_W - d - small.shape[1], CARD_H - d - s, True)]
        if style.copies == "corners4":
            spots += [(CARD_W - d - small.shape[1], d, False), (d, CARD_H - d - s, True)]
        elif style.copies == "edge":
            spots = [(d, d, False), (d, d + s + 6, False), (d, d + 2 * s + 12, False)][:2]
        ink = colour if not on_colour else fill
        for x, y, turned in spots:
            _paint(canvas, small[::-1, ::-1] if turned else small, ink, int(x), int(y))
    return _finish(canvas, rng, style)


def _finish(canvas: np.ndarray, rng: np.random.Generator, style: GenericStyle) -> np.ndarray:
    """Per-copy print: grain, sometimes a little ink spread, a few scuffs; then the RGBA card."""
    grain = cv2.resize(rng.normal(0, 1, (CARD_H // 6, CARD_W // 6)).astype(np.float32), (CARD_W, CARD_H))
    canvas = canvas + grain[..., None] * style.grain
    if rng.random() < 0.3:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.4, 0.9))
    for _ in range(int(style.wear * 10)):
        p0 = (int(rng.integers(CARD_W)), int(rng.integers(CARD_H)))
        p1 = (p0[0] + int(rng.integers(-40, 40)), p0[1] + int(rng.integers(-40, 40)))
        cv2.line(canvas, p0, p1, (232, 232, 228), 1, cv2.LINE_AA)
    rgba = np.empty((CARD_H, CARD_W, 4), np.uint8)
    rgba[..., :3] = np.clip(canvas, 0, 255)
    rgba[..., 3] = _corner_alpha()
    return rgba


def generic_faces(rng: np.random.Generator, style: GenericStyle):
    """A `faces` source for vision.synth.scenes.make_scene: every card of this generic printing."""
    return lambda label: render_generic(label, rng, style)


def main(argv: list[str] | None = None) -> int:
    """Write a contact sheet: python -m vision.synth.render_generic OUT.png [SEED]"""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m vision.synth.render_generic OUT.png [SEED]", file=sys.stderr)
        return 2
    rng = np.random.default_rng(int(argv[1]) if len(argv) > 1 else 0)
    rows = []
    for _ in range(6):
        style = GenericStyle.sample(rng)
        rows.append(np.hstack([cv2.resize(render_generic(lab, rng, style)[..., :3], (126, 176),
                                          interpolation=cv2.INTER_AREA) for lab in pick_labels(rng, 8, style)]))
    cv2.imwrite(argv[0], np.vstack(rows)[..., ::-1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
