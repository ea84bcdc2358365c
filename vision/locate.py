"""Find card quads in a frame, on any table surface.

Several independent cues propose outlines, and one geometric check judges them all:
- regions: mean-adaptive thresholds of the luminance and both colour channels, both polarities
  (a card is lighter, darker or just differently coloured than the table around it, under
  uneven light), and colour distance from a background model learnt on the frame border
  (several clusters, so wood grain and patterned cloth count as background);
- edges: Canny on the luminance and colour channels, closed, every contour (not only outer
  ones) tried, so touching and overlapping cards each keep their own outline.
Each contour's convex hull is reduced to a quadrilateral (polygon approximation, else the
minimum-area rectangle). A hull no card fits may run round cards overlapping (a card across a
card of like colour): each straight stretch of it as long as a card's side proposes the card
standing on it, inwards, at a card's proportions, unless centred in a smaller card already
found. A candidate is kept when its area, aspect ratio (a card is 63 x 88 mm), corner angles and
edge support (the share of its outline lying on image edges) fit a card.
Overlapping duplicates are merged and quads nested in a bigger card (a card's printed inner
frame) are dropped. A caller keeping one reading per place (keep_nested: the placement detector,
and a still photo's reading, vision.reading.read_photo) may ask to keep a quad turned inside
another, and in a still frame gets more hypotheses beside the cards found: the cards standing on
straight stretches of hulls, and those between two parallel straight edges a card's width or
length apart (also at softer edge thresholds, SOFT_EDGES); which is the card, the classifier
settles. There the cards suppression dropped come back as fallbacks, read only where nothing
else at their place is named (Candidate.fallback, vision.reading.read_photo). The survivors' corners are
refined by fitting a line to the edge pixels along each side and intersecting neighbouring
lines, which also puts the corner of a rounded-corner card where the straight sides meet, as
the warp expects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import CARD_ASPECT, intersection_area, order_corners, quad_area, quad_iou

# Frames are located at this long-side size at most (quads are scaled back to the input).
WORK_LONG_SIDE = 640
# At most this many proposals (best edge support first) are refined and judged per frame.
MAX_PROPOSALS = 24
# With a change mask, straight stretches are tried only when the cards found leave more than
# this share of the change outside them.
UNEXPLAINED = 0.1
# Of the cards proposed by straight stretches of an outline no card fits, at most this many.
SIDE_PROPOSALS = 8
# A rough outline needs at least this share on edges to be refined and judged.
ROUGH_MIN_SUPPORT = 0.25
# A change region fitting a card-shaped quad at least this well (IoU) is taken as that card.
MASK_FIT = 0.88
# With a change mask, quads holding less than this share of change are not tried.
MIN_MASK_SHARE = 0.02
# A lined-up quad inside a card holding at least this share of its area is its printed frame.
FRAME_AREA_SHARE = 0.55
# A quad inside a card holding less than this share of its area is a part of its picture.
PICTURE_AREA_SHARE = 0.3
# A side proposal centred in a card found already is tried only when it is this much larger
# (the card found may be the numeral's frame or half the picture of the card the proposal is).
LARGER_THAN_FOUND = 1.15
# Straight edge segments (the longest this many) paired for _found_on_segments, within this many
# degrees of parallel; of the cards they propose, at most SEGMENT_PROPOSALS are refined and judged.
SEGMENTS = 150
SEGMENT_PARALLEL = 4.0
SEGMENT_PROPOSALS = 8
# A card found doubled over a long side replaces the half found only when it scores this much
# better (a card lying beside another of its size doubles too, onto its neighbour).
DOUBLED_BETTER = 1.1
# In a still frame read per place (see locate_candidates), more hypotheses beside the cards found,
# chosen on the printed faces' tuning captures (`python -m vision.evaluation.real_eval
# --tuning-captures --captures 12`, and `--captures 4` for UNO Flip): cards not read 43 -> 31 of
# 264 Flip 7 and 35 -> 26 of 432 UNO Flip with these two, none misread:
# - segment pairs are looked for again at this share of the frame's edge thresholds: a card whose
#   border is fainter than the cloth's texture (a dark card on a dotted cloth) has no edges at its own;
SOFT_EDGES = 0.5
# - a segment card centred in a card found is tried all the same when that card is more than this
#   many times its area: what was found may be a square of a checked cloth round the card.
AROUND_SEGMENT_CARD = 1.5
# And the cards found that suppression dropped are read where nothing at their place is named
# (Candidate.fallback): 31 -> 30 and 26 -> 24. Each quad kept grown 1.25 and 1.5 times, read so,
# took Flip 7 to 25, but on flip7's rendered end-to-end scenes the model read some grown squares
# of a checked cloth as a 12: 19 more false cards in 300 scenes. Not kept.


@dataclass
class Candidate:
    quad: np.ndarray       # float32 (4, 2), ordered, in input-image pixels
    score: float           # 0..1: share of the outline on edges x share with colour contrast across
    # A still frame's hypothesis read only where nothing at its place is named (vision.reading.read_photo)
    fallback: bool = False
    # ... and, where it names no card, no place at all (an outline found at another tone of the
    # photo, or by the card mask network, whose score is its region's mean probability:
    # vision.reading.photo_candidates)
    only_if_named: bool = False
    # ... and a place left unread is searched from it (vision.reading.searched): not so the card
    # mask network's outlines at other tones of the photo (vision.reading.MASK_TONES)
    search_start: bool = True


def find_cards(frame_bgr: np.ndarray, *, min_area_frac: float = 0.01, max_area_frac: float = 0.6,
               min_support: float = 0.5, min_score: float = 0.5,
               extra_mask: np.ndarray | None = None) -> list[np.ndarray]:
    """Quads (float32 (4, 2), TL TR BR BL, long side vertical) of the cards seen in the frame.

    min_area_frac / max_area_frac bound a card's area as a share of the frame; min_support is
    the share of a card's outline that must lie on image edges (fingers over a card lower it);
    min_score also asks the colour to differ across the outline (support x contrast share; 0.5:
    a printed card's cream margin on a pale table under a shadow differs along only part of its
    outline, and the classifier refuses what texture gets through).
    extra_mask (uint8, frame size, optional) marks where something new is, e.g. the change
    against the table as it was: its regions are outlines to try too, and a quad's score is
    scaled by the share of it lying in the mask, so the new card beats table texture around it;
    a mask region that is itself card-shaped is a card even where its border is faint, and its
    outline is also refined with its sides probed as far in as out (it holds the card's shadow)."""
    return [c.quad for c in locate_candidates(frame_bgr, min_area_frac=min_area_frac,
                                              max_area_frac=max_area_frac, min_support=min_support,
                                              min_score=min_score, extra_mask=extra_mask)]


def locate_candidates(frame_bgr: np.ndarray, *, min_area_frac: float = 0.01,
                      max_area_frac: float = 0.6, min_support: float = 0.5, min_score: float = 0.5,
                      extra_mask: np.ndarray | None = None, keep_nested: bool = False) -> list[Candidate]:
    """find_cards with each quad's score. keep_nested: for a caller that reads every quad and
    keeps one reading per place (the placement detector, vision.reading.read_photo): a quad and
    one turned inside it both stay, however they overlap (see _suppress), and without a change
    mask the cards proposed by hull stretches and by edge segments stay beside those found."""
    if frame_bgr is None or frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3:
        raise ValueError("find_cards needs a BGR colour image")
    h0, w0 = frame_bgr.shape[:2]
    scale = min(1.0, WORK_LONG_SIDE / max(h0, w0))
    work = frame_bgr if scale == 1.0 else cv2.resize(frame_bgr, (round(w0 * scale), round(h0 * scale)),
                                                     interpolation=cv2.INTER_AREA)
    h, w = work.shape[:2]
    min_area, max_area = min_area_frac * h * w, max_area_frac * h * w

    smooth = cv2.GaussianBlur(work, (5, 5), 0)
    ycc = cv2.cvtColor(smooth, cv2.COLOR_BGR2YCrCb)
    gradients = _gradients(ycc)
    edges = _canny(gradients)
    support_map = cv2.dilate(edges, np.ones((5, 5), np.uint8))

    # Outlines are proposed on a half-size image (cheap), judged and refined at work size.
    # (Of even sides: OpenCV's area resize has a fast path for exact halving, ~10x faster.)
    half = cv2.resize(ycc[:h - h % 2, :w - w % 2], (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    proposals = [hull * 2 for _, hull in _region_contours(half, min_area / 4)]
    proposals += [hull for _, hull in _contours(cv2.morphologyEx(edges, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)),
                                                cv2.RETR_LIST, min_area)]
    hull_quads = [_quads_from_hull(hull) for hull in proposals]
    rough_quads = [quad for quads in hull_quads for quad in quads]
    mask = None
    fitted: list[Candidate] = []
    change_quads: list[np.ndarray] = []
    if extra_mask is not None:
        mask = extra_mask if scale == 1.0 else cv2.resize(extra_mask, (w, h), interpolation=cv2.INTER_NEAREST)
        for contour, hull in _contours(mask, cv2.RETR_EXTERNAL, min_area):
            quads = _quads_from_hull(hull)
            change_quads += quads              # the change's outline is a proposal too
            # A change that is itself card-shaped is a card even where its border is faint
            # (a pale card on a pale cloth): the quad is judged by how well it fits the change.
            stack = np.stack(quads)
            areas = _areas(stack)
            fits = (areas >= min_area) & (areas <= max_area) & card_shaped(stack)
            if fits.any():
                region = np.zeros_like(mask)
                cv2.drawContours(region, [contour], -1, 255, cv2.FILLED)
                for quad in stack[fits]:
                    fit = _mask_iou(region, quad)
                    if fit >= MASK_FIT:
                        fitted.append(Candidate(quad, fit))

    found = _judged(rough_quads + change_quads, min_area, max_area, support_map, edges, ycc, mask, min_support,
                    min_score)
    # The change's outline holds the card's drop shadow too, so its sides may lie further out than
    # the usual inward probe reaches: probed as far in as out, it finds the card on a busy cloth
    # whose lines cut every edge contour round it (gingham), where only a part of the card's
    # picture has an outline of its own. (The usual refinement of the change's outline stays a
    # candidate too, as before; the better supported of the two wins in _suppress.)
    if change_quads:
        found += _judged(change_quads, min_area, max_area, support_map, edges, ycc, mask, min_support, min_score,
                         deep=True)
    # A hull no card fits may be cards overlapping, one outline round them all: each straight
    # stretch of it long enough to be a card's side proposes a card standing on it, inwards,
    # unless centred in a card found already and not much larger (a card's own hull proposes
    # nothing more; a card found by its numeral's frame or half its picture does not hide its
    # true outline). With a change mask, only while the cards found leave some of the change
    # unexplained.
    # A caller keeping one reading per place (keep_nested) gets, in a still frame, more hypotheses:
    # the cards standing on hull stretches and those between pairs of parallel straight edges
    # (_found_on_segments) stay beside the cards found rather than compete with them in _suppress,
    # and its reading of each settles which is the card at that place.
    per_place = keep_nested and mask is None
    beside: list[Candidate] = []
    if mask is None or _unexplained_share(mask, [c.quad for c in found]) > UNEXPLAINED:
        on_sides = _found_on_sides(proposals, hull_quads, found, min_area, max_area, support_map, edges, ycc, mask,
                                   min_support, min_score)
        if per_place:
            beside += on_sides
        else:
            found += on_sides
    if per_place:
        beside += _found_on_segments(edges, found, min_area, max_area, support_map, ycc, min_support, min_score)
        soft = _canny(gradients, SOFT_EDGES)
        beside += _found_on_segments(soft, found, min_area, max_area, cv2.dilate(soft, np.ones((5, 5), np.uint8)),
                                     ycc, min_support, min_score)
    # A change fitted as a card only counts where no card was found by its edges: a card that
    # moved a little leaves a card-shaped change too (old and new place together).
    found += [f for f in fitted if all(quad_iou(f.quad, c.quad) < 0.3 for c in found)]
    # (Not with a change mask: in the placement detector's frames it doubled the locate cost, and a
    # card there not named by its half is looked at again from its change.)
    if mask is None:
        found += _found_doubled(found, min_area, max_area, support_map, edges, ycc, mask, min_support, min_score)
    kept = _suppress(found, keep_nested)
    kept += [c for c in _dedupe(beside, 0.5, 0.0) if all(quad_iou(c.quad, k.quad) < 0.9 for k in kept)]
    if per_place:
        kept += _dropped(found, kept)
    result = []
    for c in kept:
        quad = c.quad / scale if scale != 1.0 else c.quad
        result.append(Candidate(order_corners(quad), c.score, c.fallback))
    return result


def refined_outlines(frame_bgr: np.ndarray, quads, reach: float = 0.1) -> list[np.ndarray]:
    """Each of `quads` (outlines found otherwise, a few pixels off: vision.card_mask's) snapped to
    the card's border nearby, its sides probed `reach` of the card's short side in and out, on the
    frame's softer edges (SOFT_EDGES: the border of a card found otherwise may be faint)."""
    if len(quads) == 0:
        return []
    h0, w0 = frame_bgr.shape[:2]
    scale = min(1.0, WORK_LONG_SIDE / max(h0, w0))
    work = frame_bgr if scale == 1.0 else cv2.resize(frame_bgr, (round(w0 * scale), round(h0 * scale)),
                                                     interpolation=cv2.INTER_AREA)
    ycc = cv2.cvtColor(cv2.GaussianBlur(work, (5, 5), 0), cv2.COLOR_BGR2YCrCb)
    edges = _canny(_gradients(ycc), SOFT_EDGES)
    q = np.stack([np.asarray(quad, np.float32) for quad in quads]) * scale
    band = np.maximum(5, np.round(reach * np.sqrt(_areas(q) / CARD_ASPECT))).astype(np.int32)
    return [order_corners(r / scale) for r in _refine(edges, q, outward=band, inward=int(band.max()))]


def _found_on_sides(proposals, hull_quads, found, min_area, max_area, support_map, edges, ycc, mask,
                    min_support, min_score) -> list[Candidate]:
    """Cards standing on the straight stretches of the hulls no card fits (see the module's doc);
    without a change mask, of every hull no card found fits, card-shaped or not.

    (A hull round a card and what touches it, a card beneath, a hand or a square of a checked
    cloth, is often card-shaped itself, the rectangle fitted round both, and then hid the card's
    own sides. In a still frame the stretches of every hull whose rectangle is not a card found
    are tried: on the printed faces' captures kept for tuning (`python -m
    vision.evaluation.real_eval --tuning-captures`, 6 per Flip 7 card, 2 per UNO Flip card), the
    cards not read fell from 37 to 30 of 132 Flip 7 and from 29 to 28 of 216 UNO Flip. The
    placement detector's change mask keeps the old rule: its frames' cost, and a new card there
    is cut from the table by the change.)"""
    if not proposals:
        return []
    min_side = math.sqrt(min_area / CARD_ASPECT)
    rectangles = np.stack([q for quads in hull_quads for q in quads])
    shaped = card_shaped(rectangles)
    if mask is None:    # a hull fits a card only where one was found there (none found: no hull fits)
        shaped &= (_within_found(rectangles, _areas(rectangles), np.stack([c.quad for c in found])) if found
                   else False)
    fits = np.logical_or.reduceat(shaped, np.cumsum([0] + [len(quads) for quads in hull_quads[:-1]]))
    sides = [quad for hull, fit in zip(proposals, fits) if not fit for quad in quads_from_sides(hull, min_side)]
    return _judged(sides, min_area, max_area, support_map, edges, ycc, mask, min_support, min_score,
                   besides=[c.quad for c in found], limit=SIDE_PROPOSALS)


def _found_on_segments(edges, found, min_area, max_area, support_map, ycc, min_support,
                       min_score) -> list[Candidate]:
    """Cards lying between two parallel straight edges a card's width or length apart (see
    _quads_from_segments), where no card found already is centred (SEGMENT_PROPOSALS at most).
    A card's outline may belong to no contour of its own (merged with a hand, the card beneath
    or a cloth's lines, or broken by blur), yet two of its sides still show as straight edges.
    (With these and the hull stretches' cards kept beside the cards found, on the printed faces'
    tuning captures (as in _found_on_sides), the cards not read fell from 30 to 21 of 132 Flip 7
    and from 28 to 19 of 216 UNO Flip, none misread; kept in _suppress with the others, they
    replaced a true card as often as a wrong quad.)"""
    min_side = math.sqrt(min_area / CARD_ASPECT)
    quads = _quads_from_segments(edges, min_side, math.sqrt(max_area / CARD_ASPECT))
    return _judged(quads, min_area, max_area, support_map, edges, ycc, None, min_support, min_score,
                   besides=[c.quad for c in found], limit=SEGMENT_PROPOSALS, inside_larger=AROUND_SEGMENT_CARD)


def _dropped(found: list[Candidate], kept: list[Candidate]) -> list[Candidate]:
    """The cards found that suppression dropped (none alike kept, IoU 0.9), as fallbacks: read only
    where nothing at their place is named (Candidate.fallback). A card lined up inside a
    card-shaped square of a checked cloth goes as that square's printed frame, and the square
    reads "no card". (Read at every place as the cards kept are, a card's printed frame could
    replace the card read at its own outline: on flip7's rendered end-to-end scenes, about ten
    fewer cards found in 300 scenes.)"""
    return [Candidate(c.quad, c.score, True) for c in _dedupe(found, 0.9, 0.0)
            if all(quad_iou(c.quad, k.quad) < 0.9 for k in kept)]


def _quads_from_segments(edges: np.ndarray, min_side: float, max_side: float) -> list[np.ndarray]:
    """Card quads between pairs of straight edge segments (probabilistic Hough, the
    SEGMENTS longest) within SEGMENT_PARALLEL degrees of parallel, overlapping along their
    direction, at least a card's least short side apart and at most its greatest long side: the
    distance taken as the card's short side and as its long side, its extent along them from
    the segments' span (anchored at either end where the span is shorter than the card)."""
    lines = cv2.HoughLinesP(edges, 1, np.pi / 180, 25, minLineLength=max(12, 0.5 * min_side), maxLineGap=4)
    if lines is None or len(lines) < 2:
        return []
    seg = lines.reshape(-1, 4).astype(np.float32)
    length = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    longest = np.argsort(-length, kind="stable")[:SEGMENTS]
    seg, length = seg[longest], length[longest]
    start, unit = seg[:, :2], (seg[:, 2:] - seg[:, :2]) / length[:, None]
    angle = np.arctan2(unit[:, 1], unit[:, 0]) % np.pi
    i, j = np.triu_indices(len(seg), 1)
    turn = np.abs(angle[i] - angle[j])
    parallel = np.minimum(turn, np.pi - turn) < np.radians(SEGMENT_PARALLEL)
    i, j = i[parallel], j[parallel]
    u = unit[i]
    normal = np.stack([-u[:, 1], u[:, 0]], axis=1)
    apart = (((start[j] + seg[j, 2:]) / 2 - start[i]) * normal).sum(axis=1)    # j's middle from i's line
    spaced = (np.abs(apart) >= 0.9 * min_side) & (np.abs(apart) <= 1.1 * max_side * CARD_ASPECT)
    i, j, u, normal, apart = i[spaced], j[spaced], u[spaced], normal[spaced], apart[spaced]
    # Extents along i's direction, from i's start.
    along_j = np.sort(np.stack([((start[j] - start[i]) * u).sum(axis=1),
                                ((seg[j, 2:] - start[i]) * u).sum(axis=1)], axis=1), axis=1)
    shared = np.minimum(length[i], along_j[:, 1]) - np.maximum(0.0, along_j[:, 0])
    overlapping = shared >= 0.3 * np.minimum(length[i], length[j])
    i, u, normal, apart, along_j = i[overlapping], u[overlapping], normal[overlapping], apart[overlapping], along_j[overlapping]
    lo, hi = np.minimum(0.0, along_j[:, 0]), np.maximum(length[i], along_j[:, 1])
    # Each pair's card, the distance taken as its short side, then as its long side (option 0, 1);
    # along the segments the card runs over their span where the span is about the card's length,
    # else from either end (start 0, 1). Ordered by pair, option, start.
    span, width = hi - lo, np.abs(apart)
    pair, option, begin, extent = [], [], [], []
    for o, card_length in enumerate((width * CARD_ASPECT, width / CARD_ASPECT)):
        fits = (span <= 1.15 * card_length) & (card_length >= min_side)
        whole = fits & (span >= 0.9 * card_length)
        part = fits & ~whole
        for s, (rows, t, run) in enumerate(((whole | part, lo, np.where(whole, np.maximum(card_length, span), card_length)),
                                            (part, hi - card_length, card_length))):
            pair.append(np.flatnonzero(rows))
            option.append(np.full(rows.sum(), o))
            begin.append(np.stack([t[rows], np.full(rows.sum(), s)], axis=1))
            extent.append(run[rows])
    pair, option = np.concatenate(pair), np.concatenate(option)
    begin, extent = np.concatenate(begin), np.concatenate(extent)
    order = np.lexsort((begin[:, 1], option, pair))
    k, t, run = pair[order], begin[order, 0].astype(np.float32), extent[order].astype(np.float32)
    p0 = start[i[k]] + u[k] * t[:, None]
    p1 = p0 + u[k] * run[:, None]
    across = normal[k] * apart[k][:, None]
    return list(np.stack([p0, p1, p1 + across, p0 + across], axis=1).astype(np.float32))


def _found_doubled(found, min_area, max_area, support_map, edges, ycc, mask, min_support,
                   min_score) -> list[Candidate]:
    """Cards of which only half was found. Half a card cut across its long side is card-shaped
    again (63 x 44 mm against 63 x 88: both near 1 : sqrt 2), and a card's picture splitting it
    there (UNO's oval under a shadow's edge) outlines that half: each card found proposes itself
    doubled over either long side, kept where it scores DOUBLED_BETTER times the half's score."""
    doubled = []
    for half in found:
        q = order_corners(half.quad)         # TL TR BR BL, the long sides vertical
        across = q[1] - q[0]
        whole = [np.array([q[0], q[1] + across, q[2] + across, q[3]], np.float32),
                 np.array([q[0] - across, q[1], q[2], q[3] - across], np.float32)]
        doubled += [c for c in _judged(whole, min_area, max_area, support_map, edges, ycc, mask, min_support,
                                       min_score) if c.score > DOUBLED_BETTER * half.score]
    return doubled


def _unexplained_share(mask: np.ndarray, quads) -> float:
    """Share of the mask's pixels outside all the quads."""
    total = cv2.countNonZero(mask)
    if total == 0 or not quads:
        return 1.0 if total else 0.0
    inside = np.zeros_like(mask)
    for q in quads:
        cv2.fillConvexPoly(inside, np.round(q).astype(np.int32), 255)
    return cv2.countNonZero(cv2.bitwise_and(mask, cv2.bitwise_not(inside))) / total


def _judged(rough_quads, min_area, max_area, support_map, edges, ycc, mask, min_support, min_score,
            besides=(), limit: int = MAX_PROPOSALS, deep: bool = False,
            inside_larger: float | None = None) -> list[Candidate]:
    """The rough quads that are cards: sized and shaped like one, on edges (refined to them), with
    the colour differing across the outline; scored, with a change mask, by their share of it.
    Rough quads centred in one of the quads `besides` and not much larger are not tried (but for
    those of less than 1 / inside_larger of its area, when given); deep: sides are probed as far
    inwards as outwards."""
    found: list[Candidate] = []
    if rough_quads:
        rough = np.stack(rough_quads)
        areas = _areas(rough)
        sized = (areas >= min_area) & (areas <= max_area)
        rough, areas = rough[sized], areas[sized]
        shaped = card_shaped(rough)
        rough, areas = rough[shaped], areas[shaped]
        support = _edge_support(support_map, rough)
        # Too little of the outline on edges: never a proposal (_dedupe below passes these over,
        # and they hide no other quad), so no more work on them.
        enough = support >= ROUGH_MIN_SUPPORT
        rough, areas, support = rough[enough], areas[enough], support[enough]
        if mask is not None and len(rough):    # a quad holding none of the change is not what is asked about
            share = _shares(mask, rough) >= MIN_MASK_SHARE
            rough, areas, support = rough[share], areas[share], support[share]
        if besides and len(rough):
            apart = ~_within_found(rough, areas, np.stack(besides), inside_larger)
            rough, areas, support = rough[apart], areas[apart], support[apart]
        if len(rough):
            kept = _dedupe([Candidate(q, s) for q, s in zip(rough, support.tolist())], 0.97, ROUGH_MIN_SUPPORT,
                           areas.tolist(), most=limit)
            if kept:
                picked = np.stack([c.quad for c in kept])
                short = np.sqrt(_areas(picked) / CARD_ASPECT)
                # The band reaches a little outwards: a card touching another is often first seen by its frame.
                band = np.maximum(5, np.round(0.08 * short)).astype(np.int32)
                refined = _refine(edges, picked, outward=band, inward=int(band.max()) if deep else 5)
                refined = refined[card_shaped(refined)]
                support = _edge_support(support_map, refined)
                refined, support = refined[support >= min_support], support[support >= min_support]
                scores = support * _border_contrast(ycc, refined)
                refined, scores = refined[scores >= min_score], scores[scores >= min_score]
                if mask is not None and len(refined):    # rank by how much of the quad is the new thing
                    scores = scores * _shares(mask, refined)
                found += [Candidate(quad, score) for quad, score in zip(refined, scores.tolist())]
    return found


def _canny(gradients: tuple[np.ndarray, np.ndarray, float], share: float = 1.0) -> np.ndarray:
    """Canny edges of whichever channel (luminance or chroma) changes most at each pixel
    (_gradients): a cream card on light wood differs more in colour than in brightness.
    Thresholds follow the frame's own gradient statistics, so dim and bright scenes work alike:
    the upper one `share` of _gradients' (never below 24)."""
    gx, gy, high = gradients
    high = max(high * share, 24.0)
    return cv2.Canny(gx, gy, high / 2.0, high)


def _gradients(ycc: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(x and y derivatives of whichever channel changes most at each pixel, the frame's upper
    Canny threshold: the 90th percentile of their magnitude) for _canny."""
    # 3x3 Sobel derivatives (spatialGradient: both in one pass, the same values as cv2.Sobel).
    # Chroma differences are smaller: they are weighed up (x2). All in OpenCV or in place:
    # these full-size arrays are most of the cost.
    luma, cr, cb = cv2.split(ycc)
    gx, gy = cv2.spatialGradient(luma)
    mag = np.abs(gx)
    mag += np.abs(gy)
    for channel in (cr, cb):
        cx, cy = cv2.spatialGradient(channel)
        m = np.abs(cx)
        m += np.abs(cy)
        m += m                                              # the weight 2, on |dx| + |dy|
        take = cv2.compare(m, mag, cv2.CMP_GT)
        cv2.add(cx, cx, dst=gx, mask=take)                  # that channel's derivatives, x2
        cv2.add(cy, cy, dst=gy, mask=take)
        cv2.max(m, mag, dst=mag)
    return gx, gy, _percentile90(mag[::4, ::4])


def _percentile90(values: np.ndarray) -> float:
    """np.percentile(values, 90) (linear interpolation, the same float) from one partial sort,
    without np.percentile's overhead."""
    flat = values.ravel()
    n = flat.size
    virtual = (n - 1) * 0.9
    lo = math.floor(virtual)
    hi = min(lo + 1, n - 1)
    part = np.partition(flat, (lo, hi))
    a, b = float(part[lo]), float(part[hi])
    t = virtual - lo
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)     # numpy's _lerp


def _region_contours(ycc: np.ndarray, min_area: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Outlines of regions lighter or darker (in luminance or in colour) than their surroundings.

    A mean-adaptive threshold per channel and polarity follows uneven light; one of the six
    maps nearly always holds a card as its own region, on light and dark tables alike. Plus
    regions far in colour from every background cluster learnt on the frame border."""
    block = _odd(min(ycc.shape[:2]) // 4)
    found = []
    for img, offset in zip(cv2.split(ycc), (5.0, 2.5, 2.5)):
        # cv2.adaptiveThreshold (MEAN_C) with C = -offset (THRESH_BINARY: lighter) and C = offset
        # (THRESH_BINARY_INV: darker), the local mean shared by both: the same maps, one box filter.
        mean = cv2.boxFilter(img, -1, (block, block), normalize=True,
                             borderType=cv2.BORDER_REPLICATE | cv2.BORDER_ISOLATED)
        diff = cv2.subtract(img, mean, dtype=cv2.CV_16S)
        for binary in (cv2.compare(diff, -math.ceil(-offset), cv2.CMP_GT),
                       cv2.compare(diff, -math.floor(offset), cv2.CMP_LE)):
            found += _contours(binary, cv2.RETR_LIST, min_area)
    found += _contours(_foreground_mask(ycc), cv2.RETR_EXTERNAL, min_area)
    return found


def _odd(n: int) -> int:
    return max(3, n | 1)


def _foreground_mask(ycc: np.ndarray) -> np.ndarray:
    """Pixels far in colour from every background cluster learnt on the frame border."""
    h, w = ycc.shape[:2]
    b = max(3, min(h, w) // 25)
    border = np.concatenate([ycc[:b].reshape(-1, 3), ycc[-b:].reshape(-1, 3),
                             ycc[:, :b].reshape(-1, 3), ycc[:, -b:].reshape(-1, 3)])[::3].astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    # Start from luminance terciles rather than random centres: the same frame, the same answer.
    labels = np.empty((len(border), 1), np.int32)
    labels[np.argsort(border[:, 0], kind="stable"), 0] = np.arange(len(border)) * 3 // len(border)
    _, _, centres = cv2.kmeans(border, 3, labels, criteria, 1, cv2.KMEANS_USE_INITIAL_LABELS)
    # L1 colour distance to the nearest cluster, saturating (all in OpenCV: this is per pixel).
    dist8 = None
    for centre in centres:
        d = cv2.transform(cv2.absdiff(ycc, tuple(float(v) for v in centre) + (0.0,)),
                          np.full((1, 3), 2.5, np.float32))
        dist8 = d if dist8 is None else cv2.min(dist8, d)
    thresh, mask = cv2.threshold(dist8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if thresh < 40:   # no clear foreground: Otsu would only split the noise
        return np.zeros((h, w), np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))


def _contours(binary: np.ndarray, mode: int, min_area: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """(contour, convex hull) of each contour whose outline could hold a card (cheap tests before
    any quad fitting)."""
    contours, _ = cv2.findContours(binary, mode, cv2.CHAIN_APPROX_NONE)
    # Every boundary pixel is a point: a closed outline around a card-sized box has at least
    # twice the box's long side of them, and most texture outlines are far shorter (cheapest test).
    shortest = max(4, int(2 * np.sqrt(min_area)))
    kept = []
    for c in [c for c in contours if len(c) >= shortest]:
        _, _, bw, bh = cv2.boundingRect(c)
        if bw * bh < min_area:              # cheapest test first: most contours are small texture
            continue
        hull = cv2.convexHull(c)        # once: the rectangle fit and the quads start from it
        (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
        if rw * rh < min_area or max(rw, rh) > 2.2 * min(rw, rh):
            continue
        kept.append((c, hull))
    return kept


def _quads_from_hull(hull: np.ndarray) -> list[np.ndarray]:
    perimeter = cv2.arcLength(hull, True)
    quads = []
    for eps in (0.02, 0.04, 0.07):
        approx = cv2.approxPolyDP(hull, eps * perimeter, True)
        if len(approx) == 4:
            quads.append(approx.reshape(4, 2).astype(np.float32))
            break
        if len(approx) < 4:
            break
    quads.append(cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32))
    return quads


def _within_found(quads: np.ndarray, areas: np.ndarray, found: np.ndarray,
                  inside_larger: float | None = None) -> np.ndarray:
    """(N,) bool: each quad (N, 4, 2) is centred in one of the convex quads `found` (M, 4, 2) and
    not much larger than it (LARGER_THAN_FOUND): a card already found, or a part of one; with
    inside_larger, nor is that quad found more than inside_larger times its area."""
    c = quads.mean(axis=1)[:, None, None, :]                          # (N, 1, 1, 2)
    a, b = found[None], np.roll(found, -1, axis=1)[None]              # (1, M, 4, 2) each
    cross = (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])
    inside = (cross >= 0).all(axis=2) | (cross <= 0).all(axis=2)     # (N, M)
    areas, found_areas = np.asarray(areas)[:, None], _areas(found)[None, :]
    alike = areas <= LARGER_THAN_FOUND * found_areas
    if inside_larger is not None:
        alike &= areas * inside_larger >= found_areas
    return (inside & alike).any(axis=1)


def quads_from_sides(hull: np.ndarray, min_side: float) -> list[np.ndarray]:
    """Card quads standing on the straight stretches of a hull (each at least min_side long),
    inwards, the stretch taken as the card's short side and as its long side."""
    perimeter = cv2.arcLength(hull, True)
    poly = cv2.approxPolyDP(hull, 0.015 * perimeter, True).reshape(-1, 2).astype(np.float32)
    if len(poly) < 4:
        return []
    centre = poly.mean(axis=0)
    quads = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        side = b - a
        length = float(np.hypot(*side))
        if length < min_side:
            continue
        normal = np.float32([-side[1], side[0]]) / length
        if np.dot(centre - a, normal) < 0:
            normal = -normal
        for depth in (length * CARD_ASPECT, length / CARD_ASPECT):
            quads.append(np.stack([a, b, b + normal * depth, a + normal * depth]).astype(np.float32))
    return quads


def card_shaped(quads: np.ndarray, aspect: float = 1.25, max_cos: float = 0.35):
    """Convex, a card's aspect ratio within a factor `aspect` (give or take perspective), corners
    near right angles (|cosine| at most `max_cos`: 0.35 is about 70..110 degrees). Quads are in
    cyclic order (from a convex hull, a rectangle fit or a refinement).
    One quad (4, 2) -> bool; a stack (N, 4, 2) -> bool array (N,)."""
    q = np.asarray(quads, np.float32)
    one = q.ndim == 2
    q = q.reshape(-1, 4, 2)
    x, y = q[..., 0], q[..., 1]                # (coordinates apart: the same values, less numpy overhead)
    nx, ny = x[:, [1, 2, 3, 0]] - x, y[:, [1, 2, 3, 0]] - y       # side i runs from corner i to corner i+1
    px, py = x[:, [3, 0, 1, 2]] - x, y[:, [3, 0, 1, 2]] - y
    cross = px * ny - py * nx
    ok = (cross > 0).all(axis=1) | (cross < 0).all(axis=1)
    sides = np.sqrt(nx * nx + ny * ny)
    ok &= sides.min(axis=1) >= 1.0
    a, b = sides[:, 0] + sides[:, 2], sides[:, 1] + sides[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.maximum(a, b) / np.minimum(a, b)
        cos = (px * nx + py * ny) / (sides[:, [3, 0, 1, 2]] * sides)
    ok &= (ratio >= CARD_ASPECT / aspect) & (ratio <= CARD_ASPECT * aspect)
    ok &= (np.abs(cos) <= max_cos).all(axis=1)
    return bool(ok[0]) if one else ok


def _areas(quads: np.ndarray) -> np.ndarray:
    """quad_area of each quad (N, 4, 2), all at once: the shoelace sum as cv2.contourArea adds
    it (in double, term by term from the last corner round), so the very same values."""
    q = np.asarray(quads, np.float64)
    x, y = q[..., 0], q[..., 1]
    t = x[:, [3, 0, 1, 2]] * y - y[:, [3, 0, 1, 2]] * x
    return np.abs(((t[:, 0] + t[:, 1]) + t[:, 2]) + t[:, 3]) * 0.5


_STEPS = {n: np.linspace(0.12, 0.88, n, dtype=np.float32) for n in (24, 32)}


def _side_samples(quads: np.ndarray, per_side: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """x and y (each (N, 4, S)) of points along each side of each quad, leaving out the rounded
    corner ends (quads (N, 4, 2) in cyclic order). (Coordinates apart: numpy broadcasts over a
    last axis of 2 slowly; the values are the same either way.)"""
    d = quads[:, [1, 2, 3, 0]] - quads
    steps = _STEPS[per_side][None, None, :]
    return (quads[:, :, 0, None] + d[:, :, 0, None] * steps,
            quads[:, :, 1, None] + d[:, :, 1, None] * steps)


def _sample(image: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """image at the nearest pixel of each point (x, y), clipped to the image."""
    h, w = image.shape[:2]
    xi = np.clip(np.rint(x).astype(np.int32), 0, w - 1)
    yi = np.clip(np.rint(y).astype(np.int32), 0, h - 1)
    return image[yi, xi]


def _edge_support(support_map: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Share of each quad's outline (N, 4, 2) lying on edges; points off the image count as none."""
    h, w = support_map.shape
    if len(quads) == 0:
        return np.zeros(0, np.float32)
    x, y = _side_samples(np.asarray(quads, np.float32))
    xr, yr = np.rint(x), np.rint(y)
    inside = (xr >= 0) & (xr < w) & (yr >= 0) & (yr < h)
    on = support_map[np.clip(yr.astype(np.int32), 0, h - 1), np.clip(xr.astype(np.int32), 0, w - 1)] > 0
    return (on & inside).reshape(len(quads), -1).mean(axis=1)


def _mask_iou(region: np.ndarray, quad: np.ndarray) -> float:
    """Intersection over union of a filled region and a quad."""
    poly = np.zeros_like(region)
    cv2.fillConvexPoly(poly, np.round(quad).astype(np.int32), 255)
    inter = cv2.countNonZero(cv2.bitwise_and(poly, region))
    union = cv2.countNonZero(cv2.bitwise_or(poly, region))
    return inter / union if union else 0.0


_GRID = np.linspace(1 / 32, 31 / 32, 16, dtype=np.float32)     # cell centres across a quad
_U, _V = _GRID[None, :, None, None], _GRID[None, None, :, None]
# Bilinear weights of the four corners at each grid point (computed as _shares used to inline them).
_GRID_WEIGHTS = tuple(w[..., 0] for w in ((1 - _U) * (1 - _V), _U * (1 - _V), _U * _V, (1 - _U) * _V))


def _shares(mask: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Share of each quad's (N, 4, 2, cyclic order) area where the mask is set, from a 16 x 16
    grid of points spread bilinearly over it: all quads at once, within ~2 % of counting pixels
    for a change made of blobs (as the change mask is)."""
    w0, w1, w2, w3 = _GRID_WEIGHTS
    qx, qy = quads[:, None, None, :, 0], quads[:, None, None, :, 1]                    # (N, 1, 1, 4)
    x = w0 * qx[..., 0] + w1 * qx[..., 1] + w2 * qx[..., 2] + w3 * qx[..., 3]          # (N, 16, 16)
    y = w0 * qy[..., 0] + w1 * qy[..., 1] + w2 * qy[..., 2] + w3 * qy[..., 3]
    return (_sample(mask, x, y) > 0).mean(axis=(1, 2))


def _outward_normals(quads: np.ndarray):
    """Unit direction of each side (N, 4, 2) and its normal pointing out of the quad."""
    d = quads[:, [1, 2, 3, 0]] - quads
    u = d / np.maximum(np.sqrt((d * d).sum(axis=2, keepdims=True)), 1e-6)
    n = np.stack([-u[..., 1], u[..., 0]], axis=2)
    inward = ((quads + d / 2 - quads.mean(axis=1, keepdims=True)) * n).sum(axis=2) < 0
    n[inward] *= -1
    return u, n


def _border_contrast(ycc: np.ndarray, quads: np.ndarray, step: float = 3.0) -> np.ndarray:
    """Per quad (N, 4, 2): share of border points where the colour just inside differs from just
    outside, lowered when neither the strip just inside nor the one just outside keeps one colour
    along each side.

    A true card border separates the card from the table all along, and along each side either
    the card's margin or the table beside it keeps one colour; a quad snapped onto table texture
    (a checkerboard's lines) has the same colour on both sides at many points and alternating
    colours on both. (Either side, not the margin alone: a printed Flip 7 card has ornaments
    reaching its edges, its shells and rings, so its margin keeps one colour along only part of
    a side: when this rule came in, `python -m vision.evaluation.real_eval --deck flip7` counted
    27 of its 88 held-out captures not found with the margin alone, 14 with either side.)"""
    q = np.asarray(quads, np.float32)
    if len(q) == 0:
        return np.zeros(0, np.float32)
    x, y = _side_samples(q)
    _, n = _outward_normals(q)
    sx, sy = (step * n[..., 0])[..., None], (step * n[..., 1])[..., None]
    inner = _sample(ycc, x - sx, y - sy).astype(np.float32)                          # (N, 4, S, 3)
    outer = _sample(ycc, x + sx, y + sy).astype(np.float32)
    # Colour distance > 12: the squared distance is a whole number (differences of uint8
    # samples), so > 144 is the same test without the square root.
    diff = inner - outer
    contrast = ((diff * diff).sum(axis=3) > 144.0).mean(axis=(1, 2))
    # A card's margin keeps one colour along each side; squares of a checked cloth alternate.
    # Chroma is weighed up: light falls off along a side, a card's colour does not.
    weights = np.array([0.5, 2.0, 2.0], np.float32)
    uniform = np.maximum(_uniform_along_sides(inner * weights), _uniform_along_sides(outer * weights)).mean(axis=1)
    return contrast * np.minimum(1.0, uniform / 0.75)


def _uniform_along_sides(strip: np.ndarray) -> np.ndarray:
    """(N, 4): per side, the share of a strip's samples (N, 4, S, 3) near the side's median colour."""
    return (np.abs(strip - _median_even(strip, axis=2)).sum(axis=3) < 30.0).mean(axis=2)


def _median_even(a: np.ndarray, axis: int) -> np.ndarray:
    """np.median(a, axis, keepdims=True) of float32 `a` with an even count along axis (no NaNs):
    the mean of the two middle values after one partition, as numpy computes it, the same float32."""
    n = a.shape[axis]
    part = np.partition(a, (n // 2 - 1, n // 2), axis=axis)
    lo = np.take(part, [n // 2 - 1], axis=axis)
    hi = np.take(part, [n // 2], axis=axis)
    return (lo + hi) / np.float32(2)


def _dedupe(cands: list[Candidate], iou: float, min_support: float,
            areas: list[float] | None = None, apart: frozenset = frozenset(),
            most: int | None = None) -> list[Candidate]:
    """Best-supported of each group of near-identical quads; of equally supported ones the
    larger, which is the card's border rather than its printed frame. (areas: the quads' areas
    when known; apart: pairs of indices (i, j), i < j, that both stay however they overlap;
    most: the first `most` kept only, the same as the whole list cut there, and no more work:
    a still frame's segment pairs propose thousands.)"""
    if not cands:
        return []
    quads = np.stack([c.quad for c in cands]).astype(np.float32, copy=False)
    if areas is None:
        areas = _areas(quads).tolist()
    order = sorted(range(len(cands)), key=lambda i: (round(cands[i].score, 1), areas[i]), reverse=True)
    # Cheap bounds first, against the quads kept so far: IoU <= (bounding boxes' overlap) / (the
    # larger area), and IoU <= (the smaller area) / (the larger area). (float32, as the areas kept.)
    lo, hi = quads.min(axis=1), quads.max(axis=1)                                 # (N, 2) each
    area32 = np.array(areas, np.float32)
    iou32 = np.float32(iou)
    kept: list[int] = []
    for i in order:
        c = cands[i]
        if c.score < min_support:
            continue
        if kept:
            k = np.array(kept)
            larger = np.maximum(area32[i], area32[k])
            overlap = (np.clip(np.minimum(hi[i, 0], hi[k, 0]) - np.maximum(lo[i, 0], lo[k, 0]), 0, None)
                       * np.clip(np.minimum(hi[i, 1], hi[k, 1]) - np.maximum(lo[i, 1], lo[k, 1]), 0, None))
            near = k[(overlap > iou32 * larger) & (np.minimum(area32[i], area32[k]) > iou32 * larger)].tolist()
            if not all(quad_iou(c.quad, cands[j].quad) <= iou for j in near if (min(i, j), max(i, j)) not in apart):
                continue
        kept.append(i)
        if most is not None and len(kept) == most:
            break
    return [cands[i] for i in kept]


def _inside(inner: Candidate, outer: Candidate) -> bool:
    return intersection_area(inner.quad, outer.quad) > 0.8 * quad_area(inner.quad)


def _suppress(cands: list[Candidate], keep_nested: bool = False) -> list[Candidate]:
    """One quad per card.

    A quad inside a bigger, about as well supported one goes when it is that card's printed frame
    (lined up, most of its area) or a small part of its picture. Between those, both stay:
    either may be the card (a card inside squares of a gingham cloth, or half a card's picture
    inside the card), and the classifier's "no card" settles it. With keep_nested (asked by the
    placement detector, which keeps one reading per place) so do a quad and one
    turned inside it, whatever their overlap (two cards cannot lie so: one is a part of a card's
    picture, or the other an outline round a card and what lies beside it): a part of a card's
    picture stays beside the card even where it is the better outlined, as the whole card on a
    busy cloth may be found only by an outline a little off its border. (Without it, as in a
    scan, which reads every quad kept, the better supported of the two stays: kept both, a part
    of a card read as the card was a false card in 11 of flip7's 300 end-to-end photos against 6.)
    Of quads overlapping otherwise, the better supported stays."""
    cands = _dedupe(cands, 0.9, 0.0)
    drop = set()
    nested = set()
    for i, inner in enumerate(cands):
        for j, outer in enumerate(cands):
            if (outer is inner or quad_area(outer.quad) <= quad_area(inner.quad)
                    or not _inside(inner, outer)):
                continue
            share = quad_area(inner.quad) / quad_area(outer.quad)
            printed_frame = share >= FRAME_AREA_SHARE and _turn_between(inner.quad, outer.quad) < 10.0
            if outer.score >= inner.score - 0.1 and (share < PICTURE_AREA_SHARE or printed_frame):
                drop.add(i)
                break
            if keep_nested and not printed_frame:
                nested.add((i, j))
    rest = [i for i in range(len(cands)) if i not in drop]
    at = {i: n for n, i in enumerate(rest)}
    apart = frozenset((min(at[i], at[j]), max(at[i], at[j])) for i, j in nested if i in at and j in at)
    return _dedupe([cands[i] for i in rest], 0.5, 0.0, apart=apart)


def _turn_between(a: np.ndarray, b: np.ndarray) -> float:
    """Angle in degrees between the long sides of two quads (0..90)."""
    def angle(q):
        q = order_corners(q)
        d = (q[3] - q[0]) + (q[2] - q[1])
        return np.degrees(np.arctan2(d[1], d[0])) % 180.0
    diff = abs(angle(a) - angle(b)) % 180.0
    return float(min(diff, 180.0 - diff))


def _refine(edges: np.ndarray, quads: np.ndarray, outward: np.ndarray, inward: int = 5) -> np.ndarray:
    """Snap each side of each quad (N, 4, 2) to the card's border nearby and intersect
    neighbouring sides; outward (N,) is how far out each quad's sides are probed.

    Along each side, edges are probed along the normal; the offset at which most probes find an
    edge is the border (the outermost of near-equals, as a card's printed frame runs just inside
    it; texture beside a card agrees at no single offset; a drop shadow's soft edge is weaker);
    a robust line through the edge points near that offset is the side, and
    neighbouring sides meet at the corners. All sides of all quads are probed at once."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    outward = np.broadcast_to(np.asarray(outward), (len(q),))
    if len(q) == 0:
        return q
    u, n = _outward_normals(q)
    offsets = np.arange(int(outward.max()), -inward - 1, -1, dtype=np.float32)         # (K,)
    x, y = _side_samples(q, 32)                                                        # (N, 4, S)
    # Probe points along the normal, x and y apart (each (N, 4, S, K)).
    px = x[..., None] + (offsets[None, None, :] * n[:, :, 0, None])[:, :, None, :]
    py = y[..., None] + (offsets[None, None, :] * n[:, :, 1, None])[:, :, None, :]
    h, w = edges.shape[:2]
    hit = edges[np.clip(np.rint(py).astype(np.int32), 0, h - 1),
                np.clip(np.rint(px).astype(np.int32), 0, w - 1)] > 0                   # (N, 4, S, K)
    hit &= (offsets[None, :] <= outward[:, None])[:, None, None, :]
    near = hit.copy()
    near[..., 1:] |= hit[..., :-1]
    near[..., :-1] |= hit[..., 1:]
    profile = near.mean(axis=2)                                                        # (N, 4, K)
    best = profile.max(axis=2)
    k = np.argmax(profile >= 0.9 * best[..., None], axis=2)
    window = np.abs(np.arange(len(offsets))[None, None, :] - k[..., None]) <= 2
    hit &= window[:, :, None, :]
    found = hit.any(axis=3)                                                            # (N, 4, S)
    # Too little evidence: the side stays as it is.
    fit = ~((best < 0.3) | (found.sum(axis=2) < 8))                                   # (N, 4)
    centre, direction = q.copy(), u.copy()
    if fit.any():
        first = hit[fit].argmax(axis=2)[..., None]                                     # (M, S, 1)
        on_edge = np.stack([np.take_along_axis(px[fit], first, axis=2)[..., 0],
                            np.take_along_axis(py[fit], first, axis=2)[..., 0]], axis=2)  # (M, S, 2)
        lines = _fit_lines(on_edge, found[fit])                                        # vx vy x0 y0
        centre[fit], direction[fit] = lines[:, 2:], lines[:, :2]
    # Corner i is where side i-1 meets side i: p1 + s d1 = p2 + t d2.
    p1, d1 = centre[:, [3, 0, 1, 2]], direction[:, [3, 0, 1, 2]]
    p2, d2 = centre, direction
    det = d2[..., 0] * d1[..., 1] - d1[..., 0] * d2[..., 1]
    r = p2 - p1
    with np.errstate(divide="ignore", invalid="ignore"):
        s1 = (d2[..., 0] * r[..., 1] - r[..., 0] * d2[..., 1]) / det
    out = p1 + s1[..., None] * d1
    # Parallel neighbours, or a refinement that moves a corner far (it latched onto something
    # else): keep the rough quad.
    area = _areas(q).astype(np.float32)
    moved = np.sqrt(((out - q) ** 2).sum(axis=2)).max(axis=1)
    bad = np.any(np.abs(det) < 1e-6, axis=1) | ~(moved <= 0.1 * np.sqrt(area))
    out[bad] = q[bad]
    return out.astype(np.float32)


# A robust line (_fit_lines): least absolute distances, by this many reweighted fits from the plain
# one, a distance counting at least LINE_FIT_FLOOR pixels in a weight.
LINE_FIT_ROUNDS = 6
LINE_FIT_FLOOR = 0.1


def _fit_lines(points: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(M, 4) lines vx vy x0 y0 through each row of points (M, S, 2) where valid (M, S), every row
    at once: the line of least summed distance (iteratively reweighted least squares from the
    plain fit, the best of the rounds kept), which runs through the points most agree on where
    a printed frame or a shadow beside the border draws a second line.
    (cv2.fitLine, one call per row, took nearly half of the refinement's time: it starts over
    from 20 random subsets and keeps the line of least summed distance, which this seeks directly.)"""
    x = points[..., 0].astype(np.float64)
    y = points[..., 1].astype(np.float64)
    valid = valid.astype(np.float64)
    weight = valid
    best, least = np.zeros((len(x), 4)), np.full(len(x), np.inf)
    for _ in range(LINE_FIT_ROUNDS):
        total = np.maximum(weight.sum(axis=1), 1e-12)
        mx, my = (weight * x).sum(axis=1) / total, (weight * y).sum(axis=1) / total
        dx, dy = x - mx[:, None], y - my[:, None]
        wdx = weight * dx
        # The direction of least spread: the principal axis of the weighted points.
        angle = 0.5 * np.arctan2(2.0 * (wdx * dy).sum(axis=1), (wdx * dx).sum(axis=1) - (weight * dy * dy).sum(axis=1))
        vx, vy = np.cos(angle), np.sin(angle)
        distance = np.abs(dx * vy[:, None] - dy * vx[:, None])
        summed = (distance * valid).sum(axis=1)
        better = summed < least
        best[better], least[better] = np.stack([vx, vy, mx, my], axis=1)[better], summed[better]
        weight = valid / np.maximum(distance, LINE_FIT_FLOOR)
    return best.astype(np.float32)
