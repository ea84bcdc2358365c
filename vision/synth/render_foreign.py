"""Foreign-deck card faces: printings of the three decks that the training renderer never draws.

A user's physical deck is a print nobody on the team has seen. To measure what calibration buys
(vision.evaluation.foreign_eval), these faces are deliberately unlike vision.synth.render's in every way the
training data varies: other layouts (a plain white card with a coloured numeral, a full-bleed
colour card with the numeral in a disc, a dark card with an outlined numeral and the word on
top, a white card with a colour band across the middle), other colour assignments (each printing
deals its own palette to the values), and stroke fonts (OpenCV's Hershey fonts) that no training
font resembles. The same label keeps the same meaning — the digits, the +N and -N, the action
names, UNO's four colours per side — and the 6 and 9 are underlined so that a crop upside down
can still be read, as real decks do.

`ForeignStyle.sample(rng)` draws one printing; `render_foreign(deck, label, rng, style)` returns
an RGBA portrait face of vision.synth.render's size with transparent rounded corners, like
vision.synth.render.render_card, so vision.synth.scenes.make_scene can lay it on a table (its `faces` hook).
"""

from __future__ import annotations

import colorsys
import functools
from dataclasses import dataclass

import cv2
import numpy as np

from rules.cards import DECKS
from vision.synth.render import CARD_H, CARD_W, CORNER_RADIUS

LAYOUTS = ("plain", "fullbleed", "dark", "band")
FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
         cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_SCRIPT_COMPLEX)

# UNO keeps its colour names in every printing; the shades are this printing's own.
UNO_HUES = {"red": 0.0, "yellow": 0.14, "green": 0.33, "blue": 0.6,
            "pink": 0.9, "teal": 0.48, "orange": 0.07, "purple": 0.76}
NUMBER_WORDS = ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN",
                "ELEVEN", "TWELVE", "THIRTEEN")
ACTION_WORDS = {"freeze": "FREEZE", "flip-three": "FLIP 3", "second-chance": "2ND CHANCE",
                "just-one-more": "ONE MORE", "swap": "SWAP", "steal": "STEAL", "discard": "DISCARD",
                "flip-four": "FLIP 4", "reverse": "REVERSE", "skip": "SKIP", "flip": "FLIP",
                "skip-everyone": "SKIP ALL", "wild": "WILD", "dark-wild": "WILD",
                "wild-draw-two": "WILD", "wild-draw-color": "WILD"}

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class ForeignStyle:
    layout: str
    font: int
    italic: bool
    weight: float          # stroke thickness per unit of text scale
    hue_offset: float      # rotates the palette dealt to values
    palette_order: tuple[int, ...]
    paper: RGB
    ink: RGB               # words and outlines
    wear: float

    @classmethod
    def sample(cls, rng: np.random.Generator) -> "ForeignStyle":
        layout = LAYOUTS[rng.integers(len(LAYOUTS))]
        paper = tuple(int(v) for v in np.clip(rng.normal(245, 6, 3), 215, 255))
        return cls(layout=layout, font=int(FONTS[rng.integers(len(FONTS))]), italic=bool(rng.random() < 0.3),
                   weight=float(rng.uniform(1.2, 2.6)), hue_offset=float(rng.random()),
                   palette_order=tuple(int(i) for i in rng.permutation(32)), paper=paper,
                   ink=tuple(int(v) for v in rng.integers(0, 60, 3)), wear=float(rng.beta(1.2, 5.0)))


@dataclass(frozen=True)
class _Face:
    big: str                 # the large symbol ("7", "+4", "÷2") or "" for a picture
    word: str | None         # a word printed small
    color: RGB               # the colour that carries the value
    dark: bool = False       # UNO dark side: black inks on a dark-side field
    picture: str | None = None
    underline: bool = False  # 6 and 9
    quarters: tuple[RGB, ...] | None = None  # wild cards: four colours


def _hsv(h: float, s: float, v: float) -> RGB:
    return tuple(int(round(c * 255)) for c in colorsys.hsv_to_rgb(h % 1.0, s, v))


