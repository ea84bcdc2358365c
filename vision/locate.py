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
    half = cv2.resize(ycc, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    proposals = [c * 2 for c in _region_contours(half, min_area / 4)]
    proposals += _contours(cv2.morphologyEx(edges, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)),
                           cv2.RETR_LIST, min_area)
    mask = None
    fitted: list[Candidate] = []
    if extra_mask is not None:
        mask = extra_mask if scale == 1.0 else cv2.resize(extra_mask, (w, h), interpolation=cv2.INTER_NEAREST)
        for contour in _contours(mask, cv2.RETR_EXTERNAL, min_area):
            proposals.append(contour)
            # A change that is itself card-shaped is a card even where its border is faint
            # (a pale card on a pale cloth): the quad is judged by how well it fits the change.
            region = np.zeros_like(mask)
            cv2.drawContours(region, [contour], -1, 255, cv2.FILLED)
            for quad in _quads_from_contour(contour):
                if min_area <= quad_area(quad) <= max_area and _card_shaped(quad):
                    fit = _mask_iou(region, quad)
                    if fit >= MASK_FIT:
                        fitted.append(Candidate(quad, fit))

    rough: list[Candidate] = []
    for contour in proposals:
        for quad in _quads_from_contour(contour):
            area = quad_area(quad)
            if min_area <= area <= max_area and _card_shaped(quad):
                rough.append(Candidate(quad, _edge_support(support_map, quad)))
    found: list[Candidate] = []
    for c in _dedupe(rough, 0.97, 0.25)[:MAX_PROPOSALS]:
        short = float(np.sqrt(quad_area(c.quad) / CARD_ASPECT))
        # The band reaches a little outwards: a card touching another is often first seen by its frame.
        quad = _refine(edges, c.quad, outward=max(5, round(0.08 * short)))
        if _card_shaped(quad):
            support = _edge_support(support_map, quad)
            if support < min_support:
                continue
            score = support * _border_contrast(ycc, quad)
            if score >= min_score:
                if mask is not None:    # rank by how much of the quad is the new thing
                    score *= _share(mask, quad)
                found.append(Candidate(quad, score))
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
    for channel, gain in ((0, 1), (1, 2), (2, 2)):      # chroma differences are smaller: weigh them up
        img = ycc[:, :, channel]
        cx = cv2.Sobel(img, cv2.CV_16S, 1, 0, scale=gain)
        cy = cv2.Sobel(img, cv2.CV_16S, 0, 1, scale=gain)
        m = np.abs(cx) + np.abs(cy)
        if mag is None:
            gx, gy, mag = cx, cy, m
        else:
            take = m > mag
            gx = np.where(take, cx, gx)
            gy = np.where(take, cy, gy)
            mag = np.maximum(m, mag)
    high = max(float(np.percentile(mag[::4, ::4], 90)), 24.0)
    return cv2.Canny(gx, gy, high / 2.0, high)


def _region_contours(ycc: np.ndarray, min_area: float) -> list[np.ndarray]:
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


def _contours(binary: np.ndarray, mode: int, min_area: float) -> list[np.ndarray]:
    """Contours whose bounding rectangle could hold a card (cheap tests before any quad fitting)."""
    contours, _ = cv2.findContours(binary, mode, cv2.CHAIN_APPROX_SIMPLE)
    kept = []
    for c in contours:
        if len(c) < 4:
            continue
        _, _, bw, bh = cv2.boundingRect(c)
        if bw * bh < min_area:              # cheapest test first: most contours are small texture
            continue
        (_, _), (rw, rh), _ = cv2.minAreaRect(c)
        if rw * rh < min_area or max(rw, rh) > 2.2 * min(rw, rh):
            continue
        kept.append(c)
    return kept


def _quads_from_contour(contour: np.ndarray) -> list[np.ndarray]:
    hull = cv2.convexHull(contour)
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


