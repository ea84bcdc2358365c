"""Training scenes for the card-outline network (vision.outline): frames and the maps it learns.

The network sees a camera frame at its input size and marks, at half that size, where a card's
face is (`card`) and where one card's outline runs: between a card and the table or between two
cards, one lying on the other (`edge`). A card's own printed frame, its picture, the table's
pattern, a shadow's edge, a phone or a paper note are none of these, which is what the
edge-following locator cannot tell. Cards are seen through the fingers over them (a hand does not
cut a card in two). Every card laid counts, the nuisance ones the scene synthesiser puts under
and beside the dealt cards too.

Scenes come from two composers: vision.synth.scenes.make_scene as it deals scan photos and
stacked cards (the reading's own scenes), and `compose` below for what the device meets besides:
a pile in the deal zone, a row of cards touching, a card filling the frame (a phone photo), a
hand holding a card, an empty table. Faces are every training renderer's (the three decks'
renders and generic printings of no deck) and, when given, a real deck's printed faces; the
table surfaces are the split's (the "heldout" kinds stay unseen, as for the classifiers).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import cv2
import numpy as np

from rules.cards import DECKS
from vision.synth.render import CardStyle, render_card
from vision.synth.render_generic import GenericStyle, generic_faces, pick_labels
from vision.synth.scenes import (SKIN_TONES, add_glare, camera_effects, card_quad, draw_clutter, draw_hand,
                                 light_field, make_scene, make_surface, paste_card)

log = logging.getLogger(__name__)

DECK_NAMES = ("flip7", "flip7-vengeance", "uno-flip")


@dataclass
class OutlineSamples:
    x: np.ndarray      # (N, H, W, 3) BGR uint8 frames at the network's input size
    card: np.ndarray   # (N, H/2, W/2) uint8 0/1: a card's face
    edge: np.ndarray   # (N, H/2, W/2) uint8 0/1: a card's outline


def target_maps(quads: list[np.ndarray], frame_size: tuple[int, int], out_size: tuple[int, int]):
    """(card, edge) uint8 maps of out_size (w, h) from the quads laid bottom to top in a frame of
    frame_size (w, h): each pixel belongs to the topmost card over it; an edge pixel has a
    pixel of another card, or of the table, within one pixel (the frame's own border is not an
    outline: a card cut by it is seen only in part)."""
    fw, fh = frame_size
    ow, oh = out_size
    owner = np.zeros((oh, ow), np.uint8)
    scale = np.array([ow / fw, oh / fh], np.float32)
    for i, quad in enumerate(quads, start=1):
        cv2.fillConvexPoly(owner, np.round(quad * scale * 16).astype(np.int32), i, cv2.LINE_8, shift=4)
    kernel = np.ones((3, 3), np.uint8)
    edge = cv2.dilate(owner, kernel) != cv2.erode(owner, kernel, borderType=cv2.BORDER_REPLICATE)
    return (owner > 0).astype(np.uint8), edge.astype(np.uint8)


class FaceSources:
    """Faces for the scenes: each scene draws its cards from one kind (a deck's renders, its
    printed faces when the team's scans are given, or generic printings of no deck). Rendering
    costs more than a scene, so each kind keeps a pool of faces and renders a new one for a
    `fresh` share of the draws (the outline, not the face, is what is learnt here)."""

    def __init__(self, rng: np.random.Generator, split: str, printed: dict | None = None,
                 printed_share: float = 0.4, generic_share: float = 0.3, pool_size: int = 150, fresh: float = 0.15):
        self.rng, self.split = rng, split
        self.printed = printed or {}
        self.printed_share, self.generic_share = printed_share, generic_share
        self.pool_size, self.fresh = pool_size, fresh
        self.pools: dict[str, list[np.ndarray]] = {}

    def _new_face(self, kind: str) -> np.ndarray:
        rng = self.rng
        if kind == "generic":
            style = GenericStyle.sample(rng)
            return generic_faces(rng, style)(pick_labels(rng, 1, style)[0])
        deck = kind.removeprefix("printed:")
        labels = DECKS[deck].labels
        style = CardStyle.sample(rng, self.split)
        if kind.startswith("printed:"):
            from vision.synth.printed import printed_face

            printed = self.printed[deck]
            return printed_face(printed, list(printed)[rng.integers(len(printed))], rng, style)
        return render_card(deck, labels[rng.integers(len(labels))], rng, style)

    def _draw(self, kind: str) -> np.ndarray:
        pool = self.pools.setdefault(kind, [])
        if len(pool) < self.pool_size or self.rng.random() < self.fresh:
            face = self._new_face(kind)
            if len(pool) < self.pool_size:
                pool.append(face)
            else:
                pool[self.rng.integers(len(pool))] = face
            return face
        return pool[self.rng.integers(len(pool))]

    def pick(self):
        """(deck name for the labels, label -> RGBA face) of one scene."""
        rng = self.rng
        deck = DECK_NAMES[rng.integers(len(DECK_NAMES))]
        if rng.random() < self.generic_share:
            kind = "generic"
        elif deck in self.printed and rng.random() < self.printed_share:
            kind = f"printed:{deck}"
        else:
            kind = deck
        return deck, lambda _label: self._draw(kind)


def compose(rng: np.random.Generator, faces, deck: str, size: tuple[int, int], split: str):
    """A frame the reading's scenes do not deal, and every card quad in it bottom to top: a pile,
    a row of touching cards, one or two cards filling the frame, a hand holding a card, an
    empty table."""
    w, h = size
    labels = DECKS[deck].labels
    frame = make_surface(rng, size, split)
    for _ in range(int(rng.integers(0, 3))):
        draw_clutter(frame, rng, rng.uniform([0, 0], [w, h]), rng.uniform(60, 200))
    laid: list[np.ndarray] = []
    tilt = rng.uniform(0, 0.06)
    kind = rng.choice(["pile", "row", "large", "held", "empty"], p=[0.3, 0.2, 0.25, 0.15, 0.1])

    def lay(quad, shadow=None):
        paste_card(frame, faces(labels[rng.integers(len(labels))]), quad,
                   shadow=rng.uniform(0.2, 0.6) if shadow is None else shadow)
        laid.append(quad)

    if kind == "pile":                       # the deal zone: cards dropped on the one before
        ls = rng.uniform(110, 300)
        centre = rng.uniform([0.3 * w, 0.3 * h], [0.7 * w, 0.7 * h])
        angle = rng.uniform(0, 360)
        for _ in range(int(rng.integers(2, 7))):
            angle += rng.normal(0, 25) if rng.random() < 0.7 else rng.uniform(0, 360)
            lay(card_quad(centre + rng.normal(0, 0.12 * ls, 2), ls * rng.uniform(0.97, 1.03), angle, tilt, rng))
    elif kind == "row":                      # a player's cards side by side, touching or overlapping
        ls = rng.uniform(90, 200)
        n = int(rng.integers(2, 7))
        angle = rng.uniform(0, 360)
        a = np.radians(angle)
        across = np.array([np.cos(a), np.sin(a)], np.float32)     # along the cards' short sides
        step = ls * 0.714 * rng.uniform(0.6, 1.05)
        start = np.array([w / 2, h / 2], np.float32) - across * step * (n - 1) / 2 + rng.normal(0, 20, 2)
        for k in range(n):
            lay(card_quad(start + across * step * k + rng.normal(0, 3, 2), ls, angle + rng.normal(0, 3), tilt, rng),
                shadow=rng.uniform(0.1, 0.4))
    elif kind == "large":                    # a card (or two) close to the camera, as a phone photo
        for _ in range(int(rng.choice([1, 1, 2]))):
            ls = rng.uniform(0.55, 1.0) * min(w, h) * (1.3 if rng.random() < 0.3 else 1.0)
            margin = 0.35 * ls
            centre = rng.uniform([margin, margin], [max(margin + 1, w - margin), max(margin + 1, h - margin)])
            lay(card_quad(centre, ls, rng.uniform(0, 360), rng.uniform(0, 0.12), rng))
    elif kind == "held":                     # a card held up: the hand under it, the thumb over it
        ls = rng.uniform(140, 320)
        centre = rng.uniform([0.3 * w, 0.3 * h], [0.7 * w, 0.7 * h])
        quad = card_quad(centre, ls, rng.uniform(0, 360), rng.uniform(0.02, 0.1), rng)
        direction = rng.uniform(0, 360)
        d = np.array([np.cos(np.radians(direction)), np.sin(np.radians(direction))], np.float32)
        wrist = centre - d * ls * rng.uniform(0.5, 0.9)
        palm = ls * rng.uniform(0.4, 0.6)
        tone = SKIN_TONES[rng.integers(len(SKIN_TONES))] * rng.uniform(0.85, 1.15)
        draw_hand(frame, tone, wrist, direction, palm, spread=rng.uniform(0, 1))
        lay(quad, shadow=0.3)
        if rng.random() < 0.7:
            draw_hand(frame, tone, wrist, direction, palm, spread=rng.uniform(0, 1), fingers_only=True)
    frame *= light_field(rng, h, w)[..., None]
    if rng.random() < 0.4:
        add_glare(rng, frame, laid)
    return camera_effects(rng, frame), laid


def outline_scenes(rng: np.random.Generator, split: str = "train", printed: dict | None = None,
                   printed_share: float = 0.4):
    """Endless (frame BGR uint8, card quads bottom to top) at random camera sizes: half from
    make_scene (scan photos and stacked cards), half from compose."""
    sources = FaceSources(rng, split, printed, printed_share)
    while True:
        size = (640, 480) if rng.random() < 0.7 else (400, 300)
        deck, faces = sources.pick()
        if rng.random() < 0.5:
            labels = DECKS[deck].labels
            k = int(rng.choice([1, 1, 2, 3, 4, 6]))
            laid: list[np.ndarray] = []
            small = size[0] < 640
            try:
                frame, _ = make_scene(rng, [labels[i] for i in rng.integers(len(labels), size=k)], deck, size=size,
                                      split=split, apart=rng.random() < 0.6, faces=faces,
                                      card_size=(85, 180) if small else (120, 290), laid=laid)
            except ValueError:               # too many cards to lay apart: deal another scene
                continue
            yield frame, laid
        else:
            yield compose(rng, faces, deck, size, split)


CHUNK = 250   # scenes per seeded chunk: the same samples whatever the number of workers


def _chunk(job) -> OutlineSamples:
    seed, index, n, input_size, split, printed, printed_share = job
    import cv2 as _cv2

    _cv2.setNumThreads(1)
    w, h = input_size
    rng = np.random.default_rng([seed, index])
    xs = np.empty((n, h, w, 3), np.uint8)
    cards = np.empty((n, h // 2, w // 2), np.uint8)
    edges = np.empty((n, h // 2, w // 2), np.uint8)
    for i, (frame, quads) in zip(range(n), outline_scenes(rng, split, printed, printed_share)):
        fh, fw = frame.shape[:2]
        xs[i] = cv2.resize(frame, (w, h), interpolation=cv2.INTER_AREA)
        cards[i], edges[i] = target_maps(quads, (fw, fh), (w // 2, h // 2))
    return OutlineSamples(xs, cards, edges)


def make_outline_samples(n: int, seed: int, input_size: tuple[int, int], split: str = "train",
                         printed: dict | None = None, printed_share: float = 0.4, workers: int = 1,
                         start: int = 0) -> OutlineSamples:
    """Frames start .. n-1 resized to input_size (w, h) with their target maps at half that size,
    made in chunks seeded by (seed, chunk index) by `workers` processes (start, a multiple of
    CHUNK: the rest of a set whose first frames are made already)."""
    import multiprocessing

    if start % CHUNK:
        raise ValueError(f"start must be a multiple of {CHUNK}")
    jobs = [(seed, k, min(CHUNK, n - k * CHUNK), tuple(input_size), split, printed, printed_share)
            for k in range(start // CHUNK, (n + CHUNK - 1) // CHUNK)]
    n -= start
    t0 = time.perf_counter()
    # forkserver, not fork: a fork of a process whose other threads hold a lock can hang (look_data).
    pool = multiprocessing.get_context("forkserver").Pool(workers) if workers > 1 else None
    parts = []
    try:
        for part in (pool.imap(_chunk, jobs) if pool else map(_chunk, jobs)):
            parts.append(part)
            done = sum(len(p.x) for p in parts)
            rate = done / (time.perf_counter() - t0)
            log.info("%s outline scenes: %d / %d (%.1f per s, %.0f s left)", split, done, n, rate, (n - done) / rate)
    finally:
        if pool:
            pool.terminate()
            pool.join()
    return OutlineSamples(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("x", "card", "edge")))
