"""UNO Flip card faces for the renderer (docs/cards.md, "UNO Flip"): both sides, 108 face labels.

Light faces: white border, a solid red / yellow / green / blue field, a white oval outline tilted
about 30 degrees, the symbol very large in white with a black outline and shadow, small copies in
the top-left and (upside down) bottom-right corners, a small "UNO FLIP!" logo top right. Dark
faces: black border, an orange / pink / purple / teal field with a soft gradient, the oval and
symbols black with a light outline. Wilds: the light ones on black with the oval split into the
four light colours, the dark ones with the field split into the four dark colours.

Symbols are drawn with OpenCV primitives from their description (no artwork is copied): digits
and +N from the style's font (6 and 9 underlined), reverse = two opposed diagonal arrows, skip =
a circle with a slash, flip = an arrow going into a card, skip everyone = a circular clockwise
arrow, wild draw color = a stack of cards and an up arrow.

Colour is what tells most labels apart (red-7 from blue-7), so hue jitter is kept to a fraction
of the style's: red, orange and pink, or green and teal, must stay apart in every printing.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import cv2
import numpy as np

from rules.cards import UNO_DARK_COLORS, UNO_LIGHT_COLORS
from vision.synth.render import (CARD_H, CARD_W, RENDERERS, RGB, CardStyle, _fit_mask, _jitter, _paint, _rounded_rect_pts,
                                 _shade)

FIELD_COLORS: dict[str, RGB] = {
    "red": (214, 32, 40), "yellow": (250, 206, 24), "green": (36, 160, 72), "blue": (22, 100, 200),
    "pink": (232, 36, 128), "teal": (0, 150, 152), "orange": (246, 122, 22), "purple": (104, 50, 176),
}
HUE_FRACTION = 0.4   # of the style's hue shift (about 2.4 degrees sd instead of 6)
DRAW_TEXT = {"draw-one": "+1", "draw-five": "+5", "wild-draw-two": "+2"}
MASK_SIZE = 240      # geometric symbols are drawn at this size, then fitted to their box


def _uno_style(style: CardStyle) -> CardStyle:
    return replace(style, hue_shift=style.hue_shift * HUE_FRACTION)


def _parse(label: str) -> tuple[str | None, str]:
    """(colour or None for wilds, symbol): 'red-7' -> ('red', '7'), 'pink-skip-everyone' ->
    ('pink', 'skip-everyone'), 'wild' -> (None, 'wild')."""
    head, _, rest = label.partition("-")
    if head in UNO_LIGHT_COLORS or head in UNO_DARK_COLORS:
        return head, rest
    return None, label


# ---------------------------------------------------------------------------------------------
# symbols as masks

def _arrow(m: np.ndarray, p0, p1, t: int, head: float, shaft: float = 0.7, spread: float = 0.65,
           subpixel: bool = True) -> None:
    """An arrow from p0 to p1 drawn into mask m: a line of width t ending `shaft` x head before the
    tip, a head `head` long and 2 x `spread` x head wide (its corners to a quarter pixel)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    d = (p1 - p0) / (np.linalg.norm(p1 - p0) + 1e-6)
    n = np.array([-d[1], d[0]])
    cv2.line(m, tuple(int(v) for v in p0), tuple(int(v) for v in p1 - d * head * shaft), 1.0, t, cv2.LINE_AA)
    tri = np.array([p1, p1 - d * head + n * head * spread, p1 - d * head - n * head * spread])
    if subpixel:
        cv2.fillPoly(m, [np.round(tri * 4).astype(np.int32)], 1.0, cv2.LINE_AA, shift=2)
    else:
        cv2.fillPoly(m, [np.round(tri).astype(np.int32)], 1.0, cv2.LINE_AA)


