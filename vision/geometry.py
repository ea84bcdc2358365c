"""Card geometry: corner order and the warp to the canonical card crop.

A card quad is a float32 array of shape (4, 2) holding image (x, y) corners ordered TL, TR, BR, BL
(clockwise on screen) with the card's long side vertical, so the warped crop is always portrait.
A card lying upside down gives an upside-down crop; the classifier copes with both.
"""

from __future__ import annotations

import cv2
import numpy as np

# Portrait crop at about 2 px/mm of a 63 x 88 mm card.
CANON_W, CANON_H = 126, 176
CARD_ASPECT = 88.0 / 63.0


def order_corners(pts) -> np.ndarray:
    """Order four points TL, TR, BR, BL (clockwise on screen) with the long side vertical.

    Of the two orders that satisfy this (180 degrees apart) the one whose first corner is nearer
    the image's top-left is chosen, so the order is deterministic."""
    p = np.asarray(pts, dtype=np.float32).reshape(4, 2)
    rel = p - np.add.reduce(p, axis=0) / 4          # about the centre (p.mean(axis=0), the same float32)
    # Image y grows downwards, so increasing atan2 angle runs clockwise on screen.
    p = p[np.argsort(np.arctan2(rel[:, 1], rel[:, 0]))]
    d = p - p[_NEXT]
    sides = np.sqrt(np.add.reduce(d * d, axis=1))
    # Sides are 0-1, 1-2, 2-3, 3-0: the first one (TL->TR) must be a short one.
    across = (sides[:2] + sides[2:]).tolist()       # sides 0 + 2 and 1 + 3 (float32 sums)
    start = 1 if across[0] > across[1] else 0
    sums = np.add.reduce(p, axis=1).tolist()
    if sums[start + 2] < sums[start]:
        start += 2
    return p[_ROTATED[start]]


# (Index arrays for order_corners: a numpy call costs more than the arithmetic on four points.)
_NEXT = np.array([1, 2, 3, 0])
_ROTATED = [np.array([(start + i) % 4 for i in range(4)]) for start in range(4)]


def card_transform(quad, size=(CANON_W, CANON_H)) -> np.ndarray:
    """The 3x3 perspective matrix taking the image quad onto the (w, h) crop."""
    w, h = size
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    return cv2.getPerspectiveTransform(order_corners(quad), dst)


def warp_card(frame_bgr: np.ndarray, quad, size=(CANON_W, CANON_H)) -> np.ndarray:
    """Cut the card out of the frame as an upright-or-upside-down portrait crop (H, W, 3) uint8."""
    matrix = card_transform(quad, size)
    return cv2.warpPerspective(frame_bgr, matrix, tuple(size), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def quad_area(quad) -> float:
    return float(abs(cv2.contourArea(np.asarray(quad, dtype=np.float32))))


def quad_iou(a, b) -> float:
    """Intersection over union of two convex quads."""
    a = np.asarray(a, dtype=np.float32).reshape(-1, 2)
    b = np.asarray(b, dtype=np.float32).reshape(-1, 2)
    inter, _ = cv2.intersectConvexConvex(a, b)
    union = quad_area(a) + quad_area(b) - inter
    return float(inter / union) if union > 0 else 0.0


def quad_aspect(quad) -> float:
    """Long over short side, averaging opposite sides (1.40 for a card seen straight down)."""
    q = order_corners(quad)
    sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    short = (sides[0] + sides[2]) / 2.0
    return float((sides[1] + sides[3]) / 2.0 / max(short, 1e-6))
