"""The user's own card crops as templates: the picture check of a calibration profile.

A card's printed face is fixed. After the canonical warp (vision.geometry.warp_card) a card shown
again looks like the crop the calibration walk took of it, up to the light, the camera's focus and
the locator's corner error of a few pixels. So each crop of the walk is kept, both ways up, as a
*template*, and a crop read later is compared with every template:

* its **detail**: the grey crop at DETAIL_SIZE, blurred a little (DETAIL_SIGMA: a pixel of focus
  or of the warp must not matter) less its blur at LIGHT_SIGMA (a lamp's fall-off across the card
  must not matter either);
* compared by normalised correlation over the template's inner part, at the best of the shifts up
  to SHIFT pixels either way (the locator's corner error), **weighted** by how much the profile's
  templates differ at each pixel (template_weights): the border and the oval every card of a deck
  shares weigh little, the numeral and the corner indices much. (A 3 and an 8 of one colour
  share all but a few strokes; unweighted, their correlations differed by less than a crop's
  lighting does.)
* its **ink**: the Lab chroma (a, b) of the card's coloured pixels after its whitest pixels are
  made neutral (card_ink). A crop whose ink is further than INK_SAME from a template's loses
  INK_WEIGHT per INK_SCALE beyond it: the blue 5 and the red 5 have one grey picture, and a
  lamp that shifts a green to olive must not make it another colour (INK_SAME).

A label's score is its best template's. Compute: every template at a third of the size first
(COARSE_FACTOR, shifts of one pixel there), then the COARSE_KEEP labels that came first at full
size (one correlation over the shifts each): about 0.2 ms a crop on one core against 108
templates (bench/vision_bench.py).

Chosen on the real photos of `python -m vision.evaluation.real_eval` (models/calibration.md says
which were held out): a session of one physical deck calibrating, another read.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.lib.stride_tricks import as_strided

DETAIL_SIZE = (63, 88)      # (w, h): half the canonical crop
DETAIL_SIGMA = 1.0
LIGHT_SIGMA = 4.0
SHIFT = 3                   # pixels at DETAIL_SIZE either way: ~5 % of the card's width
WEIGHT_BLUR = 1.5           # the weights' blur (pixels at DETAIL_SIZE): a stroke a pixel off still counts
COARSE_FACTOR = 3           # the first pass compares pictures this many times smaller ...
COARSE_KEEP = 3             # ... and keeps this many labels for the full-size comparison,
NEAR = 2                    # at the shifts within this many pixels of the one found at a third of the size
INK_SAMPLES = (22, 21)      # the crop is shrunk to this many pixels (rows, columns) to measure its ink
INK_SAME, INK_SCALE, INK_WEIGHT = 25.0, 25.0, 0.3   # Lab chroma units (a, b: -128..127)
GREYISH = 0.25              # a pixel is near grey below this saturation (max - min over max) ...
WHITE_SHARE = 0.9           # ... and white at this share of the brightest near-grey pixel
COLOURED = (80, 40)         # ... and coloured above this saturation and value (OpenCV HSV, 0-255)


def card_grey(crop_bgr: np.ndarray) -> np.ndarray:
    """(h, w) uint8 of DETAIL_SIZE: the crop in grey, what a profile keeps of each crop shown."""
    return cv2.resize(cv2.cvtColor(crop_bgr, cv2.COLOR_BGR2GRAY), DETAIL_SIZE, interpolation=cv2.INTER_AREA)


def grey_detail(grey: np.ndarray) -> np.ndarray:
    """(h, w) float32: the detail (module docstring) of a card_grey picture."""
    grey = grey.astype(np.float32)
    return cv2.GaussianBlur(grey, (0, 0), DETAIL_SIGMA) - cv2.GaussianBlur(grey, (0, 0), LIGHT_SIGMA)


def card_detail(crop_bgr: np.ndarray) -> np.ndarray:
    """(h, w) float32 of DETAIL_SIZE: the crop's grey detail (module docstring)."""
    return grey_detail(card_grey(crop_bgr))


