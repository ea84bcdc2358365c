"""Card geometry and the locator: corner order, the canonical warp, and quads found on light,
dark, wood, cloth and patterned tables at any rotation and with perspective tilt."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import pytest

from tests.vision_fixtures import card_face, card_quad, place, surface
from vision.geometry import CANON_H, CANON_W, intersection_area, order_corners, quad_iou, warp_card
from vision.locate import find_cards


def best_iou(truth, quads) -> float:
    return max((quad_iou(truth, q) for q in quads), default=0.0)


# ------------------------------------------------------------------ geometry

@pytest.mark.parametrize("angle", [0, 17, 90, 133, 180, 251, 359])
def test_order_corners_gives_short_top_side_clockwise_whatever_the_input_order(angle):
    quad = card_quad((300, 200), angle, 180)
    for perm in itertools.permutations(range(4)):
        q = order_corners(quad[list(perm)])
        sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
        assert sides[0] < sides[1] and sides[2] < sides[3]           # long side vertical
        (ax, ay), (bx, by) = q[1] - q[0], q[2] - q[1]
        assert ax * by - ay * bx > 0                                              # clockwise on screen (y down)
        np.testing.assert_allclose(q, order_corners(quad), atol=1e-4)  # one answer per quad


def test_overlap_of_two_outlines_ending_at_the_frame_edge_is_not_zero():
    # Two outlines of one UNO Flip card at the frame's left edge (deal video 9403, frame 10128):
    # one corner of the inner lies on the outer's edge, and cv2.intersectConvexConvex says 0.
    outer = np.float32([[-5.042438507080078, 179.6963348388672], [71.33692932128906, 63.11729431152344],
                        [231.3435821533203, 167.94923400878906], [154.96421813964844, 284.52825927734375]])
    inner = np.float32([[0.0, 183.0], [68.0, 72.0], [223.0, 168.0], [155.0, 275.0]])
    assert intersection_area(outer, inner) == pytest.approx(cv2.contourArea(inner), rel=1e-4)
    assert intersection_area(inner, outer) == pytest.approx(cv2.contourArea(inner), rel=1e-4)
    assert quad_iou(outer, inner) == pytest.approx(cv2.contourArea(inner) / cv2.contourArea(outer), rel=1e-3)


def test_the_clipping_behind_intersection_area_agrees_with_opencv_where_opencv_finds_an_overlap():
    # intersection_area takes OpenCV's figure when it is not 0, so its own clipping (used when
    # OpenCV says 0) is checked here against OpenCV where OpenCV is right.
    from vision.geometry import _clipped_area, _separated

    rng = np.random.default_rng(0)
    box = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) / 2
    for _ in range(500):
        quads = []
        for centre in (rng.uniform(0, 300, 2),) * 2:
            turn = rng.uniform(0, np.pi)
            rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
            quads.append((box * rng.uniform(20, 150, 2) @ rot.T + centre + rng.normal(0, 60, 2)).astype(np.float32))
        want = cv2.intersectConvexConvex(*quads)[0]
        a, b = (q.astype(np.float64) for q in quads)
        if want > 0:
            assert intersection_area(*quads) == pytest.approx(want, rel=1e-4)
            assert not _separated(a, b)
            assert _clipped_area(a, b) == pytest.approx(want, rel=1e-4, abs=1e-3)
            assert _clipped_area(b, a) == pytest.approx(want, rel=1e-4, abs=1e-3)


def test_warp_card_gives_the_face_as_a_portrait_crop_either_way_up():
    rng = np.random.default_rng(0)
    frame = surface(rng, "dark")
    face = card_face(rng, "5", (40, 60, 200))
    quad = card_quad((320, 240), 63, 190)
    place(frame, face, quad)
    crop = warp_card(frame, quad)
    assert crop.shape == (CANON_H, CANON_W, 3) and crop.dtype == np.uint8
    ref = cv2.resize(face[:, :, :3], (CANON_W, CANON_H), interpolation=cv2.INTER_AREA).astype(np.float32)
    got = crop.astype(np.float32)
    # order_corners picks one of the two upright/upside-down orders: either must match the face.
    err = min(np.abs(got - ref).mean(), np.abs(got[::-1, ::-1] - ref).mean())
    assert err < 12


# ------------------------------------------------------------------ locator on controlled scenes

@pytest.mark.parametrize("kind", ["light", "dark", "wood", "cloth", "checker"])
@pytest.mark.parametrize("angle,tilt", [(0, 0.0), (37, 0.05), (90, 0.0), (152, 0.08), (233, 0.03), (305, 0.06)])
def test_one_card_is_found_on_any_surface_at_any_rotation(kind, angle, tilt):
    rng = np.random.default_rng(angle)
    frame = surface(rng, kind)
    quad = card_quad((320 + rng.uniform(-60, 60), 240 + rng.uniform(-40, 40)), angle, rng.uniform(150, 220), tilt)
    place(frame, card_face(rng, "8", (30, 120, 40)), quad)
    quads = find_cards(frame)
    assert best_iou(quad, quads) >= 0.9
    if kind != "checker":   # squares of a checkerboard are card-shaped: the classifier rejects them
        assert len(quads) == 1, "texture or the card's printed frame was taken for a card"


@pytest.mark.parametrize("kind", [
    pytest.param("light", marks=pytest.mark.xfail(strict=True, reason="known limit: a cream card on the "
                                                  "near-white end of the table is found by its printed frame")),
    "dark", "wood"])
def test_cards_lying_apart_are_each_found_once(kind):
    rng = np.random.default_rng(11)
    frame = surface(rng, kind)
    truths = [card_quad((130, 220), 10, 170), card_quad((330, 260), -25, 170), card_quad((520, 230), 95, 170)]
    for q, colour in zip(truths, [(40, 40, 210), (40, 160, 40), (200, 90, 30)]):
        place(frame, card_face(rng, "3", colour), q)
    quads = find_cards(frame)
    assert len(quads) == 3
    assert all(best_iou(t, quads) >= 0.9 for t in truths)


@pytest.mark.parametrize("kind", ["light", "dark", "wood", "cloth"])
def test_an_empty_table_has_no_cards(kind):
    assert find_cards(surface(np.random.default_rng(5), kind)) == []


def test_a_card_on_top_of_another_is_found_whole():
    rng = np.random.default_rng(2)
    frame = surface(rng, "wood")
    below = card_quad((300, 240), 20, 190)
    above = card_quad((350, 260), 65, 190)
    place(frame, card_face(rng, "4", (200, 90, 30)), below)
    place(frame, card_face(rng, "9", (40, 40, 210)), above)
    assert best_iou(above, find_cards(frame)) >= 0.9


def test_a_large_photo_is_located_at_its_own_scale():
    rng = np.random.default_rng(3)
    frame = surface(rng, "light", size=(2000, 1500))
    quad = card_quad((900, 700), 28, 640, 0.03)
    place(frame, card_face(rng, "12", (90, 60, 60)), quad)
    assert best_iou(quad, find_cards(frame)) >= 0.9


def test_locator_refuses_a_grey_image():
    with pytest.raises(ValueError):
        find_cards(np.zeros((100, 100), np.uint8))


# ------------------------------------------------------------------ locator on the synthesiser's scenes

def test_locator_on_synthetic_table_scenes_with_all_the_nuisances():
    """Shadows, glare, fingers over a card, a card underneath, blur, noise, held-out surfaces."""
    from rules.cards import DECKS
    from vision.synth.scenes import make_scene

    rng = np.random.default_rng(2024)
    labels = DECKS["flip7"].labels
    found = total = 0
    for i in range(24):
        chosen = [labels[j] for j in rng.integers(0, len(labels), 1 + i % 3)]
        frame, truth = make_scene(rng, chosen, split="heldout" if i % 2 else "train")
        quads = find_cards(frame)
        for card in truth:
            total += 1
            found += best_iou(card.quad, quads) >= 0.85
    # Measured 0.71 on this set (0.88 on 100 other scenes); the misses are a card on a card of
    # the same colour, a card on a table of its own colour, and a hand over most of a card.
    assert found / total >= 0.7, f"{found} of {total} cards located"


@pytest.mark.parametrize("angle", [0, 23, 71])
def test_the_share_of_change_in_a_quad_is_measured_within_two_percent(angle):
    """The sampled share (all quads at once) agrees with counting the pixels of the quad."""
    from vision.locate import _shares

    rng = np.random.default_rng(angle)
    mask = np.zeros((480, 640), np.uint8)
    mask[:, 300:] = 255                                   # the right part of the frame changed
    for _ in range(30):                                   # and blobs of change and of none
        centre = (int(rng.integers(0, 640)), int(rng.integers(0, 480)))
        cv2.circle(mask, centre, int(rng.integers(5, 40)), int(rng.choice([0, 255])), -1)
    quads = np.stack([card_quad((cx, 240), angle, 200) for cx in (200, 300, 330, 450)])
    for quad, share in zip(quads, _shares(mask, quads)):
        region = np.zeros_like(mask)
        cv2.fillConvexPoly(region, np.round(quad).astype(np.int32), 255)
        counted = cv2.countNonZero(region & mask) / cv2.countNonZero(region)
        assert abs(share - counted) < 0.02, (share, counted)


def test_a_card_overlapping_another_is_found_on_the_straight_stretches_of_their_outline():
    """Vengeance deal video 9303, frame 5626: a discard lies across a dark `2` on a light dotted
    cloth. Every region and edge loop holding the discard runs round both cards, and no card
    fits that outline; the discard's own straight sides on it propose it (it was not found,
    then forgotten, and counted again when it was next pushed)."""
    from vision.evaluation.evaluate import deal_video

    frame = deal_video("flip7-vengeance", 9303).frames[5626]
    discard = np.float32([[282.1, 179.8], [314.2, 62.5], [480.4, 115.5], [444.4, 234.9]])
    assert best_iou(discard, find_cards(frame)) >= 0.9


def test_a_side_is_fitted_to_the_line_most_of_its_edge_points_lie_on():
    """_refine's line through a side's edge points: where some of them lie on a second line a
    little inside (a printed frame, a shadow's edge), the side is the line most of them are on,
    not a compromise between the two; rows with few points are fitted too."""
    from vision.locate import _fit_lines

    rng = np.random.default_rng(0)
    rows, truth = [], []
    for _ in range(40):
        angle = rng.uniform(0, np.pi)
        direction = np.array([np.cos(angle), np.sin(angle)])
        normal = np.array([-direction[1], direction[0]])
        origin = rng.uniform(50, 400, 2)
        along = np.linspace(-60, 60, 32)
        offset = rng.normal(0, 0.3, 32)
        off_line = rng.choice(32, 9, replace=False)
        offset[off_line] += 2.0                          # 9 of 32 on the frame 2 px inside
        rows.append(origin + along[:, None] * direction + offset[:, None] * normal)
        truth.append((origin, normal))
    points = np.array(rows, np.float32)
    valid = np.ones(points.shape[:2], bool)
    valid[::4, 20:] = False                              # some rows with 20 points only
    lines = _fit_lines(points, valid)
    offsets = []
    for (origin, normal), (vx, vy, x0, y0) in zip(truth, lines):
        s = (origin[0] - x0) * vx + (origin[1] - y0) * vy     # the fitted line's point nearest the true middle
        offsets.append(abs(np.dot(np.array([x0 + s * vx, y0 + s * vy]) - origin, normal)))
    # (A least-squares line lies between the two, 2 x 9 / 32 = 0.56 px in, on average.)
    assert max(offsets) < 0.55 and np.mean(offsets) < 0.3


REAL = __import__("pathlib").Path(__file__).resolve().parents[1].parent / "shared" / "real"


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
@pytest.mark.parametrize("deck, folder, per_card, at_least", [("flip7", "flip7-art", 4, 52),
                                                              ("uno-flip", "uno-flip-art", 1, 85)])
def test_printed_faces_are_outlined_on_held_out_tables(deck, folder, per_card, at_least):
    """The printed faces laid by the scene synthesiser on held-out tables (the captures of
    `vision.evaluation.real_eval`): the located quad over the card is its outline (IoU >= 0.85) for at
    least `at_least` of them. Flip 7, four per card: 49 of 88 before side proposals centred in a
    smaller card found (its numeral's frame, half its picture) were tried and the border score
    asked 0.5, 54 after. UNO Flip, one per card: 83 of 108 before a card found was tried doubled
    over a long side (half a UNO card, cut at its oval, is card-shaped), 85 after."""
    from vision.synth.printed import load_printed_faces
    from vision.evaluation.real_eval import CAPTURE_SEED, capture

    faces = load_printed_faces(deck, REAL / folder)
    outlined = 0
    for i, label in enumerate(sorted(faces)):
        for k in range(per_card):
            frame, quad = capture(deck, faces, label, CAPTURE_SEED + 1000 * i + k, "heldout")
            outline = quad.reshape(-1, 1, 2).astype(np.float32)
            over = [q for q in find_cards(frame)
                    if cv2.pointPolygonTest(outline, tuple(map(float, q.mean(0))), False) > 0]
            outlined += bool(over) and quad_iou(max(over, key=cv2.contourArea), quad) >= 0.85
    assert outlined >= at_least, f"{outlined} of {per_card * len(faces)} printed captures outlined"


def test_a_card_inside_a_card_shaped_square_of_a_checked_cloth_is_a_fallback_in_a_still_frame():
    """A card lined up inside a card-shaped square of a checked cloth, holding most of it, goes
    as that square's printed frame; in a still frame read per place (keep_nested, no change mask)
    it comes back as a fallback, read where the square is not named (vision.reading.read_photo)."""
    from vision.locate import locate_candidates

    rng = np.random.default_rng(0)
    frame = surface(rng, "light")
    square, card = card_quad((320, 240), 8, 260), card_quad((320, 240), 8, 208)
    cv2.fillConvexPoly(frame, np.round(square).astype(np.int32), (60, 90, 150))
    place(frame, card_face(rng, "5", (40, 140, 60)), card)
    assert best_iou(square, find_cards(frame)) >= 0.9 and best_iou(card, find_cards(frame)) < 0.7
    found = locate_candidates(frame, keep_nested=True)
    assert best_iou(square, [c.quad for c in found if not c.fallback]) >= 0.9
    assert best_iou(card, [c.quad for c in found if c.fallback]) >= 0.9


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
@pytest.mark.parametrize("deck, folder, per_card, at_most", [("flip7", "flip7-art", 4, 5),
                                                             ("uno-flip", "uno-flip-art", 1, 4)])
def test_printed_faces_read_per_place_on_held_out_tables_are_seldom_refused(deck, folder, per_card, at_most):
    """The captures above read as a still photo is read (vision.reading.read_photo: every quad
    the locator keeps for a reader keeping one reading per place, the surest kept) out of the
    box, as `vision.evaluation.real_eval` reads them: none misread, at most `at_most` refused.
    Before the cards proposed by straight stretches and by parallel edge segments were kept
    beside the cards found, Flip 7 refused 18 of 88 and UNO Flip 13 of 108; 11 and 8 after; 11
    and 7 once segments were also looked for at softer edge thresholds and the cards suppression
    dropped were read as fallbacks (vision.locate.SOFT_EDGES); 8 and 6 once the photo was also
    located with its shadows lifted (vision.reading.OTHER_TONES), 6 and 5 with its highlights
    deepened too, 5 and 5 with its shadows lifted further, 5 and 4 with the card mask network's
    outlines too (vision.card_mask)."""
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import CAPTURE_SEED, capture, located_candidates, read_place
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces(deck, REAL / folder)
    classifier = CardClassifier.load(deck)
    refused, wrong = 0, []
    for i, label in enumerate(sorted(faces)):
        for k in range(per_card):
            frame, quad = capture(deck, faces, label, CAPTURE_SEED + 1000 * i + k, "heldout")
            got = read_place(classifier, frame, located_candidates(frame, quad)).label
            refused += got is None
            if got not in (None, label):
                wrong.append(f"{label} read as {got}")
    assert not wrong, wrong
    assert refused <= at_most, f"{refused} of {per_card * len(faces)} printed captures refused"
