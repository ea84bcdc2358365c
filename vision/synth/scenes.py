"""Synthetic camera frames of a card table: scenes for training and deal videos for testing.

`make_scene` lays cards on a generated table surface and adds what a real camera over a real
table adds: perspective, neighbouring and underlying cards, fingers, uneven light, shadows,
glare, defocus and motion blur, white balance, sensor noise and JPEG. `make_deal_video` films a
deal: a hand brings each card in, it lands, the hand leaves; with the hard cases the placement
detector must get right (a card on top of the previous one, the same label twice, a hand passing
with no card, a card nudged, a card slid away to a player), and the ground-truth events.

Every quad is np.float32 (4, 2) in frame pixels, in the card's own printed order: top-left,
top-right, bottom-right, bottom-left of the face as drawn (so warping a frame at a true quad gives
an upright crop). Surfaces of the "heldout" split are kinds training never sees.

`python -m vision.synth.scenes --help` writes sample scenes and a sample deal video for people to look at.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import cv2
import numpy as np

from vision.synth.render import CARD_H, CARD_W, CardStyle, render_card

log = logging.getLogger(__name__)

FaceSource = Callable[[str], np.ndarray]   # label -> RGBA face


@dataclass(frozen=True)
class TrueCard:
    label: str
    quad: np.ndarray  # float32 (4, 2): the face's TL, TR, BR, BL in frame pixels


@dataclass(frozen=True)
class TrueEvent:
    frame_index: int  # first frame on which the card lies still
    label: str


# ---------------------------------------------------------------------------------------------
# table surfaces

def _lowfreq(rng, h, w, cells, octaves=3) -> np.ndarray:
    """Smooth noise in about -1..1, made by upscaling small random grids (fast)."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for o in range(octaves):
        gh, gw = max(2, cells[0] * 2 ** o), max(2, cells[1] * 2 ** o)
        out += amp * cv2.resize(rng.standard_normal((gh, gw)).astype(np.float32), (w, h),
                                interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= 0.5
    return out / total


def _grid(h, w):
    return np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]


def _tone(rng, dark: bool) -> np.ndarray:
    return np.array(rng.uniform(15, 90, 3) if dark else rng.uniform(140, 245, 3), np.float32)


def _wood(rng, h, w):
    dark = rng.random() < 0.5
    base = np.array([rng.uniform(40, 80), rng.uniform(70, 120), rng.uniform(110, 170)], np.float32)  # BGR brown
    if not dark:
        base = base * rng.uniform(1.2, 1.5)
    yy, xx = _grid(h, w)
    ang = rng.uniform(0, np.pi)
    u = xx * np.cos(ang) + yy * np.sin(ang)
    warp = _lowfreq(rng, h, w, (3, 4)) * rng.uniform(10, 40)
    grain = np.sin((u + warp) * rng.uniform(0.12, 0.5)) * 0.5 + 0.5
    fine = _lowfreq(rng, h, w, (40, 3), 1)
    tex = 1 + (grain - 0.5) * rng.uniform(0.15, 0.4) + fine * 0.05
    img = base * tex[..., None]
    if rng.random() < 0.5:  # planks
        period = rng.uniform(30, 80)
        v = xx * -np.sin(ang) + yy * np.cos(ang)
        seam = (np.abs((v % period) - 1) < 1.2).astype(np.float32)
        img *= 1 - 0.4 * seam[..., None]
    return img


def _felt(rng, h, w):
    base = _tone(rng, rng.random() < 0.6)
    if rng.random() < 0.5:  # the classic green / blue / red baize
        base = np.array([[60, 110, 30], [120, 60, 20], [40, 40, 120], [70, 70, 70]][rng.integers(4)], np.float32)
        base *= rng.uniform(0.6, 1.6)
    noise = rng.standard_normal((h, w)).astype(np.float32) * rng.uniform(0.02, 0.06)
    tex = 1 + noise + _lowfreq(rng, h, w, (4, 5)) * 0.06
    return base * tex[..., None]


def _plain(rng, h, w):
    base = _tone(rng, rng.random() < 0.5)
    return base * (1 + _lowfreq(rng, h, w, (2, 3)) * 0.04)[..., None] * np.ones((1, 1, 3), np.float32)


def _stripes(rng, h, w):
    a, b = _tone(rng, rng.random() < 0.5), _tone(rng, rng.random() < 0.5)
    yy, xx = _grid(h, w)
    ang = rng.uniform(0, np.pi)
    u = xx * np.cos(ang) + yy * np.sin(ang)
    s = (np.sin(u * rng.uniform(0.1, 0.7)) > rng.uniform(-0.5, 0.5)).astype(np.float32)
    s = cv2.GaussianBlur(s, (0, 0), 0.8)
    return a * s[..., None] + b * (1 - s[..., None])


def _blotches(rng, h, w):
    a, b = _tone(rng, rng.random() < 0.5), _tone(rng, rng.random() < 0.5)
    m = np.clip(_lowfreq(rng, h, w, (6, 8), 2) * 2 + 0.5, 0, 1)
    return a * m[..., None] + b * (1 - m[..., None])