def _value_color(style: ForeignStyle, index: int, s: float = 0.75, v: float = 0.8) -> RGB:
    """This printing's colour for the index-th value: a hue wheel dealt in the printing's order."""
    k = style.palette_order[index % len(style.palette_order)]
    return _hsv(style.hue_offset + k * 0.618034, s, v - 0.15 * (k % 3) / 2)


def _face(deck: str, label: str, style: ForeignStyle) -> _Face:
    if deck in ("flip7", "flip7-vengeance"):
        special = {"zero": ("0", "ZERO"), "unlucky-7": ("7", "UNLUCKY"), "lucky-13": ("13", "LUCKY")}
        if label.isdigit():
            n = int(label)
            return _Face(label, NUMBER_WORDS[n], _value_color(style, n), underline=label in ("6", "9"))
        if label in special:
            big, word = special[label]
            return _Face(big, word, _value_color(style, 14 + list(special).index(label), 0.95, 0.6))
        if label[0] in "+x-/":
            big = {"x2": "x2", "/2": "÷2"}.get(label, label)
            return _Face(big, "BONUS" if label[0] in "+x" else "MALUS",
                         _value_color(style, 20 if label[0] in "+x" else 21, 0.9, 0.85))
        return _Face("", ACTION_WORDS[label], _value_color(style, 22 + sorted(ACTION_WORDS).index(label) % 9, 0.8, 0.75),
                     picture=label)
    # uno-flip
    dark_wilds = ("dark-wild", "wild-draw-color")
    if label in ("wild", "wild-draw-two") + dark_wilds:
        dark = label in dark_wilds
        names = ("pink", "teal", "orange", "purple") if dark else ("red", "yellow", "green", "blue")
        quarters = tuple(_hsv(UNO_HUES[c] + 0.02 * (style.hue_offset - 0.5), 0.85, 0.75 if dark else 0.9)
                         for c in names)
        big = {"wild-draw-two": "+2", "wild-draw-color": "+C"}.get(label, "")
        return _Face(big, "WILD", (20, 20, 20), dark=dark, picture=None if big else "wild", quarters=quarters)
    color, symbol = label.split("-", 1)
    dark = color in ("pink", "teal", "orange", "purple")
    shade = _hsv(UNO_HUES[color] + 0.03 * (style.hue_offset - 0.5), 0.8, 0.7 if dark else 0.88)
    if symbol.isdigit():
        return _Face(symbol, None, shade, dark=dark, underline=symbol in ("6", "9"))
    if symbol in ("draw-one", "draw-five"):
        return _Face("+1" if symbol == "draw-one" else "+5", None, shade, dark=dark)
    return _Face("", ACTION_WORDS[symbol], shade, dark=dark, picture=symbol)


# ---------------------------------------------------------------------------------------------
# drawing

