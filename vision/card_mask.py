"""The card mask network at run time: where in a still photo cards lie, as outlines.

`models/card-mask.onnx` (trained by vision.training.train_card_mask on the repo's own scenes:
every deck's rendered faces, and the printed ones where the team's copy is at hand, on the tables
of the "train" split) maps a photo, shrunk to at most INPUT_LONG_SIDE pixels, to a logit per pixel
at half that size: "a card's face here, not within a band of its edge" (the band, `band` of the
card's short side in the sidecar `card-mask.json`, keeps cards that touch or overlap apart, each a
region of its own). A card-shaped region is a card's outline, grown back by the band. Cards
that overlap much, or a card and a hand over it, can still run together into one region, whose
outer sides are those cards' own: for a reader that keeps an outline only where it names a card,
the cards standing on the straight stretches of each region's hull are outlines too (as
vision.locate proposes cards on the stretches of an edge hull).

The locator (vision.locate) finds a card by its edges. The network sees a card by what it is, its
print and its stock against the table, so it finds the cards whose edges drown in a cloth's (a
pale card on a dotted or checked cloth) or fade in a hand's shadow. Its outlines are a few pixels
off, so a still photo's reader (vision.reading.photo_candidates) reads them as fallbacks that name
a card only where the trained classifier is sure.
"""

from __future__ import annotations

import functools
from pathlib import Path

import cv2
import numpy as np

from vision.classifier import ModelError, network_files, onnx_session
from vision.geometry import CARD_ASPECT, order_corners, quad_area
from vision.locate import card_shaped, quads_from_sides, refined_outlines

MASK_MODEL = "card-mask"
INPUT_LONG_SIDE = 320
STRIDE = 16            # the network halves the picture four times: its input's sides are multiples of this
MIN_REGION = 40        # pixels of the mask (at half the input's size): less is no card (a card is ~200+)
UPSAMPLE = 4
MIN_CARD_SHARE = 0.01  # of the photo's area: the least card a stretch of a region's side stands for (find_cards' least)
STRETCH_SHARE = 0.5    # of a region's rectangle's short side: the least stretch of its hull a card stands on
LEAST_OF_REGION = 0.35 # of the region's area: the least card standing on its stretch (a part of a card's picture is less)
HELD_SHARE = 0.8       # of a card standing on a region's stretch (less the band) that must lie in that region