def _gingham(rng, h, w):
    a, b = _tone(rng, rng.random() < 0.4), _tone(rng, False)
    yy, xx = _grid(h, w)
    p = rng.uniform(6, 20)
    cx = ((xx // p) % 2).astype(np.float32)
    cy = ((yy // p) % 2).astype(np.float32)
    m = (cx + cy) / 2
    img = a * m[..., None] + b * (1 - m[..., None])
    angle = rng.uniform(-30, 30)
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    return cv2.warpAffine(img, rot, (w, h), borderMode=cv2.BORDER_REFLECT)


def _marble(rng, h, w):
    a, b = _tone(rng, rng.random() < 0.5), _tone(rng, rng.random() < 0.5)
    yy, xx = _grid(h, w)
    t = np.sin((xx + yy) * 0.04 + _lowfreq(rng, h, w, (3, 4), 4) * 8)
    m = (np.abs(t) ** 0.3)
    return a * m[..., None] + b * (1 - m[..., None])


def _dots(rng, h, w):
    img = np.empty((h, w, 3), np.float32)
    img[:] = _tone(rng, rng.random() < 0.5)
    ink = tuple(float(v) for v in _tone(rng, rng.random() < 0.5))
    p = int(rng.integers(7, 20))
    r = int(rng.integers(2, max(3, p // 3)))
    for y in range(0, h + p, p):
        for x in range((y // p % 2) * p // 2, w + p, p):
            cv2.circle(img, (x, y), r, ink, -1, cv2.LINE_AA)
    return img


def _terrazzo(rng, h, w):
    img = np.empty((h, w, 3), np.float32)
    img[:] = _tone(rng, rng.random() < 0.5)
    for _ in range(int(rng.integers(60, 160))):
        c = (int(rng.integers(w)), int(rng.integers(h)))
        pts = np.array(c, np.float32) + rng.normal(0, rng.uniform(1, 3), (5, 2))
        cv2.fillPoly(img, [pts.astype(np.int32)], tuple(float(v) for v in _tone(rng, rng.random() < 0.5)),
                     cv2.LINE_AA)
    return img


def _print(rng, h, w):
    """A printed cloth: large soft-edged translucent blobs in a few colours."""
    img = np.empty((h, w, 3), np.float32)
    img[:] = _tone(rng, rng.random() < 0.5)
    for _ in range(int(rng.integers(8, 30))):
        layer = img.copy()
        c = (int(rng.integers(w)), int(rng.integers(h)))
        cv2.ellipse(layer, c, (int(rng.integers(8, 45)), int(rng.integers(5, 30))), float(rng.uniform(0, 180)), 0, 360,
                    tuple(float(v) for v in _tone(rng, rng.random() < 0.5)), -1, cv2.LINE_AA)
        a = rng.uniform(0.4, 1.0)
        img = img * (1 - a) + layer * a
    return img


def _weave(rng, h, w):
    """A woven or knitted cloth: a 2-D sinusoidal pattern."""
    a, b = _tone(rng, rng.random() < 0.5), _tone(rng, rng.random() < 0.5)
    yy, xx = _grid(h, w)
    f1, f2 = rng.uniform(0.2, 1.2, 2)
    m = 0.5 + 0.25 * (np.sin(xx * f1) + np.sin(yy * f2 + np.sin(xx * 0.05) * 3))
    return a * m[..., None] + b * (1 - m[..., None])


# Disjoint on purpose: held-out scenes show table kinds the model never trained on.
SURFACES = {"train": (_wood, _felt, _plain, _stripes, _blotches, _print, _weave),
            "heldout": (_gingham, _marble, _dots, _terrazzo)}


def make_surface(rng: np.random.Generator, size=(640, 480), split: str = "train") -> np.ndarray:
    """BGR float32 table texture of size (w, h)."""
    w, h = size
    kinds = SURFACES[split]
    # Drawn at half resolution and scaled up: 4x cheaper, and the camera stage adds fine grain.
    img = kinds[rng.integers(len(kinds))](rng, h // 2, w // 2)
    img = cv2.resize(np.clip(img, 0, 255).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    return img


# ---------------------------------------------------------------------------------------------
# compositing

FACE_CORNERS = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], np.float32)


def card_quad(center, long_side: float, angle_deg: float, tilt: float, rng: np.random.Generator | None) -> np.ndarray:
    """Corners (TL, TR, BR, BL of the face) of a card centred at `center`, rotated by angle_deg,
    with each corner moved by up to `tilt` x long_side to imitate a camera not square to the table."""
    h = long_side
    w = h * CARD_W / CARD_H
    pts = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]], np.float32)
    a = np.radians(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    pts = pts @ rot.T + np.asarray(center, np.float32)
    if rng is not None and tilt > 0:
        pts += rng.uniform(-tilt, tilt, (4, 2)).astype(np.float32) * h
    return pts.astype(np.float32)


def _bbox(quad, shape, pad=0):
    H, W = shape[:2]
    x0 = int(max(0, np.floor(quad[:, 0].min()) - pad))
    y0 = int(max(0, np.floor(quad[:, 1].min()) - pad))
    x1 = int(min(W, np.ceil(quad[:, 0].max()) + pad + 1))
    y1 = int(min(H, np.ceil(quad[:, 1].max()) + pad + 1))
    return x0, y0, x1, y1


def paste_card(frame: np.ndarray, face_rgba: np.ndarray, quad: np.ndarray, shadow: float = 0.0,
               blur: float = 0.0) -> None:
    """Warp an RGBA face onto a float32 BGR frame at quad (in place), with an optional soft shadow
    cast on what lies below, and optional motion/defocus blur of the card layer alone."""
    x0, y0, x1, y1 = _bbox(quad, frame.shape, pad=8)
    if x1 <= x0 or y1 <= y0:
        return
    src = FACE_CORNERS * np.array([face_rgba.shape[1] / CARD_W, face_rgba.shape[0] / CARD_H], np.float32)
    hmat = cv2.getPerspectiveTransform(src, (quad - np.array([x0, y0], np.float32)).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(face_rgba, hmat, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    if blur > 0:
        warped = cv2.GaussianBlur(warped, (0, 0), blur)
    alpha = warped[..., 3:].astype(np.float32) / 255.0
    region = frame[y0:y1, x0:x1]
    if shadow > 0:
        sh = cv2.GaussianBlur(alpha[..., 0], (0, 0), 3)
        sh = np.roll(sh, (2, 2), axis=(0, 1))
        region *= 1 - shadow * sh[..., None]
    bgr = warped[..., 2::-1].astype(np.float32)
    region[:] = region * (1 - alpha) + bgr * alpha


SKIN_TONES = np.array([[120, 150, 215], [140, 175, 235], [95, 125, 180], [70, 100, 150], [160, 190, 245],
                       [50, 70, 115]], np.float32)  # BGR


def draw_hand(frame: np.ndarray, rng_or_tone, wrist, direction_deg: float, scale: float,
              spread: float = 0.5, fingers_only: bool = False) -> None:
    """A stylised hand: forearm from `wrist` out of the picture, palm, four fingers and a thumb,
    pointing along direction_deg; `scale` is the palm width in px."""
    tone = rng_or_tone if isinstance(rng_or_tone, np.ndarray) else \
        SKIN_TONES[rng_or_tone.integers(len(SKIN_TONES))] * rng_or_tone.uniform(0.85, 1.15)
    H, W = frame.shape[:2]
    # Drawn at half resolution (it is soft anyway), then scaled up.
    mask = np.zeros((H // 2, W // 2), np.float32)
    wrist = np.asarray(wrist, np.float32) / 2
    scale = scale / 2
    a = np.radians(direction_deg)
    d = np.array([np.cos(a), np.sin(a)], np.float32)
    n = np.array([-d[1], d[0]], np.float32)
    s = scale
    palm_c = wrist + d * s * 0.6
    if not fingers_only:
        arm_end = wrist - d * 2000
        arm = np.array([wrist + n * s * 0.42, wrist - n * s * 0.42, arm_end - n * s * 0.55, arm_end + n * s * 0.55])
        cv2.fillPoly(mask, [np.round(arm * 4).astype(np.int32)], 1.0, cv2.LINE_AA, shift=2)
        cv2.ellipse(mask, tuple(int(v) for v in palm_c), (int(s * 0.6), int(s * 0.5)), float(direction_deg),
                    0, 360, 1.0, -1, cv2.LINE_AA)
    for k, length in enumerate((0.85, 1.0, 0.95, 0.75)):
        off = (k - 1.5) * 0.26 * s
        base = palm_c + d * s * 0.35 + n * off
        fa = a + (k - 1.5) * 0.12 * spread
        tip = base + np.array([np.cos(fa), np.sin(fa)], np.float32) * s * length
        cv2.line(mask, tuple(int(v) for v in base), tuple(int(v) for v in tip), 1.0, max(2, int(s * 0.22)),
                 cv2.LINE_AA)
    thumb_base = palm_c + n * s * 0.45
    ta = a + 0.9
    thumb_tip = thumb_base + np.array([np.cos(ta), np.sin(ta)], np.float32) * s * 0.7
    cv2.line(mask, tuple(int(v) for v in thumb_base), tuple(int(v) for v in thumb_tip), 1.0,
             max(2, int(s * 0.25)), cv2.LINE_AA)
    # Shade like a rounded object lit from above: brighter towards the middle of the hand.
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        return
    y0, y1 = max(0, ys.min() - 3), min(mask.shape[0], ys.max() + 4)
    x0, x1 = max(0, xs.min() - 3), min(mask.shape[1], xs.max() + 4)
    m = mask[y0:y1, x0:x1]
    shade = 0.8 + 0.3 * cv2.GaussianBlur(m, (0, 0), max(1.0, s * 0.15))
    size = (min(W, 2 * x1) - 2 * x0, min(H, 2 * y1) - 2 * y0)
    m = cv2.resize(cv2.GaussianBlur(m, (0, 0), 0.7), size)[..., None]
    shade = cv2.resize(shade, size)[..., None]
    region = frame[2 * y0:2 * y0 + size[1], 2 * x0:2 * x0 + size[0]]
    region[:] = region * (1 - m) + (tone * shade) * m


def draw_clutter(frame: np.ndarray, rng: np.random.Generator, center, size: float) -> None:
    """Something else lying on the table, about `size` px across: a coin, a phone, a paper note
    with lines of writing, a pen, a die."""
    cx, cy = (float(v) for v in center)
    kind = rng.integers(5)
    tone = tuple(float(v) for v in _tone(rng, rng.random() < 0.5))
    if kind == 0:  # coin(s)
        for _ in range(int(rng.integers(1, 4))):
            r = size * rng.uniform(0.1, 0.2)
            p = (int(cx + rng.uniform(-1, 1) * size * 0.3), int(cy + rng.uniform(-1, 1) * size * 0.3))
            metal = tuple(float(v) for v in rng.choice([[60, 150, 190], [170, 170, 170], [50, 110, 160]]))
            cv2.circle(frame, p, int(r), metal, -1, cv2.LINE_AA)
            cv2.circle(frame, p, int(r * 0.8), tuple(v * 0.8 for v in metal), 1, cv2.LINE_AA)
        return
    angle = rng.uniform(0, 360)
    if kind == 1:  # phone
        w_, h_, color = size * 0.5, size, (20.0, 20.0, 25.0)
    elif kind == 2:  # paper note with writing
        w_, h_, color = size * rng.uniform(0.5, 0.9), size * rng.uniform(0.6, 1.1), (235.0, 240.0, 240.0)
    elif kind == 3:  # pen
        w_, h_, color = size * 0.06, size * 1.1, tone
    else:  # die
        w_ = h_ = size * 0.2
        color = (240.0, 240.0, 240.0) if rng.random() < 0.5 else tone
    box = cv2.boxPoints(((cx, cy), (w_, h_), angle)).astype(np.float32)
    cv2.fillPoly(frame, [np.round(box * 4).astype(np.int32)], color, cv2.LINE_AA, shift=2)
    if kind == 1:  # screen
        inner = cv2.boxPoints(((cx, cy), (w_ * 0.88, h_ * 0.8), angle)).astype(np.int32)
        cv2.fillPoly(frame, [inner], tuple(float(v) for v in _tone(rng, True)), cv2.LINE_AA)
    elif kind == 2:  # lines of handwriting
        a = np.radians(angle)
        ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
        for k in np.arange(-0.4, 0.41, rng.uniform(0.08, 0.15)):
            p0 = np.array([cx, cy]) + uy * k * h_ - ux * w_ * 0.4
            p1 = p0 + ux * w_ * rng.uniform(0.3, 0.8)
            cv2.line(frame, tuple(int(v) for v in p0), tuple(int(v) for v in p1), (90.0, 60.0, 40.0), 1, cv2.LINE_AA)
    elif kind == 4:  # pips
        for _ in range(int(rng.integers(1, 7))):
            p = (int(cx + rng.uniform(-0.3, 0.3) * w_), int(cy + rng.uniform(-0.3, 0.3) * w_))
            cv2.circle(frame, p, max(1, int(w_ * 0.08)), (20.0, 20.0, 20.0), -1, cv2.LINE_AA)


def light_field(rng, h, w) -> np.ndarray:
    """Multiplicative illumination: a gradient, a vignette and a soft shadow or two."""
    yy, xx = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
    gh, gw = yy.shape
    g = rng.uniform(-0.5, 0.5, 2)
    field = 1 + (g[0] * (xx / w - 0.5) + g[1] * (yy / h - 0.5))
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    field *= 1 - rng.uniform(0, 0.35) * (((xx - cx) ** 2 + (yy - cy) ** 2) / (w * w))
    for _ in range(int(rng.integers(0, 3))):
        m = np.zeros((gh, gw), np.float32)
        pts = (rng.uniform(0, 1, (5, 2)) * [gw, gh]).astype(np.int32)
        cv2.fillPoly(m, [cv2.convexHull(pts)], 1.0)
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(1, 4))
        field *= 1 - rng.uniform(0.2, 0.55) * m
    field *= rng.uniform(0.55, 1.25)
    return cv2.resize(field, (w, h), interpolation=cv2.INTER_LINEAR)


def add_glare(rng, frame, quads):
    h, w = frame.shape[:2]
    if quads and rng.random() < 0.7:
        q = quads[rng.integers(len(quads))]
        c = q.mean(0) + rng.uniform(-0.4, 0.4, 2) * (q.max(0) - q.min(0))
    else:
        c = rng.uniform([0, 0], [w, h])
    m = np.zeros((h // 4, w // 4), np.float32)
    cv2.ellipse(m, (int(c[0] / 4), int(c[1] / 4)), (int(rng.integers(3, 25)), int(rng.integers(2, 10))),
                float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    m = cv2.resize(cv2.GaussianBlur(m, (0, 0), rng.uniform(1, 4)), (w, h))
    frame += m[..., None] * rng.uniform(60, 200)


_NOISE_BANK: list[np.ndarray] = []


def _noise(rng, shape) -> np.ndarray:
    """Unit Gaussian noise of `shape`: a random window of one big precomputed field (drawing fresh
    noise per frame costs more than the whole rest of a scene)."""
    if not _NOISE_BANK:
        _NOISE_BANK.append(np.random.default_rng(12345).standard_normal((1100, 1500), dtype=np.float32))
    bank = _NOISE_BANK[0]
    h, w = shape
    y, x = int(rng.integers(bank.shape[0] - h)), int(rng.integers(bank.shape[1] - w))
    return bank[y:y + h, x:x + w]


def camera_effects(rng, frame: np.ndarray, strength: float = 1.0) -> np.ndarray:
    """White balance, defocus or motion blur, sensor noise, JPEG: float32 BGR in, uint8 BGR out."""
    frame *= rng.uniform(0.8, 1.2, 3).astype(np.float32) ** strength
    r = rng.random()
    if r < 0.35 * strength:
        frame = cv2.GaussianBlur(frame, (0, 0), rng.uniform(0.5, 2.0))
    elif r < 0.55 * strength:
        k = int(rng.integers(3, 10))
        kern = np.zeros((k, k), np.float32)
        kern[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
        kern = cv2.warpAffine(kern, rot, (k, k))
        frame = cv2.filter2D(frame, -1, kern / max(kern.sum(), 1e-6))
    sigma = rng.uniform(1, 9) * strength
    # Shot noise grows with brightness: scale the (shared) noise by a brightness-dependent factor.
    noise = _noise(rng, frame.shape[:2]) * sigma
    frame += (frame + 255.0) * (noise / 510.0)[..., None]
    out = cv2.convertScaleAbs(frame)  # saturating cast to uint8
    if rng.random() < 0.5 * strength:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 92))])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


# ---------------------------------------------------------------------------------------------
# scenes

def _faces(deck: str, rng: np.random.Generator, split: str, source: FaceSource | None) -> FaceSource:
    if source is not None:
        return source
    style = CardStyle.sample(rng, split)  # one deck per scene: the cards share a print
    return lambda label: render_card(deck, label, rng, style)


def _overlaps(q, others, margin=4.0) -> bool:
    for o in others:
        a = cv2.convexHull(q.astype(np.float32))
        b = cv2.convexHull(o.astype(np.float32))
        inter, _ = cv2.intersectConvexConvex(a, b)
        if inter > 0:
            return True
        if min(np.min(np.linalg.norm(q[:, None] - o[None], axis=2)), 1e9) < margin:
            return True
    return False


def _note(drawn: list | None, quad: np.ndarray) -> None:
    if drawn is not None:
        drawn.append(np.asarray(quad, np.float32).copy())


def make_scene(rng: np.random.Generator, labels: Sequence[str], deck: str = "flip7", size=(640, 480),
               split: str = "train", apart: bool = True, *, faces: FaceSource | None = None,
               card_size: tuple[float, float] = (120, 290), extra_cards: bool = True,
               drawn: list | None = None) -> tuple[np.ndarray, list[TrueCard]]:
    """One camera frame (BGR uint8) with `labels` lying on a random table, and their true quads.

    apart=True: the cards do not touch and lie wholly inside the frame (a scan photo); otherwise
    later cards may overlap earlier ones. Nuisance cards (under, beside, cut by the frame edge)
    are not in the returned list (extra_cards=False leaves them out). `faces` overrides the
    renderer (training passes a cache). `drawn`, when given, gets the quad of every card drawn,
    nuisance cards too, bottom to top (what vision.training.train_card_mask learns to outline).
    """
    w, h = size
    face = _faces(deck, rng, split, faces)
    frame = make_surface(rng, size, split)
    long_side = rng.uniform(*card_size) / max(1.0, len(labels)) ** 0.45
    tilt = rng.uniform(0, 0.06)
    placed: list[np.ndarray] = []
    from rules.cards import DECKS
    all_labels = DECKS[deck].labels
    # A nuisance card under or next to where the real ones go, possibly cut by the frame edge.
    if extra_cards and rng.random() < 0.3:
        for _ in range(int(rng.integers(1, 3))):
            draw_clutter(frame, rng, rng.uniform([0, 0], [w, h]), long_side * rng.uniform(0.5, 1.0))
    if extra_cards and rng.random() < 0.5:
        c = rng.uniform([-0.1 * w, -0.1 * h], [1.1 * w, 1.1 * h])
        q = card_quad(c, long_side * rng.uniform(0.9, 1.1), rng.uniform(0, 360), tilt, rng)
        paste_card(frame, face(all_labels[rng.integers(len(all_labels))]), q, shadow=0.4)
        _note(drawn, q)
    true_cards: list[TrueCard] = []
    for label in labels:
        for attempt in range(60):
            ls = long_side * rng.uniform(0.93, 1.07) * 0.97 ** (attempt // 5)  # shrink if crowded
            margin = ls * 0.6
            c = rng.uniform([margin, margin], [w - margin, h - margin]) if w > 2 * margin and h > 2 * margin \
                else np.array([w / 2, h / 2])
            q = card_quad(c, ls, rng.uniform(0, 360), tilt, rng)
            inside = q[:, 0].min() >= 1 and q[:, 1].min() >= 1 and q[:, 0].max() <= w - 2 and q[:, 1].max() <= h - 2
            if inside and not (apart and _overlaps(q, placed)):
                break
        else:
            raise ValueError(f"cannot fit {len(labels)} cards apart in a {w}x{h} frame")
        if extra_cards and rng.random() < 0.25 and not placed:
            # An underlying card peeking out from below this one.
            off = rng.uniform(-0.25, 0.25, 2) * ls
            uq = card_quad(q.mean(0) + off, ls, rng.uniform(0, 360), tilt, rng)
            paste_card(frame, face(all_labels[rng.integers(len(all_labels))]), uq, shadow=0.4)
            _note(drawn, uq)
        paste_card(frame, face(label), q, shadow=rng.uniform(0.2, 0.6))
        _note(drawn, q)
        placed.append(q)
        true_cards.append(TrueCard(label, q))
    if rng.random() < 0.35 and len(placed) == 1:
        # Fingertips reaching over the edge of the card (only with one card: the arm must not
        # cross another labelled card).
        q = placed[0]
        k = rng.integers(4)
        edge_mid = (q[k] + q[(k + 1) % 4]) / 2
        outward = edge_mid - q.mean(0)
        outward /= np.linalg.norm(outward) + 1e-6
        depth = np.linalg.norm(q[(k + 1) % 4] - q[(k + 2) % 4])  # card size across that edge
        reach = rng.uniform(0.05, 0.2) * depth
        tip_anchor = edge_mid - outward * reach + (q[(k + 1) % 4] - q[k]) * rng.uniform(-0.3, 0.3)
        pscale = min(depth, np.linalg.norm(q[k] - q[(k + 1) % 4])) * rng.uniform(0.35, 0.6)
        wrist = tip_anchor + outward * pscale * 1.95  # the longest finger ends ~1.95 palms out
        draw_hand(frame, rng, wrist, float(np.degrees(np.arctan2(-outward[1], -outward[0]))), pscale,
                  spread=rng.uniform(0, 1))
    frame *= light_field(rng, h, w)[..., None]
    if rng.random() < 0.4:
        add_glare(rng, frame, placed)
    return camera_effects(rng, frame), true_cards


# ---------------------------------------------------------------------------------------------
# deal videos

@dataclass
class _Layer:
    label: str
    quad: np.ndarray


@dataclass
class _FramePlan:
    static: tuple[int, ...]                 # ids of cards lying still, bottom to top
    moving: tuple[str, np.ndarray, float] | None = None   # label, quad, blur
    hand: tuple[np.ndarray, float, float] | None = None    # wrist, direction, palm scale


@dataclass
class DealVideo:
    frames: "VideoFrames"
    events: list[TrueEvent]
    fps: int
    notes: list[dict] = field(default_factory=list)  # what each segment shows, for people and tests


class VideoFrames(Sequence):
    """Frames rendered on demand (a 200-placement deal is thousands of frames): indexable, and
    fastest when iterated in order because the still cards are cached."""

    def __init__(self, plans, cards, faces, background, light, seed, size):
        self._plans, self._cards, self._faces = plans, cards, faces
        self._background, self._light, self._seed, self._size = background, light, seed, size
        self._cache_key: tuple | None = None
        self._cache: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._plans)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._render(i)

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self._render(i)

    def lying(self, i: int) -> list[TrueCard]:
        """The cards lying still in frame i, bottom to top (the truth, for tracing a detector)."""
        return [TrueCard(self._cards[k].label, self._cards[k].quad) for k in self._plans[i].static]

    def _table(self, static: tuple[int, ...]) -> np.ndarray:
        key = tuple((k, self._cards[k].quad.tobytes()) for k in static)
        if key != self._cache_key:
            table = self._background.copy()
            for k in static:
                paste_card(table, self._faces[self._cards[k].label], self._cards[k].quad, shadow=0.35)
            self._cache_key, self._cache = key, table
        return self._cache

    def _render(self, i: int) -> np.ndarray:
        plan = self._plans[i]
        rng = np.random.default_rng((self._seed, i))
        frame = self._table(plan.static).copy()
        if plan.moving is not None:
            label, quad, blur = plan.moving
            paste_card(frame, self._faces[label], quad, shadow=0.5, blur=blur)
        if plan.hand is not None:
            wrist, direction, scale = plan.hand
            draw_hand(frame, self._hand_tone, wrist, direction, scale, spread=0.4)
        frame *= self._light[..., None] * (1 + rng.normal(0, 0.01))
        frame += _noise(rng, frame.shape[:2])[..., None] * 2.5
        return np.clip(frame, 0, 255).astype(np.uint8)

    @property
    def _hand_tone(self) -> np.ndarray:
        return SKIN_TONES[self._seed % len(SKIN_TONES)]


LIGHT_CHANGES = ("dim", "bright", "shadow", "warm")


def changed_light(kind: str, shape) -> np.ndarray:
    """The factor (H, W, 1 or 3) a changed light multiplies a picture of `shape` by: "dim" (x0.7),
    "bright" (x1.3: the light parts burn out), "shadow" (the left half of the table in shade,
    x0.55 fading to x1 at the middle) or "warm" (a lamp's colour: blue x0.8, green x0.97, red x1.06)."""
    h, w = shape[:2]
    if kind == "dim":
        return np.full((h, w, 1), 0.7, np.float32)
    if kind == "bright":
        return np.full((h, w, 1), 1.3, np.float32)
    if kind == "shadow":
        ramp = np.linspace(0, 1, w, dtype=np.float32)[None, :, None].repeat(h, 0)
        return 0.55 + 0.45 * np.clip(ramp * 2, 0, 1)
    if kind == "warm":
        return np.ones((h, w, 3), np.float32) * np.array([0.8, 0.97, 1.06], np.float32)
    raise ValueError(f"light change {kind!r} is none of {', '.join(LIGHT_CHANGES)}")


def under_light(frame: np.ndarray, field: np.ndarray, amount: float = 1.0) -> np.ndarray:
    """The BGR frame with the light turned `amount` (0..1) of the way to `field` (changed_light)."""
    if amount == 0.0:
        return frame
    return np.clip(frame.astype(np.float32) * (1 + (field - 1) * amount), 0, 255).astype(np.uint8)


class ChangingLight(Sequence):
    """A video's frames under a light that changes now and then: every `period` frames it turns
    (over `ramp` frames: a lamp, a cloud, a player's shadow, the camera's exposure), stays so for
    `hold` frames and turns back. `kind`: one of LIGHT_CHANGES (changed_light)."""

    def __init__(self, frames: Sequence[np.ndarray], kind: str, period: int = 700, start: int = 200,
                 ramp: int = 8, hold: int = 250):
        changed_light(kind, (1, 1))                     # (an unknown kind is refused here)
        self.frames, self.kind = frames, kind
        self.period, self.start, self.ramp, self.hold = period, start, ramp, hold
        self._field: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.frames)

    def amount(self, i: int) -> float:
        """How far the light has turned at frame i (0: as the video was made, 1: changed)."""
        k = i % self.period - self.start
        return float(np.clip(min(k, 2 * self.ramp + self.hold - k) / self.ramp, 0.0, 1.0))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        frame = self.frames[i]
        if self._field is None or self._field.shape[:2] != frame.shape[:2]:
            self._field = changed_light(self.kind, frame.shape)
        return under_light(frame, self._field, self.amount(i if i >= 0 else i + len(self)))

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self[i]


def _lerp(a, b, t):
    return a + (b - a) * t


def _ease(t):
    return t * t * (3 - 2 * t)


def make_deal_video(rng: np.random.Generator, labels: Sequence[str], deck: str = "flip7", size=(640, 480),
                    fps: int = 15, split: str = "train", *, p_on_top: float = 0.3, p_pass: float = 0.15,
                    p_nudge: float = 0.15, p_slide: float = 0.5, p_repeat: float = 0.1,
                    landings: Sequence[str] | None = None, face_source: FaceSource | None = None) -> DealVideo:
    """A deal of `labels`, one placement each, in order, with the hard cases mixed in.

    face_source (label -> RGBA face, as render_card gives) draws each label's face once instead of
    the deck's renderer (a printed deck: vision.synth.printed.printed_face); it is called in the order
    the labels are first dealt, so a seeded source gives the same video again.

    Per placement: with p_repeat the label is dealt twice in a row (an extra placement, so the
    events may hold more than len(labels) entries); the card lands on top of the previous one
    with p_on_top (else on free table); before it a hand may pass over with no card (p_pass) or
    nudge a lying card (p_nudge); after it, the dealer may slide it out of the picture (p_slide),
    and clears the zone from the top down whenever more than two cards lie there. Between two
    hand movements the table lies still for at least 6 frames (0.4 s at 15 fps).

    `landings` films a discard pile instead (UNO Flip), one word per label for where it lands:
    "pile" on top of the pile in the middle of the zone (nothing slides away; the cards beneath
    stay in view); "new-pile" the same after the hand took the pile away (lifted whole and laid
    back turned over: this card now shows); "new-apart" after the hand took everything away, and
    the "apart" cards after it: laid out on a grid, not touching (a hand shown to be read);
    "square" on the pile exactly where its top card lies, covering it pixel for pixel (a card laid
    square on its twin leaves the still picture as it was). p_on_top, p_slide and p_repeat do not
    apply then.
    """
    piled = ("pile", "new-pile", "square")
    if landings is not None and (len(landings) != len(labels)
                                 or set(landings) - {*piled, "apart", "new-apart"}
                                 or any(b == "apart" and a not in ("apart", "new-apart")
                                        for a, b in zip(("new-pile", *landings), landings))
                                 or any(b == "square" and a not in piled
                                        for a, b in zip(("new-apart", *landings), landings))):
        raise ValueError("landings: one of pile, apart, new-pile, new-apart, square per label; apart "
                         "only after new-apart or apart, square only after pile, new-pile or square")
    w, h = size
    style = CardStyle.sample(rng, split)
    faces = {lab: face_source(lab) if face_source is not None else render_card(deck, lab, rng, style)
             for lab in dict.fromkeys(labels)}
    background = make_surface(rng, size, split)
    light = light_field(rng, h, w)
    long_side = rng.uniform(150, 230)
    palm = long_side * rng.uniform(0.45, 0.6)
    cards: list[_Layer] = []
    lying: list[int] = []
    plans: list[_FramePlan] = []
    events: list[TrueEvent] = []
    notes: list[dict] = []
    in_pile: set[int] = set()                # cards of the discard pile: lifted together
    zone_c = np.array([w / 2, h / 2], np.float32)

    def still(n):
        for _ in range(n):
            plans.append(_FramePlan(tuple(lying)))

    def gap():
        """The pause between two hand movements: at least 0.4 s (fetching the next card, or
        reaching back from a player's place)."""
        still(int(rng.integers(6, 13)))

    def entry_point():
        side = rng.integers(4)
        return np.array([[w / 2 + rng.uniform(-0.3, 0.3) * w, h + palm * 3],
                         [w / 2 + rng.uniform(-0.3, 0.3) * w, -palm * 3],
                         [-palm * 3, h / 2 + rng.uniform(-0.3, 0.3) * h],
                         [w + palm * 3, h / 2 + rng.uniform(-0.3, 0.3) * h]][side], np.float32)

    def hand_path(start, end, n, carry: tuple[str, np.ndarray, np.ndarray] | None):
        """Move the hand from start to end over n frames, optionally carrying a card whose quad is
        given at start and end."""
        for k in range(1, n + 1):
            t = _ease(k / n)
            wrist = _lerp(start, end, t)
            # The fingers point into the picture, towards what the hand is doing.
            target = _lerp(carry[1], carry[2], t).mean(0) if carry is not None else zone_c
            direction = float(np.degrees(np.arctan2(*(target - wrist)[::-1])))
            moving = None
            if carry is not None:
                label, q0, q1 = carry
                speed = np.linalg.norm(end - start) / n * (1.5 - abs(2 * k / n - 1))
                moving = (label, _lerp(q0, q1, t).astype(np.float32), min(3.0, speed / 25))
            plans.append(_FramePlan(tuple(lying), moving, (wrist, direction, palm)))

    def in_picture(q):
        lo, hi = q.min(0), q.max(0)
        q += np.clip(lo, [2, 2], None) - lo  # keep it wholly in the picture
        q -= hi - np.clip(hi, None, [w - 3, h - 3])
        return q.astype(np.float32)

    def landing_quad():
        on_top = lying and rng.random() < p_on_top
        if on_top:
            base = cards[lying[-1]].quad.mean(0)
            c = base + rng.uniform(-0.15, 0.15, 2) * long_side
        else:
            c = zone_c + rng.uniform(-0.18, 0.18, 2) * [w, h]
        q = card_quad(c, long_side, rng.uniform(0, 360), 0.02, rng)
        return in_picture(q), bool(on_top)

    def pile_quad():
        """On the pile: any way round, a little off its middle, so the cards beneath peek out
        (two equal cards in a row must count twice)."""
        c = zone_c + rng.uniform(-0.08, 0.08, 2) * long_side
        return in_picture(card_quad(c, long_side, rng.uniform(0, 360), 0.02, rng))

    def apart_quad(slot: int, run: int):
        """Slot `slot` of a grid for `run` cards laid apart, nearly upright (either way up)."""
        cols = max(1, int(w // (0.85 * long_side)))
        rows = -(-run // cols)
        if rows * 1.1 * long_side > h:
            raise ValueError(f"{run} cards do not fit apart in the picture (cards {long_side:.0f} px long)")
        cell = np.array([w / cols, h / rows], np.float32)
        slack = np.maximum(cell - [0.85 * long_side, 1.1 * long_side], 0) / 2
        c = (np.array([slot % cols, slot // cols], np.float32) + 0.5) * cell + rng.uniform(-1, 1, 2) * slack
        angle = rng.uniform(-6, 6) + 180 * (rng.random() < 0.5)
        return in_picture(card_quad(c, long_side, angle, 0.02, rng))

    def grip(quad):
        """Where the wrist is while holding the card at quad: beyond its bottom edge."""
        bottom = (quad[2] + quad[3]) / 2
        out = bottom - quad.mean(0)
        out /= np.linalg.norm(out) + 1e-6
        return bottom + out * palm * 1.6, out

    def take_away(k, together=()):
        """The hand takes card k out of the picture (with the cards `together`: the pile under it)."""
        q0 = cards[k].quad
        wrist, _ = grip(q0)
        away = entry_point()
        notes.append({"kind": "take-pile" if together else "slide-away", "label": cards[k].label,
                      "start": len(plans)})
        hand_path(wrist + (wrist - zone_c) * 2, wrist, int(rng.integers(5, 9)), None)
        for j in (k, *together):
            lying.remove(j)
        n = int(rng.integers(6, 10))
        hand_path(wrist, away, n, (cards[k].label, q0, (q0 + (away - wrist)).astype(np.float32)))
        gap()

    def clear_zone():
        """Everything lying is taken away from the top down: the pile at once, cards laid apart
        one by one."""
        while lying:
            k = lying[-1]
            take_away(k, [j for j in lying if j != k and j in in_pile] if k in in_pile else ())

    still(int(rng.integers(5, 10)))
    queue = []
    if landings is not None:
        queue = list(labels)
    else:
        for lab in labels:
            queue.append(lab)
            if rng.random() < p_repeat:
                queue.append(lab)
    slot = run = 0                            # of the hand being laid out apart
    for i, lab in enumerate(queue):
        where = landings[i] if landings is not None else None
        if where in ("new-pile", "new-apart"):
            clear_zone()
        if rng.random() < p_pass:
            start, end = entry_point(), entry_point()
            n = int(rng.integers(8, 16))
            notes.append({"kind": "hand-pass", "start": len(plans), "frames": n})
            hand_path(start, zone_c + rng.uniform(-0.2, 0.2, 2) * [w, h], n // 2, None)
            hand_path(plans[-1].hand[0], end, n - n // 2, None)
            gap()
        if lying and rng.random() < p_nudge:
            k = lying[-1]
            q0 = cards[k].quad
            shift = rng.uniform(-0.12, 0.12, 2).astype(np.float32) * long_side
            rot = cv2.getRotationMatrix2D(tuple(float(v) for v in q0.mean(0)), float(rng.uniform(-12, 12)), 1.0)
            q1 = (np.hstack([q0, np.ones((4, 1), np.float32)]) @ rot.T.astype(np.float32) + shift).astype(np.float32)
            if q1.min() >= 2 and q1[:, 0].max() < w - 2 and q1[:, 1].max() < h - 2:
                notes.append({"kind": "nudge", "start": len(plans)})
                wrist, out = grip(q0)
                start = wrist + out * palm * 4
                hand_path(start, wrist, int(rng.integers(5, 9)), None)   # the card lies there meanwhile
                lying.remove(k)
                wrist1, _ = grip(q1)
                hand_path(wrist, wrist1, int(rng.integers(3, 6)), (cards[k].label, q0, q1))
                # A new layer: the frames before the nudge still show the card where it lay.
                cards.append(_Layer(cards[k].label, q1))
                if k in in_pile:
                    in_pile.add(len(cards) - 1)
                lying.append(len(cards) - 1)
                hand_path(wrist1, wrist1 + out * palm * 4, int(rng.integers(5, 9)), None)
                gap()
        # The placement itself: carried in, lands, the hand leaves.
        if where is None:
            q_land, on_top = landing_quad()
        elif where.endswith("pile"):
            q_land, on_top = pile_quad(), any(k in in_pile for k in lying)
        elif where == "square":
            q_land, on_top = cards[lying[-1]].quad.copy(), True
        else:
            if where == "new-apart":
                slot, run = 0, 1 + len(list(itertools.takewhile("apart".__eq__, landings[i + 1:])))
            else:
                slot += 1
            q_land, on_top = apart_quad(slot, run), False
        wrist_land, out = grip(q_land)
        start = entry_point()
        q_start = (q_land + (start - wrist_land)).astype(np.float32)
        n_in = int(rng.integers(7, 14))
        notes.append({"kind": "place", "label": lab, "on_top": on_top, "start": len(plans)})
        hand_path(start, wrist_land, n_in, (lab, q_start, q_land))
        cards.append(_Layer(lab, q_land))
        lying.append(len(cards) - 1)
        if where in piled:
            in_pile.add(len(cards) - 1)
        events.append(TrueEvent(len(plans), lab))
        leave = wrist_land + out * palm * 5
        hand_path(wrist_land, leave, int(rng.integers(5, 10)), None)
        still(int(rng.integers(6, 14)))
        if where is not None:
            continue                          # the pile stays; a hand laid out stays to be read
        # The dealer slides the card just dealt out of the picture to a player; when the zone
        # fills up it is cleared from the top down (a hand only ever takes the uppermost card).
        for _ in range(max(int(rng.random() < p_slide), len(lying) - 2)):
            take_away(lying[-1])
    still(10)
    seed = int(rng.integers(2 ** 31))
    frames = VideoFrames(plans, cards, faces, background, light, seed, size)
    return DealVideo(frames, events, fps, notes)


def write_video(video: DealVideo, path: str | Path) -> Path:
    """Write frames as an .mp4/.avi (by suffix) or else a folder of numbered JPEGs, plus the
    ground-truth events as `<path>.events.json` (or `events.json` inside the folder)."""
    path = Path(path)
    events = {"fps": video.fps, "frames": len(video.frames),
              "events": [{"frame_index": e.frame_index, "label": e.label} for e in video.events],
              "notes": video.notes}
    if path.suffix.lower() in (".mp4", ".avi"):
        path.parent.mkdir(parents=True, exist_ok=True)
        first = video.frames[0]
        fourcc = cv2.VideoWriter_fourcc(*("mp4v" if path.suffix.lower() == ".mp4" else "MJPG"))
        writer = cv2.VideoWriter(str(path), fourcc, video.fps, (first.shape[1], first.shape[0]))
        for f in video.frames:
            writer.write(f)
        writer.release()
        events_path = path.with_suffix(path.suffix + ".events.json")
    else:
        path.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(video.frames):
            cv2.imwrite(str(path / f"{i:06d}.jpg"), f, [cv2.IMWRITE_JPEG_QUALITY, 92])
        events_path = path / "events.json"
    events_path.write_text(json.dumps(events, indent=1))
    return events_path


# ---------------------------------------------------------------------------------------------
# command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vision.synth.scenes",
        description="Write sample synthetic scenes and a deal video (frames + ground-truth events JSON) "
                    "to look at.")
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--out", default="out/synth", help="output folder (default: out/synth)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=("train", "heldout"), default="train",
                        help="renderer/surface settings: training ones or the held-out ones")
    parser.add_argument("--scenes", type=int, default=8, help="number of scene images")
    parser.add_argument("--placements", type=int, default=20, help="cards dealt in the video (0: no video)")
    parser.add_argument("--video", default="deal.mp4",
                        help="video file name inside --out: .mp4/.avi, or a name without suffix for a "
                             "folder of JPEG frames")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    from rules.cards import DECKS

    labels = DECKS[args.deck].labels
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    truth = []
    for i in range(args.scenes):
        n = int(rng.integers(1, 4))
        picked = [labels[k] for k in rng.integers(len(labels), size=n)]
        frame, cards = make_scene(rng, picked, args.deck, split=args.split)
        name = f"scene_{i:03d}.jpg"
        cv2.imwrite(str(out / name), frame)
        truth.append({"image": name, "cards": [{"label": c.label, "quad": c.quad.round(1).tolist()} for c in cards]})
    (out / "scenes.json").write_text(json.dumps(truth, indent=1))
    log.info("wrote %d scenes to %s", args.scenes, out)
    if args.placements:
        picked = [labels[k] for k in rng.integers(len(labels), size=args.placements)]
        video = make_deal_video(rng, picked, args.deck, split=args.split)
        events_path = write_video(video, out / args.video)
        log.info("wrote %d frames, %d placements to %s (truth: %s)", len(video.frames), len(video.events),
                 out / args.video, events_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