def card_ink(crop_bgr: np.ndarray) -> np.ndarray:
    """(2,) float32: the mean Lab chroma (a, b) of the crop's coloured pixels, the crop first scaled
    per channel so that its whitest near-grey pixels are neutral: a lamp's colour cast is taken
    out. A crop with no coloured pixel gives the chroma of all of it. Measured on INK_SAMPLES
    pixels of the crop (its colours, not its strokes)."""
    small = cv2.resize(crop_bgr, INK_SAMPLES[::-1], interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    greyish_value = np.where(hsv[..., 1] < GREYISH * 255, hsv[..., 2], 0)
    brightest = int(greyish_value.max())
    if brightest > 0:
        white = np.array(cv2.mean(small, mask=(greyish_value >= WHITE_SHARE * brightest).astype(np.uint8))[:3])
        small = cv2.multiply(small, np.append(white.max() / np.maximum(white, 1), 1.0), dtype=cv2.CV_8U)
        hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    coloured = ((hsv[..., 1] > COLOURED[0]) & (hsv[..., 2] > COLOURED[1])).astype(np.uint8)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    _, a, b, _ = cv2.mean(lab, mask=coloured if coloured.sum() >= 8 else None)
    return np.array([a - 128, b - 128], np.float32)


def template_weights(details: np.ndarray) -> np.ndarray:
    """(h, w) float32, mean 1: how much the templates `details` (K, h, w) differ at each pixel
    (their spread, each first of unit length, blurred by WEIGHT_BLUR). One template alone (or
    templates all alike) weighs every pixel alike."""
    k = len(details)
    unit = details / np.maximum(np.linalg.norm(details.reshape(k, -1), axis=1), 1e-6)[:, None, None]
    spread = np.sqrt(cv2.GaussianBlur(unit.var(axis=0).astype(np.float32), (0, 0), WEIGHT_BLUR))
    if k < 2 or spread.mean() <= 1e-9:
        return np.ones(details.shape[1:], np.float32)
    return (spread / spread.mean()).astype(np.float32)


class TemplateReader:
    """Scores crops against the templates of a profile: `greys` (K, h, w) as card_grey gives them,
    `inks` (K, 2) as card_ink gives them, `labels` (K,) the label index of each; `n_labels` labels
    in all."""

    def __init__(self, greys: np.ndarray, inks: np.ndarray, labels: np.ndarray, n_labels: int):
        details = np.stack([grey_detail(g) for g in greys]) if len(greys) else np.zeros((0, *DETAIL_SIZE[::-1]), np.float32)
        self.labels = np.asarray(labels, np.int64)
        self.inks = np.asarray(inks, np.float32)
        self.n_labels = n_labels
        self.present = np.unique(self.labels)
        k, h, w = details.shape
        s = SHIFT
        weights = template_weights(details)
        self.fine = _Pass(details, weights, s)
        small = (w // COARSE_FACTOR, h // COARSE_FACTOR)
        self.coarse = _Pass(np.stack([cv2.resize(d, small, interpolation=cv2.INTER_AREA) for d in details]),
                            cv2.resize(weights, small, interpolation=cv2.INTER_AREA), max(1, s // COARSE_FACTOR))

    def scores(self, crops_bgr) -> np.ndarray:
        """(N, n_labels) float32: each crop's score for each label (module docstring), the best of
        its templates'; -1 for a label without templates."""
        out = np.full((len(crops_bgr), self.n_labels), -1.0, np.float32)
        for row, crop in enumerate(crops_bgr):
            out[row] = self._scores(crop)
        return out

    def _scores(self, crop_bgr: np.ndarray) -> np.ndarray:
        detail = card_detail(crop_bgr)
        distance = np.linalg.norm(self.inks - card_ink(crop_bgr), axis=1)
        ink_penalty = INK_WEIGHT * np.maximum(0.0, distance - INK_SAME) / INK_SCALE
        coarse, coarse_shifts = self.coarse.all(cv2.resize(detail, self.coarse.size, interpolation=cv2.INTER_AREA))
        coarse -= ink_penalty
        # Each label's best templates at a third of the size; the first COARSE_KEEP labels are
        # compared again at full size by their best two (a card's two ways up look much alike
        # shrunk: an 8 is an 8 turned half round but for its corners).
        order = np.argsort(-coarse)
        ranked = self.labels[order]
        firsts = order[np.sort(np.unique(ranked, return_index=True)[1])]    # each label's best, best first
        kept_labels = self.labels[firsts[:COARSE_KEEP]]
        refined = np.concatenate([order[ranked == label][:2] for label in kept_labels])
        fine = self.fine.near(detail, refined, coarse_shifts[refined] * COARSE_FACTOR) - ink_penalty[refined]
        kept = firsts[:COARSE_KEEP]
        fine = np.array([fine[self.labels[refined] == label].max() for label in kept_labels], np.float32)
        # A label not kept scores its coarse score moved onto the full size's scale by the offset
        # of the last label kept, and never above the labels kept: it came after them.
        out = np.full(self.n_labels, -1.0, np.float32)
        others = firsts[COARSE_KEEP:]
        out[self.labels[others]] = np.minimum(coarse[others] - coarse[kept[-1]] + fine[-1], fine.min())
        out[self.labels[kept]] = fine
        return out


class _Pass:
    """Weighted normalised correlation of a crop's detail with every template's inner part (the
    template less `shift` pixels at each edge), at the best of the shifts up to `shift` pixels."""

    def __init__(self, details: np.ndarray, weights: np.ndarray, shift: int):
        k, h, w = details.shape
        self.size = (w, h)
        self.shift = shift
        self.weights = weights[shift:h - shift, shift:w - shift]
        inner = details[:, shift:h - shift, shift:w - shift] * self.weights
        inner /= np.maximum(np.linalg.norm(inner.reshape(k, -1), axis=1), 1e-6)[:, None, None]
        # correlation at a shift = <weights * template, weights * crop window> / |weights * crop window|
        self.kernels = np.ascontiguousarray(inner * self.weights, np.float32)
        self.flat = self.kernels.reshape(k, -1)
        self.squared_weights = np.ascontiguousarray(self.weights ** 2, np.float32)
        self.shifts = np.array([(dy, dx) for dy in range(-shift, shift + 1) for dx in range(-shift, shift + 1)])

    def _windows(self, detail: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(S, h * w) the crop's windows at `shifts` ((S, 2) dy, dx from the centre), flattened,
        and (S,) the norm of each, weighted."""
        h, w = self.kernels.shape[1:]
        steps = 2 * self.shift + 1
        rows, columns = detail.strides
        views = as_strided(detail, (steps, steps, h, w), (rows, columns, rows, columns))   # every window, no copy
        windows = views[shifts[:, 0] + self.shift, shifts[:, 1] + self.shift].reshape(len(shifts), -1)
        return windows, np.sqrt(np.maximum((windows * windows) @ self.squared_weights.ravel(), 1e-9))

    def all(self, detail: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(K,) every template's best correlation with `detail` over the shifts, and (K, 2) the
        shift (dy, dx) it is best at."""
        windows, norms = self._windows(detail, self.shifts)
        correlations = self.flat @ windows.T / norms
        return correlations.max(axis=1), self.shifts[correlations.argmax(axis=1)]

    def near(self, detail: np.ndarray, templates: np.ndarray, around: np.ndarray) -> np.ndarray:
        """(len(templates),) each template's best correlation with `detail` over the shifts within
        NEAR pixels of its shift in `around` (the coarse pass's, at this size)."""
        close = np.abs(self.shifts[None, :, :] - around[:, None, :]).max(axis=2) <= NEAR   # (T, S)
        wanted = close.any(axis=0)
        windows, norms = self._windows(detail, self.shifts[wanted])
        correlations = self.flat[templates] @ windows.T / norms
        return np.where(close[:, wanted], correlations, -np.inf).max(axis=1).astype(np.float32)
