"""The locator's faster formulations give the very values of the plain ones they replaced
(OpenCV / numpy calls as first written), so what is detected does not change."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision import locate as L


def _smooth_image(rng, shape, channels=None) -> np.ndarray:
    size = shape if channels is None else (*shape, channels)
    img = rng.integers(0, 256, size, dtype=np.uint8)
    return cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.6, 4.0)))


def _edge_map_plain(ycc: np.ndarray) -> np.ndarray:
    """The edge map as first written: cv2.Sobel per channel, chroma weighed x2 by Sobel's scale."""
    gx = gy = mag = None
    for channel, gain in zip(cv2.split(ycc), (1, 2, 2)):
        cx = cv2.Sobel(channel, cv2.CV_16S, 1, 0, scale=gain)
        cy = cv2.Sobel(channel, cv2.CV_16S, 0, 1, scale=gain)
        m = np.abs(cx) + np.abs(cy)
        if mag is None:
            gx, gy, mag = cx, cy, m
        else:
            take = cv2.compare(m, mag, cv2.CMP_GT)
            cv2.copyTo(cx, take, gx)
            cv2.copyTo(cy, take, gy)
            mag = cv2.max(m, mag)
    high = max(float(np.percentile(mag[::4, ::4], 90)), 24.0)
    return cv2.Canny(gx, gy, high / 2.0, high)


def test_edge_map_matches_sobel_per_channel():
    rng = np.random.default_rng(0)
    for _ in range(12):
        shape = (int(rng.integers(40, 300)), int(rng.integers(40, 300)))
        ycc = cv2.cvtColor(_smooth_image(rng, shape, 3), cv2.COLOR_BGR2YCrCb)
        assert np.array_equal(L._canny(L._gradients(ycc)), _edge_map_plain(ycc))


def test_percentile90_matches_numpy():
    rng = np.random.default_rng(1)
    for _ in range(500):
        values = rng.integers(0, int(rng.integers(1, 4080)), int(rng.integers(1, 3000))).astype(np.int16)
        assert L._percentile90(values) == float(np.percentile(values, 90))


