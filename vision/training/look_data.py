"""Training pairs for the look network (vision.look): two captures of the same card of one printing.

Calibration (vision.adapt) must tell the user's own cards apart, and the user's deck is a printing
nobody here has seen. The deck classifiers learn the training renderer's print; their features
read a foreign print poorly (docs/history/calibration.md). The look network instead learns *is this the
same face as that one, within one printing*, across many printings: a sample is a printing (a
CardStyle of the training family, of any of the three decks, then recoloured as a whole — hue
turned, sometimes light and dark swapped or colour planes exchanged — so that what matters is how
a printing's cards differ from each other, not the training print's colours), several of its
labels, and for each label two crops cut from two independent scenes (table, light, pose, blur,
fingers, the locator's quad error) as vision.training.dataset cuts classifier samples. Half the family
printings deal cards that look alike together (FAMILY_LOOK_ALIKES: 13 / lucky-13, -4 / -6, 6 / 9;
UNO Flip's colour twins), so they are each other's negatives in the loss. Only training fonts
and surfaces are used; vision.evaluation.foreign_eval's printings and held-out surfaces stay unseen.

Two kinds of printings (`kind`): "family", the training renderers' (above), and "generic", the
invented game of vision.synth.render_generic — random layouts, palettes and symbols, its 8 cards dealt
with confusable ones among them (+4 / +6 / +8, 6 / 9, 1 / 7 / 11, 0 / 8 with the 0 slashed or
dotted in some printings; a symbol in two or more suits of close colours): a network that has only seen
the training family learns that family, not cards in general (docs/history/calibration.md).

A third kind, "uno-numerals" (`python -m vision.training.train_look --uno-numerals-share`), is UNO Flip
printings of the training family dealing four or more numerals of one colour together
(one_colour_numerals): the look-alikes of one ink that one poor UNO Flip calibration photo
confuses (`8` / `5`, `2` / `9`), which colour-twin printings never deal together.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import cv2
import numpy as np

from rules.cards import DECKS, UNO_DARK_COLORS, UNO_LIGHT_COLORS
from vision.training.dataset import LOOK_INPUT_SIZE, jitter_quad, to_input
from vision.geometry import CANON_H, CANON_W
from vision.synth.render import CardStyle, render_card
from vision.synth.scenes import make_scene

log = logging.getLogger(__name__)

DECK_WEIGHTS = {"flip7": 1.0, "flip7-vengeance": 1.0, "uno-flip": 1.0}
GENERIC = len(DECK_WEIGHTS)  # the `decks` index of a generic printing (vision.synth.render_generic)
KINDS = ("family", "generic", "uno-numerals")
LABELS_PER_PRINTING = 8
VIEWS = 2


@dataclass
class LookSamples:
    x: np.ndarray        # (P, L, V, H, W, 3) BGR uint8 model-size crops
    labels: np.ndarray   # (P, L) int: label index within the printing's deck, or render_generic.label_index
    decks: np.ndarray    # (P,) int: index into DECK_WEIGHTS, or GENERIC


def recolour(faces: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The same colour change applied to every face of a printing (RGBA in, RGBA out): hue turned,
    saturation scaled, sometimes light and dark swapped or the colour planes exchanged. The cards
    of a printing keep their differences of colour; the training print's own colours are lost."""
    hue = int(rng.integers(0, 180))
    invert = rng.random() < 0.2
    order = rng.permutation(3) if rng.random() < 0.3 else np.arange(3)
    saturation = rng.uniform(0.6, 1.4)
    out = {}
    for label, face in faces.items():
        hsv = cv2.cvtColor(np.ascontiguousarray(face[..., :3]), cv2.COLOR_RGB2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + hue) % 180).astype(np.uint8)
        hsv[..., 1] = np.clip(hsv[..., 1] * saturation, 0, 255).astype(np.uint8)
        if invert:
            hsv[..., 2] = 255 - hsv[..., 2]
        rgb = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[..., order]
        out[label] = np.dstack([rgb, face[..., 3]])
    return out


def make_printing(rng: np.random.Generator, deck: str, labels_per_printing: int = LABELS_PER_PRINTING,
                  size: tuple[int, int] = LOOK_INPUT_SIZE):
    """(crops (L, V, H, W, 3), label indices (L,)) of one recoloured training-family printing;
    size is the crops' (W, H)."""
    all_labels = DECKS[deck].labels
    picked = rng.choice(len(all_labels), size=labels_per_printing, replace=False)
    if rng.random() < 0.5:
        picked = colour_twins(rng, all_labels, labels_per_printing) if deck == "uno-flip" else \
            look_alikes(rng, all_labels, FAMILY_LOOK_ALIKES.get(deck, ()), labels_per_printing)
    style = CardStyle.sample(rng, "train")
    faces = recolour({all_labels[i]: render_card(deck, all_labels[i], rng, style) for i in picked}, rng)
    return _capture(rng, faces, [all_labels[i] for i in picked], deck, size), picked