def _text_mask(text: str, style: ForeignStyle, box_w: int, box_h: int, weight: float | None = None) -> np.ndarray:
    """A mask of `text` in the printing's stroke font, as large as fits box_w x box_h."""
    font = style.font | (cv2.FONT_ITALIC if style.italic else 0)
    weight = style.weight if weight is None else weight
    division = text.startswith("÷")
    body = text[1:] if division else text
    (w1, h1), base1 = cv2.getTextSize(body, font, 1.0, 1)
    extra = 0.9 * h1 if division else 0.0
    scale = min(box_w / (w1 + extra + 4 * weight), box_h / (h1 + base1 * 0.3 + 2 * weight))
    th = max(1, int(round(weight * scale)))
    (w, h), base = cv2.getTextSize(body, font, scale, th)
    mask = np.zeros((box_h, box_w), np.uint8)
    x0 = int((box_w - w - extra * scale) / 2 + extra * scale)
    y0 = int((box_h + h) / 2)
    cv2.putText(mask, body, (x0, y0), font, scale, 255, th, cv2.LINE_AA)
    if division:  # a drawn division sign (the stroke fonts have no ÷)
        cx, cy, r = int(x0 - 0.5 * extra * scale), int(y0 - h / 2), int(0.35 * extra * scale)
        cv2.line(mask, (cx - r, cy), (cx + r, cy), 255, th, cv2.LINE_AA)
        for dy in (-r // 1.6, r // 1.6):
            cv2.circle(mask, (cx, int(cy + dy)), max(1, th // 2 + 1), 255, -1, cv2.LINE_AA)
    return mask


def _picture_mask(name: str, size: int) -> np.ndarray:
    """A simple pictogram per action, distinct from vision.synth.render's pictures."""
    m = np.zeros((size, size), np.uint8)
    c, r, t = size // 2, int(size * 0.38), max(2, size // 14)
    if name == "freeze":  # snowflake
        for a in range(0, 180, 60):
            d = np.array([np.cos(np.radians(a)), np.sin(np.radians(a))]) * r
            cv2.line(m, tuple(int(v) for v in (c - d)), tuple(int(v) for v in (c + d)), 255, t, cv2.LINE_AA)
    elif name in ("flip-three", "flip-four"):
        n = 3 if name == "flip-three" else 4
        for i in range(n):
            x = int(c - r + i * 2 * r / n)
            cv2.rectangle(m, (x, c - r // 2 - i * 4), (x + r // 2, c + r // 2 - i * 4), 255, t)
    elif name == "second-chance":  # a cross in a circle
        cv2.circle(m, (c, c), r, 255, t, cv2.LINE_AA)
        cv2.line(m, (c, c - r // 2), (c, c + r // 2), 255, t * 2)
        cv2.line(m, (c - r // 2, c), (c + r // 2, c), 255, t * 2)
    elif name == "just-one-more":  # one card and a plus
        cv2.rectangle(m, (c - r // 2, c - r // 2 - r // 4), (c + r // 4, c + r // 2), 255, t)
        cv2.line(m, (c + r // 2, c - r // 2), (c + r, c - r // 2), 255, t)
        cv2.line(m, (c + 3 * r // 4, c - 3 * r // 4), (c + 3 * r // 4, c - r // 4), 255, t)
    elif name in ("swap", "reverse"):  # two horizontal arrows, opposed
        for y, s in ((c - r // 3, 1), (c + r // 3, -1)):
            cv2.arrowedLine(m, (c - s * r, y), (c + s * r, y), 255, t, cv2.LINE_AA, tipLength=0.3)
    elif name == "steal":  # a grabbing hook
        cv2.ellipse(m, (c, c), (r // 2, r // 2), 0, 0, 270, 255, t, cv2.LINE_AA)
        cv2.line(m, (c + r // 2, c), (c + r // 2, c - r), 255, t)
    elif name == "discard":  # a bin
        cv2.rectangle(m, (c - r // 2, c - r // 3), (c + r // 2, c + r), 255, t)
        cv2.line(m, (c - r, c - r // 2), (c + r, c - r // 2), 255, t)
    elif name == "skip":  # a hand-raised stop: an octagon
        pts = np.array([[c + r * np.cos(np.radians(22.5 + 45 * k)), c + r * np.sin(np.radians(22.5 + 45 * k))]
                        for k in range(8)], np.int32)
        cv2.polylines(m, [pts], True, 255, t, cv2.LINE_AA)
    elif name == "skip-everyone":  # a circle of dots
        for k in range(8):
            a = np.radians(45 * k)
            cv2.circle(m, (int(c + r * np.cos(a)), int(c + r * np.sin(a))), t, 255, -1, cv2.LINE_AA)
    elif name == "flip":  # an up and a down triangle
        cv2.fillPoly(m, [np.array([[c - r, c - 4], [c, c - r], [c + r, c - 4]], np.int32)], 255, cv2.LINE_AA)
        cv2.polylines(m, [np.array([[c - r, c + 4], [c, c + r], [c + r, c + 4]], np.int32)], True, 255, t)
    elif name == "wild":  # a star
        pts = np.array([[c + (r if k % 2 == 0 else r * 0.45) * np.cos(np.radians(90 + 36 * k)),
                         c - (r if k % 2 == 0 else r * 0.45) * np.sin(np.radians(90 + 36 * k))]
                        for k in range(10)], np.int32)
        cv2.fillPoly(m, [pts], 255, cv2.LINE_AA)
    else:
        raise ValueError(f"no foreign picture for {name!r}")
    return m


def _paint(canvas: np.ndarray, mask: np.ndarray, color, x: int, y: int, flip: bool = False) -> None:
    if flip:
        mask = mask[::-1, ::-1]
        x, y = CARD_W - x - mask.shape[1], CARD_H - y - mask.shape[0]
    h, w = mask.shape
    region = canvas[y:y + h, x:x + w]
    a = (mask[:region.shape[0], :region.shape[1]].astype(np.float32) / 255.0)[..., None]
    region[:] = region * (1 - a) + np.asarray(color, np.float32) * a


def _outlined(canvas, mask, fill, edge, x, y, px: int) -> None:
    if px > 0:
        _paint(canvas, cv2.dilate(mask, np.ones((2 * px + 1, 2 * px + 1), np.uint8)), edge, x - 0, y - 0)
    _paint(canvas, mask, fill, x, y)


def _big_symbol(face: _Face, style: ForeignStyle, w: int, h: int) -> np.ndarray:
    if face.picture and not face.big:
        s = min(w, h)
        m = np.zeros((h, w), np.uint8)
        pic = _picture_mask(face.picture, s)
        m[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s] = pic
        return m
    m = _text_mask(face.big, style, w, int(h * (0.82 if face.underline else 1.0)))
    if face.underline:
        full = np.zeros((h, w), np.uint8)
        full[:m.shape[0]] = m
        cols = np.nonzero(m.max(0))[0]
        x0, x1 = (int(cols[0]), int(cols[-1])) if len(cols) else (w // 4, 3 * w // 4)
        cv2.rectangle(full, (x0, int(h * 0.88)), (x1, int(h * 0.96)), 255, -1)
        return full
    return m


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return tuple(int(x + (y - x) * t) for x, y in zip(a, b))


def render_foreign(deck: str, label: str, rng: np.random.Generator, style: ForeignStyle) -> np.ndarray:
    """RGBA uint8 (CARD_H, CARD_W, 4) face of `label` in the foreign printing `style`."""
    if label not in DECKS[deck].labels:
        raise ValueError(f"{label!r} is not a {deck} label")
    face = _face(deck, label, style)
    layout = style.layout
    white = np.array(style.paper, np.float32)
    canvas = np.empty((CARD_H, CARD_W, 3), np.float32)
    light = (255, 255, 255)
    if face.dark:  # UNO's dark side is dark in every printing
        layout = "dark" if layout in ("plain", "band") else layout
    if layout == "plain":
        canvas[:] = white
        cv2.rectangle(canvas, (10, 10), (CARD_W - 11, CARD_H - 11), face.color, 3)
        fill, edge = face.color, style.ink
    elif layout == "fullbleed":
        canvas[:] = face.color
        cv2.circle(canvas, (CARD_W // 2, CARD_H // 2), 98, _mix(face.color, (0, 0, 0), 0.55), -1, cv2.LINE_AA)
        fill, edge = (light if not face.dark else (15, 15, 15)), (0, 0, 0)
    elif layout == "dark":
        canvas[:] = (28, 28, 36) if not face.dark else _mix(face.color, (0, 0, 0), 0.6)
        cv2.rectangle(canvas, (8, 8), (CARD_W - 9, CARD_H - 9), face.color, 8)
        fill, edge = face.color if not face.dark else (10, 10, 10), (235, 235, 235)
    else:  # band
        canvas[:] = white
        canvas[CARD_H // 2 - 80:CARD_H // 2 + 80] = face.color
        fill, edge = light, style.ink
    if face.quarters:
        for k, col in enumerate(face.quarters):
            cv2.ellipse(canvas, (CARD_W // 2, CARD_H // 2), (95, 95), 0, 90 * k, 90 * (k + 1), col, -1, cv2.LINE_AA)
        fill, edge = (255, 255, 255), (0, 0, 0)

    sym = _big_symbol(face, style, 170, 150)
    y_sym = 92 if layout != "dark" or not face.word else 110
    _outlined(canvas, sym, fill, edge, (CARD_W - 170) // 2, y_sym, 3 if layout != "plain" else 2)
    if face.word:
        word = _text_mask(face.word, style, 180, 28, weight=1.4)
        word_y = 40 if layout == "dark" else CARD_H - 72
        word_col = style.ink if layout in ("plain", "band") else _mix(fill, (128, 128, 128), 0.2)
        _paint(canvas, word, word_col, (CARD_W - 180) // 2, word_y)
    index = face.big or (face.word or "")[:1]
    if index:
        small = _text_mask(index, style, 40, 30, weight=1.6)
        col = face.color if layout in ("plain", "band") else fill
        _paint(canvas, small, col, 16, 16)
        _paint(canvas, small, col, 16, 16, flip=True)
    canvas = _wear(canvas, rng, style.wear)
    rgba = np.empty((CARD_H, CARD_W, 4), np.uint8)
    rgba[..., :3] = np.clip(canvas, 0, 255)
    rgba[..., 3] = _corners()
    return rgba


def _wear(canvas: np.ndarray, rng: np.random.Generator, wear: float) -> np.ndarray:
    """Per-copy differences: grain, a little ink spread, scuffs and a faded patch."""
    canvas = canvas + rng.normal(0, 3 + 6 * wear, canvas.shape).astype(np.float32)
    if rng.random() < 0.4:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.4, 0.9))
    for _ in range(int(wear * 10)):
        p0 = (int(rng.integers(CARD_W)), int(rng.integers(CARD_H)))
        p1 = (p0[0] + int(rng.integers(-50, 50)), p0[1] + int(rng.integers(-50, 50)))
        cv2.line(canvas, p0, p1, (225, 225, 222), 1, cv2.LINE_AA)
    if wear > 0.2:
        yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
        c = rng.uniform([0, 0], [CARD_W, CARD_H])
        fade = np.exp(-((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / (2 * 60.0 ** 2)) * wear * 0.4
        canvas += (240 - canvas) * fade[..., None]
    return canvas


@functools.lru_cache(maxsize=1)
def _corners() -> np.ndarray:
    a = np.zeros((CARD_H, CARD_W), np.uint8)
    r = CORNER_RADIUS
    cv2.rectangle(a, (r, 0), (CARD_W - 1 - r, CARD_H - 1), 255, -1)
    cv2.rectangle(a, (0, r), (CARD_W - 1, CARD_H - 1 - r), 255, -1)
    for cx, cy in ((r, r), (CARD_W - 1 - r, r), (r, CARD_H - 1 - r), (CARD_W - 1 - r, CARD_H - 1 - r)):
        cv2.circle(a, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return a


def foreign_faces(deck: str, rng: np.random.Generator, style: ForeignStyle):
    """A `faces` source for vision.synth.scenes.make_scene: every card of this foreign printing."""
    return lambda label: render_foreign(deck, label, rng, style)


def main(argv: list[str] | None = None) -> int:
    """Write a contact sheet of foreign printings: python -m vision.synth.render_foreign DECK OUT.png [SEED]"""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print("usage: python -m vision.synth.render_foreign DECK OUT.png [SEED]", file=sys.stderr)
        return 2
    deck, out = argv[0], argv[1]
    rng = np.random.default_rng(int(argv[2]) if len(argv) > 2 else 0)
    labels = DECKS[deck].labels
    rows = []
    for _ in range(4):
        style = ForeignStyle.sample(rng)
        picks = [labels[i] for i in np.linspace(0, len(labels) - 1, 8).astype(int)]
        rows.append(np.hstack([cv2.resize(render_foreign(deck, lab, rng, style)[..., :3], (126, 176))
                               for lab in picks]))
    cv2.imwrite(out, np.vstack(rows)[..., ::-1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
