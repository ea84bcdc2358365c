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


def turned_half_round(crop: np.ndarray) -> np.ndarray:
    """The crop of a card lying the other way up (a card is read both ways: vision.reading).
    (OpenCV's flip: the same pixels as numpy's reversed copy, 0.003 ms against 0.11 ms for a
    canonical crop: a twentieth of a card read both ways up, bench/vision_bench.py.)"""
    return cv2.flip(np.asarray(crop), -1)


def quad_area(quad) -> float:
    return float(abs(cv2.contourArea(np.asarray(quad, dtype=np.float32))))


def intersection_area(a, b) -> float:
    """Area of the intersection of two convex quads (float32 (4, 2)).

    cv2.intersectConvexConvex returns 0 for some pairs that overlap, one nested in the other with
    a corner on the other's edge (opencv/opencv#22812, still open; it happens here when two
    outlines of one card both end at the frame's edge). Such a 0 is checked by clipping."""
    inter = float(cv2.intersectConvexConvex(a, b)[0])
    if inter > 0:
        return inter
    (ax0, ay0), (ax1, ay1) = a.min(axis=0), a.max(axis=0)
    (bx0, by0), (bx1, by1) = b.min(axis=0), b.max(axis=0)
    if ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0:
        return 0.0                      # (the usual case: apart)
    a, b = np.asarray(a, np.float64).reshape(-1, 2), np.asarray(b, np.float64).reshape(-1, 2)
    return 0.0 if _separated(a, b) else _clipped_area(a, b)


def _separated(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a line parallel to an edge of one of the convex polygons separates them."""
    edges = np.concatenate([np.roll(a, -1, axis=0) - a, np.roll(b, -1, axis=0) - b])
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
    pa, pb = normals @ a.T, normals @ b.T
    return bool(np.any((pa.max(axis=1) <= pb.min(axis=1)) | (pb.max(axis=1) <= pa.min(axis=1))))


def _signed_area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def _clipped_area(subject: np.ndarray, clip: np.ndarray) -> float:
    """Area of convex `subject` clipped by convex `clip` (Sutherland-Hodgman)."""
    if _signed_area(clip) < 0:
        clip = clip[::-1]
    points = list(subject)
    for p, q in zip(clip, np.roll(clip, -1, axis=0)):
        edge = q - p
        side = [edge[0] * (v[1] - p[1]) - edge[1] * (v[0] - p[0]) for v in points]   # >= 0: inside
        kept = []
        for n, v in enumerate(points):
            u, su, sv = points[n - 1], side[n - 1], side[n]
            if (su >= 0) != (sv >= 0):          # the edge u -> v crosses the clip line
                kept.append(u + (v - u) * (su / (su - sv)))
            if sv >= 0:
                kept.append(v)
        points = kept
        if len(points) < 3:
            return 0.0
    return abs(_signed_area(np.array(points)))


def quad_iou(a, b) -> float:
    """Intersection over union of two convex quads."""
    a = np.asarray(a, dtype=np.float32).reshape(-1, 2)
    b = np.asarray(b, dtype=np.float32).reshape(-1, 2)
    inter = intersection_area(a, b)
    union = quad_area(a) + quad_area(b) - inter
    return float(inter / union) if union > 0 else 0.0


def quad_aspect(quad) -> float:
    """Long over short side, averaging opposite sides (1.40 for a card seen straight down)."""
    q = order_corners(quad)
    sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    short = (sides[0] + sides[2]) / 2.0
    return float((sides[1] + sides[3]) / 2.0 / max(short, 1e-6))
