"""The card mask network (vision.card_mask) and how it is trained (vision.training.train_card_mask):
where a still photo's cards lie, by what they look like rather than by their edges."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from vision.card_mask import CardMask, card_mask
from vision.classifier import MODELS_DIR, ModelError
from vision.geometry import quad_iou
from vision.synth.scenes import make_scene


def test_the_committed_network_is_small_and_its_sidecar_says_how_to_read_it():
    mask = card_mask()
    assert (MODELS_DIR / "card-mask.onnx").stat().st_size < 1_000_000
    sidecar = json.loads((MODELS_DIR / "card-mask.json").read_text(encoding="utf-8"))
    assert sidecar["threshold"] == mask.threshold and sidecar["band"] == mask.band
    assert "train_card_mask" in sidecar["training"]["command"]


def test_a_missing_or_broken_network_is_refused_with_what_and_why(tmp_path):
    with pytest.raises(ModelError, match="card mask model .* not found"):
        CardMask.load(tmp_path)
    shutil.copy(MODELS_DIR / "card-mask.onnx", tmp_path)
    (tmp_path / "card-mask.json").write_text('{"threshold": 2, "band": 0.08}', encoding="utf-8")
    with pytest.raises(ModelError, match="not a usable card mask sidecar"):
        CardMask.load(tmp_path)
    (tmp_path / "card-mask.json").write_text("{", encoding="utf-8")
    with pytest.raises(ModelError, match="cannot read the sidecar JSON"):
        CardMask.load(tmp_path)


@pytest.mark.parametrize("deck", ["flip7", "uno-flip", "flip7-vengeance"])
def test_the_cards_of_held_out_tables_are_outlined(deck):
    """Rendered scenes on the "heldout" split's tables, which training never saw: most cards
    lying apart are outlined (IoU >= 0.8; the committed network: 18, 20 and 20 of 24), and almost
    nothing else card-shaped is. (The network is a second opinion beside the locator, which
    outlines nearly all of these: it is there for the cards whose edges the locator misses.)"""
    from rules.cards import DECKS

    labels = DECKS[deck].labels
    outlined = cards = false = 0
    for seed in range(12):
        rng = np.random.default_rng(5000 + seed)
        frame, truth = make_scene(rng, [labels[(3 * seed + k) % len(labels)] for k in range(1 + seed % 3)], deck,
                                  split="heldout", extra_cards=False)
        quads = [q for q, _ in card_mask().outlines(frame)]
        cards += len(truth)
        outlined += sum(any(quad_iou(q, t.quad) >= 0.8 for q in quads) for t in truth)
        false += sum(all(quad_iou(q, t.quad) < 0.3 for t in truth) for q in quads)
    assert outlined >= 0.7 * cards and false <= 1, (outlined, cards, false)


def test_outlines_of_a_photo_of_any_size_are_in_its_own_pixels():
    rng = np.random.default_rng(77)
    frame, truth = make_scene(rng, ["7"], "flip7", split="heldout", extra_cards=False)
    import cv2

    portrait = cv2.resize(cv2.rotate(frame, cv2.ROTATE_90_CLOCKWISE), (720, 960))
    turned = truth[0].quad[:, ::-1].copy()
    turned[:, 0] = frame.shape[0] - 1 - turned[:, 0]
    turned *= 720 / 480
    quads = [q for q, _ in card_mask().outlines(portrait)]
    assert any(quad_iou(q, turned) >= 0.8 for q in quads)
    assert card_mask().outlines(np.zeros((480, 640, 3), np.uint8)) == []


def test_the_target_is_each_card_less_its_band_each_cut_from_the_card_beneath():
    """Two cards overlapping: the target holds two regions, the top card whole and what shows of
    the card beneath, apart (the top card's band runs between them)."""
    import cv2

    from vision.training.train_card_mask import target

    beneath = np.array([[20, 20], [80, 20], [80, 104], [20, 104]], np.float32)
    top = beneath + np.array([30, 10], np.float32)
    out = target([beneath, top], (160, 120), 1.0, band=0.08)
    count, labels = cv2.connectedComponents(out)
    assert count == 3                              # background and two regions
    on_top = labels[int(top[:, 1].mean()), int(top[:, 0].mean())]
    region = labels == on_top
    ys, xs = np.nonzero(region)
    band = round(0.08 * 60)
    # the top card less its band all round
    assert abs(xs.min() - (50 + band)) <= 1 and abs(xs.max() - (110 - band)) <= 1
    assert abs(ys.min() - (30 + band)) <= 1 and abs(ys.max() - (114 - band)) <= 1


def test_a_scene_says_every_card_it_drew_and_draws_the_same_frame_either_way():
    def scene(drawn):
        rng = np.random.default_rng(31)
        return make_scene(rng, ["3", "8"], "flip7", split="train", drawn=drawn)

    drawn: list = []
    frame, truth = scene(drawn)
    again, _ = scene(None)
    assert np.array_equal(frame, again)
    assert len(drawn) >= len(truth)
    assert all(any(np.allclose(d, t.quad) for d in drawn) for t in truth)


def test_cards_that_run_together_into_one_region_are_outlined_on_its_sides(monkeypatch):
    """Two cards overlapping much make one region of the mask, whose rectangle is neither card;
    with on_sides each is outlined by a card standing on a straight stretch of the region's hull
    (snapped to its border in the photo), and nothing is outlined off the region."""
    import cv2

    from tests.vision_fixtures import card_quad

    photo = np.full((480, 640, 3), 70, np.uint8)
    cards = [card_quad((260, 240), 0, 220), card_quad((350, 250), 0, 220)]
    for quad, colour in zip(cards, ((225, 230, 235), (200, 215, 240))):
        cv2.fillConvexPoly(photo, np.round(quad).astype(np.int32), colour)
        cv2.polylines(photo, [np.round(quad).astype(np.int32)], True, (40, 40, 40), 2)
    mask = card_mask()

    def faces_less_band(_photo):              # what the network marks (at a quarter of the photo's size):
        probs = np.zeros((120, 160), np.float32)  # each face less its band, the two run together
        for quad in cards:                     # (upright cards: their sides are the axes')
            (x0, y0), (x1, y1) = quad.min(axis=0) / 4.0, quad.max(axis=0) / 4.0
            band = mask.band * (x1 - x0)
            probs[round(y0 + band):round(y1 - band), round(x0 + band):round(x1 - band)] = 1.0
        return probs

    monkeypatch.setattr(mask, "probabilities", faces_less_band)
    plain = [q for q, _ in mask.outlines(photo)]
    assert all(quad_iou(q, card) < 0.85 for q in plain for card in cards)
    both = [q for q, _ in mask.outlines(photo, on_sides=True)]
    assert [np.array_equal(a, b) for a, b in zip(both, plain)] == [True] * len(plain)     # the rectangles first
    assert all(max(quad_iou(q, card) for q in both) >= 0.9 for card in cards)
    union = cards[0].min(axis=0), cards[1].max(axis=0)
    assert all((q.mean(axis=0) > union[0]).all() and (q.mean(axis=0) < union[1]).all() for q in both)


def test_the_card_share_of_an_outline_is_high_over_a_card_and_low_over_the_bare_table():
    """CardMask.card_share: the network's probability averaged over an outline's face (the
    reader's second opinion on a fallback the model names below its fallback bar,
    vision.reading.MASK_SEES_CARD): at a card's own outline, in a photo of any size, most of it;
    at the same outline moved onto the bare table, little."""
    import cv2

    from vision.reading import MASK_SEES_CARD

    frame, truth = make_scene(np.random.default_rng(77), ["7"], "flip7", split="heldout", extra_cards=False)
    card = truth[0].quad
    # the card's outline moved to where the card is not: the other half of the frame
    away = card + np.array([frame.shape[1] / 2 if card[:, 0].mean() < frame.shape[1] / 2 else -frame.shape[1] / 2, 0],
                           np.float32)
    on_card, on_table = card_mask().card_share(frame, [card, away])
    assert on_card >= MASK_SEES_CARD > 0.5 > on_table, (on_card, on_table)
    bigger = cv2.resize(frame, (frame.shape[1] * 3 // 2, frame.shape[0] * 3 // 2))
    assert abs(card_mask().card_share(bigger, [card * 1.5])[0] - on_card) < 0.05
    assert card_mask().card_share(frame, []).shape == (0,)


def test_the_network_runs_once_for_a_photo_asked_about_again_and_afresh_for_another():
    """A still photo's reader asks about one photo for its outlines and again for the readings it
    doubts: the network runs once for it, and again for another photo (or the same one changed)."""
    mask = CardMask.load()
    runs = []
    session_run = mask._session.run
    mask._session = type("Counting", (), {"run": lambda self, *a, **k: runs.append(1) or session_run(*a, **k)})()
    frame, truth = make_scene(np.random.default_rng(78), ["7"], "flip7", split="heldout", extra_cards=False)
    first = mask.card_share(frame, [truth[0].quad])
    mask.outlines(frame, on_sides=True)
    np.testing.assert_array_equal(mask.card_share(frame, [truth[0].quad]), first)
    assert len(runs) == 1
    other = frame.copy()
    other[:, : frame.shape[1] // 2] = 0                    # the card's half of the table or the other
    mask.card_share(other, [truth[0].quad])
    assert len(runs) == 2
    assert mask.card_share(frame, [truth[0].quad]) == pytest.approx(first)
    assert len(runs) == 3


def test_a_models_folder_with_a_card_mask_network_is_read_with_it(tmp_path):
    """`--models-dir` (vision.card_mask.use_models_dir) reads still photos with the card mask
    network in that folder where it has one (a retrained network measured as a deck's model is);
    a folder of a deck's model alone, or none, keeps the committed network."""
    import shutil

    from vision.card_mask import MASK_MODEL, use_models_dir
    from vision.classifier import MODELS_DIR

    committed = card_mask().name
    alone = tmp_path / "deck-only"
    alone.mkdir()
    shutil.copy(MODELS_DIR / "flip7.onnx", alone)
    retrained = tmp_path / "retrained"
    retrained.mkdir()
    for suffix in (".onnx", ".json"):
        shutil.copy(MODELS_DIR / f"{MASK_MODEL}{suffix}", retrained)
    try:
        use_models_dir(alone)
        assert card_mask().name == committed
        use_models_dir(retrained)
        assert card_mask().name == str(retrained / f"{MASK_MODEL}.onnx")
    finally:
        use_models_dir(None)
    assert card_mask().name == committed