def _card_shaped(quad: np.ndarray) -> bool:
    """Convex, a card's aspect ratio (give or take perspective), corners near right angles.
    Quads here are in cyclic order (from a convex hull, a rectangle fit or a refinement)."""
    q = quad.astype(np.float32)
    v_next = q[[1, 2, 3, 0]] - q            # side i runs from corner i to corner i+1
    v_prev = q[[3, 0, 1, 2]] - q
    cross = v_prev[:, 0] * v_next[:, 1] - v_prev[:, 1] * v_next[:, 0]
    if not (np.all(cross > 0) or np.all(cross < 0)):
        return False
    sides = np.sqrt((v_next * v_next).sum(axis=1))
    if sides.min() < 1.0:
        return False
    a, b = sides[0] + sides[2], sides[1] + sides[3]
    aspect = max(a, b) / min(a, b)
    if not (CARD_ASPECT / 1.25 <= aspect <= CARD_ASPECT * 1.25):
        return False
    cos = (v_prev * v_next).sum(axis=1) / (sides[[3, 0, 1, 2]] * sides)
    return bool(np.all(np.abs(cos) <= 0.35))   # corner angles within about 70..110 degrees


_STEPS = {n: np.linspace(0.12, 0.88, n, dtype=np.float32)[:, None] for n in (24, 32)}


def _side_samples(quad: np.ndarray, per_side: int = 24):
    """Points along each side, leaving out the rounded corner ends (quad in cyclic order)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    t = _STEPS[per_side]
    d = q[[1, 2, 3, 0]] - q
    return [q[i] + d[i] * t for i in range(4)]


def _edge_support(support_map: np.ndarray, quad: np.ndarray) -> float:
    h, w = support_map.shape
    pts = np.concatenate(_side_samples(quad)).round().astype(np.int32)
    inside = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
    hits = np.zeros(len(pts), bool)
    hits[inside] = support_map[pts[inside, 1], pts[inside, 0]] > 0
    return float(hits.mean())


def _mask_iou(region: np.ndarray, quad: np.ndarray) -> float:
    """Intersection over union of a filled region and a quad."""
    poly = np.zeros_like(region)
    cv2.fillConvexPoly(poly, np.round(quad).astype(np.int32), 255)
    inter = cv2.countNonZero(cv2.bitwise_and(poly, region))
    union = cv2.countNonZero(cv2.bitwise_or(poly, region))
    return inter / union if union else 0.0


def _share(mask: np.ndarray, quad: np.ndarray) -> float:
    """Share of the quad's area where the mask is set."""
    region = np.zeros_like(mask)
    cv2.fillConvexPoly(region, np.round(quad).astype(np.int32), 255)
    total = cv2.countNonZero(region)
    return cv2.countNonZero(cv2.bitwise_and(region, mask)) / total if total else 0.0


def _border_contrast(ycc: np.ndarray, quad: np.ndarray, step: float = 3.0) -> float:
    """Share of border points where the colour just inside differs from just outside, lowered
    when the strip just inside does not keep one colour along each side.

    A true card border separates the card from the table all along, and the card's margin runs
    along it; a quad snapped onto table texture (a checkerboard's lines) has the same colour on
    both sides at many points and alternating colours inside."""
    h, w = ycc.shape[:2]
    q = np.asarray(quad, np.float32).reshape(4, 2)
    centre = q.mean(axis=0)
    inside, outside = [], []
    for i, pts in enumerate(_side_samples(q)):
        a, b = q[i], q[(i + 1) % 4]
        u = (b - a) / max(float(np.linalg.norm(b - a)), 1e-6)
        n = np.array([-u[1], u[0]], np.float32)
        if np.dot(n, (a + b) / 2 - centre) < 0:
            n = -n
        inside.append(pts - step * n)
        outside.append(pts + step * n)

    def colours(pts):
        p = np.concatenate(pts)
        xi = np.clip(p[:, 0].round().astype(np.int32), 0, w - 1)
        yi = np.clip(p[:, 1].round().astype(np.int32), 0, h - 1)
        return ycc[yi, xi].astype(np.float32)

    inner = colours(inside)
    diff = np.linalg.norm(inner - colours(outside), axis=1)
    contrast = float((diff > 12.0).mean())
    # A card's margin keeps one colour along each side; squares of a checked cloth alternate.
    # Chroma is weighed up: light falls off along a side, a card's colour does not.
    sides = inner.reshape(4, -1, 3) * np.array([0.5, 2.0, 2.0], np.float32)
    spread = np.abs(sides - np.median(sides, axis=1, keepdims=True)).sum(axis=2)
    uniform = float((spread < 30.0).mean())
    return contrast * min(1.0, uniform / 0.75)


