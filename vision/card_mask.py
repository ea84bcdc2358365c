"""The card mask network at run time: where in a still photo cards lie, as outlines.

`models/card-mask.onnx` (trained by vision.training.train_card_mask on the repo's own scenes:
every deck's rendered faces, and the printed ones where the team's copy is at hand, on the tables
of the "train" split) maps a photo, shrunk to at most INPUT_LONG_SIDE pixels, to a logit per pixel
at half that size: "a card's face here, not within a band of its edge" (the band, `band` of the
card's short side in the sidecar `card-mask.json`, keeps cards that touch or overlap apart, each a
region of its own). A card-shaped region is a card's outline, grown back by the band.

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
from vision.geometry import order_corners
from vision.locate import card_shaped, refined_outlines

MASK_MODEL = "card-mask"
INPUT_LONG_SIDE = 320
STRIDE = 16            # the network halves the picture four times: its input's sides are multiples of this
MIN_REGION = 40        # pixels of the mask (at half the input's size): less is no card (a card is ~200+)
UPSAMPLE = 4


class CardMask:
    def __init__(self, session, threshold: float, band: float, name: str):
        self._session = session
        self._input = session.get_inputs()[0].name
        self.threshold = threshold
        self.band = band
        self.name = name

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
        likely it lies on a card's face (away from its edge)."""
        h, w = photo_bgr.shape[:2]
        scale = INPUT_LONG_SIDE / max(h, w)
        size = (max(STRIDE, round(w * scale / STRIDE) * STRIDE), max(STRIDE, round(h * scale / STRIDE) * STRIDE))
        x = cv2.resize(photo_bgr, size, interpolation=cv2.INTER_AREA)
        x = (x[..., ::-1].astype(np.float32) / 255.0 - 0.5).transpose(2, 0, 1)[None]
        logits = self._session.run(None, {self._input: np.ascontiguousarray(x)})[0][0, 0]
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))

    def outlines(self, photo_bgr: np.ndarray) -> list[tuple[np.ndarray, float]]:
        """(quad, the region's mean probability) of each card-shaped region of the mask: the quad
        float32 (4, 2), TL TR BR BL, in the photo's pixels, grown back by the band round a card's face."""
        probs = self.probabilities(photo_bgr)
        # The probabilities smoothly enlarged before the threshold: a region's outline to a
        # quarter of the mask's pixel.
        fine = cv2.resize(probs, (probs.shape[1] * UPSAMPLE, probs.shape[0] * UPSAMPLE), interpolation=cv2.INTER_LINEAR)
        mask = (fine > self.threshold).astype(np.uint8)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
        sx, sy = photo_bgr.shape[1] / mask.shape[1], photo_bgr.shape[0] / mask.shape[0]
        quads, scores = [], []
        for i in range(1, count):
            if stats[i, cv2.CC_STAT_AREA] < MIN_REGION * UPSAMPLE ** 2:
                continue
            contours, _ = cv2.findContours((labels == i).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            (cx, cy), (w, h), angle = cv2.minAreaRect(max(contours, key=cv2.contourArea))
            # The region is the card less the band all round: its sides, grown back.
            grown = 2.0 * self.band * min(w, h) / (1.0 - 2.0 * self.band)
            box = cv2.boxPoints(((cx, cy), (w + grown, h + grown), angle)).astype(np.float32)
            quad = order_corners(box * np.array([sx, sy], np.float32))
            if card_shaped(quad[None])[0]:
                quads.append(quad)
                scores.append(float(fine[labels == i].mean()))
        # The mask's outline is a few pixels off the card's: snapped to its border in the photo.
        return list(zip(refined_outlines(photo_bgr, quads), scores))


@functools.lru_cache(maxsize=1)
def card_mask() -> CardMask:
    """The committed card mask network, loaded once per process."""
    return CardMask.load()