def test_shared_mean_thresholds_match_adaptive_threshold():
    """_region_contours' maps: one box filter for both polarities, as cv2.adaptiveThreshold makes them."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        img = _smooth_image(rng, (int(rng.integers(20, 250)), int(rng.integers(20, 330))))
        block = L._odd(min(img.shape) // 4)
        for offset in (5.0, 2.5):
            mean = cv2.boxFilter(img, -1, (block, block), normalize=True,
                                 borderType=cv2.BORDER_REPLICATE | cv2.BORDER_ISOLATED)
            diff = cv2.subtract(img, mean, dtype=cv2.CV_16S)
            lighter = cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, -offset)
            darker = cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block, offset)
            assert np.array_equal(cv2.compare(diff, -math.ceil(-offset), cv2.CMP_GT), lighter)
            assert np.array_equal(cv2.compare(diff, -math.floor(offset), cv2.CMP_LE), darker)


def _quads(rng, n) -> np.ndarray:
    """Card-like quads (some not: skewed, flipped, tiny) in cyclic order, float32."""
    out = []
    for _ in range(n):
        c, size, a = rng.uniform(0, 300, 2), rng.uniform(2, 200), rng.uniform(0, np.pi)
        base = np.array([[-1, -1.4], [1, -1.4], [1, 1.4], [-1, 1.4]]) * size / 2
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        q = base @ rot.T + c + rng.normal(0, rng.choice([0.0, 0.5, 5.0, 30.0]), (4, 2))
        out.append(q[::-1] if rng.random() < 0.3 else q)
    return np.array(out, np.float32)


def test_areas_match_contour_area():
    rng = np.random.default_rng(3)
    quads = np.concatenate([_quads(rng, 300), np.round(_quads(rng, 100))])
    assert np.array_equal(L._areas(quads), np.array([abs(cv2.contourArea(q)) for q in quads]))


def _card_shaped_plain(quads: np.ndarray) -> np.ndarray:
    q = quads
    v_next = q[:, [1, 2, 3, 0]] - q
    v_prev = q[:, [3, 0, 1, 2]] - q
    cross = v_prev[..., 0] * v_next[..., 1] - v_prev[..., 1] * v_next[..., 0]
    ok = np.all(cross > 0, axis=1) | np.all(cross < 0, axis=1)
    sides = np.sqrt((v_next * v_next).sum(axis=2))
    ok &= sides.min(axis=1) >= 1.0
    a, b = sides[:, 0] + sides[:, 2], sides[:, 1] + sides[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        aspect = np.maximum(a, b) / np.minimum(a, b)
        cos = (v_prev * v_next).sum(axis=2) / (sides[:, [3, 0, 1, 2]] * sides)
    ok &= (aspect >= L.CARD_ASPECT / 1.25) & (aspect <= L.CARD_ASPECT * 1.25)
    ok &= np.all(np.abs(cos) <= 0.35, axis=1)
    return ok


def test_card_shaped_matches_plain_formula():
    rng = np.random.default_rng(4)
    quads = _quads(rng, 2000)
    plain = _card_shaped_plain(quads)
    assert plain.any() and not plain.all()
    assert np.array_equal(L.card_shaped(quads), plain)
    assert [L.card_shaped(q) for q in quads[:50]] == plain[:50].tolist()


def _sample_plain(image, pts):
    h, w = image.shape[:2]
    xi = np.clip(np.rint(pts[..., 0]).astype(np.int32), 0, w - 1)
    yi = np.clip(np.rint(pts[..., 1]).astype(np.int32), 0, h - 1)
    return image[yi, xi]


def test_sampling_with_coordinates_apart_matches_points():
    """Side samples, edge support, change shares and border contrast: the same as from (..., 2) points."""
    rng = np.random.default_rng(5)
    quads = _quads(rng, 60)
    image = (rng.random((320, 330)) > 0.7).astype(np.uint8) * 255
    ycc = rng.integers(0, 256, (320, 330, 3), dtype=np.uint8)
    steps = L._STEPS[24][None, None, :, None]
    d = quads[:, [1, 2, 3, 0]] - quads
    pts = quads[:, :, None, :] + d[:, :, None, :] * steps                             # (N, 4, S, 2)
    x, y = L._side_samples(quads)
    assert np.array_equal(x, pts[..., 0]) and np.array_equal(y, pts[..., 1])

    flat = pts.reshape(len(quads), -1, 2)
    xr, yr = np.rint(flat[..., 0]), np.rint(flat[..., 1])
    inside = (xr >= 0) & (xr < 330) & (yr >= 0) & (yr < 320)
    support = ((_sample_plain(image, flat) > 0) & inside).mean(axis=1)
    assert np.array_equal(L._edge_support(image, quads), support)

    u, v = L._GRID[None, :, None, None], L._GRID[None, None, :, None]
    q = quads[:, None, None, :, :]
    grid = ((1 - u) * (1 - v) * q[..., 0, :] + u * (1 - v) * q[..., 1, :]
            + u * v * q[..., 2, :] + (1 - u) * v * q[..., 3, :])
    assert np.array_equal(L._shares(image, quads), (_sample_plain(image, grid) > 0).mean(axis=(1, 2)))

    _, n = L._outward_normals(quads)
    inner = _sample_plain(ycc, pts - 3.0 * n[:, :, None, :]).astype(np.float32)
    outer = _sample_plain(ycc, pts + 3.0 * n[:, :, None, :]).astype(np.float32)
    contrast = (np.sqrt(((inner - outer) ** 2).sum(axis=3)) > 12.0).mean(axis=(1, 2))
    weights = np.array([0.5, 2.0, 2.0], np.float32)

    def along_sides(strip):
        return (np.abs(strip - np.median(strip, axis=2, keepdims=True)).sum(axis=3) < 30.0).mean(axis=2)

    uniform = np.maximum(along_sides(inner * weights), along_sides(outer * weights)).mean(axis=1)
    assert np.array_equal(L._border_contrast(ycc, quads), contrast * np.minimum(1.0, uniform / 0.75))


@pytest.mark.parametrize("seed", range(3))
def test_median_even_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    a = (rng.integers(0, 255, (int(rng.integers(1, 30)), 4, 24, 3)) * rng.choice([0.5, 2.0])).astype(np.float32)
    a += rng.random(a.shape).astype(np.float32) * rng.choice([0.0, 50.0])
    assert np.array_equal(L._median_even(a, axis=2), np.median(a, axis=2, keepdims=True))


def _dedupe_plain(cands, iou, min_support):
    """_dedupe as first written: kept quads' boxes grown one by one."""
    areas = [L.quad_area(c.quad) for c in cands]
    order = sorted(range(len(cands)), key=lambda i: (round(cands[i].score, 1), areas[i]), reverse=True)
    kept = []
    boxes = np.zeros((len(cands), 4), np.float32)
    kept_areas = np.zeros(len(cands), np.float32)
    for i in order:
        c, area = cands[i], areas[i]
        if c.score < min_support:
            continue
        box = np.concatenate([c.quad.min(axis=0), c.quad.max(axis=0)])
        n = len(kept)
        larger = np.maximum(kept_areas[:n], area)
        overlap = (np.clip(np.minimum(boxes[:n, 2], box[2]) - np.maximum(boxes[:n, 0], box[0]), 0, None)
                   * np.clip(np.minimum(boxes[:n, 3], box[3]) - np.maximum(boxes[:n, 1], box[1]), 0, None))
        close = np.nonzero((overlap > iou * larger) & (np.minimum(kept_areas[:n], area) > iou * larger))[0]
        if all(L.quad_iou(c.quad, kept[k].quad) <= iou for k in close):
            boxes[n], kept_areas[n] = box, area
            kept.append(c)
    return kept


