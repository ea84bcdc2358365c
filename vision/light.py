"""The light over the table changes: a lamp switched on, a cloud, a player's shadow, the camera's
own exposure and white balance. To the placement detector every such change looks like the
whole zone changing: cards it knows look different, and it would judge, forget and count them
again. A change of light is smooth across the picture and the same on the table and the cards;
a card laid or a hand is sharp-edged and local. So the light is measured and taken out of each
frame before anything is compared.

`light_change(now, ref)` compares two small colour copies of the picture (the detector's shrunk
frames) block by block: the log ratio of each colour channel is fitted, over the blocks, by a
smooth surface (a quadratic in x and y), by least squares with the blocks that do not follow it
(a card laid, a hand, glare) left out and the fit made again. Where most of the picture follows
a surface that is not flat at 1, the light changed by that surface; `relight` divides it out.
Blocks too dark or too bright to measure (black print, a burnt-out highlight) are left out.
A burnt-out value (a lamp brighter than the exposure was set for) says only how bright it is at
least: `relight` can keep the picture before there, and the zone compares such values as floors
(vision.zone), so the white of a card burnt out is no change from the white it was.
"""

from __future__ import annotations

import cv2
import numpy as np

GRID = (32, 24)             # blocks across and down the small picture the light is measured on
LEAST_LEVEL, MOST_LEVEL = 16, 240   # grey levels outside which a block tells nothing of the light
OUTLIER = 0.08              # a block off the fitted surface by more than this (log ratio) is not light
MEASURED = 0.3              # the light is measured only where at least this share of the blocks can be
FOLLOWING = 0.7             # the light changed only if at least this share of those follows one surface
SMALLEST = 0.08             # ... and the surface differs from no change by this much on average where it
                            # was fitted (8 %: less is below what the detector sees, 18 grey levels at white;
                            # a hand's shade, on a deal in one light, stays under it)
ROUNDS = 3                  # fits, each without the blocks the last one left off
BURNT = 250                 # a channel this bright may be burnt out: the light there is unknown above it


def _terms(w: int, h: int) -> np.ndarray:
    """(h * w, 6) the quadratic's terms at the block centres, x and y in -1..1."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    x = (x + 0.5) / w * 2 - 1
    y = (y + 0.5) / h * 2 - 1
    return np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=-1).reshape(-1, 6)


_TERMS = _terms(*GRID)
_OUTER = (_TERMS[:, :, None] * _TERMS[:, None, :]).reshape(len(_TERMS), 36)   # each block's terms' products
_TINY = 1e-9 * np.eye(6)


def light_change(now: np.ndarray, ref: np.ndarray) -> np.ndarray | None:
    """The gain per colour channel, (GRID[1], GRID[0], 3) float32, by which the light over `ref`
    became the light over `now` (two BGR pictures of one size), or None when the light did not
    change (or when too little of the picture follows one smooth change to tell)."""
    a = cv2.resize(now, GRID, interpolation=cv2.INTER_AREA).reshape(-1, 3).astype(np.float64)
    b = cv2.resize(ref, GRID, interpolation=cv2.INTER_AREA).reshape(-1, 3).astype(np.float64)
    usable = ((a > LEAST_LEVEL) & (a < MOST_LEVEL) & (b > LEAST_LEVEL) & (b < MOST_LEVEL)).all(axis=1)
    measured = int(usable.sum())
    if measured < MEASURED * len(usable):
        return None
    # (No +1 in the logs: it would pull every ratio towards 1, and the error would add up over the
    # references each taken in the light measured; blocks too dark to measure are left out anyway.)
    ratio = np.log(np.maximum(a, 1.0)) - np.log(np.maximum(b, 1.0))     # (blocks, 3)
    keep = usable
    for _ in range(ROUNDS):
        # Least squares over the kept blocks, by the normal equations (their sums, weighed 0 or 1).
        weight = keep.astype(np.float64)
        coef = np.linalg.solve((weight @ _OUTER).reshape(6, 6) + _TINY, _TERMS.T @ (ratio * weight[:, None]))
        keep = usable & (np.abs(ratio - _TERMS @ coef) <= OUTLIER).all(axis=1)
        if keep.sum() < 12:
            return None
    # (The first fit, over every block, is pulled by the ones that are not light; the later ones not.)
    if keep.sum() < FOLLOWING * measured:
        return None
    surface = _TERMS @ coef                                        # (blocks, 3)
    # (Its size where it was measured: where a hand covers the picture the quadratic only
    # extrapolates, bent as far as nothing holds it, and that is not a light.)
    if np.abs(surface[keep]).max(axis=1).mean() < SMALLEST:
        return None
    return np.exp(surface).reshape(GRID[1], GRID[0], 3).astype(np.float32)


def relight(frame: np.ndarray, gain: np.ndarray, before: np.ndarray | None = None) -> np.ndarray:
    """`frame` (BGR uint8) as it would look in the light before: divided by the gain surface
    (from light_change), spread smoothly over the frame. A burnt-out value (burnt_out) says only
    that the light there was at least that bright: divided, it is a floor, and where `before`
    (the same picture in the light before, of the frame's size) shows more there, it shows that:
    the white of a card burnt out under a brighter lamp is no change from how it was."""
    h, w = frame.shape[:2]
    undo = cv2.resize(1.0 / gain, (w, h), interpolation=cv2.INTER_LINEAR)
    relit = cv2.multiply(frame, undo, dtype=cv2.CV_8U)     # rounded and saturated, in one pass
    if before is not None:
        # (Channel by channel: before where burnt, 0 elsewhere, and the greater of that and relit.)
        relit = cv2.max(relit, cv2.bitwise_and(before, burnt_out(frame)))
    return relit


def burnt_out(frame: np.ndarray) -> np.ndarray:
    """255 where a channel of the BGR frame is BURNT or more (its light unknown above that), 0
    elsewhere: uint8, channel by channel."""
    return cv2.threshold(frame, BURNT - 1, 255, cv2.THRESH_BINARY)[1]
