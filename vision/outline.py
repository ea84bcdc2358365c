"""The card-outline network: where in a frame cards lie, whatever their print or the table.

`models/card-outline.onnx` (trained by vision.training.train_outline on the scene synthesiser's
tables) reads a frame at about 256 x 192 and gives, at half that size, the probability that each
pixel shows a card's face and that it lies on a card's outline (between a card and the table or
between two cards). What the locator's edge cues cannot tell apart it has learnt to: a card's
printed inner frame or picture is not its outline, a shadow's edge or a checked cloth's lines
are not either, and a card lying on another is a card of its own.

`card_regions` cuts the maps into one region per card: the card pixels off any outline are joined
into cores, which then flood the outline band from both sides until they meet on its ridge (a
watershed). vision.locate fits a quad to each card-shaped region, snaps it to the frame's edges,
and drops the edges' own outlines that lie over such a card but do not fit it.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.classifier import ModelError, onnx_session

log = logging.getLogger(__name__)

MODEL_NAME = "card-outline"
# A pixel is a card's (or on an outline) from this probability.
THRESHOLD = 0.5


@dataclass
class CardRegion:
    hull: np.ndarray      # float32 (K, 2): the region's convex hull, in the pixels of the image read
    region: np.ndarray    # uint8 0/255 mask of the region at map size
    scale: tuple[float, float]   # image pixels per map pixel (x, y)
    confidence: float     # mean card probability over the region


class OutlineNetwork:
    """The exported network and how to feed it (its sidecar)."""

    def __init__(self, session, long_side: int, multiple: int, mean, std, identity: str = ""):
        self.session, self.long_side, self.multiple = session, long_side, multiple
        self.blob_scale = 1.0 / (255.0 * float(std[0]))
        self.blob_mean = tuple(255.0 * float(m) for m in mean)
        self.identity = identity
        self._input = session.get_inputs()[0].name

    @classmethod
    def load(cls, models_dir: str | Path | None = None) -> "OutlineNetwork":
        """The committed network (models/card-outline.onnx and .json); ModelError when missing or
        unreadable."""
        import hashlib

        folder = Path(models_dir) if models_dir else Path(__file__).resolve().parent.parent / "models"
        model_path, sidecar_path = folder / f"{MODEL_NAME}.onnx", folder / f"{MODEL_NAME}.json"
        try:
            spec = json.loads(sidecar_path.read_text(encoding="utf-8"))
            size = spec["input"]
            long_side, multiple = int(max(size["width"], size["height"])), int(size.get("multiple", 16))
            mean, std = spec["normalize"]["mean"], spec["normalize"]["std"]
            identity = hashlib.sha256(model_path.read_bytes()).hexdigest()
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ModelError(f"{MODEL_NAME}: cannot read {model_path} or its sidecar ({error})") from None
        return cls(onnx_session(model_path), long_side, multiple, mean, std, identity)

    def input_size(self, width: int, height: int, frame_long_side: float | None = None) -> tuple[int, int]:
        """(w, h) the network reads an image of this size at, both sides whole multiples of 16 (the
        network halves the picture four times): scaled as a frame of `frame_long_side` pixels
        (default: the image's own) is scaled to the network's long side, so that a part cut from
        a frame shows its cards at the size the network learnt them at."""
        k = self.long_side / (frame_long_side or max(width, height))
        return (max(self.multiple, int(round(width * k / self.multiple)) * self.multiple),
                max(self.multiple, int(round(height * k / self.multiple)) * self.multiple))

    def maps(self, image_bgr: np.ndarray, frame_long_side: float | None = None) -> np.ndarray:
        """float32 (2, h, w): card and outline probabilities at half the size the network reads
        the image at (input_size)."""
        height, width = image_bgr.shape[:2]
        size = self.input_size(width, height, frame_long_side)
        small = cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA)
        blob = cv2.dnn.blobFromImage(small, self.blob_scale, size, self.blob_mean, swapRB=True, crop=False)
        return self.session.run(None, {self._input: blob})[0][0]


# The region's outline is traced on its card probability upsampled this many times (bilinear):
# between map pixels, where the probability crosses THRESHOLD, rather than on their grid.
TRACE_UPSAMPLE = 4


def card_regions(maps: np.ndarray, image_size: tuple[int, int], min_area: float) -> list[CardRegion]:
    """One region per card the maps show, in an image of image_size (w, h); regions smaller than
    min_area image pixels are left out. A card's pixels off every outline are joined into cores
    (the outline band parts cards that touch or overlap); the cores then flood the band from both
    sides until they meet on its ridge (a watershed of the outline probability), and each
    region's hull is traced where the card probability crosses the threshold, between map pixels."""
    card, outline = maps[0], maps[1]
    mh, mw = card.shape
    sx, sy = image_size[0] / mw, image_size[1] / mh
    is_card = card > THRESHOLD
    core = (is_card & (outline < THRESHOLD)).astype(np.uint8)
    count, markers = cv2.connectedComponents(core, connectivity=4)
    if count <= 1:
        return []
    table = count                                    # one more marker: what is no card
    markers[~is_card] = table
    ridge = np.clip(outline * 255, 0, 255).astype(np.uint8)
    cv2.watershed(cv2.merge([ridge, ridge, ridge]), markers)   # markers now: every pixel's region, -1 on ridges
    min_pixels = min_area / (sx * sy)
    regions = []
    for k in range(1, table):
        region = (markers == k).astype(np.uint8)
        if cv2.countNonZero(region) < 0.5 * min_pixels:
            continue
        # Traced up to a pixel beyond the region, towards the table only (not into another card).
        near = cv2.dilate(region, np.ones((3, 3), np.uint8)) & ((markers == k) | (markers == table) | (markers == -1))
        hull = _traced_hull(card, region, near.astype(np.uint8))
        if hull is None:
            continue
        # Map pixel (i, j) covers image [i sx, (i + 1) sx): its centre is at (i + 0.5) sx.
        hull = (hull + 0.5) * np.array([sx, sy], np.float32)
        regions.append(CardRegion(hull, region * 255, (sx, sy), float(card[region > 0].mean())))
    return regions


def _traced_hull(card: np.ndarray, region: np.ndarray, near: np.ndarray) -> np.ndarray | None:
    """Convex hull (K, 2), in map pixel coordinates, of where the card probability upsampled
    TRACE_UPSAMPLE times is above THRESHOLD within `near` (the region and the pixels round it
    that the tracing may reach)."""
    ys, xs = np.nonzero(region)
    if len(xs) == 0:
        return None
    mh, mw = card.shape
    x0, y0 = max(0, xs.min() - 2), max(0, ys.min() - 2)
    x1, y1 = min(mw, xs.max() + 3), min(mh, ys.max() + 3)
    f = TRACE_UPSAMPLE
    size = ((x1 - x0) * f, (y1 - y0) * f)
    near = near[y0:y1, x0:x1]
    soft = cv2.resize(card[y0:y1, x0:x1], size, interpolation=cv2.INTER_LINEAR)
    inside = ((soft > THRESHOLD) & (cv2.resize(near, size, interpolation=cv2.INTER_NEAREST) > 0)).astype(np.uint8)
    contours, _ = cv2.findContours(inside, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    hull = cv2.convexHull(max(contours, key=cv2.contourArea)).reshape(-1, 2).astype(np.float32)
    # Upsampled pixel u lies at map coordinate (u + 0.5) / f - 0.5 (as cv2.resize samples).
    return (hull + 0.5) / f - 0.5 + np.array([x0, y0], np.float32)


_network: OutlineNetwork | None = None
_network_missing = False
_lock = threading.Lock()


def default_network() -> OutlineNetwork | None:
    """The committed network, loaded once per process; None (said once in the log) when it
    cannot be loaded: the locator then works from the frame's edges alone."""
    global _network, _network_missing
    with _lock:
        if _network is None and not _network_missing:
            try:
                _network = OutlineNetwork.load()
            except ModelError as error:
                _network_missing = True
                log.warning("%s; cards are located from the frame's edges alone", error)
        return _network