def _dedupe(cands: list[Candidate], iou: float, min_support: float) -> list[Candidate]:
    """Best-supported of each group of near-identical quads; of equally supported ones the
    larger, which is the card's border rather than its printed frame."""
    kept: list[Candidate] = []
    for c in sorted(cands, key=lambda c: (round(c.score, 1), quad_area(c.quad)), reverse=True):
        if c.score >= min_support and all(quad_iou(c.quad, k.quad) <= iou for k in kept):
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


def _refine(edges: np.ndarray, quad: np.ndarray, outward: int = 5, inward: int = 5) -> np.ndarray:
    """Snap each side to the card's border nearby and intersect neighbouring sides.

    Along each side, edges are probed along the normal; the offset at which most probes find an
    edge is the border (the outermost of near-equals, as a card's printed frame runs just inside
    it; texture beside a card agrees at no single offset; a drop shadow's soft edge is weaker);
    a robust line through the edge points near that offset is the side, and neighbouring sides
    meet at the corners. All four sides are probed at once."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    h, w = edges.shape
    d = q[[1, 2, 3, 0]] - q
    u = d / np.maximum(np.sqrt((d * d).sum(axis=1, keepdims=True)), 1e-6)
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    outside = ((q + d / 2 - q.mean(axis=0)) * n).sum(axis=1) < 0
    n[outside] *= -1                                            # normals point out of the card
    offsets = np.arange(outward, -inward - 1, -1, dtype=np.float32)
    pts = q[:, None, :] + d[:, None, :] * _STEPS[32][None]       # (4, S, 2)
    probe = pts[:, :, None, :] + offsets[None, None, :, None] * n[:, None, None, :]   # (4, S, K, 2)
    xi = np.clip(probe[..., 0].round().astype(np.int32), 0, w - 1)
    yi = np.clip(probe[..., 1].round().astype(np.int32), 0, h - 1)
    hit = edges[yi, xi] > 0
    near = hit.copy()
    near[:, :, 1:] |= hit[:, :, :-1]
    near[:, :, :-1] |= hit[:, :, 1:]
    profile = near.mean(axis=1)                                  # (4, K)
    best = profile.max(axis=1)
    k = np.argmax(profile >= 0.9 * best[:, None], axis=1)
    window = np.abs(np.arange(len(offsets))[None, :] - k[:, None]) <= 2
    hit &= window[:, None, :]
    found = hit.any(axis=2)
    first = hit.argmax(axis=2)
    lines = []
    for i in range(4):
        if best[i] < 0.3 or found[i].sum() < 8:
            lines.append((q[i], u[i]))               # too little evidence: keep the side as it is
            continue
        on_edge = probe[i, np.arange(probe.shape[1]), first[i]][found[i]]
        vx, vy, x0, y0 = cv2.fitLine(on_edge, cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float32), np.array([vx, vy], np.float32)))
    out = np.empty((4, 2), np.float32)
    for i in range(4):
        p1, d1 = lines[i - 1]
        p2, d2 = lines[i]
        m = np.array([d1, -d2], np.float32).T
        if abs(np.linalg.det(m)) < 1e-6:
            return q
        s = np.linalg.solve(m, p2 - p1)
        out[i] = p1 + s[0] * d1
    # A refinement that moves a corner far has latched onto something else: keep the rough quad.
    if np.max(np.linalg.norm(out - q, axis=1)) > 0.1 * np.sqrt(quad_area(q)):
        return q
    return out
