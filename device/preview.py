"""What the camera sees and what the device found there, drawn over the frame with OpenCV: what a
user needs to set the camera up (height, focus, light, the deal zone) and what a bug report needs.

Over the frame: the cards known to lie in the zone (green, with their label), each reading of the
last few seconds (green with its confidence; red "not sure"), an A5 deal zone drawn to the scale
of the cards seen (an A5 that does not fit the picture: the camera is too low), and a strip of
figures at the top: the detector's step, a card's size in pixels against the size the classifier
is trained for, the focus (sharpness of the picture) and the light. No Tk here: the laptop window
only shows the picture (`--preview`) and `PreviewSaver` writes it (`--preview-dir`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

log = logging.getLogger(__name__)

CARD_LONG_MM = 88.0              # spec: cards are about 63 x 88 mm
ZONE_MM = (210.0, 148.0)         # the deal zone: about an A5 sheet
BEST_CARD_PX = (150, 230)        # a card's long side the classifier is trained for (hardware.md)
READING_SECONDS = 3.0            # a reading stays drawn this long
BURNT, DARK = 250, 20            # grey levels: burnt out (glare), too dark to read
GREEN, RED, YELLOW, WHITE = (80, 220, 80), (60, 60, 255), (0, 220, 255), (255, 255, 255)


@dataclass(frozen=True)
class Reading:
    quad: np.ndarray
    label: str | None            # None: not sure
    confidence: float
    t: float


def card_long_side(quad) -> float:
    """The longer side of a card's outline, in pixels."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    sides = np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1)
    return float(max(sides[0] + sides[2], sides[1] + sides[3]) / 2)


def setup_figures(image, card_px: float | None) -> list[str]:
    """The lines of figures for setting the camera up, from a BGR frame and a card's size."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    focus = cv2.Laplacian(grey, cv2.CV_64F).var()
    burnt, dark = float((grey >= BURNT).mean()), float((grey <= DARK).mean())
    light = "glare: move the light or fix the exposure" if burnt > 0.01 else \
        "too dark" if dark > 0.5 or grey.mean() < 50 else "ok"
    if card_px is None:
        height = "lay a card in the zone to measure the height"
    else:
        low, high = BEST_CARD_PX
        advice = "ok" if low <= card_px <= high else "camera too high: lower it" if card_px < low \
            else "camera too low: raise it"
        height = f"card {card_px:.0f} px long (best {low}-{high}): {advice}"
    return [height, f"focus {focus:.0f} (higher is sharper)",
            f"light: mean {grey.mean():.0f}, glare {burnt:.1%}, dark {dark:.1%}: {light}"]


def draw_preview(image, cards=(), readings=(), t: float = 0.0, step: str = "", index: int = -1):
    """A copy of BGR frame `image` with `cards` (objects with .quad and .label: the detector's
    cards in the zone) and `readings` (Reading) drawn over it, and the setup figures on top."""
    out = image.copy()
    h, w = out.shape[:2]
    size = max(h, w) / 640
    thick = max(1, round(2 * size))
    scale = 0.45 * size

    def label_at(quad, text, colour, below=0):
        """`text` across the middle of the card (`below`: lines lower), outlined to read on any face."""
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
        cx, cy = np.asarray(quad, np.float32).reshape(4, 2).mean(axis=0)
        at = (int(cx - tw / 2), int(cy + th / 2 + below * (th + 6)))
        cv2.putText(out, text, at, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), thick + 3, cv2.LINE_AA)
        cv2.putText(out, text, at, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)

    def outline(quad, colour, width):
        cv2.polylines(out, [np.asarray(quad, np.float32).reshape(4, 2).round().astype(np.int32)], True,
                      colour, width, cv2.LINE_AA)

    recent = [r for r in readings if t - r.t <= READING_SECONDS]
    sizes = [card_long_side(c.quad) for c in cards] + [card_long_side(r.quad) for r in recent]
    card_px = float(np.median(sizes)) if sizes else None
    if card_px:
        zone_w, zone_h = (mm / CARD_LONG_MM * card_px for mm in ZONE_MM)
        x0, y0 = round((w - zone_w) / 2), round((h - zone_h) / 2)
        cv2.rectangle(out, (x0, y0), (x0 + round(zone_w), y0 + round(zone_h)), YELLOW, thick, cv2.LINE_AA)
        fits = zone_w <= w and zone_h <= h
        cv2.putText(out, "A5 deal zone" + ("" if fits else " (does not fit: raise the camera)"),
                    (max(4, x0 + 4), min(h - 6, y0 + round(zone_h) - 6)), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    YELLOW, thick, cv2.LINE_AA)
    for card in cards:
        outline(card.quad, GREEN, thick)
        label_at(card.quad, card.label or "?", GREEN)
    for reading in recent:
        colour = GREEN if reading.label else RED
        outline(reading.quad, colour, thick + 1)
        text = f"read {reading.confidence:.2f}" if reading.label else "not sure: show it again"
        label_at(reading.quad, text, colour, below=1)     # (under the card's label, drawn above)
    lines = [f"frame {index}  detector: {step or '-'}  cards in the zone: {len(cards)}"]
    lines += setup_figures(image, card_px)
    strip = round((len(lines) * 18 + 6) * size)
    out[:strip] = (out[:strip] * 0.35).astype(out.dtype)
    for i, line in enumerate(lines):
        cv2.putText(out, line, (6, round((18 * i + 16) * size)), cv2.FONT_HERSHEY_SIMPLEX, scale, WHITE, 1,
                    cv2.LINE_AA)
    return out


class Preview:
    """Keeps the readings of the last few seconds and draws the preview of a frame."""

    def __init__(self):
        self.readings: list[Reading] = []

    def note(self, events, t: float) -> None:
        """The detector's events (vision.placement Placement / Unsure) of the frame at time t."""
        for event in events:
            quad = getattr(event, "quad", None)
            if quad is not None:
                label = getattr(event, "label", None)
                self.readings.append(Reading(np.asarray(quad), label, getattr(event, "confidence", 0.0), t))
        self.readings = [r for r in self.readings if t - r.t <= READING_SECONDS]

    def draw(self, frame, detector):
        """The preview of `frame` (device.camera.Frame) with what `detector` knows lies there."""
        cards = getattr(detector, "cards_in_zone", ())
        return draw_preview(frame.image, cards, self.readings, frame.t, getattr(detector, "step", ""), frame.index)


class PreviewSaver:
    """Writes the preview as DIR/NNNNNN.jpg (the frame's number): the first frame, each frame that
    brought a reading, and one a second between, for a bug report or a look at the set-up later."""

    def __init__(self, directory: Path, every_seconds: float = 1.0):
        self.directory = directory
        self.every_seconds = every_seconds
        self._last_t: float | None = None
        self.written = 0

    def wants(self, t: float, events) -> bool:
        return bool(events) or self._last_t is None or t - self._last_t >= self.every_seconds

    def save(self, image, index: int, t: float) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{index:06d}.jpg"
        if not cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 85]):
            raise OSError(f"cannot write {path}")
        self._last_t = t
        self.written += 1
