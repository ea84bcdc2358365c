"""The card renderer, the scene synthesiser and the deal-video ground truth."""

import json

import numpy as np
import pytest

from rules.cards import DECKS
from vision.synth.render import CARD_H, CARD_W, FONTS, CardStyle, render_card
from vision.synth.scenes import make_deal_video, make_scene, write_video

LABELS = DECKS["flip7"].labels


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_every_label_renders_a_rounded_portrait_card(split):
    rng = np.random.default_rng(1)
    faces = {}
    for label in LABELS:
        face = render_card("flip7", label, rng, CardStyle.sample(rng, split))
        assert face.shape == (CARD_H, CARD_W, 4) and face.dtype == np.uint8
        assert face[0, 0, 3] == 0 and face[-1, -1, 3] == 0          # rounded corners are transparent
        assert face[CARD_H // 2, CARD_W // 2, 3] == 255 and face[CARD_H // 2, 0, 3] == 255
        faces[label] = face
    # Different labels give different pictures (no silent fallback face).
    rgb = {k: v[..., :3].astype(int) for k, v in faces.items()}
    assert np.abs(rgb["6"] - rgb["9"]).mean() > 5


def test_renderer_is_deterministic_by_seed():
    a = render_card("flip7", "7", np.random.default_rng(5))
    b = render_card("flip7", "7", np.random.default_rng(5))
    c = render_card("flip7", "7", np.random.default_rng(6))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_renderer_rejects_unknown_deck_and_label():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        render_card("flip7", "13", rng)
    with pytest.raises(ValueError):
        render_card("no-such-deck", "1", rng)


def test_held_out_fonts_are_never_used_in_training():
    assert not set(FONTS["train"]) & set(FONTS["heldout"])
    rng = np.random.default_rng(0)
    train_fonts = {CardStyle.sample(rng, "train").numeral_font for _ in range(200)}
    assert all(any(f.endswith(name) for name in FONTS["train"]) for f in train_fonts)


def _magenta(label):
    face = np.zeros((CARD_H, CARD_W, 4), np.uint8)
    face[...] = (255, 0, 255, 255)
    return face


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_scene_quads_lie_in_the_frame_on_the_drawn_cards(split):
    import cv2

    rng = np.random.default_rng(11)
    for _ in range(12):
        n = int(rng.integers(1, 4))
        frame, cards = make_scene(rng, ["5"] * n, split=split, faces=_magenta)
        h, w = frame.shape[:2]
        assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8
        assert len(cards) == n
        for card in cards:
            q = card.quad
            assert q.shape == (4, 2) and q.dtype == np.float32
            assert q[:, 0].min() >= 0 and q[:, 1].min() >= 0 and q[:, 0].max() < w and q[:, 1].max() < h
            # The middle of the quad shows the (magenta) face: red and blue well above green.
            m = cv2.getPerspectiveTransform(q, np.float32([[0, 0], [40, 0], [40, 56], [0, 56]]))
            crop = cv2.warpPerspective(frame, m, (40, 56))[14:42, 10:30].astype(int)
            magenta = (crop[..., 2] - crop[..., 1] > 20) & (crop[..., 0] - crop[..., 1] > 20)
            assert magenta.mean() > 0.6
        # apart=True: no two cards overlap.
        for i in range(n):
            for j in range(i + 1, n):
                inter, _ = cv2.intersectConvexConvex(cards[i].quad, cards[j].quad)
                assert inter == 0


def test_quad_order_is_the_printed_order():
    """TL, TR, BR, BL of the face: the warp at the true quad gives the card upright."""
    import cv2

    def top_red(label):
        face = np.zeros((CARD_H, CARD_W, 4), np.uint8)
        face[...] = (0, 0, 255, 255)
        face[: CARD_H // 3] = (255, 0, 0, 255)
        return face

    rng = np.random.default_rng(3)
    for _ in range(6):
        frame, (card,) = make_scene(rng, ["1"], faces=top_red)
        m = cv2.getPerspectiveTransform(card.quad, np.float32([[0, 0], [30, 0], [30, 42], [0, 42]]))
        crop = cv2.warpPerspective(frame, m, (30, 42)).astype(int)
        top, bottom = crop[5:12, 8:22], crop[30:37, 8:22]
        assert (top[..., 2] - top[..., 0]).mean() > 30        # red (BGR) on top
        assert (bottom[..., 0] - bottom[..., 2]).mean() > 30  # blue below


def test_deal_video_ground_truth_is_consistent(tmp_path):
    import cv2

    rng = np.random.default_rng(21)
    labels = ["3", "3", "x2", "freeze", "12", "0"]
    video = make_deal_video(rng, labels, p_repeat=0.0, p_pass=0.5, p_nudge=0.5, p_on_top=0.5)
    frames = video.frames
    assert [e.label for e in video.events] == labels
    idx = [e.frame_index for e in video.events]
    assert idx == sorted(idx) and len(set(idx)) == len(idx)
    assert 0 < idx[0] and idx[-1] < len(frames) - 5
    kinds = {n["kind"] for n in video.notes}
    assert "place" in kinds
    # Between a placement and the next thing that happens, the end of the still period is still.
    starts = sorted(n["start"] for n in video.notes)
    for e in video.events:
        nxt = min([s for s in starts if s > e.frame_index] + [len(frames)])
        # Compared at 80x60 so sensor noise averages out; light flicker (1% sigma) stays.
        a, b = (cv2.resize(frames[k], (80, 60), interpolation=cv2.INTER_AREA).astype(int) for k in (nxt - 2, nxt - 1))
        assert np.abs(a - b).max() < 16
    # Deterministic by seed.
    again = make_deal_video(np.random.default_rng(21), labels, p_repeat=0.0, p_pass=0.5, p_nudge=0.5, p_on_top=0.5)
    assert again.events == video.events
    assert np.array_equal(again.frames[idx[1]], frames[idx[1]])
    # Written out as numbered frames plus the events JSON.
    out = tmp_path / "deal"
    events_path = write_video(video, out)
    truth = json.loads(events_path.read_text())
    assert truth["events"] == [{"frame_index": e.frame_index, "label": e.label} for e in video.events]
    assert len(list(out.glob("*.jpg"))) == len(frames) == truth["frames"]


def test_a_nudged_card_stays_in_view_until_the_hand_moves_it():
    """A card lying on the table only leaves the picture while a hand is in it, and a card that
    has left never comes back in its old place (a nudged card is a new layer where it now lies)."""
    video = make_deal_video(np.random.default_rng(4), ["3", "7", "x2", "12", "0", "5"], p_nudge=1.0, p_pass=0.0,
                            p_repeat=0.0)
    plans = video.frames._plans
    assert sum(n["kind"] == "nudge" for n in video.notes) >= 2
    gone = set()
    for before, now in zip(plans, plans[1:]):
        left = set(before.static) - set(now.static)
        assert not left or now.hand is not None, "a card vanished with no hand in view"
        gone |= left
        assert not gone & set(now.static), "a card that left came back"