@pytest.mark.parametrize("iou", [0.97, 0.9, 0.5])
def test_dedupe_matches_plain(iou):
    rng = np.random.default_rng(6)
    for _ in range(20):
        base = _quads(rng, 6)
        quads = np.concatenate([base, base[rng.integers(0, 6, 30)]
                                + rng.normal(0, rng.choice([0.2, 2.0, 8.0]), (30, 4, 2)).astype(np.float32)])
        cands = [L.Candidate(q, float(s)) for q, s in zip(quads, rng.random(len(quads)))]
        plain = [id(c) for c in _dedupe_plain(cands, iou, 0.25)]
        assert [id(c) for c in L._dedupe(cands, iou, 0.25)] == plain
        assert [id(c) for c in L._dedupe(cands, iou, 0.25, most=3)] == plain[:3]    # cut short, the same


def _order_corners_plain(pts) -> np.ndarray:
    """geometry.order_corners as first written."""
    p = np.asarray(pts, dtype=np.float32).reshape(4, 2)
    centre = p.mean(axis=0)
    p = p[np.argsort(np.arctan2(p[:, 1] - centre[1], p[:, 0] - centre[0]))]
    d = p - p[[1, 2, 3, 0]]
    sides = np.sqrt((d * d).sum(axis=1))
    start = 1 if sides[0] + sides[2] > sides[1] + sides[3] else 0
    if p[start + 2].sum() < p[start].sum():
        start += 2
    return np.ascontiguousarray(p[[(start + i) % 4 for i in range(4)]], dtype=np.float32)


def test_order_corners_matches_plain():
    from vision.geometry import order_corners

    rng = np.random.default_rng(7)
    quads = list(_quads(rng, 3000)) + list(rng.random((1000, 4, 2)) * 640)
    quads += [np.round(q) for q in _quads(rng, 1000)]
    squares = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float32)     # ties between the side sums
    quads += [squares * s + c for s, c in zip(rng.uniform(1, 200, 500), rng.uniform(0, 640, (500, 2)))]
    for q in quads:
        q = np.asarray(q, np.float32)[rng.permutation(4)]
        got = order_corners(q)
        assert got.dtype == np.float32 and got.flags.c_contiguous
        assert np.array_equal(got, _order_corners_plain(q))