@functools.lru_cache(maxsize=256)
def _shape_mask(symbol: str, weight: float) -> np.ndarray:
    """Tight float mask of a drawn symbol; `weight` scales the stroke width."""
    s = MASK_SIZE
    m = np.zeros((s, s), np.float32)
    t = max(6, int(s * 0.085 * weight))
    if symbol == "reverse":
        # Two arrows side by side along the diagonal, pointing opposite ways.
        off = np.array([s * 0.09, s * 0.09])
        a0, a1 = np.array([s * 0.2, s * 0.8]), np.array([s * 0.8, s * 0.2])
        _arrow(m, a0 - off, a1 - off, t, s * 0.26)
        _arrow(m, a1 + off, a0 + off, t, s * 0.26)
    elif symbol == "skip":
        c, r = (s // 2, s // 2), int(s * 0.38)
        cv2.circle(m, c, r, 1.0, t, cv2.LINE_AA)
        d = r * 0.7071
        cv2.line(m, (int(c[0] - d), int(c[1] + d)), (int(c[0] + d), int(c[1] - d)), 1.0, t, cv2.LINE_AA)
    elif symbol == "flip":
        # A card (rectangle) on the right and an arrow curving up from the left into it.
        x0, y0, x1, y1 = s * 0.48, s * 0.12, s * 0.9, s * 0.72
        pts = _rounded_rect_pts(x0, y0, x1, y1, s * 0.05, 3)
        cv2.polylines(m, [np.round(pts * 4).astype(np.int32)], True, 1.0, t, cv2.LINE_AA, shift=2)
        arc = [(s * 0.12 + s * 0.45 * (1 - np.cos(a)), s * 0.9 - s * 0.5 * np.sin(a)) for a in np.linspace(0, 1.25, 12)]
        cv2.polylines(m, [np.round(np.array(arc[:-1]) * 4).astype(np.int32)], False, 1.0, t, cv2.LINE_AA, shift=2)
        _arrow(m, arc[-3], (s * 0.7, s * 0.42), t, s * 0.22)
    elif symbol == "skip-everyone":
        c, r = (s // 2, s // 2), int(s * 0.36)
        cv2.ellipse(m, c, (r, r), 0, -60, 220, 1.0, t, cv2.LINE_AA)
        # Arrowhead at the arc's end (angle 220 deg), pointing on clockwise (screen y is down).
        a = np.radians(220)
        end = np.array([c[0] + r * np.cos(a), c[1] + r * np.sin(a)])
        tangent = np.array([-np.sin(a), np.cos(a)])
        _arrow(m, end - tangent * s * 0.05, end + tangent * s * 0.2, t, s * 0.24)
    elif symbol == "wild-draw-color":
        # A stack of three cards with an up arrow beside it.
        for k in range(3):
            x0, y0 = s * (0.08 + 0.1 * k), s * (0.34 - 0.1 * k)
            pts = _rounded_rect_pts(x0, y0, x0 + s * 0.4, y0 + s * 0.56, s * 0.04, 3)
            p = np.round(pts * 4).astype(np.int32)
            cv2.fillPoly(m, [p], 0.0, cv2.LINE_AA, shift=2)
            cv2.polylines(m, [p], True, 1.0, max(4, t // 2), cv2.LINE_AA, shift=2)
        cv2.fillPoly(m, [p], 1.0, cv2.LINE_AA, shift=2)
        _arrow(m, (s * 0.84, s * 0.9), (s * 0.84, s * 0.1), t, s * 0.24)
    else:
        raise ValueError(f"no drawn symbol {symbol!r}")
    ys, xs = np.nonzero(m > 0.05)
    return m[ys.min():ys.max() + 1, xs.min():xs.max() + 1].copy()


def _symbol_mask(symbol: str, style: CardStyle, w: int, h: int, weight: float) -> np.ndarray:
    """The symbol fitted into w x h (aspect kept)."""
    if symbol.isdigit() or symbol in DRAW_TEXT:
        text = DRAW_TEXT.get(symbol, symbol)
        slant = float(np.clip(style.numeral_slant, -0.12, 0.12))
        if symbol in ("6", "9"):
            # Underlined: the glyph, a gap, and a bar as wide as the glyph.
            g = _fit_mask(style.numeral_font, text, w, int(h * 0.82), weight=style.numeral_weight, slant=slant)
            bar_h = max(3, int(h * 0.08))
            out = np.zeros((g.shape[0] + bar_h * 2, g.shape[1]), np.float32)
            out[:g.shape[0]] = g
            bw = int(g.shape[1] * 0.8)
            x0 = (g.shape[1] - bw) // 2
            out[g.shape[0] + bar_h:, x0:x0 + bw] = 1.0
            return out
        return _fit_mask(style.numeral_font, text, w, h, weight=style.numeral_weight, slant=slant)
    m = _shape_mask(symbol, round(weight, 1))
    scale = min(w / m.shape[1], h / m.shape[0])
    return cv2.resize(m, (max(1, int(m.shape[1] * scale)), max(1, int(m.shape[0] * scale))),
                      interpolation=cv2.INTER_AREA)


def _stamp(canvas: np.ndarray, mask: np.ndarray, center, fill: RGB, outline: RGB, outline_px: float,
           shadow: RGB | None = None, shadow_px: int = 0, upside_down: bool = False) -> None:
    """Paint a mask centred at `center`: drop shadow, outer outline, fill."""
    if upside_down:
        mask = mask[::-1, ::-1]
        shadow_px = -shadow_px
    pad = int(np.ceil(outline_px)) + 2
    big = np.pad(mask, pad)
    ring = np.clip(outline_px + 0.5 - cv2.distanceTransform((big < 0.5).astype(np.uint8), cv2.DIST_L2, 3), 0, 1)
    body = np.maximum(ring, big)
    x = int(round(center[0] - big.shape[1] / 2))
    y = int(round(center[1] - big.shape[0] / 2))
    if shadow is not None and shadow_px:
        _paint(canvas, cv2.GaussianBlur(body, (0, 0), 1.5) * 0.7, shadow, x + shadow_px, y + shadow_px)
    _paint(canvas, body, outline, x, y)
    _paint(canvas, big, fill, x, y)


# ---------------------------------------------------------------------------------------------
# fields, oval, logo

def _field_mask(border: float, radius: float) -> np.ndarray:
    m = np.zeros((CARD_H, CARD_W), np.float32)
    pts = _rounded_rect_pts(border, border, CARD_W - 1 - border, CARD_H - 1 - border, radius, 6)
    cv2.fillPoly(m, [np.round(pts * 4).astype(np.int32)], 1.0, cv2.LINE_AA, shift=2)
    return m


def _gradient(rng: np.random.Generator, base: RGB) -> np.ndarray:
    """The dark side's soft gradient: lighter at one end, darker at the other, a little radial glow."""
    yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
    a = rng.uniform(0, 2 * np.pi)
    ramp = ((xx / CARD_W - 0.5) * np.cos(a) + (yy / CARD_H - 0.5) * np.sin(a))
    glow = np.exp(-(((xx - CARD_W / 2) / CARD_W) ** 2 + ((yy - CARD_H / 2) / CARD_H) ** 2) * 6)
    f = 1 + rng.uniform(0.15, 0.4) * ramp + rng.uniform(0.0, 0.15) * (glow - 0.5)
    return np.array(base, np.float32) * f[..., None]


def _oval(rng: np.random.Generator) -> tuple[tuple[int, int], tuple[int, int], float]:
    """Centre, semi-axes and tilt of the oval: long axis about 30 degrees off vertical, its top
    leaning right (OpenCV turns a positive angle clockwise on screen)."""
    c = (int(CARD_W / 2 + rng.normal(0, 2)), int(CARD_H / 2 + rng.normal(0, 3)))
    axes = (int(CARD_W * rng.uniform(0.28, 0.36)), int(CARD_H * rng.uniform(0.39, 0.45)))
    return c, axes, float(rng.uniform(24, 36))


def _logo(canvas: np.ndarray, style: CardStyle, border: float, fill: RGB, ink: RGB) -> None:
    """A small "UNO FLIP!" badge in the top-right corner."""
    w, h = 62, 20
    x, y = int(CARD_W - border - w - 4), int(border + 5)
    badge = np.zeros((h, w), np.float32)
    cv2.ellipse(badge, (w // 2, h // 2), (w // 2 - 1, h // 2 - 1), 0, 0, 360, 1.0, -1, cv2.LINE_AA)
    _paint(canvas, badge, ink, x, y)
    text = _fit_mask(style.word_font, "UNO FLIP!", w - 14, h - 8)
    _paint(canvas, text, fill, x + (w - text.shape[1]) // 2, y + (h - text.shape[0]) // 2)


# ---------------------------------------------------------------------------------------------
# faces

def render_uno(label: str, rng: np.random.Generator, style: CardStyle) -> np.ndarray:
    style = _uno_style(style)
    colour, symbol = _parse(label)
    dark = (colour in UNO_DARK_COLORS) or label in ("dark-wild", "wild-draw-color")
    white = _shade(_jitter(style, style.paper), 1.6)           # the light side's white border and ink
    black = tuple(int(v) for v in np.clip(np.array(style.paper) * 0.06 + rng.normal(0, 3, 3), 0, 40))
    border = float(rng.uniform(10, 18))
    canvas = np.empty((CARD_H, CARD_W, 3), np.float32)
    canvas[:] = black if dark else white
    field = _field_mask(border, float(rng.uniform(6, 16)))
    centre, axes, tilt = _oval(rng)
    quadrants = None
    if colour is not None:
        base = _jitter(style, FIELD_COLORS[colour])
        paint = _gradient(rng, base) if dark else np.array(base, np.float32) * np.ones((CARD_H, CARD_W, 1), np.float32)
    elif dark:
        # dark-wild / wild-draw-color: the field split into the four dark colours.
        quadrants = [_jitter(style, FIELD_COLORS[c]) for c in ("teal", "orange", "pink", "purple")]
        paint = _split(quadrants, centre, tilt)
        paint *= _gradient(rng, (1.0, 1.0, 1.0))
    else:
        paint = np.array(black, np.float32) * np.ones((CARD_H, CARD_W, 1), np.float32)
    canvas[:] = canvas * (1 - field[..., None]) + paint * field[..., None]
    if colour is None and not dark:
        # Light wilds: the oval filled with the four light colours.
        quadrants = [_jitter(style, FIELD_COLORS[c]) for c in ("red", "blue", "yellow", "green")]
        inside = np.zeros((CARD_H, CARD_W), np.float32)
        cv2.ellipse(inside, centre, axes, tilt, 0, 360, 1.0, -1, cv2.LINE_AA)
        canvas[:] = canvas * (1 - inside[..., None]) + _split(quadrants, centre, tilt) * inside[..., None]
    ink, edge = (black, _shade(FIELD_COLORS[colour] if colour else (200, 200, 200), 1.6)) if dark else (white, black)
    if dark and rng.random() < 0.5:
        edge = white
    # The oval outline (on dark faces black with a light edge).
    ring_w = int(rng.uniform(5, 11))
    oval = np.zeros((CARD_H, CARD_W), np.float32)
    cv2.ellipse(oval, centre, axes, tilt, 0, 360, 1.0, ring_w, cv2.LINE_AA)
    if dark:
        halo = cv2.dilate(oval, np.ones((3, 3), np.uint8), iterations=int(rng.integers(1, 3)))
        _paint(canvas, halo, edge, 0, 0)
    _paint(canvas, oval, ink, 0, 0)
    # The big symbol, and its corner copies.
    weight = float(rng.uniform(0.8, 1.25))
    drawn = symbol not in ("wild", "dark-wild")
    if drawn:
        big = _symbol_mask(symbol, style, int(CARD_W * rng.uniform(0.5, 0.62)), int(CARD_H * rng.uniform(0.34, 0.42)),
                           weight)
        c = (CARD_W / 2 + rng.normal(0, 2), CARD_H / 2 + rng.normal(0, 3))
        _stamp(canvas, big, c, ink, edge, float(rng.uniform(2.5, 5.5)), shadow=(0, 0, 0) if not dark else edge,
               shadow_px=int(rng.integers(3, 8)) if not dark else int(rng.integers(0, 3)))
    corner = int(rng.uniform(26, 36))
    cx, cy = border + corner * 0.55 + 2, border + corner * 0.7 + 2
    small_ink = ink if colour is not None or not dark else black
    for upside_down, (x, y) in ((False, (cx, cy)), (True, (CARD_W - cx, CARD_H - cy))):
        if drawn:
            m = _symbol_mask(symbol, style, int(corner * 0.95), int(corner * 1.2), weight)
            _stamp(canvas, m, (x, y), small_ink, edge, 1.5, upside_down=upside_down)
        else:
            _mini_oval(canvas, (x, y), corner * 0.45, tilt, quadrants, ink if dark else white)
    if rng.random() < 0.8:
        _logo(canvas, style, border, (250, 214, 40) if not dark else _shade(edge, 1.0), (200, 20, 30) if not dark else black)
    return canvas


def _split(colors: list[RGB], centre, tilt: float) -> np.ndarray:
    """Four colour quarters divided along the oval's axes."""
    yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
    a = np.radians(tilt)
    u = (xx - centre[0]) * np.cos(a) + (yy - centre[1]) * np.sin(a)
    v = -(xx - centre[0]) * np.sin(a) + (yy - centre[1]) * np.cos(a)
    idx = (u > 0).astype(int) + 2 * (v > 0).astype(int)
    return np.array(colors, np.float32)[idx]


def _mini_oval(canvas: np.ndarray, center, r: float, tilt: float, colors: list[RGB], rim: RGB) -> None:
    """The wilds' corner mark: a small oval in the four colours."""
    axes = (int(r * 0.75), int(r))
    c = (int(center[0]), int(center[1]))
    for k, col in enumerate(colors):
        m = np.zeros((CARD_H, CARD_W), np.float32)
        cv2.ellipse(m, c, axes, tilt, k * 90, (k + 1) * 90, 1.0, -1, cv2.LINE_AA)
        _paint(canvas, m, col, 0, 0)
    m = np.zeros((CARD_H, CARD_W), np.float32)
    cv2.ellipse(m, c, axes, tilt, 0, 360, 1.0, 2, cv2.LINE_AA)
    _paint(canvas, m, rim, 0, 0)


RENDERERS["uno-flip"] = render_uno