# Cards of flip7 and Vengeance that differ by a small mark (a word, a sign, a stroke): dealt
# together into half their printings, so the loss's negatives include them (UNO Flip deals its
# colour twins instead). Vengeance's 13 / lucky-13 and -4 / -6 were the cards one poor calibration
# sample most often confused (docs/history/calibration.md).
FAMILY_LOOK_ALIKES = {
    "flip7": (("6", "9"), ("1", "7", "11"), ("0", "8", "3"), ("2", "10", "12"), ("5", "3"),
              ("+2", "+4", "+6", "+8", "+10"), ("x2", "+2", "2")),
    "flip7-vengeance": (("13", "lucky-13", "12"), ("7", "unlucky-7", "1", "11"), ("-2", "-4", "-6", "-8", "-10"),
                        ("/2", "-2", "2"), ("6", "9"), ("10", "12", "13"), ("3", "5", "8")),
}


def look_alikes(rng: np.random.Generator, labels, groups, n: int) -> np.ndarray:
    """n distinct indices of `labels`: two or more members of one or two of the look-alike
    `groups` (a second group may share members with the first), the rest drawn at random."""
    picked: list[int] = []
    for k in rng.permutation(len(groups))[:int(rng.integers(1, 3))]:
        members = [labels.index(lab) for lab in groups[k]]
        for i in rng.permutation(members)[:int(rng.integers(2, len(members) + 1))]:
            if len(picked) < n and int(i) not in picked:
                picked.append(int(i))
    rest = [i for i in range(len(labels)) if i not in picked]
    picked += [rest[i] for i in rng.permutation(len(rest))[:n - len(picked)]]
    return np.array([picked[i] for i in rng.permutation(len(picked))])


def colour_twins(rng: np.random.Generator, labels, n: int) -> np.ndarray:
    """n distinct indices of UNO Flip `labels`, most of them symbols in two or more colours of a
    side (red / yellow, pink / purple / orange ...): cards only their colour tells apart."""
    by_symbol: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        colour, _, symbol = label.partition("-")
        if colour in UNO_LIGHT_COLORS + UNO_DARK_COLORS:   # (the wild cards have no colour)
            dark = colour in UNO_DARK_COLORS
            by_symbol.setdefault(f"{dark}:{symbol}", []).append(i)
    symbols = list(by_symbol)
    picked: list[int] = []
    for k in rng.permutation(len(symbols)):
        group = by_symbol[symbols[k]]
        for i in rng.permutation(group)[:int(rng.integers(2, len(group) + 1))]:
            if len(picked) < n and i not in picked:
                picked.append(int(i))
        if len(picked) >= n:
            break
    return np.array(picked)


def one_colour_numerals(rng: np.random.Generator, labels, n: int) -> np.ndarray:
    """n distinct indices of UNO Flip `labels`: four to n numerals of one colour (an 8 and a 5, a 2
    and a 9 of one ink: the look-alikes one poor calibration photo confuses, docs/history/calibration.md),
    the rest drawn at random."""
    colour = (UNO_LIGHT_COLORS + UNO_DARK_COLORS)[int(rng.integers(8))]
    numerals = [i for i, label in enumerate(labels) if label.startswith(colour + "-") and label[-1].isdigit()]
    picked = [int(i) for i in rng.permutation(numerals)[:int(rng.integers(4, n + 1))]]
    rest = [i for i in range(len(labels)) if i not in picked]
    picked += [rest[i] for i in rng.permutation(len(rest))[:n - len(picked)]]
    return np.array([picked[i] for i in rng.permutation(len(picked))])


def make_uno_numerals_printing(rng: np.random.Generator, labels_per_printing: int = LABELS_PER_PRINTING,
                               size: tuple[int, int] = LOOK_INPUT_SIZE):
    """(crops, label indices) of one recoloured UNO Flip training-family printing dealing numerals
    of one colour together (one_colour_numerals)."""
    all_labels = DECKS["uno-flip"].labels
    picked = one_colour_numerals(rng, all_labels, labels_per_printing)
    style = CardStyle.sample(rng, "train")
    faces = recolour({all_labels[i]: render_card("uno-flip", all_labels[i], rng, style) for i in picked}, rng)
    return _capture(rng, faces, [all_labels[i] for i in picked], "uno-flip", size), picked


def make_generic_printing(rng: np.random.Generator, labels_per_printing: int = LABELS_PER_PRINTING,
                          size: tuple[int, int] = LOOK_INPUT_SIZE):
    """(crops (L, V, H, W, 3), label indices in render_generic.LABELS (L,)) of one recoloured
    generic printing; size is the crops' (W, H)."""
    from vision.synth.render_generic import GenericStyle, label_index, pick_labels, render_generic

    style = GenericStyle.sample(rng)
    picked = pick_labels(rng, labels_per_printing, style)
    faces = recolour({lab: render_generic(lab, rng, style) for lab in picked}, rng)
    # make_scene's nuisance cards are named from a deck's labels: they get a face of this printing.
    return _capture(rng, faces, picked, "flip7", size), np.array([label_index(lab) for lab in picked])


