"""A card carried in: its picture seen in the frames of motion, away from its twin lying still.

A card laid square on its identical twin leaves the still picture as it was, or changed by a
sliver (and a sliver is what a nudge of the twin leaves too): the still pictures before and after
cannot tell "a twin laid on it" from "a hand passed" or "it was pushed". The frames of motion can.
The card laid was carried in by the hand, so while the hand moved, its picture was seen away from
where its twin lies with the twin lying there as before (two copies of one picture at once),
before anything touched the twin or coming nearer, and last near the twin, not going away again.
A hand passing shows no copy; a card nudged is one card, never beside itself; a card picked up
leaves its place as it goes (the place shows what lay beneath; where that is its very twin, the
hand touched it first, and it is seen going away before it comes back); a card carried over the
twin and away is last seen going away (`laid_on_twin`).

The frames are the detector's shrunk colour copies (160 px long side, made for its light check
anyway), kept only while something moves; they are searched only when a still picture is in
doubt, for the picture of the one card in question: a few template correlations per frame, on a
small picture. Nothing here knows any game.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import CARD_ASPECT, intersection_area, quad_area

# The copy is looked for as the card lies now, and turned by these degrees (a hand lowers a card
# roughly as it will lie) where it correlates at least TURN_WORTH as it lies (a frame with no
# copy in it, the most, costs a third).
TURNS, TURN_WORTH = (0.0, -12.0, 12.0), 0.45
INSIDE = 0.1            # of the card's width and height left out all round (its edge, its shadow)
DETAIL = 0.2            # card lengths: shading broader than this is left out (_detail)
SEEN = 0.7              # normalised correlation with the card's print (_detail): its copy seen there
AWAY = 0.35             # card lengths between the copy's centre and its twin's: not the twin itself
MOVING = 0.5            # share of the copy's place unlike the still pictures before and after
TWIN_STILL = 0.6        # share of the twin's place (less the copy) that is as it was
TWIN_SHOWN = 0.25       # ... of at least this share of the twin's area
TOUCHED = 0.1           # share of the twin's place that changed in a frame: something touched it
LANDED_NEAR = 1.3       # card lengths: a copy laid on its twin was seen at least this near it
CAME_NEARER = 0.2       # card lengths the copy must have come nearer since first seen
LEFT_FIRST = 0.25       # card lengths: a copy seen further than when first seen went away first
STARTED_THERE = 0.5     # a copy first seen over this much of a card lying (of the smaller) came from there


@dataclass(frozen=True)
class Sighting:
    """The card's picture seen away from its twin in a frame of motion."""
    frame_index: int
    quad: np.ndarray        # frame pixels: where it was seen
    correlation: float      # of its picture there with the card's
    distance: float         # from the twin's centre, in card lengths
    beside: bool            # the twin showed as before beside it: a copy, a second card
    untouched: bool = False  # nothing had touched the twin's place yet (TOUCHED) in the motion


def laid_on_twin(track: list[Sighting], lying=()) -> bool:
    """Whether the sightings (oldest first) are a card carried in and laid on its twin.

    A second card: its copy seen beside the twin, first not where one of the other cards `lying`
    lay (quads, by STARTED_THERE: that card slid or moved over, not one carried in), and either
    before anything had touched the twin (a card picked up off its very twin is touched first)
    or, seen twice at least, coming nearer (CAME_NEARER) from where it was first seen, never
    further (LEFT_FIRST: a card picked up off its very twin goes away before it comes back).
    Laid there: the picture, once nearest the twin (within LANDED_NEAR), not seen going away again
    (a card carried over it and away; the hand is over the twin by then as often as not)."""
    copies = [s for s in track if s.beside]
    if not copies or any(_overlap(copies[0].quad, q) >= STARTED_THERE for q in lying):
        return False
    first, last = copies[0], copies[-1]
    second_card = first.untouched or (len(copies) >= 2 and first.distance >= last.distance + CAME_NEARER
                                      and max(s.distance for s in copies) <= first.distance + LEFT_FIRST)
    nearest = min(range(len(track)), key=lambda n: track[n].distance)
    closest = track[nearest].distance
    return second_card and closest <= LANDED_NEAR and all(s.distance <= closest + CAME_NEARER
                                                          for s in track[nearest:])


