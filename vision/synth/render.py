"""Card face renderer for training and test data (docs/cards.md, "What the cards look like").

Nobody on the team has the real decks, so each face is drawn from its written description with
wide variation around it: several fonts, jittered colours, English or German words, optional
ornaments, print and wear defects. Variety, not fidelity, is what lets the classifier read a deck
it has never seen.

`render_card(deck, label, rng, style)` returns an RGBA portrait image (CARD_W x CARD_H, 4 px/mm
for a 63 x 88 mm card) with transparent rounded corners. `CardStyle.sample(rng, split)` draws a
look; the "heldout" split uses fonts that training never sees, so evaluation measures
generalisation to an unseen print. Another deck needs only a new face function in `RENDERERS`.
"""

from __future__ import annotations

import colorsys
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

CARD_W, CARD_H = 252, 352  # 63 x 88 mm at 4 px/mm
CORNER_RADIUS = 13         # ~3.2 mm

FONT_DIR = Path(__file__).parent / "assets" / "fonts"
# Disjoint on purpose: the held-out split measures how the model copes with a print it never saw.
FONTS = {
    "train": ("DejaVuSans-Bold.ttf", "DejaVuSerif-Bold.ttf", "FreeSansBold.ttf", "FreeMonoBold.ttf",
              "Cantarell-ExtraBold.otf", "Caladea-Bold.ttf", "Roboto-Black.ttf", "Roboto-Bold.ttf",
              "Roboto-BoldItalic.ttf", "OpenSans-ExtraBold.ttf", "OpenSans-CondBold.ttf",
              "OpenSans-BoldItalic.ttf", "NotoSans-Bold.ttf", "NotoSansDisplay-Bold.ttf", "NotoSerif-Bold.ttf",
              "NotoSerifDisplay-Bold.ttf"),
    "heldout": ("DejaVuSansCondensed-Bold.ttf", "FreeSerifBold.ttf", "LiberationSerif-Bold.ttf",
                "DejaVuSansMono-Bold.ttf"),
}

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class CardStyle:
    """One printing of a deck: everything about a face's look that is not its label."""
    numeral_font: str
    word_font: str
    language: str               # "en" | "de"
    hue_shift: float            # degrees, applied to every ink
    saturation: float           # factor
    value: float                # factor
    paper: RGB                  # the cream / ivory stock
    frame_lines: int            # 1..3 concentric frame lines
    frame_inset: float          # mm from the edge
    ornaments: bool             # fans / shells / pictures drawn at all
    corner_index: bool          # small copies of the value in two corners
    numeral_weight: int         # stroke made bolder (>0) or thinner (<0), px at 160 px glyph size
    numeral_slant: float        # horizontal shear of the numeral (faux italic)
    numeral_scale: float        # relative height of the big numeral
    numeral_dy: float           # vertical offset of the numeral, fraction of card height
    banner_arch: float          # px of arch of the ribbon banner
    inline_width: float         # relative width of the light inline inside the numeral
    misregister: tuple[int, int]  # colour plate offset in px
    wear: float                 # 0 (new) .. 1 (well used)
    split: str

    @classmethod
    def sample(cls, rng: np.random.Generator, split: str = "train") -> "CardStyle":
        fonts = FONTS[split]
        numeral_font = str(FONT_DIR / fonts[rng.integers(len(fonts))])
        word_font = numeral_font if rng.random() < 0.5 else str(FONT_DIR / fonts[rng.integers(len(fonts))])
        base = np.array([246, 238, 214]) + rng.normal(0, 6, 3)
        return cls(
            numeral_font=numeral_font,
            word_font=word_font,
            language="en" if rng.random() < 0.6 else "de",
            hue_shift=float(rng.normal(0, 6)),
            saturation=float(np.clip(rng.normal(1.0, 0.15), 0.6, 1.35)),
            value=float(np.clip(rng.normal(1.0, 0.08), 0.75, 1.15)),
            paper=tuple(int(v) for v in np.clip(base, 200, 255)),
            frame_lines=int(rng.integers(1, 4)),
            frame_inset=float(rng.uniform(2.0, 4.5)),
            ornaments=bool(rng.random() < 0.9),
            corner_index=bool(rng.random() < 0.4),
            numeral_weight=int(rng.integers(-2, 8)),
            numeral_slant=float(rng.uniform(-0.2, 0.2)) if rng.random() < 0.4 else 0.0,
            numeral_scale=float(rng.uniform(0.36, 0.5)),
            numeral_dy=float(rng.uniform(-0.07, 0.0)),
            banner_arch=float(rng.uniform(-6, 10)),
            inline_width=float(rng.uniform(0.12, 0.3)),
            misregister=(int(rng.integers(-2, 3)), int(rng.integers(-2, 3))),
            wear=float(rng.beta(1.2, 4.0)),
            split=split,
        )


