"""The card-outline network (vision.outline): its maps cut into one region per card, its input
size, how the locator uses it, and its loading; the training maps it learns from."""

from __future__ import annotations

import logging

import cv2
import numpy as np
import pytest

import vision.outline as outline
from tests.vision_fixtures import card_face, card_quad, place, surface
from vision.geometry import quad_iou
from vision.locate import find_cards
from vision.outline import OutlineNetwork, card_regions

needs_model = pytest.mark.skipif(outline.default_network() is None, reason="models/card-outline.onnx is not built")


def maps_of(quads, size=(128, 96), band=True):
    """Card and outline maps (as the network gives them) of quads in map pixels, bottom to top."""
    from vision.training.outline_data import target_maps

    card, edge = target_maps(quads, size, size)
    return np.stack([card.astype(np.float32), edge.astype(np.float32) if band else np.zeros(card.shape, np.float32)])


def test_two_cards_one_lying_on_the_other_are_two_regions():
    under = card_quad((50, 48), 20, 60)
    over = card_quad((72, 50), 5, 60)
    regions = card_regions(maps_of([under, over]), (640, 480), min_area=0.01 * 640 * 480)
    assert len(regions) == 2
    # The card on top is whole; its hull, in frame pixels (5 per map pixel), fits its quad.
    top = max(regions, key=lambda r: quad_iou(cv2.boxPoints(cv2.minAreaRect(r.hull)), over * 5))
    assert quad_iou(cv2.boxPoints(cv2.minAreaRect(top.hull)), over * 5) > 0.9


def test_cards_side_by_side_touching_are_parted_by_their_outline():
    row = [card_quad((30 + 22 * k, 48), 0, 30) for k in range(4)]     # 21.5 px wide: each touches the next
    assert len(card_regions(maps_of(row), (640, 480), min_area=0.005 * 640 * 480)) == 4
    # Without the outline map they would be one region.
    assert len(card_regions(maps_of(row, band=False), (640, 480), min_area=0.005 * 640 * 480)) == 1


def test_regions_smaller_than_a_card_are_left_out():
    speck = card_quad((60, 40), 0, 6)
    assert card_regions(maps_of([speck]), (640, 480), min_area=0.01 * 640 * 480) == []


@pytest.mark.parametrize("size, want", [((640, 480), (256, 192)), ((480, 640), (192, 256)),
                                        ((1920, 1080), (256, 144)), ((4000, 100), (256, 16))])
def test_the_network_reads_any_frame_at_its_long_side_in_multiples_of_16(size, want):
    network = OutlineNetwork(session=type("S", (), {"get_inputs": lambda self: [type("I", (), {"name": "frame"})()]})(),
                             long_side=256, multiple=16, mean=(0.5,) * 3, std=(0.25,) * 3)
    assert network.input_size(*size) == want


def test_a_missing_network_is_said_once_and_the_locator_works_from_edges(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(outline, "_network", None)
    monkeypatch.setattr(outline, "_network_missing", False)
    real_load = OutlineNetwork.load.__func__
    monkeypatch.setattr(OutlineNetwork, "load", classmethod(lambda cls, models_dir=None: real_load(cls, tmp_path)))
    with caplog.at_level(logging.WARNING, logger="vision.outline"):
        assert outline.default_network() is None
        assert outline.default_network() is None
    assert len(caplog.records) == 1 and "card-outline" in caplog.text and "edges alone" in caplog.text
    rng = np.random.default_rng(3)
    frame = surface(rng, "wood")
    truth = card_quad((320, 240), 30, 220)
    place(frame, card_face(rng, "7"), truth)
    assert max(quad_iou(q, truth) for q in find_cards(frame)) > 0.9


def test_the_training_maps_mark_each_card_and_the_outlines_between_them():
    from vision.training.outline_data import target_maps

    under, over = card_quad((200, 240), 0, 200), card_quad((300, 240), 0, 200)
    card, edge = target_maps([under, over], (640, 480), (320, 240))
    assert card[120, 100] and card[120, 150] and not card[10, 10]
    # The left card's right side lies under the right card: no outline there; the right card's
    # left side is an outline across the left card.
    right_edge_of_under = int(round((200 + 0.3575 * 200) / 2))
    left_edge_of_over = int(round((300 - 0.3575 * 200) / 2))
    assert not edge[120, right_edge_of_under - 1:right_edge_of_under + 2].any()
    assert edge[120, left_edge_of_over - 1:left_edge_of_over + 2].any()
    # A card cut by the frame's border has no outline along it.
    cut = card_quad((0, 240), 90, 200)
    _, edge = target_maps([cut], (640, 480), (320, 240))
    assert not edge[100:140, 0].any()