def sightings(motion, before: np.ndarray, still: np.ndarray, at: np.ndarray, twin: np.ndarray,
              scale: float, pixel_threshold: int = 18) -> list[Sighting]:
    """The frames of `motion` ((frame index, shrunk colour frame), oldest first) that show the
    picture of the card lying at `at` in `still` away from its twin lying at `twin`: in each, the
    place at least AWAY card lengths from the twin that correlates best with the card's picture at
    `at` (turned by up to TURNS), if at least SEEN, where the frame differs both from `before` (the
    still picture before the motion) and from `still` (after it) over at least MOVING of the
    place; `beside` if at least TWIN_STILL of the twin's place outside it shows as before;
    `untouched` if no frame before it changed TOUCHED of the twin's place. Quads are in frame
    pixels, corners TL TR BR BL of the picture; `scale`: shrunk pixels per frame pixel; `before`,
    `still` and the frames are shrunk alike."""
    q = np.asarray(at, np.float32) * scale
    across = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
    down = (np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2
    tw, th = int(round(across * (1 - 2 * INSIDE))), int(round(down * (1 - 2 * INSIDE)))
    h, w = before.shape[:2]
    if tw < 6 or th < 6 or tw >= w or th >= h:
        return []
    # The template: the card upright, inside its edge.
    x0, y0 = across * INSIDE, down * INSIDE
    upright = np.array([[0, 0], [across, 0], [across, down], [0, down]], np.float32)
    to_inside = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ cv2.getPerspectiveTransform(q, upright)
    sigma = DETAIL * np.sqrt(quad_area(q) * CARD_ASPECT)
    template = cv2.warpPerspective(_detail(still, sigma), to_inside, (tw, th), flags=cv2.INTER_LINEAR)
    if float(template.std()) < 4.0:          # a blank card: any plain patch correlates with it
        return []
    tq = np.asarray(twin, np.float32) * scale
    twin_centre = tq.mean(axis=0)
    length = float(np.sqrt(quad_area(tq) * CARD_ASPECT))
    twin_place = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(twin_place, np.round(tq).astype(np.int32), 1)
    twin_area = max(1, cv2.countNonZero(twin_place))
    off_twin = cv2.bitwise_not(cv2.dilate(twin_place, np.ones((3, 3), np.uint8)) * 255)
    # Each turn: the frame turned so that a copy lying as the card does (turned by `turn`) stands
    # upright; and where the template may lie in it: inside the frame, AWAY from the twin.
    centre = q.mean(axis=0)
    angle = float(np.degrees(np.arctan2(*(q[1] - q[0])[::-1])))     # of the card's top edge
    rh, rw = h - th + 1, w - tw + 1
    ys, xs = np.mgrid[0:rh, 0:rw].astype(np.float32)
    turns = []
    for turn in TURNS:
        m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle + turn, 1.0)
        inside = cv2.warpAffine(np.ones((h, w), np.float32), m, (w, h), flags=cv2.INTER_NEAREST, borderValue=0)
        within = cv2.boxFilter(inside, -1, (tw, th), anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)[:rh, :rw]
        twin_there = m[:, :2] @ twin_centre + m[:, 2]
        far = np.hypot(xs + tw / 2 - twin_there[0], ys + th / 2 - twin_there[1]) >= AWAY * length
        turns.append((m, cv2.invertAffineTransform(m), far & (within >= 0.95)))
    track = []
    touched = False
    for index, frame in motion:
        changed = _changed(frame, before, pixel_threshold)
        untouched = not touched
        touched = touched or cv2.countNonZero(cv2.bitwise_and(twin_place, changed // 255)) >= TOUCHED * twin_area
        # Passing: unlike the still pictures before and after (not what a card gone left, nor a
        # card come to lie there).
        passing = cv2.bitwise_and(changed, _changed(frame, still, pixel_threshold))
        # (Too little passing away from the twin for a card there: a still frame, a hand on it.)
        if cv2.countNonZero(cv2.bitwise_and(passing, off_twin)) < MOVING * tw * th:
            continue
        grey = _detail(frame, sigma)
        moving = passing.astype(np.float32) / 255.0
        best = None
        for n, (m, inverse, allowed) in enumerate(turns):
            turned = cv2.warpAffine(grey, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            corr = cv2.matchTemplate(turned, template, cv2.TM_CCOEFF_NORMED)
            # Only where something passed: not a card lying still (a twin lying elsewhere).
            share = cv2.boxFilter(cv2.warpAffine(moving, m, (w, h), flags=cv2.INTER_NEAREST, borderValue=0), -1,
                                  (tw, th), anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)[:rh, :rw]
            corr[~(allowed & (share >= MOVING))] = -1.0
            _, value, _, (x, y) = cv2.minMaxLoc(corr)
            if value >= SEEN and (best is None or value > best[0]):
                card = upright - [x0, y0] + [x, y]             # the whole card, edge and all
                best = (value, card @ inverse[:, :2].T + inverse[:, 2])
            if n == 0 and value < TURN_WORTH:
                break
        if best is None:
            continue
        value, quad = best
        # Its twin lies where it lay, beside it: what shows of the twin is as before.
        rest = twin_place.copy()
        cv2.fillConvexPoly(rest, np.round(quad).astype(np.int32), 0)
        shown = cv2.countNonZero(rest)
        beside = (shown >= TWIN_SHOWN * twin_area
                  and 1.0 - cv2.countNonZero(cv2.bitwise_and(rest, changed // 255)) / shown >= TWIN_STILL)
        distance = float(np.linalg.norm(quad.mean(axis=0) - twin_centre)) / length
        track.append(Sighting(index, (quad / scale).astype(np.float32), value, distance, beside, untouched))
    return track


def _overlap(a, b) -> float:
    """Intersection of two quads over the smaller one's area."""
    smaller = min(quad_area(a), quad_area(b))
    return intersection_area(a, b) / smaller if smaller > 0 else 0.0


def _detail(frame: np.ndarray, sigma: float) -> np.ndarray:
    """The grey picture less its blur (float32): the print and the edges, not the shading (a
    hand's smooth shading correlates with a card's light and dark halves)."""
    grey = _grey(frame).astype(np.float32)
    return grey - cv2.GaussianBlur(grey, (0, 0), sigma) if sigma > 0 else grey


def _grey(frame: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame


def _changed(frame: np.ndarray, before: np.ndarray, threshold: int) -> np.ndarray:
    """255 where a colour differs from `before` by more than `threshold` (the detector's rule)."""
    diff = cv2.absdiff(frame, before)
    if diff.ndim == 3:
        b, g, r = cv2.split(diff)
        diff = cv2.max(cv2.max(b, g), r)
    return cv2.threshold(diff, threshold, 255, cv2.THRESH_BINARY)[1]