# ---------------------------------------------------------------------------------------------
# small drawing helpers

def _jitter(style: CardStyle, rgb: RGB) -> RGB:
    h, s, v = colorsys.rgb_to_hsv(*(c / 255.0 for c in rgb))
    h = (h + style.hue_shift / 360.0) % 1.0
    s = min(1.0, s * style.saturation)
    v = min(1.0, v * style.value)
    return tuple(int(round(c * 255)) for c in colorsys.hsv_to_rgb(h, s, v))


def _shade(rgb: RGB, f: float) -> RGB:
    """f < 1 darkens, f > 1 lightens towards white."""
    a = np.array(rgb, float)
    out = a * f if f <= 1 else a + (255 - a) * (f - 1)
    return tuple(int(v) for v in np.clip(out, 0, 255))


@functools.lru_cache(maxsize=64)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


ZERO_MARKS = ("plain", "slashed", "dotted")  # how a digit 0 is drawn: as the font has it, or marked


@functools.lru_cache(maxsize=4096)
def _glyph_mask(path: str, text: str, weight: int = 0, slant: float = 0.0, zero: str = "plain") -> np.ndarray:
    """Tight float mask (0..1) of `text` drawn large, optionally bolder/thinner and sheared, its
    zeros optionally slashed or dotted; resized per use. Weight, slant and zero marks widen the set
    of letterforms beyond the bundled fonts."""
    font = _font(path, 160)
    l, t, r, b = font.getbbox(text)
    pad = 8 + abs(weight) + int(abs(slant) * (b - t))
    img = Image.new("L", (r - l + 2 * pad, b - t + 2 * pad), 0)
    draw = ImageDraw.Draw(img)
    draw.text((pad - l, pad - t), text, font=font, fill=255)
    if zero != "plain":
        _mark_zeros(draw, font, text, pad - l, pad - t, zero)
    a = np.asarray(img, np.float32) / 255.0
    if weight:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * abs(weight) + 1,) * 2)
        a = cv2.dilate(a, kernel) if weight > 0 else cv2.erode(a, kernel)
    if slant:
        h = a.shape[0]
        shear = np.float32([[1, -slant, slant * h / 2], [0, 1, 0]])
        a = cv2.warpAffine(a, shear, (a.shape[1], h))
    ys, xs = np.nonzero(a > 0.05)
    return a[ys.min():ys.max() + 1, xs.min():xs.max() + 1].copy()


def _mark_zeros(draw: ImageDraw.ImageDraw, font: ImageFont.FreeTypeFont, text: str, x: float, y: float,
                zero: str) -> None:
    """A slash or a dot inside every digit 0 of `text` drawn at (x, y): the marked zeros of many
    typefaces, one stroke away from an 8."""
    zl, zt, zr, zb = font.getbbox("0")
    w, h = zr - zl, zb - zt
    stroke = max(3, int(round(0.13 * w)))
    for i, ch in enumerate(text):
        if ch != "0":
            continue
        x0, y0 = x + font.getlength(text[:i]) + zl, y + zt
        if zero == "slashed":
            draw.line([(x0 + 0.3 * w, y0 + 0.82 * h), (x0 + 0.7 * w, y0 + 0.18 * h)], fill=255, width=stroke)
        elif zero == "dotted":
            rx, ry = 0.13 * w, 0.1 * h
            draw.ellipse([x0 + 0.5 * w - rx, y0 + 0.5 * h - ry, x0 + 0.5 * w + rx, y0 + 0.5 * h + ry], fill=255)
        else:
            raise ValueError(f"unknown zero mark {zero!r} (one of {', '.join(ZERO_MARKS)})")