def _capture(rng: np.random.Generator, faces: dict[str, np.ndarray], picked: list[str], deck: str,
             size: tuple[int, int]) -> np.ndarray:
    """Two crops of each picked face, each from its own scene, `size` (W, H) each."""
    crops = np.empty((len(picked), VIEWS, size[1], size[0], 3), np.uint8)
    for li, label in enumerate(picked):
        for v in range(VIEWS):
            # A calibration-like capture (one card, near) or a play-like one (1-3 cards, any size).
            others = [] if v == 0 and rng.random() < 0.5 else \
                [picked[j] for j in rng.choice(len(picked), size=int(rng.integers(0, 3)))]
            small = rng.random() < 0.5
            # Nuisance cards of other labels (under or beside) are drawn with a face of this printing.
            face = lambda lab: faces.get(lab, faces[picked[0]])  # noqa: E731
            while True:
                try:
                    frame, cards = make_scene(rng, [label] + others, deck,
                                              size=(400, 300) if small else (640, 480), split="train",
                                              faces=face, card_size=(85, 180) if small else (120, 290))
                    break
                except ValueError:  # no room for them all apart: fewer cards
                    if not others:
                        raise
                    others = others[:-1]
            crops[li, v] = upright_crop(frame, jitter_quad(rng, cards[0].quad), size)
    return crops


def upright_crop(frame: np.ndarray, face_quad: np.ndarray, size: tuple[int, int] = LOOK_INPUT_SIZE) -> np.ndarray:
    """The model-size crop with the face upright: face_quad in face order (TL, TR, BR, BL of the
    face, as vision.synth.scenes gives it), not reordered as the runtime's warp_card does. Training pairs
    are then both upright, and a class is turned half round as a whole (vision.training.train_look)."""
    dst = np.float32([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]])
    matrix = cv2.getPerspectiveTransform(np.float32(face_quad), dst)
    return to_input(cv2.warpPerspective(frame, matrix, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_REPLICATE), size)


def _printing(seed: int, index: int, kind: str = "family", size: tuple[int, int] = LOOK_INPUT_SIZE):
    if kind == "generic":
        x, picked = make_generic_printing(np.random.default_rng([seed, index, 1]), size=size)
        return x, picked, GENERIC
    if kind == "uno-numerals":
        x, picked = make_uno_numerals_printing(np.random.default_rng([seed, index, 2]), size=size)
        return x, picked, list(DECK_WEIGHTS).index("uno-flip")
    rng = np.random.default_rng([seed, index])  # per printing: the same samples with any number of workers
    decks = list(DECK_WEIGHTS)
    weights = np.array([DECK_WEIGHTS[d] for d in decks])
    d = int(rng.choice(len(decks), p=weights / weights.sum()))
    x, picked = make_printing(rng, decks[d], size=size)
    return x, picked, d


def _printing_star(args):
    cv2.setNumThreads(1)
    return _printing(*args)


def make_look_samples(printings: int, seed: int, workers: int = 1, kind: str = "family",
                      start: int = 0, size: tuple[int, int] = LOOK_INPUT_SIZE) -> LookSamples:
    """Printings start .. printings-1 of `kind` (seeded each by (seed, index)), made by `workers`
    processes, crops of `size` (W, H): with a start, the rest of a set whose first `start`
    printings are cached."""
    import multiprocessing

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    t0 = time.perf_counter()
    jobs = [(seed, p, kind, tuple(size)) for p in range(start, printings)]
    printings = len(jobs)
    out = []
    # forkserver, not fork: a fork of a process whose other threads (OpenCV's, onnxruntime's)
    # hold a lock at that moment can hang in the child; the server forks from a clean process.
    pool = multiprocessing.get_context("forkserver").Pool(workers) if workers > 1 else None
    results = pool.imap(_printing_star, jobs, chunksize=8) if pool else map(_printing_star, jobs)
    try:
        for p, result in enumerate(results, 1):
            out.append(result)
            if p % max(1, printings // 20) == 0:
                rate = p / (time.perf_counter() - t0)
                log.info("look samples (%s): %d/%d printings (%.1f/s, %.0f s left)", kind, p, printings, rate,
                         (printings - p) / rate)
    finally:
        if pool:
            pool.terminate()             # all results are in (or an error stops the run)
            pool.join()
    return LookSamples(np.stack([x for x, _, _ in out]), np.stack([lab for _, lab, _ in out]),
                       np.array([d for _, _, d in out]))
