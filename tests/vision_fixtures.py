"""Small, fully controlled test scenes for the card locator: simple card faces on plain, wood,
cloth and patterned surfaces, at any rotation and with perspective tilt. Independent of the
training renderer on purpose, so the locator is tested on looks it was never tuned with."""

from __future__ import annotations

import cv2
import numpy as np

CARD_PX = (126, 176)   # a card face drawn at 2 px/mm before it is placed


def surface(rng: np.random.Generator, kind: str, size=(640, 480)) -> np.ndarray:
    w, h = size
    if kind == "light":
        img = np.full((h, w, 3), (205, 210, 215), np.float32)
    elif kind == "dark":
        img = np.full((h, w, 3), (40, 45, 38), np.float32)
    elif kind == "wood":
        x = np.arange(w, dtype=np.float32)[None, :]
        y = np.arange(h, dtype=np.float32)[:, None]
        grain = np.sin(x / 9.0 + 3 * np.sin(y / 60.0)) * 0.5 + 0.5
        base = np.array((60, 110, 165), np.float32)
        img = base[None, None, :] * (0.75 + 0.35 * grain[..., None])
    elif kind == "cloth":
        base = np.array((70, 120, 40), np.float32)
        noise = rng.normal(0, 14, (h // 2, w // 2, 1)).astype(np.float32)
        img = base[None, None, :] + cv2.resize(noise, (w, h))[..., None]
    elif kind == "checker":
        yy, xx = np.mgrid[0:h, 0:w]
        check = ((xx // 23 + yy // 23) % 2).astype(np.float32)
        img = np.stack([90 + 90 * check, 60 + 60 * check, 120 + 40 * check], axis=2)
    else:
        raise ValueError(kind)
    # uneven light: a broad gradient across the table
    gx = np.linspace(0.75, 1.15, w, dtype=np.float32)[None, :, None]
    img = img * gx + rng.normal(0, 3, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def card_face(rng: np.random.Generator, text: str = "7", colour=(40, 60, 200)) -> np.ndarray:
    """A cream card with a frame and a big numeral; alpha 0 outside its rounded corners."""
    w, h = CARD_PX
    face = np.zeros((h, w, 4), np.uint8)
    r = 10
    cv2.rectangle(face, (r, 0), (w - 1 - r, h - 1), (225, 240, 248, 255), -1)
    cv2.rectangle(face, (0, r), (w - 1, h - 1 - r), (225, 240, 248, 255), -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(face, (cx, cy), r, (225, 240, 248, 255), -1)
    cv2.rectangle(face, (8, 8), (w - 9, h - 9), (60, 160, 200, 255), 3)
    cv2.putText(face, text, (30, 115), cv2.FONT_HERSHEY_DUPLEX, 3.0, (*colour, 255), 6)
    cv2.rectangle(face, (20, 140), (w - 21, 160), (*colour, 255), -1)
    return face


def place(frame: np.ndarray, face: np.ndarray, quad: np.ndarray) -> None:
    """Paint the RGBA face onto the frame so that its corners land on quad (TL TR BR BL)."""
    h, w = face.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    size = (frame.shape[1], frame.shape[0])
    warped = cv2.warpPerspective(face, m, size, flags=cv2.INTER_LINEAR)
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    frame[:] = (frame * (1 - alpha) + warped[:, :, :3] * alpha).astype(np.uint8)


def card_quad(centre, angle_deg: float, length: float = 200.0, tilt: float = 0.0) -> np.ndarray:
    """Corners TL TR BR BL of a card of the given long side, rotated, with a keystone tilt."""
    half_w, half_h = length / CARD_PX[1] * CARD_PX[0] / 2, length / 2
    pts = np.array([[-half_w * (1 - tilt), -half_h], [half_w * (1 - tilt), -half_h],
                    [half_w * (1 + tilt), half_h], [-half_w * (1 + tilt), half_h]], np.float32)
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    return pts @ rot.T + np.asarray(centre, np.float32)


def hand(frame: np.ndarray, rng: np.random.Generator, tip, from_side: str = "bottom") -> None:
    """A skin-coloured arm reaching in from a frame border to the point tip."""
    h, w = frame.shape[:2]
    start = {"bottom": (tip[0], h + 40), "right": (w + 40, tip[1]),
             "left": (-40, tip[1]), "top": (tip[0], -40)}[from_side]
    colour = tuple(int(c) for c in rng.integers(0, 30, 3) + np.array([120, 150, 200]))
    cv2.line(frame, tuple(int(v) for v in start), tuple(int(v) for v in tip), colour, 70)
    cv2.circle(frame, tuple(int(v) for v in tip), 40, colour, -1)