def _fit_mask(path: str, text: str, max_w: int, max_h: int, squash: float = 1.0, weight: int = 0,
              slant: float = 0.0, zero: str = "plain") -> np.ndarray:
    m = _glyph_mask(path, text, weight, round(slant, 2), zero)
    h, w = m.shape
    scale = min(max_h / h, max_w / (w * squash))
    size = (max(1, int(w * scale * squash)), max(1, int(h * scale)))
    return cv2.resize(m, size, interpolation=cv2.INTER_AREA)


def _paint(canvas: np.ndarray, mask: np.ndarray, color, x: int, y: int) -> None:
    """Alpha-blend a solid colour (or an (h,w,3) image) through mask at top-left (x, y), clipped."""
    h, w = mask.shape
    H, W = canvas.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return
    m = mask[y0 - y:y1 - y, x0 - x:x1 - x, None]
    src = color[y0 - y:y1 - y, x0 - x:x1 - x] if isinstance(color, np.ndarray) else np.array(color, np.float32)
    region = canvas[y0:y1, x0:x1]
    region[:] = region * (1 - m) + src * m


def _styled_text(canvas: np.ndarray, path: str, text: str, box: tuple[int, int, int, int],
                 fill, outline: RGB | None, outline_px: float, inline: RGB | None = None,
                 inline_rel: float = 0.2, squash: float = 1.0, shadow: RGB | None = None, weight: int = 0,
                 slant: float = 0.0) -> None:
    """Draw text fitted into box (x, y, w, h), centred, with an outer stroke and an optional light
    inline running inside the letter strokes (the 'inline display numeral' look)."""
    x, y, w, h = box
    pad = int(np.ceil(outline_px)) + 3
    m = _fit_mask(path, text, w - 2 * pad, h - 2 * pad, squash, weight, slant)
    mh, mw = m.shape
    big = np.zeros((mh + 2 * pad, mw + 2 * pad), np.float32)
    big[pad:pad + mh, pad:pad + mw] = m
    ox, oy = x + (w - big.shape[1]) // 2, y + (h - big.shape[0]) // 2
    binary = (big > 0.5).astype(np.uint8)
    if shadow is not None:
        _paint(canvas, big * 0.5, shadow, ox + max(2, pad // 2), oy + max(2, pad // 2))
    if outline is not None and outline_px > 0:
        d_out = cv2.distanceTransform(1 - binary, cv2.DIST_L2, 3)
        ring = np.clip(outline_px + 0.5 - d_out, 0, 1)
        _paint(canvas, np.maximum(ring, big), outline, ox, oy)
    if isinstance(fill, np.ndarray):
        fill = cv2.resize(fill, (big.shape[1], big.shape[0]), interpolation=cv2.INTER_NEAREST)
    _paint(canvas, big, fill, ox, oy)
    if inline is not None:
        d_in = cv2.distanceTransform(binary, cv2.DIST_L2, 3)
        depth = d_in.max()
        if depth > 3:
            a, t = depth * inline_rel, max(1.0, depth * 0.22)
            line = np.clip(1 - np.abs(d_in - (a + t / 2)) / (t / 2), 0, 1) * (d_in > 0)
            _paint(canvas, line.astype(np.float32), inline, ox, oy)


def _poly(canvas: np.ndarray, pts, color: RGB, outline: RGB | None = None, width: int = 1) -> None:
    p = np.round(np.asarray(pts, np.float32) * 4).astype(np.int32)
    cv2.fillPoly(canvas, [p], tuple(float(c) for c in color), cv2.LINE_AA, shift=2)
    if outline is not None:
        cv2.polylines(canvas, [p], True, tuple(float(c) for c in outline), width, cv2.LINE_AA, shift=2)


def _rounded_rect_pts(x0, y0, x1, y1, r, n=6):
    pts = []
    for cx, cy, a0 in ((x1 - r, y0 + r, -90), (x1 - r, y1 - r, 0), (x0 + r, y1 - r, 90), (x0 + r, y0 + r, 180)):
        for a in np.linspace(a0, a0 + 90, n):
            pts.append((cx + r * np.cos(np.radians(a)), cy + r * np.sin(np.radians(a))))
    return np.array(pts, np.float32)


def _frame(canvas, style: CardStyle, color: RGB, rng: np.random.Generator, deco: bool) -> None:
    """Art-deco frame: concentric rounded rectangles, stepped corner brackets."""
    inset = style.frame_inset * 4
    for i in range(style.frame_lines):
        d = inset + i * 5
        pts = _rounded_rect_pts(d, d, CARD_W - 1 - d, CARD_H - 1 - d, max(2, 10 - i * 2))
        cv2.polylines(canvas, [np.round(pts * 4).astype(np.int32)], True, color,
                      3 if i == 0 else 2, cv2.LINE_AA, shift=2)
    if not deco:
        return
    d = inset + style.frame_lines * 5 + 2
    s = 16 + int(rng.integers(0, 8))
    for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
        cx = d if sx > 0 else CARD_W - 1 - d
        cy = d if sy > 0 else CARD_H - 1 - d
        for k in (0, 5):
            pts = np.array([(cx + sx * k, cy + sy * (s - k)), (cx + sx * k, cy + sy * k),
                            (cx + sx * (s - k), cy + sy * k)], np.float32)
            cv2.polylines(canvas, [np.round(pts * 4).astype(np.int32)], False, color, 2, cv2.LINE_AA, shift=2)
        _poly(canvas, [(cx + sx * 9, cy + sy * 9), (cx + sx * 13, cy + sy * 9), (cx + sx * 9, cy + sy * 13)], color)


def _fan(canvas, center, radius, direction_deg, color: RGB, line: RGB, ribs: int = 7, spread=180) -> None:
    """A fan / shell: a half disc of ribs opening in direction_deg."""
    cx, cy = center
    a0, a1 = direction_deg - spread / 2, direction_deg + spread / 2
    arc = [(cx + radius * np.cos(np.radians(a)), cy + radius * np.sin(np.radians(a)))
           for a in np.linspace(a0, a1, 24)]
    _poly(canvas, [(cx, cy)] + arc, color, line, 2)
    for a in np.linspace(a0, a1, ribs + 1)[1:-1]:
        p = (int(round(cx + radius * np.cos(np.radians(a)))), int(round(cy + radius * np.sin(np.radians(a)))))
        cv2.line(canvas, (int(cx), int(cy)), p, line, 1, cv2.LINE_AA)
    inner = [(cx + radius * 0.35 * np.cos(np.radians(a)), cy + radius * 0.35 * np.sin(np.radians(a)))
             for a in np.linspace(a0, a1, 12)]
    _poly(canvas, [(cx, cy)] + inner, _shade(color, 0.75))


def _banner(canvas, style: CardStyle, rng, y_center: float, width: float, height: float,
            color: RGB, text: str, text_color: RGB, angle: float = 0.0) -> None:
    """A ribbon banner with folded swallow-tail ends, optionally arched and slanted."""
    cx = CARD_W / 2
    x0, x1 = cx - width / 2, cx + width / 2
    arch = style.banner_arch
    xs = np.linspace(x0, x1, 16)
    bend = arch * (1 - ((xs - cx) / (width / 2)) ** 2)
    top = np.stack([xs, y_center - height / 2 - bend], 1)
    bot = np.stack([xs[::-1], y_center + height / 2 - bend[::-1]], 1)
    tail_c = _shade(color, 0.7)
    tw, drop = height * 0.9, height * 0.35
    tails = []
    for side in (-1, 1):
        xe = x0 if side < 0 else x1
        tails.append([(xe - side * 4, y_center - height / 2 + drop), (xe + side * tw, y_center - height / 2 + drop),
                      (xe + side * tw * 0.6, y_center + drop), (xe + side * tw, y_center + height / 2 + drop),
                      (xe - side * 4, y_center + height / 2 + drop)])
    rot = cv2.getRotationMatrix2D((cx, y_center), angle, 1.0)

    def tr(p):
        p = np.asarray(p, np.float32)
        return p @ rot[:, :2].T + rot[:, 2]

    edge = _shade(color, 0.5)
    for t in tails:
        _poly(canvas, tr(t), tail_c, edge, 1)
    _poly(canvas, tr(np.concatenate([top, bot])), color, edge, 2)
    # Text drawn upright into a patch, then rotated with the banner.
    th, tw_ = int(height * 0.82), int(width * 0.86)
    pad = int(abs(np.sin(np.radians(angle))) * tw_ / 2) + 4  # room for the rotated text
    alpha = np.zeros((th + 2 * pad, tw_ + 8, 3), np.float32)
    _styled_text(alpha, style.word_font, text, (4, pad, tw_, th), (1.0, 1.0, 1.0), None, 0)
    a = alpha[..., 0]
    if angle:
        m = cv2.getRotationMatrix2D((a.shape[1] / 2, a.shape[0] / 2), angle, 1.0)
        a = cv2.warpAffine(a, m, (a.shape[1], a.shape[0]))
    _paint(canvas, a, text_color, int(cx - a.shape[1] / 2), int(y_center - np.mean(bend) * 0.6 - a.shape[0] / 2))


# ---------------------------------------------------------------------------------------------
# Flip 7 faces

FLIP7_COLORS: dict[str, RGB] = {
    "1": (150, 140, 178), "2": (165, 190, 45), "3": (185, 22, 58), "4": (0, 138, 140),
    "5": (38, 150, 62), "6": (122, 58, 160), "7": (242, 112, 92), "8": (128, 204, 104),
    "9": (242, 140, 28), "10": (210, 32, 32), "11": (38, 88, 190), "12": (112, 96, 80),
}
RAINBOW: tuple[RGB, ...] = ((228, 40, 40), (245, 140, 30), (240, 210, 40), (60, 170, 70),
                            (40, 110, 200), (120, 60, 170))
NUMBER_WORDS = {
    "en": ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN",
           "ELEVEN", "TWELVE"),
    "de": ("NULL", "EINS", "ZWEI", "DREI", "VIER", "FÜNF", "SECHS", "SIEBEN", "ACHT", "NEUN", "ZEHN",
           "ELF", "ZWÖLF"),
}
ACTION_WORDS = {
    "freeze": {"en": ("FREEZE",), "de": ("FREEZE",)},
    "flip-three": {"en": ("FLIP", "THREE"), "de": ("FLIP", "THREE")},
    "second-chance": {"en": ("SECOND", "CHANCE"), "de": ("ZWEITE", "CHANCE")},
}
MODIFIER_TEXT = {
    "en": ("ADD TO YOUR SCORE", "BONUS POINTS", "DOUBLE YOUR NUMBERS", "SCORE BONUS"),
    "de": ("ZU DEINEN PUNKTEN", "BONUSPUNKTE", "VERDOPPLE DEINE ZAHLEN", "PUNKTE DAZU"),
}


def _base(style: CardStyle, face: RGB, rng: np.random.Generator) -> np.ndarray:
    """Card stock of colour `face` with a faint paper grain, float32 RGB."""
    c = np.empty((CARD_H, CARD_W, 3), np.float32)
    c[:] = face
    grain = cv2.resize(rng.normal(0, 1, (CARD_H // 8, CARD_W // 8)).astype(np.float32), (CARD_W, CARD_H))
    c += grain[..., None] * rng.uniform(1, 5)
    return c


def _number_face(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    n = int(label)
    canvas = _base(style, style.paper, rng)
    gold = _jitter(style, (196, 158, 64))
    colour = _jitter(style, FLIP7_COLORS.get(label, (200, 60, 60)))
    stripes = [_jitter(style, c) for c in RAINBOW]
    if n == 0:
        colour = stripes[int(rng.integers(len(stripes)))]
    _frame(canvas, style, gold, rng, deco=True)
    if style.ornaments:
        r = 22 + rng.uniform(-4, 6)
        y = CARD_H * rng.uniform(0.42, 0.55)
        for x, d in ((style.frame_inset * 4 + 4, 0), (CARD_W - 1 - style.frame_inset * 4 - 4, 180)):
            _fan(canvas, (x, y), r, d, colour, _shade(colour, 0.6), ribs=int(rng.integers(5, 9)))
    # The big numeral: a coloured body with a light inline inside a dark outline.
    text = str(n)
    nh = int(CARD_H * style.numeral_scale)
    nw = int(CARD_W * (0.62 if n < 10 else 0.74))
    ny = int(CARD_H * (0.44 + style.numeral_dy) - nh / 2)
    if n == 0:
        fill = np.repeat(np.repeat(np.array(stripes, np.float32)[:, None, :], 4, axis=1), 1, axis=0)
        fill = cv2.resize(fill, (4, len(stripes) * 8), interpolation=cv2.INTER_NEAREST)
    else:
        fill = colour
    _styled_text(canvas, style.numeral_font, text, ((CARD_W - nw) // 2, ny, nw, nh), fill,
                 _shade(colour, 0.4), outline_px=float(rng.uniform(2.5, 5.5)), inline=_shade(style.paper, 1.05),
                 inline_rel=style.inline_width, squash=float(rng.uniform(0.85, 1.1)),
                 shadow=_shade(colour, 0.3) if rng.random() < 0.5 else None,
                 weight=style.numeral_weight, slant=style.numeral_slant)
    word = NUMBER_WORDS[style.language][n]
    banner_colour = colour if rng.random() < 0.7 else _shade(colour, 0.8)
    _banner(canvas, style, rng, CARD_H * rng.uniform(0.76, 0.82), CARD_W * rng.uniform(0.58, 0.7),
            rng.uniform(30, 38), banner_colour, word, _shade(style.paper, 1.1))
    if style.corner_index:
        _corner_index(canvas, style, text, colour)
    return canvas


def _corner_index(canvas, style: CardStyle, text: str, colour: RGB) -> None:
    d = int(style.frame_inset * 4 + 8)
    box = (d, d, 30, 30)
    _styled_text(canvas, style.numeral_font, text, box, colour, _shade(colour, 0.4), 1.0)
    # The opposite corner carries the same index upside down.
    patch = canvas[CARD_H - d - 30:CARD_H - d, CARD_W - d - 30:CARD_W - d]
    flipped = patch[::-1, ::-1].copy()
    _styled_text(flipped, style.numeral_font, text, (0, 0, 30, 30), colour, _shade(colour, 0.4), 1.0)
    patch[:] = flipped[::-1, ::-1]


def _modifier_face(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    orange = _jitter(style, (244, 146, 40))
    canvas = _base(style, orange, rng)
    light = _shade(orange, 1.45)
    _frame(canvas, style, light, rng, deco=bool(rng.random() < 0.6))
    if style.ornaments:
        fan_c = _shade(orange, 1.25)
        r = 26 + rng.uniform(-4, 6)
        inset = style.frame_inset * 4 + 3
        _fan(canvas, (CARD_W / 2, inset), r, 90, fan_c, _shade(orange, 0.7))
        _fan(canvas, (CARD_W / 2, CARD_H - 1 - inset), r, -90, fan_c, _shade(orange, 0.7))
    red = _jitter(style, (214, 30, 30))
    text = "x2" if label == "x2" else label
    if label == "x2" and rng.random() < 0.5:
        text = "×2"
    nh = int(CARD_H * style.numeral_scale * 0.85)
    nw = int(CARD_W * 0.8)
    ny = int(CARD_H * (0.5 + style.numeral_dy * 0.5) - nh / 2)
    outline = (255, 255, 255) if rng.random() < 0.5 else _shade(red, 0.35)
    _styled_text(canvas, style.numeral_font, text, ((CARD_W - nw) // 2, ny, nw, nh), red, outline,
                 outline_px=float(rng.uniform(2.5, 5)), inline=light if rng.random() < 0.5 else None,
                 inline_rel=style.inline_width, weight=style.numeral_weight, slant=style.numeral_slant)
    lines = MODIFIER_TEXT[style.language]
    ink = _shade(orange, 0.35)
    for y in (CARD_H * 0.22, CARD_H * 0.78):
        line = lines[int(rng.integers(len(lines)))]
        _styled_text(canvas, style.word_font, line, (40, int(y - 9), CARD_W - 80, 18), ink, None, 0)
    return canvas


def _padlock(canvas, cx, cy, s, body: RGB, edge: RGB) -> None:
    cv2.ellipse(canvas, (int(cx), int(cy - s * 0.35)), (int(s * 0.32), int(s * 0.4)), 0, 180, 360, edge,
                max(2, int(s * 0.12)), cv2.LINE_AA)
    _poly(canvas, [(cx - s * 0.5, cy - s * 0.3), (cx + s * 0.5, cy - s * 0.3), (cx + s * 0.5, cy + s * 0.45),
                   (cx - s * 0.5, cy + s * 0.45)], body, edge, 2)
    cv2.circle(canvas, (int(cx), int(cy)), max(1, int(s * 0.09)), edge, -1, cv2.LINE_AA)


def _bolt(canvas, cx, cy, s, angle, color: RGB, edge: RGB) -> None:
    pts = np.array([(0.1, -1), (-0.45, 0.1), (0.0, 0.05), (-0.15, 1), (0.45, -0.15), (0.0, -0.1)], np.float32) * s
    a = np.radians(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    _poly(canvas, pts @ rot.T + (cx, cy), color, edge, 1)


def _heart(canvas, cx, cy, s, color: RGB, width: int) -> None:
    t = np.linspace(0, 2 * np.pi, 40)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    pts = np.stack([cx + x * s / 32, cy + y * s / 32], 1)
    cv2.polylines(canvas, [np.round(pts * 4).astype(np.int32)], True, color, width, cv2.LINE_AA, shift=2)


def _mini_card(canvas, cx, cy, s, angle, face: RGB, edge: RGB) -> None:
    w, h = s * 0.72, s
    pts = _rounded_rect_pts(-w / 2, -h / 2, w / 2, h / 2, s * 0.08, 3)
    a = np.radians(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    _poly(canvas, pts @ rot.T + (cx, cy), face, edge, 2)


def _action_face(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    face = _jitter(style, {"freeze": (168, 214, 238), "flip-three": (250, 214, 58),
                           "second-chance": (238, 98, 88)}[label])
    canvas = _base(style, face, rng)
    edge = _shade(face, 0.45)
    _frame(canvas, style, _shade(face, 1.4), rng, deco=bool(rng.random() < 0.5))
    words = ACTION_WORDS[label][style.language]
    n_pics = int(rng.integers(2, 5)) if style.ornaments else 1
    spots = [(rng.uniform(0.25, 0.75) * CARD_W, rng.uniform(0.2, 0.5) * CARD_H) for _ in range(n_pics)]
    for i, (x, y) in enumerate(spots):
        s = rng.uniform(28, 60) if i else rng.uniform(60, 90)
        if label == "freeze":
            _padlock(canvas, x, y, s, _shade(face, 1.3), edge)
            _bolt(canvas, x + rng.uniform(-50, 50), y + rng.uniform(20, 60), rng.uniform(18, 30),
                  rng.uniform(-30, 30), _jitter(style, (252, 236, 90)), edge)
        elif label == "flip-three":
            for k in range(3):
                _mini_card(canvas, x + (k - 1) * s * 0.3, y, s, (k - 1) * 15 + rng.uniform(-5, 5),
                           (250, 248, 240), edge)
        else:
            _heart(canvas, x, y, s, _shade(face, 1.5) if rng.random() < 0.5 else edge, int(rng.integers(2, 5)))
    banner_c = _jitter(style, {"freeze": (38, 96, 170), "flip-three": (208, 70, 40),
                               "second-chance": (150, 20, 40)}[label])
    slant = float(rng.uniform(-14, -4)) if label == "freeze" else float(rng.uniform(-5, 5))
    if len(words) == 1:
        _banner(canvas, style, rng, CARD_H * rng.uniform(0.68, 0.76), CARD_W * 0.72, 40, banner_c, words[0],
                (255, 255, 255), angle=slant)
    else:
        y0 = CARD_H * rng.uniform(0.6, 0.66)
        for k, w in enumerate(words):
            _banner(canvas, style, rng, y0 + k * 44, CARD_W * rng.uniform(0.6, 0.72), 36, banner_c, w,
                    (255, 255, 255), angle=slant)
    return canvas


def render_flip7(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    if label.isdigit():
        return _number_face(label, rng, style)
    if label in ACTION_WORDS:
        return _action_face(label, rng, style)
    return _modifier_face(label, rng, style)


# ---------------------------------------------------------------------------------------------
# print and wear, common to every deck

def _print_and_wear(canvas: np.ndarray, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    dx, dy = style.misregister
    if dx or dy:
        # One colour plate slightly off register.
        ch = int(rng.integers(3))
        canvas[..., ch] = np.roll(canvas[..., ch], (dy, dx), axis=(0, 1))
    if rng.random() < 0.3:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.5, 1.0))  # ink spread
    wear = style.wear
    if wear > 0.05:
        # Worn edges turn whitish.
        yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
        edge_d = np.minimum(np.minimum(xx, CARD_W - 1 - xx), np.minimum(yy, CARD_H - 1 - yy))
        noise = cv2.resize(rng.random((CARD_H // 6, CARD_W // 6)).astype(np.float32), (CARD_W, CARD_H))
        whiten = np.clip((wear * 6 * noise - edge_d) / 3, 0, 1) * wear
        canvas += (250 - canvas) * whiten[..., None]
        for _ in range(int(wear * 12)):
            p0 = (int(rng.integers(CARD_W)), int(rng.integers(CARD_H)))
            p1 = (p0[0] + int(rng.integers(-60, 60)), p0[1] + int(rng.integers(-60, 60)))
            cv2.line(canvas, p0, p1, (235, 235, 230), 1, cv2.LINE_AA)
        for _ in range(int(wear * 4)):
            c = (int(rng.integers(CARD_W)), int(rng.integers(CARD_H)))
            stain = np.zeros((CARD_H, CARD_W), np.float32)
            cv2.ellipse(stain, c, (int(rng.integers(5, 30)), int(rng.integers(5, 30))), float(rng.uniform(0, 180)),
                        0, 360, 1.0, -1)
            stain = cv2.GaussianBlur(stain, (0, 0), 4) * rng.uniform(0.05, 0.25)
            canvas *= 1 - stain[..., None] * 0.6
        if rng.random() < wear:
            # A crease: a thin dark line beside a light one.
            x0, x1 = int(rng.integers(20, CARD_W - 20)), int(rng.integers(20, CARD_W - 20))
            crease = np.zeros((CARD_H, CARD_W), np.float32)
            cv2.line(crease, (x0, 0), (x1, CARD_H), 1.0, 1, cv2.LINE_AA)
            canvas *= 1 - 0.2 * crease[..., None]
            canvas += (255 - canvas) * 0.3 * np.roll(crease, 1, axis=1)[..., None]
    return canvas


@functools.lru_cache(maxsize=1)
def _corner_alpha() -> np.ndarray:
    a = np.zeros((CARD_H, CARD_W), np.uint8)
    cv2.fillPoly(a, [np.round(_rounded_rect_pts(0, 0, CARD_W - 1, CARD_H - 1, CORNER_RADIUS, 8) * 4)
                     .astype(np.int32)], 255, cv2.LINE_AA, shift=2)
    return a


Renderer = Callable[[str, np.random.Generator, CardStyle], np.ndarray]
RENDERERS: dict[str, Renderer] = {"flip7": render_flip7}


def render_card(deck: str, label: str, rng: np.random.Generator, style: CardStyle | None = None) -> np.ndarray:
    """RGBA uint8 (CARD_H, CARD_W, 4) face of `label`; transparent outside the rounded corners."""
    from rules.cards import DECKS

    if deck not in RENDERERS:
        raise ValueError(f"no card renderer for deck {deck!r} (have: {', '.join(RENDERERS)})")
    if label not in DECKS[deck].labels:
        raise ValueError(f"{label!r} is not a {deck} label")
    style = style or CardStyle.sample(rng)
    canvas = RENDERERS[deck](label, rng, style)
    canvas = _print_and_wear(canvas, rng, style)
    rgba = np.empty((CARD_H, CARD_W, 4), np.uint8)
    rgba[..., :3] = np.clip(canvas, 0, 255)
    rgba[..., 3] = _corner_alpha()
    return rgba


# Decks drawn in their own modules with the helpers above; importing them registers them in RENDERERS.
from vision.synth import render_uno, render_vengeance  # noqa: E402,F401
