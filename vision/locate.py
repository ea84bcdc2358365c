"""Find card quads in a frame, on any table surface.

Several independent cues propose outlines, and one geometric check judges them all:
- regions: mean-adaptive thresholds of the luminance and both colour channels, both polarities
  (a card is lighter, darker or just differently coloured than the table around it, under
  uneven light), and colour distance from a background model learnt on the frame border
  (several clusters, so wood grain and patterned cloth count as background);
- edges: Canny on the luminance and colour channels, closed, every contour (not only outer
  ones) tried, so touching and overlapping cards each keep their own outline.
Each contour's convex hull is reduced to a quadrilateral (polygon approximation, else the
minimum-area rectangle); a candidate is kept when its area, aspect ratio (a card is 63 x 88 mm),
corner angles and edge support (the share of its outline lying on image edges) fit a card.
Overlapping duplicates are merged and quads nested in a bigger card (a card's printed inner
frame) are dropped. The survivors' corners are refined by fitting a line to the edge pixels
along each side and intersecting neighbouring lines, which also puts the corner of a
rounded-corner card where the straight sides meet, as the warp expects.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import CARD_ASPECT, order_corners, quad_area, quad_iou

# Frames are located at this long-side size at most (quads are scaled back to the input).
WORK_LONG_SIDE = 640
# At most this many proposals (best edge support first) are refined and judged per frame.
MAX_PROPOSALS = 24
# A change region fitting a card-shaped quad at least this well (IoU) is taken as that card.
MASK_FIT = 0.88
# With a change mask, quads holding less than this share of change are not tried.
MIN_MASK_SHARE = 0.02
# A lined-up quad inside a card holding at least this share of its area is its printed frame.
FRAME_AREA_SHARE = 0.55
# A quad inside a card holding less than this share of its area is a part of its picture.
PICTURE_AREA_SHARE = 0.3


@dataclass
class Candidate:
    quad: np.ndarray       # float32 (4, 2), ordered, in input-image pixels
    score: float           # 0..1: share of the outline on edges x share with colour contrast across


def find_cards(frame_bgr: np.ndarray, *, min_area_frac: float = 0.01, max_area_frac: float = 0.6,
               min_support: float = 0.5, min_score: float = 0.6,
               extra_mask: np.ndarray | None = None) -> list[np.ndarray]:
    """Quads (float32 (4, 2), TL TR BR BL, long side vertical) of the cards seen in the frame.

    min_area_frac / max_area_frac bound a card's area as a share of the frame; min_support is
    the share of a card's outline that must lie on image edges (fingers over a card lower it);
    min_score also asks the colour to differ across the outline (support x contrast share).
    extra_mask (uint8, frame size, optional) marks where something new is, e.g. the change
    against the table as it was: its regions are outlines to try too, and a quad's score is
    scaled by the share of it lying in the mask, so the new card beats table texture around it;
    a mask region that is itself card-shaped is a card even where its border is faint."""
    return [c.quad for c in locate_candidates(frame_bgr, min_area_frac=min_area_frac,
                                              max_area_frac=max_area_frac, min_support=min_support,
                                              min_score=min_score, extra_mask=extra_mask)]


def locate_candidates(frame_bgr: np.ndarray, *, min_area_frac: float = 0.01,
                      max_area_frac: float = 0.6, min_support: float = 0.5, min_score: float = 0.6,
                      extra_mask: np.ndarray | None = None) -> list[Candidate]:
    """find_cards with each quad's score."""
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
    edges = _edge_map(ycc)
    support_map = cv2.dilate(edges, np.ones((5, 5), np.uint8))

    # Outlines are proposed on a half-size image (cheap), judged and refined at work size.
    # (Of even sides: OpenCV's area resize has a fast path for exact halving, ~10x faster.)
    half = cv2.resize(ycc[:h - h % 2, :w - w % 2], (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    proposals = [hull * 2 for _, hull in _region_contours(half, min_area / 4)]
    proposals += [hull for _, hull in _contours(cv2.morphologyEx(edges, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)),
                                                cv2.RETR_LIST, min_area)]
    mask = None
    fitted: list[Candidate] = []
    if extra_mask is not None:
        mask = extra_mask if scale == 1.0 else cv2.resize(extra_mask, (w, h), interpolation=cv2.INTER_NEAREST)
        for contour, hull in _contours(mask, cv2.RETR_EXTERNAL, min_area):
            proposals.append(hull)
            # A change that is itself card-shaped is a card even where its border is faint
            # (a pale card on a pale cloth): the quad is judged by how well it fits the change.
            region = np.zeros_like(mask)
            cv2.drawContours(region, [contour], -1, 255, cv2.FILLED)
            for quad in _quads_from_hull(hull):
                if min_area <= quad_area(quad) <= max_area and _card_shaped(quad):
                    fit = _mask_iou(region, quad)
                    if fit >= MASK_FIT:
                        fitted.append(Candidate(quad, fit))

    rough_quads = [quad for hull in proposals for quad in _quads_from_hull(hull)
                   if min_area <= quad_area(quad) <= max_area]
    if rough_quads:
        rough_quads = [q for q, ok in zip(rough_quads, _card_shaped(np.stack(rough_quads))) if ok]
    if mask is not None and rough_quads:    # a quad holding none of the change is not what is asked about
        rough_quads = [q for q, share in zip(rough_quads, _shares(mask, np.stack(rough_quads)))
                       if share >= MIN_MASK_SHARE]
    found: list[Candidate] = []
    if rough_quads:
        support = _edge_support(support_map, np.stack(rough_quads))
        rough = [Candidate(q, float(s)) for q, s in zip(rough_quads, support)]
        kept = _dedupe(rough, 0.97, 0.25)[:MAX_PROPOSALS]
        if kept:
            picked = np.stack([c.quad for c in kept])
            short = np.sqrt(np.array([quad_area(q) for q in picked]) / CARD_ASPECT)
            # The band reaches a little outwards: a card touching another is often first seen by its frame.
            refined = _refine(edges, picked, outward=np.maximum(5, np.round(0.08 * short)).astype(np.int32))
            refined = refined[_card_shaped(refined)]
            support = _edge_support(support_map, refined)
            refined, support = refined[support >= min_support], support[support >= min_support]
            scores = support * _border_contrast(ycc, refined)
            refined, scores = refined[scores >= min_score], scores[scores >= min_score]
            if mask is not None and len(refined):    # rank by how much of the quad is the new thing
                scores = scores * _shares(mask, refined)
            found += [Candidate(quad, float(score)) for quad, score in zip(refined, scores)]
    # A change fitted as a card only counts where no card was found by its edges: a card that
    # moved a little leaves a card-shaped change too (old and new place together).
    found += [f for f in fitted if all(quad_iou(f.quad, c.quad) < 0.3 for c in found)]
    result = []
    for c in _suppress(found):
        quad = c.quad / scale if scale != 1.0 else c.quad
        result.append(Candidate(order_corners(quad), c.score))
    return result


def _edge_map(ycc: np.ndarray) -> np.ndarray:
    """Canny edges of whichever channel (luminance or chroma) changes most at each pixel: a
    cream card on light wood differs more in colour than in brightness. Thresholds follow the
    frame's own gradient statistics, so dim and bright scenes work alike."""
    gx = gy = mag = None
    for channel, gain in zip(cv2.split(ycc), (1, 2, 2)):     # chroma differences are smaller: weigh them up
        cx = cv2.Sobel(channel, cv2.CV_16S, 1, 0, scale=gain)
        cy = cv2.Sobel(channel, cv2.CV_16S, 0, 1, scale=gain)
        m = np.abs(cx) + np.abs(cy)
        if mag is None:
            gx, gy, mag = cx, cy, m
        else:       # in OpenCV, in place: these full-size arrays are most of the cost
            take = cv2.compare(m, mag, cv2.CMP_GT)
            cv2.copyTo(cx, take, gx)
            cv2.copyTo(cy, take, gy)
            mag = cv2.max(m, mag)
    high = max(float(np.percentile(mag[::4, ::4], 90)), 24.0)
    return cv2.Canny(gx, gy, high / 2.0, high)


def _region_contours(ycc: np.ndarray, min_area: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Outlines of regions lighter or darker (in luminance or in colour) than their surroundings.

    A mean-adaptive threshold per channel and polarity follows uneven light; one of the six
    maps nearly always holds a card as its own region, on light and dark tables alike. Plus
    regions far in colour from every background cluster learnt on the frame border."""
    block = _odd(min(ycc.shape[:2]) // 4)
    found = []
    for channel, offset in ((0, 5.0), (1, 2.5), (2, 2.5)):
        img = ycc[:, :, channel]
        for mode, c in ((cv2.THRESH_BINARY, -offset), (cv2.THRESH_BINARY_INV, offset)):
            binary = cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, mode, block, c)
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
    ranks = np.argsort(np.argsort(border[:, 0], kind="stable"), kind="stable")
    labels = (ranks * 3 // len(border)).astype(np.int32).reshape(-1, 1)
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
    for c in contours:
        if len(c) < shortest:
            continue
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


def _card_shaped(quads: np.ndarray):
    """Convex, a card's aspect ratio (give or take perspective), corners near right angles.
    Quads here are in cyclic order (from a convex hull, a rectangle fit or a refinement).
    One quad (4, 2) -> bool; a stack (N, 4, 2) -> bool array (N,)."""
    q = np.asarray(quads, np.float32)
    one = q.ndim == 2
    q = q.reshape(-1, 4, 2)
    v_next = q[:, [1, 2, 3, 0]] - q            # side i runs from corner i to corner i+1
    v_prev = q[:, [3, 0, 1, 2]] - q
    cross = v_prev[..., 0] * v_next[..., 1] - v_prev[..., 1] * v_next[..., 0]
    ok = np.all(cross > 0, axis=1) | np.all(cross < 0, axis=1)
    sides = np.sqrt((v_next * v_next).sum(axis=2))
    ok &= sides.min(axis=1) >= 1.0
    a, b = sides[:, 0] + sides[:, 2], sides[:, 1] + sides[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        aspect = np.maximum(a, b) / np.minimum(a, b)
        cos = (v_prev * v_next).sum(axis=2) / (sides[:, [3, 0, 1, 2]] * sides)
    ok &= (aspect >= CARD_ASPECT / 1.25) & (aspect <= CARD_ASPECT * 1.25)
    ok &= np.all(np.abs(cos) <= 0.35, axis=1)   # corner angles within about 70..110 degrees
    return bool(ok[0]) if one else ok


_STEPS = {n: np.linspace(0.12, 0.88, n, dtype=np.float32) for n in (24, 32)}


def _side_samples(quads: np.ndarray, per_side: int = 24) -> np.ndarray:
    """(N, 4, S, 2) points along each side of each quad, leaving out the rounded corner ends
    (quads (N, 4, 2) in cyclic order)."""
    d = quads[:, [1, 2, 3, 0]] - quads
    return quads[:, :, None, :] + d[:, :, None, :] * _STEPS[per_side][None, None, :, None]


def _sample(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """image at the nearest pixel of each point (clipped to the image)."""
    h, w = image.shape[:2]
    xi = np.clip(np.rint(pts[..., 0]).astype(np.int32), 0, w - 1)
    yi = np.clip(np.rint(pts[..., 1]).astype(np.int32), 0, h - 1)
    return image[yi, xi]


def _edge_support(support_map: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Share of each quad's outline (N, 4, 2) lying on edges; points off the image count as none."""
    h, w = support_map.shape
    if len(quads) == 0:
        return np.zeros(0, np.float32)
    pts = _side_samples(np.asarray(quads, np.float32)).reshape(len(quads), -1, 2)
    x, y = np.rint(pts[..., 0]), np.rint(pts[..., 1])
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    return ((_sample(support_map, pts) > 0) & inside).mean(axis=1)


def _mask_iou(region: np.ndarray, quad: np.ndarray) -> float:
    """Intersection over union of a filled region and a quad."""
    poly = np.zeros_like(region)
    cv2.fillConvexPoly(poly, np.round(quad).astype(np.int32), 255)
    inter = cv2.countNonZero(cv2.bitwise_and(poly, region))
    union = cv2.countNonZero(cv2.bitwise_or(poly, region))
    return inter / union if union else 0.0


_GRID = np.linspace(1 / 32, 31 / 32, 16, dtype=np.float32)     # cell centres across a quad


def _shares(mask: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Share of each quad's (N, 4, 2, cyclic order) area where the mask is set, from a 16 x 16
    grid of points spread bilinearly over it: all quads at once, within ~2 % of counting pixels
    for a change made of blobs (as the change mask is)."""
    u, v = _GRID[None, :, None, None], _GRID[None, None, :, None]
    q = quads[:, None, None, :, :]
    pts = ((1 - u) * (1 - v) * q[..., 0, :] + u * (1 - v) * q[..., 1, :]
           + u * v * q[..., 2, :] + (1 - u) * v * q[..., 3, :])               # (N, 16, 16, 2)
    return (_sample(mask, pts) > 0).mean(axis=(1, 2))


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
    outside, lowered when the strip just inside does not keep one colour along each side.

    A true card border separates the card from the table all along, and the card's margin runs
    along it; a quad snapped onto table texture (a checkerboard's lines) has the same colour on
    both sides at many points and alternating colours inside."""
    q = np.asarray(quads, np.float32)
    if len(q) == 0:
        return np.zeros(0, np.float32)
    pts = _side_samples(q)
    _, n = _outward_normals(q)
    inner = _sample(ycc, pts - step * n[:, :, None, :]).astype(np.float32)     # (N, 4, S, 3)
    outer = _sample(ycc, pts + step * n[:, :, None, :]).astype(np.float32)
    diff = np.sqrt(((inner - outer) ** 2).sum(axis=3))
    contrast = (diff > 12.0).mean(axis=(1, 2))
    # A card's margin keeps one colour along each side; squares of a checked cloth alternate.
    # Chroma is weighed up: light falls off along a side, a card's colour does not.
    sides = inner * np.array([0.5, 2.0, 2.0], np.float32)
    spread = np.abs(sides - np.median(sides, axis=2, keepdims=True)).sum(axis=3)
    uniform = (spread < 30.0).mean(axis=(1, 2))
    return contrast * np.minimum(1.0, uniform / 0.75)


def _dedupe(cands: list[Candidate], iou: float, min_support: float) -> list[Candidate]:
    """Best-supported of each group of near-identical quads; of equally supported ones the
    larger, which is the card's border rather than its printed frame."""
    areas = [quad_area(c.quad) for c in cands]
    order = sorted(range(len(cands)), key=lambda i: (round(cands[i].score, 1), areas[i]), reverse=True)
    kept: list[Candidate] = []
    boxes = np.zeros((len(cands), 4), np.float32)     # of the kept quads: x0 y0 x1 y1
    kept_areas = np.zeros(len(cands), np.float32)
    for i in order:
        c, area = cands[i], areas[i]
        if c.score < min_support:
            continue
        box = np.concatenate([c.quad.min(axis=0), c.quad.max(axis=0)])
        n = len(kept)
        # Cheap bounds first: IoU <= (bounding boxes' overlap) / (the larger area), and
        # IoU <= (the smaller area) / (the larger area).
        larger = np.maximum(kept_areas[:n], area)
        overlap = (np.clip(np.minimum(boxes[:n, 2], box[2]) - np.maximum(boxes[:n, 0], box[0]), 0, None)
                   * np.clip(np.minimum(boxes[:n, 3], box[3]) - np.maximum(boxes[:n, 1], box[1]), 0, None))
        close = np.nonzero((overlap > iou * larger) & (np.minimum(kept_areas[:n], area) > iou * larger))[0]
        if all(quad_iou(c.quad, kept[k].quad) <= iou for k in close):
            boxes[n], kept_areas[n] = box, area
            kept.append(c)
    return kept


def _inside(inner: Candidate, outer: Candidate) -> bool:
    inter, _ = cv2.intersectConvexConvex(inner.quad, outer.quad)
    return inter > 0.8 * quad_area(inner.quad)


def _suppress(cands: list[Candidate]) -> list[Candidate]:
    """One quad per card.

    A quad inside a bigger, about as well supported one goes when it is that card's printed frame
    (lined up, most of its area) or a small part of its picture. Between those, both stay:
    either may be the card (a card inside squares of a gingham cloth, or half a card's picture
    inside the card), and the classifier's "no card" settles it. Of quads overlapping
    otherwise, the better supported stays."""
    cands = _dedupe(cands, 0.9, 0.0)
    drop = set()
    for i, inner in enumerate(cands):
        for outer in cands:
            if (outer is inner or quad_area(outer.quad) <= quad_area(inner.quad)
                    or outer.score < inner.score - 0.1 or not _inside(inner, outer)):
                continue
            share = quad_area(inner.quad) / quad_area(outer.quad)
            if share < PICTURE_AREA_SHARE or (share >= FRAME_AREA_SHARE
                                              and _turn_between(inner.quad, outer.quad) < 10.0):
                drop.add(i)
                break
    return _dedupe([c for i, c in enumerate(cands) if i not in drop], 0.5, 0.0)


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
    pts = _side_samples(q, 32)                                                         # (N, 4, S, 2)
    probe = pts[:, :, :, None, :] + offsets[None, None, None, :, None] * n[:, :, None, None, :]
    hit = _sample(edges, probe) > 0                                                    # (N, 4, S, K)
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
    first = hit.argmax(axis=3)
    on_edge = np.take_along_axis(probe, first[..., None, None], axis=3)[:, :, :, 0, :]  # (N, 4, S, 2)
    # Too little evidence: the side stays as it is.
    keep = (best < 0.3) | (found.sum(axis=2) < 8)
    centre, direction = q.copy(), u.copy()
    for i, j in zip(*np.nonzero(~keep)):
        vx, vy, x0, y0 = cv2.fitLine(on_edge[i, j][found[i, j]], cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        centre[i, j], direction[i, j] = (x0, y0), (vx, vy)
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
    area = np.abs(np.array([cv2.contourArea(x) for x in q], np.float32))
    moved = np.sqrt(((out - q) ** 2).sum(axis=2)).max(axis=1)
    bad = np.any(np.abs(det) < 1e-6, axis=1) | ~(moved <= 0.1 * np.sqrt(area))
    out[bad] = q[bad]
    return out.astype(np.float32)