class CardMask:
    def __init__(self, session, threshold: float, band: float, name: str):
        self._session = session
        self._input = session.get_inputs()[0].name
        self.threshold = threshold
        self.band = band
        self.name = name
        self._last: tuple[np.ndarray, np.ndarray] | None = None   # (network input, probabilities) of the last photo

    @classmethod
    def load(cls, models_dir: str | Path | None = None) -> "CardMask":
        model_path, sidecar_path, data = network_files(models_dir, MASK_MODEL, "card mask model", "train it with `python -m vision.training.train_card_mask`")
        try:
            threshold, band = float(data["threshold"]), float(data["band"])
            if not (0.0 < threshold < 1.0 and 0.0 <= band < 0.5):
                raise ValueError("threshold must lie in (0, 1) and band in [0, 0.5)")
        except (KeyError, TypeError, ValueError) as error:
            raise ModelError(f"{sidecar_path}: not a usable card mask sidecar ({error})") from None
        return cls(onnx_session(model_path), threshold, band, str(model_path))

    def probabilities(self, photo_bgr: np.ndarray) -> np.ndarray:
        """(h, w) float32: for each pixel of the photo shrunk to half the network's input, how
        likely it lies on a card's face (away from its edge). A still photo's reader asks about
        one photo up to three times (its outlines, then the readings it doubts: vision.reading),
        so the last photo's map is kept and given again while the shrunk photo is the same."""
        h, w = photo_bgr.shape[:2]
        scale = INPUT_LONG_SIDE / max(h, w)
        size = (max(STRIDE, round(w * scale / STRIDE) * STRIDE), max(STRIDE, round(h * scale / STRIDE) * STRIDE))
        shrunk = cv2.resize(photo_bgr, size, interpolation=cv2.INTER_AREA)
        last = self._last
        if last is not None and np.array_equal(last[0], shrunk):
            return last[1]
        x = (shrunk[..., ::-1].astype(np.float32) / 255.0 - 0.5).transpose(2, 0, 1)[None]
        logits = self._session.run(None, {self._input: np.ascontiguousarray(x)})[0][0, 0]
        probs = 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
        probs.setflags(write=False)          # shared with the next caller asking about this photo
        self._last = (shrunk, probs)
        return probs

    def card_share(self, photo_bgr: np.ndarray, quads) -> np.ndarray:
        """(len(quads),): how likely, on average over its face (the quad less the band round its
        edge, as the network was taught), each quad of the photo holds a card."""
        probs = self.probabilities(photo_bgr)
        scale = np.array([probs.shape[1] / photo_bgr.shape[1], probs.shape[0] / photo_bgr.shape[0]], np.float32)
        shares = []
        for quad in quads:
            q = np.asarray(quad, np.float32) * scale
            centre = q.mean(axis=0)
            face = np.zeros(probs.shape, np.uint8)
            cv2.fillConvexPoly(face, np.round((q - centre) * (1.0 - 2.0 * self.band) + centre).astype(np.int32), 1)
            shares.append(cv2.mean(probs, mask=face)[0] if face.any() else 0.0)
        return np.array(shares, np.float32)

    def outlines(self, photo_bgr: np.ndarray, on_sides: bool = False) -> list[tuple[np.ndarray, float]]:
        """(quad, its region's mean probability) of each card-shaped region of the mask: the quad
        float32 (4, 2), TL TR BR BL, in the photo's pixels, grown back by the band round a card's
        face. on_sides: then the cards standing on the straight stretches of each region's hull
        (module docstring), each one the region holds (HELD_SHARE of it) and not a small part of
        it (LEAST_OF_REGION): more hypotheses, some of them over no card where a region is none.
        (On the printed Flip 7 faces' tuning captures, `python -m vision.evaluation.real_eval
        --tuning-captures`, the cards not read fell from 16 to 10 of 264, none misread; UNO
        Flip's stayed 7 of 432.)"""
        probs = self.probabilities(photo_bgr)
        # The probabilities smoothly enlarged before the threshold: a region's outline to a
        # quarter of the mask's pixel.
        fine = cv2.resize(probs, (probs.shape[1] * UPSAMPLE, probs.shape[0] * UPSAMPLE), interpolation=cv2.INTER_LINEAR)
        mask = (fine > self.threshold).astype(np.uint8)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
        sx, sy = photo_bgr.shape[1] / mask.shape[1], photo_bgr.shape[0] / mask.shape[0]
        # The region is a card less the band all round: its sides grown back by this factor.
        grow = 1.0 / (1.0 - 2.0 * self.band)
        min_side = np.sqrt(MIN_CARD_SHARE * mask.size / CARD_ASPECT)
        rectangles, stretched = [], []      # (quad, score) each
        for i in range(1, count):
            if stats[i, cv2.CC_STAT_AREA] < MIN_REGION * UPSAMPLE ** 2:
                continue
            region = (labels == i).astype(np.uint8)
            contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            contour = max(contours, key=cv2.contourArea)
            (cx, cy), (w, h), angle = cv2.minAreaRect(contour)
            grown = (grow - 1.0) * min(w, h)
            score = cv2.mean(fine, mask=region)[0]
            rectangles.append((cv2.boxPoints(((cx, cy), (w + grown, h + grown), angle)), score))
            # A card standing on a stretch is one the region holds (not one reaching off a blob of
            # the cloth), grown about its own centre: the stretch it stands on moves out by the band.
            if on_sides:
                stretched += [((q - q.mean(axis=0)) * grow + q.mean(axis=0), score)
                              for q in quads_from_sides(cv2.convexHull(contour), max(min_side, STRETCH_SHARE * min(w, h)))
                              if _share_in(region, q) >= HELD_SHARE
                              and quad_area(q) >= LEAST_OF_REGION * stats[i, cv2.CC_STAT_AREA]]
        found = []
        for boxes in (rectangles, stretched):
            if not boxes:
                continue
            quads = [order_corners(np.asarray(box, np.float32) * np.array([sx, sy], np.float32)) for box, _ in boxes]
            shaped = [(quad, score) for quad, (_, score) in zip(quads, boxes) if card_shaped(quad[None])[0]]
            # The mask's outline is a few pixels off the card's: snapped to its border in the photo
            # (the rectangles and the stretches' cards apart: how far in a side is probed is the
            # deepest of a batch's).
            found += list(zip(refined_outlines(photo_bgr, [q for q, _ in shaped]), [s for _, s in shaped]))
        return found


def _share_in(region: np.ndarray, quad: np.ndarray) -> float:
    """Share of the quad's pixels set in the region (uint8 0 / 1)."""
    inside = np.zeros_like(region)
    cv2.fillConvexPoly(inside, np.round(quad).astype(np.int32), 1)
    total = cv2.countNonZero(inside)
    return cv2.countNonZero(inside & region) / total if total else 0.0


_models_dir: Path | None = None


def use_models_dir(models_dir: str | Path | None) -> None:
    """Read still photos with the card mask network in `models_dir` from now on in this process,
    where that folder has one (a command's --models-dir: a retrained network is measured as the
    deck's model is); a folder without one, or None, keeps the committed network."""
    global _models_dir
    folder = Path(models_dir) if models_dir else None
    if folder is not None and not (folder / f"{MASK_MODEL}.onnx").is_file():
        folder = None
    if folder != _models_dir:
        _models_dir = folder
        card_mask.cache_clear()


@functools.lru_cache(maxsize=1)
def card_mask() -> CardMask:
    """The card mask network (the committed one unless use_models_dir chose another), loaded once
    per process."""
    return CardMask.load(_models_dir)
