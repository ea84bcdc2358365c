"""Classifier samples cut from synthetic scenes the way the runtime cuts them from camera frames.

A sample is the card crop the runtime would classify: the frame warped at a card quad with
`vision.geometry.warp_card` (upright or upside down, whichever the quad order gives), then
resized to the model input. The quad is the true one with the error a locator makes (corner
jitter, a little zoom in or out). The extra "none" class teaches the model to say "no card":
table patches, hands, part of a card, a card with lots of table around it, two overlapping cards
taken as one.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import cv2
import numpy as np

from rules.cards import DECKS
from vision.geometry import warp_card
from vision.synth.render import CardStyle, render_card
from vision.synth.scenes import (camera_effects, card_quad, draw_clutter, draw_hand, light_field, make_scene,
                          make_surface, paste_card)

log = logging.getLogger(__name__)

# The deck classifiers' input: exactly half the canonical warp (vision.geometry, 126 x 176), where
# OpenCV's area resize averages 2 x 2 blocks (0.007 ms a crop against 0.067 ms for 56 x 80, a
# throwaway timeit), at the card's own shape (63 x 88 mm: ~1 px/mm).
INPUT_W, INPUT_H = 63, 88
# The look network's input (vision.training.train_look; the committed card-look model was trained at it).
LOOK_INPUT_W, LOOK_INPUT_H = 84, 120
LOOK_INPUT_SIZE = (LOOK_INPUT_W, LOOK_INPUT_H)  # (W, H), as cv2.resize takes it
NONE_CLASS = "none"
MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)


def class_names(deck: str) -> list[str]:
    return list(DECKS[deck].labels) + [NONE_CLASS]


def to_input(crop_bgr: np.ndarray, size: tuple[int, int] = (INPUT_W, INPUT_H)) -> np.ndarray:
    """Canonical warp (any size) -> model-size (width, height) BGR uint8 crop (INTER_AREA, as the
    runtime does)."""
    return cv2.resize(crop_bgr, size, interpolation=cv2.INTER_AREA)


def normalize(crops_bgr: np.ndarray) -> np.ndarray:
    """(N, H, W, 3) BGR uint8 -> (N, 3, H, W) float32 RGB, scaled to 0..1 then standardised."""
    x = crops_bgr[..., ::-1].astype(np.float32) / 255.0
    x = (x - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


class FacePool:
    """Rendered faces reused across scenes: rendering costs more than a scene, and reusing a face
    under a fresh table, pose and light still gives a new sample. Each draw renders a new face
    with probability `fresh` (always until the pool holds `per_label` faces of that label).

    With `printed` faces (vision.synth.printed: a real deck's scans), a `printed_share` of the new faces
    are that deck's, each as another print run of it would look; the rest stay renders, whose
    variety is what reads a deck printed otherwise."""

    def __init__(self, deck: str, split: str, rng: np.random.Generator, per_label: int = 24, fresh: float = 0.3,
                 printed: dict | None = None, printed_share: float = 0.0):
        self.deck, self.split, self.rng = deck, split, rng
        self.per_label, self.fresh = per_label, fresh
        self.printed, self.printed_share = printed or {}, printed_share
        self.faces: dict[str, list[np.ndarray]] = {}

    def new_face(self, label: str) -> np.ndarray:
        style = CardStyle.sample(self.rng, self.split)
        if self.printed_share > 0 and label in self.printed and self.rng.random() < self.printed_share:
            from vision.synth.printed import printed_face

            return printed_face(self.printed, label, self.rng, style)
        return render_card(self.deck, label, self.rng, style)

    def __call__(self, label: str) -> np.ndarray:
        have = self.faces.setdefault(label, [])
        if len(have) < self.per_label or self.rng.random() < self.fresh:
            face = self.new_face(label)
            if len(have) < self.per_label:
                have.append(face)
            else:
                have[self.rng.integers(len(have))] = face
            return face
        return have[self.rng.integers(len(have))]


def jitter_quad(rng: np.random.Generator, quad: np.ndarray) -> np.ndarray:
    """The true quad as a locator might report it: corners off by a few percent, a little zoom."""
    c = quad.mean(0)
    size = np.linalg.norm(quad[0] - quad[3])
    q = c + (quad - c) * rng.uniform(0.9, 1.04)
    sigma = 0.035 if rng.random() < 0.2 else 0.015
    return (q + rng.normal(0, sigma * size, (4, 2))).astype(np.float32)


def _crop(frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
    return to_input(warp_card(frame, quad))


def _none_quads(rng, frame_shape, cards) -> list[np.ndarray]:
    """Quads that are not one whole card: table, part of a card, a card with much table around."""
    h, w = frame_shape[:2]
    out = []
    q = cards[rng.integers(len(cards))].quad if cards else None
    kind = rng.integers(3) if q is not None else 0
    if kind == 0:  # table: card-shaped, away from cards
        size = np.linalg.norm(q[0] - q[3]) if q is not None else rng.uniform(120, 260)
        for _ in range(10):
            cand = card_quad(rng.uniform([0, 0], [w, h]), size, rng.uniform(0, 360), 0.03, rng)
            if all(cv2.intersectConvexConvex(cand, c.quad)[0] < 0.15 * cv2.contourArea(c.quad) for c in cards):
                out.append(cand)
                break
    elif kind == 1:  # part of a card: shifted by a third or more of a side
        along = (q[1] - q[0]) if rng.random() < 0.5 else (q[3] - q[0])
        out.append((q + along * rng.choice([-1, 1]) * rng.uniform(0.35, 0.75)).astype(np.float32))
    else:  # far too big or too small a quad around a card
        c = q.mean(0)
        s = rng.uniform(1.5, 2.2) if rng.random() < 0.5 else rng.uniform(0.35, 0.6)
        out.append((c + (q - c) * s + rng.normal(0, 3, (4, 2))).astype(np.float32))
    return out


def _pair_scene(rng, deck, split, faces, size=(640, 480)):
    """Two cards overlapping, misaligned, and the quad a locator could take for one card; or a
    hand, or something else (coin, phone, note, pen, die) on the table. Some are left without
    light and camera effects: a clean texture must not read as a card either."""
    w, h = size
    frame = make_surface(rng, size, split)
    labels = DECKS[deck].labels
    ls = rng.uniform(130, 280)
    c = rng.uniform([0.35 * w, 0.35 * h], [0.65 * w, 0.65 * h])
    a = card_quad(c, ls, rng.uniform(0, 360), 0.03, rng)
    kind = rng.random()
    if kind < 0.3:
        draw_clutter(frame, rng, c, ls * rng.uniform(0.4, 1.0))
        quad = a
    elif kind < 0.7:
        paste_card(frame, faces(labels[rng.integers(len(labels))]), a, shadow=0.4)
        shift = rng.uniform(0.2, 0.5) * ls * np.array([np.cos(t := rng.uniform(0, 2 * np.pi)), np.sin(t)])
        b = card_quad(c + shift, ls, rng.uniform(0, 360), 0.03, rng)
        paste_card(frame, faces(labels[rng.integers(len(labels))]), b, shadow=0.4)
        quad = ((a + np.roll(b, int(rng.integers(4)), axis=0)) / 2).astype(np.float32)
        if rng.random() < 0.5:
            quad = (a + b) / 2
    else:
        wrist = c + rng.uniform(0.6, 1.2) * ls * np.array([np.cos(t := rng.uniform(0, 2 * np.pi)), np.sin(t)])
        draw_hand(frame, rng, wrist, float(np.degrees(np.arctan2(*(c - wrist)[::-1]))), ls * rng.uniform(0.4, 0.6),
                  spread=rng.uniform(0, 1))
        quad = card_quad(c, ls, rng.uniform(0, 360), 0.03, rng)
    if rng.random() < 0.25:
        return np.clip(frame, 0, 255).astype(np.uint8), quad.astype(np.float32)
    frame *= light_field(rng, h, w)[..., None]
    return camera_effects(rng, frame), quad.astype(np.float32)


@dataclass
class Samples:
    x: np.ndarray   # (N, INPUT_H, INPUT_W, 3) BGR uint8
    y: np.ndarray   # (N,) int64 class index (len(labels) = none)


def sample_quads(deck: str, seed: int, split: str = "train", none_frac: float = 0.2, faces_per_label: int = 24,
                 printed: dict | None = None, printed_share: float = 0.0):
    """Endless (frame, quad, class index) of make_samples: cards uniformly over labels, each at
    the quad a locator might report, plus about a `none_frac` share of "none" quads (the faces as
    FacePool draws them)."""
    rng = np.random.default_rng(seed)
    labels = DECKS[deck].labels
    none_idx = len(labels)
    faces = FacePool(deck, split, rng, per_label=faces_per_label, printed=printed, printed_share=printed_share)
    while True:
        if rng.random() < none_frac * 0.5:
            frame, quad = _pair_scene(rng, deck, split, faces)
            yield frame, quad, none_idx
        else:
            k = int(rng.choice([1, 1, 2, 3]))
            picked = [labels[i] for i in rng.integers(len(labels), size=k)]
            # Half the scenes are smaller frames with smaller cards: the crop has about the same
            # detail at the model's input size, and the scene costs half as much.
            small = rng.random() < 0.5
            frame, cards = make_scene(rng, picked, deck, size=(400, 300) if small else (640, 480), split=split,
                                      faces=faces, card_size=(85, 180) if small else (120, 290))
            for card in cards:
                yield frame, jitter_quad(rng, card.quad), labels.index(card.label)
            if rng.random() < none_frac * 1.2:
                for q in _none_quads(rng, frame.shape, cards):
                    yield frame, q, none_idx


def make_samples(deck: str, n: int, seed: int, split: str = "train", none_frac: float = 0.2,
                 progress_every: int = 2000, faces_per_label: int = 24, each=None,
                 printed: dict | None = None, printed_share: float = 0.0) -> Samples:
    """n crops (cards uniformly over labels, plus about a `none_frac` share of "none").
    each(frame, quad, class index), when given, also sees every sample's frame and quad (a reader
    cutting the card its own way, in the same pass)."""
    xs, ys = [], []
    t0, next_report = time.perf_counter(), progress_every
    for frame, quad, y in sample_quads(deck, seed, split, none_frac, faces_per_label, printed, printed_share):
        xs.append(_crop(frame, quad))
        ys.append(y)
        if each is not None:
            each(frame, quad, y)
        if len(xs) >= next_report:
            rate = len(xs) / (time.perf_counter() - t0)
            log.info("%s samples: %d / %d (%.0f per s)", split, len(xs), n, rate)
            next_report += progress_every
        if len(xs) == n:
            break
    return Samples(np.stack(xs), np.array(ys, np.int64))


def located_quad(rng: np.random.Generator, quad: np.ndarray) -> np.ndarray:
    """The true quad as the locator reports it on its bad frames (measured on the Vengeance deal
    video: one corner caught on a shadow or a neighbour, one side pushed out, the whole outline
    shifted or turned a little), errors larger than jitter_quad draws. Each stays well
    short of the "none" crops' part of a card (shifted by a third of a side or more): the card
    is still nearly all in the crop and must be read."""
    q = quad.astype(np.float64)
    c = q.mean(0)
    long_side = float(np.linalg.norm(q[0] - q[3]))

    def towards(lo, hi):
        a = rng.uniform(0, 2 * np.pi)
        return rng.uniform(lo, hi) * long_side * np.array([np.cos(a), np.sin(a)])

    kind = rng.random()
    if kind < 0.3:                                   # the whole outline shifted
        q = q + towards(0.03, 0.09)
    elif kind < 0.55:                                # one corner off
        q[rng.integers(4)] += towards(0.05, 0.22)
    elif kind < 0.75:                                # one side off: two neighbouring corners
        i = int(rng.integers(4))
        q[i] += towards(0.04, 0.14)
        q[(i + 1) % 4] += towards(0.04, 0.14)
    elif kind < 0.9:                                 # turned a little about a point near the middle
        t = np.radians(rng.uniform(2, 8) * rng.choice([-1, 1]))
        rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        o = c + rng.normal(0, 0.05 * long_side, 2)
        q = o + (q - o) @ rot.T * rng.uniform(0.9, 1.08)
    else:                                            # too tight or too loose
        q = c + (q - c) * rng.uniform(0.85, 1.12)
    return (q + rng.normal(0, 0.01 * long_side, (4, 2))).astype(np.float32)


def make_located_samples(deck: str, n: int, seed: int, split: str = "train", crops_per_card: int = 2,
                         progress_every: int = 2000, printed: dict | None = None, printed_share: float = 0.0):
    """n crops cut from vision.synth.scenes scenes as make_samples cuts them, but at
    located_quad's quads (`crops_per_card` different ones per card), plus "none" crops (table,
    part of a card, far too big or small a quad) at about the same share as make_samples."""
    rng = np.random.default_rng(seed)
    labels = DECKS[deck].labels
    faces = FacePool(deck, split, rng, printed=printed, printed_share=printed_share)
    xs, ys = [], []
    t0, next_report = time.perf_counter(), progress_every
    while len(xs) < n:
        picked = [labels[i] for i in rng.integers(len(labels), size=int(rng.choice([1, 1, 2, 3])))]
        small = rng.random() < 0.5
        frame, cards = make_scene(rng, picked, deck, size=(400, 300) if small else (640, 480), split=split,
                                  faces=faces, card_size=(85, 180) if small else (120, 290))
        for card in cards:
            for _ in range(crops_per_card):
                xs.append(_crop(frame, located_quad(rng, card.quad)))
                ys.append(labels.index(card.label))
        for _ in range(int(rng.random() < 0.45 * len(cards) * crops_per_card / 2)):
            for q in _none_quads(rng, frame.shape, cards):
                xs.append(_crop(frame, q))
                ys.append(len(labels))
        if len(xs) >= next_report:
            log.info("%s located samples: %d / %d (%.0f per s)", split, len(xs), n,
                     len(xs) / (time.perf_counter() - t0))
            next_report += progress_every
    return Samples(np.stack(xs[:n]), np.array(ys[:n], np.int64))
