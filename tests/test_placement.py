"""Placement events: one per card laid down once it lies still; none for a hand passing or
resting, a card nudged, or a card slid away; one each for identical cards in a row and for a
card laid on top of another; Unsure for a new card the model will not name; a cheap idle path."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.vision_fixtures import PALETTE, Clip, ColourClassifier, card_face, card_quad, plain_face, run, surface
from vision.classifier import NOT_SURE, Prediction
from vision.placement import Placement, PlacementDetector, Unsure

LATENCY = 12   # frames a report may follow the frame at which the card first lies still


def assert_events_match(events, truth):
    got = [(e.frame_index, e.label) for e in events if isinstance(e, Placement)]
    assert [e for e in events if isinstance(e, Unsure)] == []
    assert [label for _, label in got] == [label for _, label in truth], (got, truth)
    for (at, _), (due, _) in zip(got, truth):
        assert due <= at <= due + LATENCY, (got, truth)


@pytest.mark.parametrize("kind", ["wood", "light"])
def test_deal_with_hand_passing_identical_cards_stack_nudge_and_slide_away(kind):
    clip = Clip(np.random.default_rng(0), kind)
    clip.still(5)
    clip.place("red", card_quad((320, 240), 20, 180))
    clip.hand_pass()                                         # no card
    clip.place("red", card_quad((350, 250), 50, 180))        # the same card again, on top
    clip.nudge(1, (15, 10), 6)                               # the top card pushed: no card
    clip.slide_away(1)                                       # dealt out to a player: no card
    clip.place("green", card_quad((200, 220), -30, 180), side="right")
    clip.slide_away(0, "right")
    clip.place("blue", card_quad((420, 260), 100, 180), side="top")
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


@pytest.mark.parametrize("kind", ["dark", "cloth"])
def test_identical_cards_side_by_side_upside_down_on_top_and_a_resting_hand(kind):
    clip = Clip(np.random.default_rng(1), kind)
    clip.still(5)
    clip.place("violet", card_quad((200, 240), 0, 170))
    clip.place("violet", card_quad((430, 240), 0, 170))     # identical, beside the first
    clip.nudge(0, (-20, 0), -8)                               # the first one pushed
    clip.place("orange", card_quad((440, 260), 185, 170))    # on top of the second, upside down
    clip.nudge(2, (10, -12), 10)                              # the top of the stack pushed
    clip.hand_rests(20)                                       # a hand lies still a while
    clip.hand_pass("top")
    clip.slide_away(2, "bottom")
    clip.slide_away(1, "right")
    clip.place("orange", card_quad((300, 240), 90, 170), side="left")
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


class _Unsure(ColourClassifier):
    def decide(self, probs):
        return Prediction(None, 0.5, NOT_SURE)


def test_a_new_card_the_model_will_not_name_is_reported_unsure_once():
    clip = Clip(np.random.default_rng(2), "wood")
    clip.still(5)
    clip.place("blue", card_quad((320, 240), 30, 180))
    events = run(PlacementDetector(_Unsure(clip.faces)), clip.frames)
    assert len(events) == 1 and isinstance(events[0], Unsure) and events[0].reason == NOT_SURE
    due = clip.events[0][0]
    assert due <= events[0].frame_index <= due + LATENCY


def test_idle_frames_do_no_locating_or_classifying(monkeypatch):
    import vision.placement as placement

    clip = Clip(np.random.default_rng(3), "cloth")
    clip.place("red", card_quad((320, 240), 10, 180))
    clip.still(30)
    detector = PlacementDetector(ColourClassifier(clip.faces))
    run(detector, clip.frames[:len(clip.frames) - 30])
    calls = []
    monkeypatch.setattr(placement, "locate_candidates", lambda *a, **k: calls.append(1) or [])
    monkeypatch.setattr(detector, "classifier", None)      # any use of it would raise
    for i, frame in enumerate(clip.frames[-30:]):
        assert detector.feed(frame, 1000 + i) == []
        assert detector.state == "idle"
    assert calls == []


class _Counting(ColourClassifier):
    """Counts the crops it reads."""

    def __init__(self, faces):
        super().__init__(faces)
        self.crops = 0

    def probabilities(self, crops):
        self.crops += len(crops)
        return super().probabilities(crops)


def _fed(detector, frames) -> tuple[list, list, list]:
    """(each frame's step, (frame, event) of each event, crops read at each frame) of a detector
    whose classifier is a _Counting one."""
    steps, reported, read = [], [], []
    for i, frame in enumerate(frames):
        before = detector.classifier.crops
        reported += [(i, e) for e in detector.feed(frame, i)]
        steps.append(detector.step)
        read.append(detector.classifier.crops - before)
    return steps, reported, read


def test_a_placement_is_located_on_the_settled_frame_and_read_and_judged_on_the_next():
    """A placement's work is shared by two frames (locate, then read and explain) so neither
    holds up the camera long: the event comes with the frame after the settled one and carries
    the settled frame's index; a stream that ends on the settled frame still owes it (finish).
    The settled frame is read at the next call from its own copy: a camera that refills one
    array, and a hand already coming back over the card in the next frame, change nothing."""
    clip = Clip(np.random.default_rng(11), "cloth")
    clip.still(3)
    clip.place("blue", card_quad((300, 240), 20, 180))
    clip.still(10)
    detector = PlacementDetector(_Counting(clip.faces), early_frames=0)
    steps, reported, read = _fed(detector, clip.frames)
    (at, event), = reported
    assert event.label == "blue" and event.frame_index == at - 1
    assert (steps[at - 1], steps[at]) == ("locate", "judge")
    assert read[at - 1] == 0 and read[at] >= 2          # (each card both ways up)
    assert detector.finish() == []

    cut = PlacementDetector(ColourClassifier(clip.faces), early_frames=0)
    assert run(cut, clip.frames[:at]) == []
    owed = cut.finish()
    assert [(e.label, e.frame_index) for e in owed] == [("blue", at - 1)]
    assert cut.finish() == []

    refilled = np.empty_like(clip.frames[0])
    other = PlacementDetector(ColourClassifier(clip.faces), early_frames=0)
    for i, frame in enumerate(clip.frames[:at]):
        refilled[:] = frame
        assert other.feed(refilled, i) == []
    refilled[:] = clip.frames[0]                          # the next frame shows none of it
    assert [(e.label, e.frame_index) for e in other.feed(refilled, at)] == [("blue", at - 1)]


def test_a_placement_confirmed_on_more_still_frames_is_read_on_each():
    """confirm_frames: the card found on the settled frame is read on that many still frames (each
    at the next call), its readings summed, and judged after the last."""
    clip = Clip(np.random.default_rng(11), "cloth")
    clip.still(3)
    clip.place("blue", card_quad((300, 240), 20, 180))
    clip.still(10)
    steps, reported, read = _fed(PlacementDetector(_Counting(clip.faces), early_frames=0, confirm_frames=3), clip.frames)
    (at, event), = reported
    assert event.label == "blue" and event.frame_index == at - 1
    assert steps[at - 3:at + 1] == ["locate", "confirm", "confirm", "judge"]
    assert read[at - 3] == 0 and min(read[at - 2:at + 1]) >= 2


def test_cards_already_on_the_table_at_start_are_not_events():
    clip = Clip(np.random.default_rng(4), "dark")
    clip.place("green", card_quad((250, 240), 15, 180))
    start = len(clip.frames) - 1                              # the card lies there from the first frame on
    clip.nudge(0, (12, 8), 5)
    clip.place("red", card_quad((420, 250), 70, 180))
    events = run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames[start:])
    assert [e.label for e in events if isinstance(e, Placement)] == ["red"]
    assert all(isinstance(e, Placement) for e in events)


def test_a_synthetic_deal_with_the_committed_model():
    """vision.synth.scenes's deal video, every hard case switched on often, read by the real model:
    no card counted twice, none named wrongly, and every placement answered (by its label, or
    by Unsure when the model will not name it)."""
    from rules.cards import DECKS
    from vision.classifier import CardClassifier
    from vision.synth.scenes import make_deal_video

    rng = np.random.default_rng(31)
    labels = [DECKS["flip7"].labels[i] for i in rng.integers(0, 22, 8)]
    video = make_deal_video(rng, labels, split="heldout", p_on_top=0.5, p_pass=0.4, p_nudge=0.4,
                            p_slide=0.5, p_repeat=0.3)
    events = run(PlacementDetector(CardClassifier.load("flip7")), video.frames)
    placements = [e for e in events if isinstance(e, Placement)]
    window = 45
    answered = []
    for true in video.events:
        near = [e for e in events if true.frame_index <= e.frame_index <= true.frame_index + window
                and id(e) not in answered]
        assert near, f"placement of {true.label} at frame {true.frame_index} got no event"
        answered.append(id(near[0]))
        if isinstance(near[0], Placement):
            assert near[0].label == true.label
    assert len(events) == len(video.events), [(e.frame_index, getattr(e, "label", None)) for e in events]
    assert len(placements) >= len(video.events) // 2


def test_a_card_slid_away_is_forgotten_so_the_same_card_dealt_there_again_counts():
    """The place a card left reads as "no card"; that must not hide the card having gone, or a
    card of the same label dealt to that place later would be taken for it, seen again."""
    clip = Clip(np.random.default_rng(5), "wood")
    clip.still(5)
    clip.place("red", card_quad((320, 240), 20, 180))
    clip.slide_away(0, "right")
    clip.place("red", card_quad((322, 242), 22, 180), side="left")
    detector = PlacementDetector(ColourClassifier(clip.faces))
    assert_events_match(run(detector, clip.frames), clip.events)
    assert [k.label for k in detector._known] == ["red"]


@pytest.mark.parametrize("lying", ["stacked", "apart", "twins stacked"])
def test_cards_swept_off_together_are_gone_and_the_next_card_counts_once(lying):
    """A hand takes two cards off at once (a pile, or two lying apart): both went, and nothing
    new lies there ("show it again" on an empty table), so the next card laid counts once (the
    cleared place once stood as an unnamed thing, and the next card was counted twice)."""
    clip = Clip(np.random.default_rng(12), "wood")
    clip.still(5)
    first, second = ("red", "red") if lying == "twins stacked" else ("red", "blue")
    if lying == "apart":
        clip.place(first, card_quad((254, 240), 0, 180))      # side by side, nearly touching: the
        clip.place(second, card_quad((388, 240), 0, 180))     # place both leave is card-shaped
    else:
        clip.place(first, card_quad((320, 240), 10, 180))
        clip.place(second, card_quad((340, 256), 16, 180))
    clip.sweep(side="right")
    clip.place("green", card_quad((310, 235), 0, 180), side="left")
    detector = PlacementDetector(ColourClassifier(clip.faces))
    assert_events_match(run(detector, clip.frames), clip.events)
    assert [k.label for k in detector._known] == ["green"]


def test_the_card_uncovered_when_the_top_card_is_slid_off_is_not_dealt_again():
    """A card mostly hidden under another shows its whole face when the top one is slid off:
    it is the card that lay there, not a new one, and its place is no "show it again" prompt."""
    clip = Clip(np.random.default_rng(6), "cloth")
    clip.still(5)
    clip.place("red", card_quad((300, 240), 10, 180))
    clip.place("blue", card_quad((318, 252), 18, 180))       # covers most of the red card
    clip.slide_away(1, "right")
    clip.place("red", card_quad((480, 250), 80, 170), side="left")
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


def test_a_card_is_read_while_the_hand_is_still_withdrawing_and_counted_once():
    """A card that lies still with nothing over it is reported before the hand has left the
    picture (the table sees it sooner), and the still picture afterwards does not count it again."""
    clip = Clip(np.random.default_rng(7), "wood")
    clip.still(5)
    clip.place("green", card_quad((260, 240), 15, 180), side="right")
    clip.place("red", card_quad((330, 250), 40, 170), side="bottom")   # on top of it

    def reports(early_frames):
        detector = PlacementDetector(ColourClassifier(clip.faces), early_frames=early_frames)
        events = run(detector, clip.frames)
        assert_events_match(events, clip.events)
        return [e.frame_index for e in events]

    settled = reports(0)
    for frames_still in (1, 2):          # 1: the detector's default
        early = reports(frames_still)
        assert early[0] < settled[0] and early[1] <= settled[1], (frames_still, early, settled)


def test_a_card_laid_where_one_was_read_early_before_the_picture_was_still_counts():
    """A card read early (the hand withdrawing) and covered by the next card before the picture
    was ever still: the next card is new, not the early one seen again (flip7 light video 9013,
    shadow, with ea8ccf4: a `4` laid where a `+6` read early had lain was never reported), and
    the early one lies beneath it."""
    clip = Clip(np.random.default_rng(11), "wood")
    clip.still(5)
    enter = np.array([640, 0], np.float32)
    first, second = card_quad((260, 240), 12, 180), card_quad((266, 246), 16, 180)
    clip._carry("green", first + enter, first, 8, "right")
    clip.lying.append(("green", first))
    clip.events.append((len(clip.frames), "green"))
    tip = (first[2] + first[3]) / 2
    clip._frame(None, tip, "right")                             # the hand lets go,
    clip._reach(tip, tip + enter * 0.4, 5, "right")             # draws back, still in the picture,
    clip._carry("red", second + enter * 0.4, second, 5, "right")    # and brings the next card
    clip.lying.append(("red", second))
    clip.events.append((len(clip.frames), "red"))
    tip = (second[2] + second[3]) / 2
    clip._frame(None, tip, "right")
    clip._reach(tip, tip + enter * 1.2, 6, "right")
    clip.still()
    clip.slide_away(1, "left")          # the one read early is known beneath: uncovered, not dealt
    detector = PlacementDetector(ColourClassifier(clip.faces))
    events = run(detector, clip.frames)
    assert any(e.label == "green" and e.frame_index < clip.events[1][0] for e in events
               if isinstance(e, Placement)), events      # the first was read early, as meant
    assert_events_match(events, clip.events)


def test_a_card_laid_where_one_read_early_was_slid_from_is_read_though_it_goes_before_the_picture_is_still():
    """Two cards laid in turn in one place and each slid away again while hands never leave the
    picture: the place of the first, read early, is news again once it has gone, so the second is
    read there too (flip7 light video 9003, bright, frame 6107: a `10` laid where a `+6` read early
    had lain and slid away with it before the picture was still, never reported)."""
    clip = Clip(np.random.default_rng(13), "wood")
    clip.still(5)
    enter = np.array([640, 0], np.float32)
    for label, quad in (("green", card_quad((260, 240), 12, 180)), ("red", card_quad((250, 236), 18, 180))):
        clip._carry(label, quad + enter * 0.6, quad, 6, "right")
        clip.lying.append((label, quad))
        clip.events.append((len(clip.frames), label))
        tip = (quad[2] + quad[3]) / 2
        clip._frame(None, tip, "right")                         # let go,
        clip._reach(tip, tip + enter * 0.4, 5, "right")         # drawn back, still in the picture,
        clip._reach(tip + enter * 0.4, tip, 4, "right")         # and back to slide it off
        clip.lying.pop()
        clip._carry(label, quad, quad + enter * 0.6, 6, "right")
    clip._reach(np.array([560, 300], np.float32), np.array([760, 300], np.float32), 4, "right")
    clip.still()
    events = run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames)
    assert_events_match(events, clip.events)


def test_a_card_read_early_and_pushed_before_the_picture_is_still_counts_once():
    """Its place changed since it was read, so that place is news again; but the card read there
    now is the card read early, moved: the still picture judges it, and it is not counted again."""
    clip = Clip(np.random.default_rng(17), "wood")
    clip.still(5)
    enter = np.array([640, 0], np.float32)
    laid, pushed = card_quad((260, 240), 12, 180), card_quad((236, 222), 22, 180)
    clip._carry("green", laid + enter * 0.6, laid, 6, "right")
    clip.lying.append(("green", laid))
    clip.events.append((len(clip.frames), "green"))
    tip = (laid[2] + laid[3]) / 2
    clip._frame(None, tip, "right")                             # let go,
    clip._reach(tip, tip + enter * 0.4, 5, "right")             # drawn back, still in the picture,
    clip._reach(tip + enter * 0.4, tip, 4, "right")             # and back to push it
    clip.lying.pop()
    clip._carry("green", laid, pushed, 4, "right")
    clip.lying.append(("green", pushed))
    tip = (pushed[2] + pushed[3]) / 2
    clip._frame(None, tip, "right")
    clip._reach(tip, tip + enter * 0.4, 5, "right")             # drawn back, still in the picture,
    clip._reach(tip + enter * 0.4, tip + enter * 1.2, 4, "right")   # and gone
    clip.still()
    events = run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames)
    assert events and events[0].frame_index < clip.events[0][0] + 8      # read early, as meant
    assert_events_match(events, clip.events)


def test_a_card_read_early_and_read_otherwise_at_the_still_picture_counts_once():
    """One card, misread early (the stand-in names it "blue" while the hand withdraws) and read
    "green" at the still picture: its place has not changed since it was read, so it is the card
    read early, not another laid on it (one event, the one reported; none hidden in the zone)."""
    clip = Clip(np.random.default_rng(7), "wood")
    clip.still(5)
    clip.place("green", card_quad((260, 240), 15, 180), side="right")

    class MisreadsEarly(ColourClassifier):
        def decide(self, probs):
            prediction = super().decide(probs)
            if detector.step == "early" and prediction.label == "green":
                return Prediction("blue", prediction.confidence)
            return prediction

    detector = PlacementDetector(MisreadsEarly(clip.faces))
    events = run(detector, clip.frames)
    assert [(type(e).__name__, e.label) for e in events] == [("Placement", "blue")]
    assert [k.label for k in detector._zone.cards] == ["blue"]

def test_a_card_laid_exactly_on_the_last_one_counts_as_on_a_discard_pile():
    clip = Clip(np.random.default_rng(8), "cloth")
    clip.still(5)
    clip.place("red", card_quad((320, 240), 10, 180))
    clip.place("blue", card_quad((321, 241), 10, 180))       # the same place, another card
    clip.place("green", card_quad((319, 240), 11, 180), side="left")
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


class _Hesitant(ColourClassifier):
    """Names every card, but never with more than 0.85 confidence."""

    def decide(self, probs):
        prediction = super().decide(probs)
        return Prediction(prediction.label, min(prediction.confidence, 0.85), prediction.reason)


def test_a_card_read_with_less_than_early_confidence_waits_for_the_still_picture():
    """An early read (the hand still withdrawing) must be beyond doubt; a merely accepted
    reading is made on the still picture instead, where it is counted just the same."""
    clip = Clip(np.random.default_rng(7), "wood")
    clip.still(5)
    clip.place("green", card_quad((260, 240), 15, 180), side="right")
    clip.place("red", card_quad((330, 250), 40, 170), side="bottom")

    def reports(classifier, early_frames):
        events = run(PlacementDetector(classifier, early_frames=early_frames), clip.frames)
        assert_events_match(events, clip.events)
        return [e.frame_index for e in events]

    hesitant = _Hesitant(clip.faces)
    assert reports(hesitant, 1) == reports(hesitant, 0)
    assert reports(ColourClassifier(clip.faces), 1)[0] < reports(hesitant, 1)[0]


def test_a_change_showing_only_part_of_a_card_widens_the_search_to_the_whole_card(monkeypatch):
    """Where only part of a new card differs from what lay there (half of it on a card of the
    same colours), the narrow search around the change cuts the card off: the detector
    searches wider and finds its true outline. A change covering the whole card needs the
    narrow search only."""
    import cv2

    import vision.placement as placement
    from vision.geometry import quad_iou

    clip = Clip(np.random.default_rng(12), "wood")
    quad = card_quad((320, 240), 20, 200)
    clip.lying.append(("red", quad))
    clip.still(1)
    frame = clip.frames[-1]
    detector = PlacementDetector(ColourClassifier(clip.faces))
    calls = []
    real = placement.locate_candidates
    monkeypatch.setattr(placement, "locate_candidates", lambda roi, **kw: calls.append(roi.shape) or real(roi, **kw))

    def located(part):
        mask = np.zeros((120, 160), np.uint8)              # the detector's change mask: 1/4 scale
        cv2.fillConvexPoly(mask, np.round(part / 4).astype(np.int32), 255)
        calls.clear()
        found = detector._locate_changed(frame, mask)
        return max((quad_iou(quad, q) for q, _ in found), default=0.0), len(calls)

    iou, searches = located(quad)
    assert iou >= 0.9 and searches == 1
    tl, tr, br, bl = quad
    iou, searches = located(np.array([tl, (tl + tr) / 2, (bl + br) / 2, bl]))     # its left half
    assert iou >= 0.9 and searches == 2


def test_a_card_nudged_on_its_twin_is_the_top_one_moved_and_the_twin_stays_known():
    """Two cards of one label, the second laid over most of the first: the top one pushed is
    that card moved (not the one beneath, which still shows where it lay), however often; slid
    away, it uncovers the first, which is not counted again, nor when it is pushed in turn."""
    clip = Clip(np.random.default_rng(13), "wood")
    clip.still(5)
    clip.place("red", card_quad((300, 260), 10, 180))
    clip.place("red", card_quad((345, 215), 30, 180), side="right")    # leaves half of the first in view
    clip.nudge(1, (10, -8), 6)
    clip.nudge(1, (-6, 6), -5)
    clip.slide_away(1, "right")
    clip.nudge(0, (12, 6), 8)
    clip.place("blue", card_quad((470, 250), 80, 170), side="right")
    detector = PlacementDetector(ColourClassifier(clip.faces))
    assert_events_match(run(detector, clip.frames), clip.events)
    assert sorted(k.label for k in detector._known) == ["blue", "red"]


def test_a_card_hidden_under_a_new_card_is_not_taken_for_gone():
    """A card laid over nearly all of another hides it: the one beneath is still there (the rim
    of the new card's shadow on the sliver left in view proves nothing), so when the top card
    is slid off it is the card that lay there, not a new one."""
    clip = Clip(np.random.default_rng(14), "cloth")
    clip.still(5)
    clip.place("green", card_quad((320, 240), 12, 180))
    clip.place("blue", card_quad((326, 236), 15, 180), side="right")    # leaves a sliver of green
    clip.slide_away(1, "right")
    clip.nudge(0, (-10, 8), -6)
    clip.place("green", card_quad((150, 250), 70, 170), side="left")    # its twin, elsewhere: counts
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


def test_a_twin_laid_a_little_off_its_twin_counts_and_each_is_seen_to_go():
    """Two cards of one label, the second laid a little off the first, over nearly all of it:
    both count; the top one pushed is that card moved (the sliver of its twin still shows where
    it was); both slid away, a third of that label laid in their place counts again."""
    clip = Clip(np.random.default_rng(24), "wood")
    clip.still(5)
    clip.place("red", card_quad((300, 240), 5, 180))
    clip.place("red", card_quad((309, 252), 9, 180), side="right")
    clip.nudge(1, (14, -8), 6)
    clip.slide_away(1, "right")
    clip.slide_away(0, "bottom")
    clip.place("red", card_quad((304, 246), 7, 180), side="left")
    detector = PlacementDetector(ColourClassifier(clip.faces))
    assert_events_match(run(detector, clip.frames), clip.events)
    assert [k.label for k in detector._known] == ["red"]


@pytest.mark.parametrize("kind", ["wood", "dark", "checker"])
def test_a_twin_laid_square_on_its_twin_pixel_for_pixel_counts_and_a_hand_with_none_does_not(kind):
    """A card laid exactly on its twin leaves the still picture as it was: only the frames of
    motion show it, carried in beside its twin and laid there (vision.carried). It counts, each
    time; while the controls, which leave the same still picture or a twin pushed, do not: a hand
    passing, its twin carried over it and out again, the card picked up and laid back (alone, and
    the top one of the two lying square), a nudge. (Before vision.carried both twins laid square
    were missed: 1 event of 3.)"""
    clip = Clip(np.random.default_rng(12), kind)
    clip.still(5)
    q = card_quad((330, 250), 20, 180)
    clip.place("red", q)
    clip.hand_pass("left")                                    # no card
    clip.carry_over("red", q.copy())                          # its twin carried over it and away
    clip.pick_up_and_put_back(0, (-60, 200))                  # picked up, laid back where it lay
    clip.nudge(0, (10, -6), 5)
    clip.place("red", clip.lying[-1][1].copy())               # its twin, square on it: counts
    clip.pick_up_and_put_back(1, (0, 220))                    # the top one of the two, and back
    clip.hand_pass("right")
    clip.place("red", clip.lying[-1][1].copy(), side="right")  # a third, square on both: counts
    clip.place("blue", card_quad((140, 200), -10, 170), side="left")
    detector = PlacementDetector(ColourClassifier(clip.faces))
    assert_events_match(run(detector, clip.frames), clip.events)
    assert [k.label for k in detector.cards_in_zone] == ["red", "red", "red", "blue"]


def test_what_the_frames_of_motion_must_show_for_a_twin_laid_on_its_twin():
    """vision.carried.laid_on_twin on tracks of sightings (card lengths from the twin; "b": its
    twin seen beside it as before, "u": and nothing had touched the twin yet). A second card, laid:
    seen beside the untouched twin, or coming nearer; and not seen going away again. Not: seen
    once after the twin was touched (it may be the twin itself, picked up), going away first (a
    card picked up off its very twin and laid back), carried on out again, or first seen where
    another card lay (that card slid over)."""
    from vision.carried import Sighting, laid_on_twin

    def track(*steps):
        box = card_quad((0, 0), 0, 180)
        return [Sighting(i, box, 0.8, float(d), "b" in flags, "u" in flags) for i, (d, flags) in enumerate(steps)]

    assert laid_on_twin(track((0.7, "bu")))                              # seen once, beside the untouched twin
    assert laid_on_twin(track((1.7, "b"), (1.2, "b"), (0.8, "b")))      # coming nearer
    assert laid_on_twin(track((1.7, "bu"), (0.9, "b"), (0.4, "")))      # the hand over the twin at the end
    assert not laid_on_twin(track((0.8, "b")))                          # once, the twin touched before
    assert not laid_on_twin(track((0.6, "b"), (1.0, "b"), (0.6, "b")))  # picked up off its twin, laid back
    assert not laid_on_twin(track((1.7, "bu"), (0.5, "b"), (0.9, ""), (1.4, "")))   # carried over and away
    assert not laid_on_twin(track((1.7, "bu"), (1.3, "b"), (0.6, "b")), lying=[card_quad((0, 0), 0, 180)])


def test_the_uno_flip_demo_s_red_4_laid_on_its_twin_counts():
    """Issue 53: in the UNO Flip demo's deal video (`python -m device.demo --script
    examples/uno-flip-round.txt --seed 2`) the second of two red-4 played in a row lands nearly
    square on the first (offset by a sixth of a card, turned a little). The still pictures fit the
    first one pushed as well as its twin laid (the sliver left showing is red-4 either way), and
    it was taken for pushed: one red-4 of two, and the demo's game went astray. The frames of
    motion show a copy carried in beside it and laid there. (Frames 455-511 of that video, from
    the pile lying still before the first red-4, with the committed model.)"""
    from pathlib import Path

    from device.demo import shots_for_script
    from vision.classifier import CardClassifier
    from vision.synth.scenes import make_deal_video

    shots = shots_for_script((Path(__file__).resolve().parent.parent / "examples" / "uno-flip-round.txt").read_text())
    # (As device.demo.make_game_video makes it.)
    video = make_deal_video(np.random.default_rng(2), [shot.label for shot in shots], deck="uno-flip", fps=15,
                            split="train", p_on_top=0.0, p_pass=0.0, p_nudge=0.0, p_repeat=0.0,
                            landings=[shot.landing for shot in shots])
    first, last = 455, 512
    truth = [(e.frame_index, e.label) for e in video.events if first < e.frame_index < last]
    assert truth == [(478, "red-4"), (498, "red-4")]         # the video the issue saw
    detector = PlacementDetector(CardClassifier.load("uno-flip"))
    events = [e for i in range(first, last) for e in detector.feed(video.frames[i], i)] + detector.finish()
    assert_events_match(events, truth)


def test_a_twin_laid_square_on_the_pile_counts_among_hands_passing_and_nudges():
    """A generated UNO Flip pile (vision.synth.scenes, landing "square": the twin covers the top
    card pixel for pixel) with a hand passing over before each card and a nudge of the top card
    before the twin and after it, through the committed model: each card counts once, the nudges
    and the hands none. (Before vision.carried the twin was missed: 3 events of 4.)"""
    from vision.classifier import CardClassifier
    from vision.synth.scenes import make_deal_video

    labels = ["green-2", "red-4", "red-4", "blue-7"]
    video = make_deal_video(np.random.default_rng(7), labels, deck="uno-flip", fps=15, split="heldout",
                            p_pass=0.5, p_nudge=0.5, landings=["pile", "pile", "square", "pile"])
    assert [n["kind"] for n in video.notes] == ["hand-pass", "place", "hand-pass", "place", "hand-pass", "nudge",
                                                "place", "hand-pass", "place"]
    detector = PlacementDetector(CardClassifier.load("uno-flip"))
    events = run(detector, video.frames) + detector.finish()
    assert_events_match(events, [(e.frame_index, e.label) for e in video.events])


@pytest.mark.parametrize("seed", [30, 31])
def test_dark_cards_on_a_dark_cloth_and_on_a_dark_card_slid_off(seed):
    """A dark card on a dark patterned cloth differs from it in few pixels beyond the change
    threshold, yet the cloth's pattern has gone from its place: it counts. Laid on another card
    it is found though its border is faint; slid off, the card beneath is seen again, not dealt."""
    rng = np.random.default_rng(seed)
    clip = Clip(rng, "dark")
    clip.table = surface(rng, "dotted")
    clip.faces = {"minus4": plain_face("-4", (70, 30, 60), (40, 40, 200), (120, 70, 130)),
                  "minus8": plain_face("-8", (70, 30, 60), (200, 160, 40), (120, 70, 130)),
                  "red": clip.faces["red"]}
    clip.still(5)
    clip.place("red", card_quad((250, 260), 10, 170))
    clip.place("minus4", card_quad((470, 170), -20, 170), side="right")     # apart from the others
    clip.place("minus8", card_quad((265, 250), 14, 170), side="left")       # on the red card
    clip.slide_away(2, "left")
    clip.place("minus8", card_quad((470, 360), 70, 160))                    # its twin, apart
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


def _twin_laid_square(kind):
    """A red card; a dark `discard` apart; its twin laid square on it, turned half round; that
    twin slid away; a red card laid on the red one, turned half round: (clip, where the twin
    lies, the frames from its landing to its leaving)."""
    rng = np.random.default_rng(50)
    clip = Clip(rng, kind)
    clip.table = surface(rng, "dotted") if kind == "dark" else clip.table
    clip.faces = {"discard": plain_face("D", (70, 40, 60), (200, 200, 220), (120, 90, 130)),
                  "red": clip.faces["red"]}
    clip.still(5)
    clip.place("red", card_quad((200, 300), -15, 170))
    clip.place("discard", card_quad((380, 220), 8, 170), side="right")
    laid_from = len(clip.frames)
    clip.place("discard", card_quad((382, 223), 187, 170), side="top")     # its twin, square on it
    twin = clip.lying[-1][1]
    laid_to = len(clip.frames)
    clip.slide_away(2, "top")
    clip.place("red", card_quad((200, 300), 165, 170), side="left")
    return clip, twin, (laid_from, laid_to)


@pytest.mark.parametrize("kind", ["dark", "wood"])
def test_a_twin_laid_square_on_its_twin_the_other_way_up_is_not_that_card_pushed(kind):
    """A card laid (nearly) square on its twin, turned half round: its picture fits there as
    the twin's turned round, but a hand pushing a card never turns it the other way up, so it
    is a new card; the twin slid away, the one beneath is seen again, not dealt. (Without that
    rule the dark cloth fails; on wood the turned pose does not win even so: that case guards
    the rest of the judgement.)"""
    clip, _, _ = _twin_laid_square(kind)
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


def test_a_twin_laid_square_on_its_twin_is_looked_for_at_its_outline(monkeypatch):
    """The same, where the search by the change finds no outline of the twin (it scores an
    outline by its share of the change, and laid square on its twin only the parts of the picture
    that differ the other way up change: Vengeance deal video 9303, frame 11127, a `discard` on
    a `discard` on a dark cloth): the card is looked for at the outline of the card it lies on,
    and counts."""
    from vision.geometry import quad_iou

    clip, twin, (laid_from, laid_to) = _twin_laid_square("dark")
    events = _run_locating_otherwise(monkeypatch, clip, range(laid_from, laid_to),
                                     lambda found: [(q, s) for q, s in found if quad_iou(q, twin) < 0.5])
    assert_events_match(events, clip.events)


def _run_locating_otherwise(monkeypatch, clip, frames, alter):
    """The detector's events on the clip, where on the frames in `frames` the cards its search
    by the change finds (_locate_changed) are `alter(found)`: the locator failing as it did in a
    deal video."""
    real = PlacementDetector._locate_changed
    now = {}

    def altered(self, frame, mask, *, widen=True):
        found = real(self, frame, mask, widen=widen)
        return alter(found) if now["i"] in frames else found

    monkeypatch.setattr(PlacementDetector, "_locate_changed", altered)
    return run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames, now)


def test_a_card_outlined_by_a_part_of_its_picture_is_outlined_by_its_twin_lying_by(monkeypatch):
    """A card found only by a part of its picture (a frame printed inside it, as on a gingham
    cloth whose lines cut every edge round the card: Vengeance deal video 9503, frame 10979, a
    `just-one-more` by two others) reads as no card there. Its twin lies by: that picture fitted
    near the part outlines the whole card, which is read and counts (it was a "not a card"
    prompt)."""
    from vision.geometry import quad_iou

    rng = np.random.default_rng(51)
    clip = Clip(rng, "cloth")
    face = plain_face("J", (30, 90, 170), (230, 230, 240), (40, 160, 230))
    h, w = face.shape[:2]
    cv2.rectangle(face, (12, h * 3 // 5), (w - 13, h - 13), (200, 200, 60, 255), -1)    # a band: a part is no card
    clip.faces = {"more": face, "red": clip.faces["red"]}
    clip.still(5)
    clip.place("more", card_quad((300, 240), 0, 170))
    laid_from = len(clip.frames)
    clip.place("more", card_quad((340, 236), 4, 170), side="right")     # over most of the first
    twin = clip.lying[-1][1]
    laid_to = len(clip.frames)
    clip.place("red", card_quad((520, 330), 80, 160), side="right")
    # The part: the twin's side off the first card (its other side lies on that card, so the
    # change left over is where a card lay already: not a hand to wait for).
    centre = twin.mean(axis=0)
    part = ((twin - centre) * 0.75 + centre + 0.12 * (twin[1] - twin[0])).astype(np.float32)
    detector = PlacementDetector(ColourClassifier(clip.faces))
    assert detector.classifier.decide(detector._probabilities(clip.frames[laid_to - 1], [part])[0]).label is None
    events = _run_locating_otherwise(monkeypatch, clip, range(laid_from, laid_to),
                                     lambda found: [(part, s) if quad_iou(q, twin) >= 0.5 else (q, s) for q, s in found])
    assert_events_match(events, clip.events)


def test_a_card_not_sure_of_where_little_changed_is_outlined_by_a_picture_of_its_leaning():
    """A dark card laid across dark cards on a dark cloth changes only a part of its place (Vengeance
    deal video 9403, frame 9877: a `-4`, 31 % changed), and its outline found a little off reads
    "not sure", leaning to its label. A picture of that label seen before, fitted there, outlines
    the whole card, which is read. A "no card" reading there is left as it is: only where most of
    its place changed may a card be outlined by the pictures lying by."""
    from vision.classifier import NO_CARD
    from vision.geometry import quad_iou
    from vision.placement import _Pending

    rng = np.random.default_rng(52)
    clip = Clip(rng, "dark")
    clip.still(5)
    clip.place("red", card_quad((220, 240), 10, 170))
    seen = len(clip.frames)
    clip.still(5)
    clip.place("red", card_quad((420, 250), 35, 170), side="right")
    frame = clip.frames[-1]
    twin = clip.lying[-1][1]
    detector = PlacementDetector(ColourClassifier(clip.faces))
    run(detector, clip.frames[:seen + 5])                      # it knows the first `red` only
    centre = twin.mean(axis=0)
    off = ((twin - centre) * 0.8 + centre + 0.15 * (twin[1] - twin[0])).astype(np.float32)
    probs = detector._probabilities(frame, [off])[0]
    view = detector._zone.view(frame)
    unsure = Prediction(None, 0.6, NOT_SURE, "red")
    pending, reading = detector._outlined_by_pictures_here(frame, view, _Pending(off, 0.31, probs), unsure)
    assert reading.label == "red" and quad_iou(pending.quad, twin) >= 0.9
    not_a_card = _Pending(off, 0.31, probs)
    assert detector._outlined_by_pictures_here(frame, view, not_a_card, Prediction(None, 0.9, NO_CARD)) == \
        (not_a_card, Prediction(None, 0.9, NO_CARD))


@pytest.mark.parametrize("kind", ["wood", "cloth", "dark"])
def test_cards_that_look_alike_laid_on_each_other_each_count(kind):
    """Cards of one family (same paper, same print; the model tells them apart) laid on each
    other change too little of their place to be seen as new by the change alone; each reads as
    none of the cards it lies on, so each counts."""
    clip = Clip(np.random.default_rng(40), kind)
    ink, frame = (60, 30, 190), (60, 90, 160)
    clip.faces = {"plus8": plain_face("+8", (40, 120, 220), ink, frame),
                  "plus2": plain_face("+2", (40, 120, 236), ink, frame),
                  "plus6": plain_face("+6", (54, 120, 222), ink, frame),
                  "blue": clip.faces["blue"]}
    clip.still(5)
    clip.place("plus8", card_quad((320, 240), 10, 180))
    clip.place("plus2", card_quad((330, 232), 14, 180), side="right")      # nearly in its place
    clip.place("plus6", card_quad((322, 238), 8, 180), side="left")
    clip.place("blue", card_quad((500, 240), 80, 170), side="right")
    assert_events_match(run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames), clip.events)


def _deal_video_stretch(deck, seed, start, end):
    """The committed model's detector fed frames start..end-1 of the held-out deal video of
    `python -m vision.evaluation.evaluate --video-seeds SEED`: its events, and the true placements after start."""
    from vision.classifier import CardClassifier
    from vision.evaluation.evaluate import deal_video

    video = deal_video(deck, seed)
    detector = PlacementDetector(CardClassifier.load(deck))
    events = []
    for i in range(start, end):
        events += detector.feed(video.frames[i], i)
    return events, [(e.frame_index, e.label) for e in video.events if start < e.frame_index < end]


def test_a_card_of_the_same_print_laid_on_another_counts():
    """Frames 1700-3890 of the flip7 deal video 9203: at frame 3875 a +6 is laid nearly square on
    a +2 of the same print. Only the numeral changes: drawn as new, the +6 explains 0.03 card
    areas of misfit, less than a card named pays (a known card found again must not count). Read
    as a label no card near it bears, it cannot be one found again, and pays less (without that,
    PRICE_NEW["named anew"] as "named", this stretch misses it: measured 39 events of 40)."""
    events, truth = _deal_video_stretch("flip7", 9203, 1700, 3890)
    assert [e for e in events if isinstance(e, Unsure)] == []
    assert [e.label for e in events if isinstance(e, Placement)] == [label for _, label in truth]
    assert truth[-1][1] == "+6"


def test_a_card_named_as_no_card_near_it_is_priced_as_new_anew():
    from vision.classifier import Prediction
    from vision.zone import ZoneCard

    detector = PlacementDetector(ColourClassifier({"red": card_face(np.random.default_rng(0))}))
    face, seen = np.zeros((10, 10, 3), np.uint8), np.ones((10, 10), bool)
    detector._zone.cards = [ZoneCard(card_quad((320, 240), 0, 180), "+2", face, seen)]
    named = lambda label, centre: detector._reading_key(Prediction(label, 0.99, None), card_quad(centre, 5, 180))  # noqa: E731
    assert named("+6", (322, 244)) == "named anew"          # on the +2: not it
    assert named("+2", (330, 250)) == "named"               # the +2 itself, or a twin: found again?
    assert named("+2", (700, 240)) == "named anew"          # far from any +2
    detector._zone.cards[0].label = None                    # never named nor leaned to: may be any
    assert named("+6", (322, 244)) == "named"
    assert detector._reading_key(Prediction(None, 0.5, NOT_SURE), card_quad((320, 240), 0, 180)) == NOT_SURE


def test_cards_under_a_card_taken_off_a_stack_are_not_counted_again():
    """Frames 1598-1720 of the held-out UNO Flip deal video 9403: a blue skip and an orange 3
    lie nearly in one place; a dark wild and then a red 8 are laid on the stack and slid off.
    The band round the leaving card's outline changes on the slivers of the cards beneath:
    that is not those cards leaving (forgotten, the orange 3 was counted again)."""
    events, truth = _deal_video_stretch("uno-flip", 9403, 1598, 1720)
    assert [label for _, label in truth] == ["dark-wild", "red-8"]
    assert_events_match(events, truth)


def test_a_card_on_gingham_whose_picture_has_its_own_outline_is_found_whole():
    """Frames 1375-1404 of the held-out Vengeance deal video 9503: a flip-four (magenta, its
    picture in a square frame of its own) is laid on a gingham cloth and slid away 12 frames
    later. The cloth's lines run into every edge contour round the card, so the locator's edges
    outline only the picture; the change's outline, probed as far in as out (it holds the card's
    shadow too), finds the card. Kept beside the picture's outline (one inside the other: the
    classifier settles which is the card), it is named. (The picture's outline alone left most
    of the change unexplained, and the detector waited for a hand until the card was gone.)"""
    events, truth = _deal_video_stretch("flip7-vengeance", 9503, 1375, 1404)
    assert truth == [(1392, "flip-four")]
    assert_events_match(events, truth)


def test_a_pushed_card_is_outlined_by_its_own_picture_not_a_stale_printing_of_its_label():
    """A card pushed (turned, over another) is found again by the locator and read as its label.
    Drawn as a new card, it must be drawn at the outline its own picture gives it, the outline
    its pose as the pushed card is fitted at: weighed at two outlines, "a new card here" and
    "the old one pushed" are not compared fairly. The label's printing may be another card's
    picture that fits nowhere here (flip7 deal video 9003, frame 10520: a `4` last seen as a
    printing at a larger outline); the outline then fell back to where the picture changed,
    which round a pushed card takes in the place it left (a `4` counted again four times)."""
    from vision.geometry import quad_iou
    from vision.zone import FACE_SIZE, ZoneCard

    for angle, shift in ((12, (20, 15)), (-10, (-18, 12))):
        clip = Clip(np.random.default_rng(5), "cloth")
        clip.still(5)
        clip.place("green", card_quad((300, 250), 0, 180))
        clip.place("blue", card_quad((340, 230), 15, 180), side="right")
        pushed_from = len(clip.frames)
        clip.nudge(1, shift, angle)
        detector = PlacementDetector(ColourClassifier(clip.faces))
        events = run(detector, clip.frames[:pushed_from])
        zone = detector._zone
        blue = zone.printed["blue"]
        stale = cv2.resize(card_face(np.random.default_rng(9), "1", PALETTE["blue"])[:, :, :3], FACE_SIZE)
        centre = blue.quad.mean(axis=0)
        zone.printed["blue"] = ZoneCard((blue.quad - centre) * 1.06 + centre + 200, "blue", stale,
                                        np.ones(stale.shape[:2], bool))
        outlines = []
        explain = zone.explain

        def explain_noting(view, changed, touched, poses, candidates):
            outlines.extend(q for q, _ in candidates)
            return explain(view, changed, touched, poses, candidates)

        zone.explain = explain_noting
        for i, frame in enumerate(clip.frames[pushed_from:], pushed_from):
            events += detector.feed(frame, i)
        assert_events_match(events, clip.events)
        [pushed] = [k for k in detector._known if k.label == "blue"]
        assert outlines and max(quad_iou(q, pushed.quad) for q in outlines) >= 0.98


def test_a_card_outlined_a_little_off_over_another_leaves_the_one_beneath_known(monkeypatch):
    """The outline of a card laid over part of another may come out a little off (its edge on a
    card is harder to see than on the table): a band of the new card then lies on what is left
    in view of the old one. Judged with that band, the card beneath would no longer look like
    itself and be forgotten (counted again later, when what lay on it has gone and it is read
    as a change of its own: flip7 deal video 9403, a cream 3 on an orange +8, frames 1983-2148)."""
    import dataclasses

    import vision.placement as placement

    clip = Clip(np.random.default_rng(16), "cloth")
    ink, frame = (60, 30, 190), (60, 90, 160)
    clip.faces = {"plus8": plain_face("+8", (40, 120, 220), ink, frame),
                  "three": plain_face("3", (225, 235, 240), ink, frame), "green": clip.faces["green"]}
    clip.still(5)
    clip.place("plus8", card_quad((270, 240), 10, 180))
    off_from = len(clip.frames)
    clip.place("three", card_quad((310, 250), 30, 180), side="right")     # over most of the +8
    off_to = len(clip.frames)
    clip.slide_away(1, "right")
    clip.place("green", card_quad((470, 130), 80, 150), side="top")
    off = [False]
    real = placement.locate_candidates

    def outlined_off(roi, **kw):     # outlines whose left edge (over the +8) is 24 px inside the card
        def off_quad(q):
            return q + np.where(q[:, :1] < q[:, 0].mean(), np.float32([24, 0]), np.float32([0, 0]))
        found = real(roi, **kw)
        return [dataclasses.replace(c, quad=off_quad(c.quad).astype(np.float32)) for c in found] if off[0] else found

    monkeypatch.setattr(placement, "locate_candidates", outlined_off)
    detector = PlacementDetector(ColourClassifier(clip.faces))
    events = []
    for i, frame in enumerate(clip.frames):
        off[0] = off_from <= i < off_to
        events += detector.feed(frame, i)
        if i == off_to - 1:
            assert sorted(k.label for k in detector._known) == ["plus8", "three"]
    assert_events_match(events, clip.events)


def test_a_card_read_in_the_place_of_the_card_slid_off_it_is_the_card_beneath(monkeypatch):
    """UNO Flip deal video 9303, frame 3787: a blue 1 laid nearly over a purple card is slid off,
    and the locator outlines the purple card where the blue one lay (the change has the blue
    card's shape). A purple reading in the blue card's very place, with the purple card's own
    picture back in its own place, is the purple card uncovered (the blue one has gone), not a
    purple card dealt."""
    clip = Clip(np.random.default_rng(17), "wood")
    ink, frame = (60, 30, 190), (60, 90, 160)
    clip.faces = {"purple": plain_face("S", (150, 40, 140), ink, frame),
                  "blue": plain_face("1", (225, 235, 240), ink, frame), "green": clip.faces["green"]}
    clip.still(5)
    beneath, over = card_quad((300, 240), 10, 180), card_quad((310, 245), 13, 180)
    clip.place("purple", beneath)
    clip.place("blue", over, side="right")
    slid_from = len(clip.frames)
    clip.slide_away(1, "right")
    slid_to = len(clip.frames)
    clip.place("green", card_quad((500, 120), 80, 150), side="top")
    sliding = [False]
    detector = PlacementDetector(ColourClassifier(clip.faces))
    real_locate_changed = detector._locate_changed

    def locate_changed(frame, mask, **kw):      # the purple card outlined where the blue one lay
        found = real_locate_changed(frame, mask, **kw)
        return [(over.copy(), 0.9)] if sliding[0] and found else found

    monkeypatch.setattr(detector, "_locate_changed", locate_changed)
    events = []
    for i, frame in enumerate(clip.frames):
        sliding[0] = slid_from <= i < slid_to
        events += detector.feed(frame, i)
    assert_events_match(events, clip.events)
    assert sorted(k.label for k in detector._known) == ["green", "purple"]


def test_a_known_card_outlined_a_little_off_and_pushed_keeps_its_picture_with_its_outline():
    """Vengeance deal video 9303, frame 4453: a card first outlined a few pixels off, then pushed
    a little. It is that card moved (no event), and the outline it is known by afterwards is
    still the one its picture was cut at: the picture cut there now is the one it holds (with
    an outline that no longer matched its picture the card misfit itself at the next change,
    and it and the card under it were forgotten and counted again)."""
    clip = Clip(np.random.default_rng(18), "wood")
    clip.still(5)
    clip.place("violet", card_quad((320, 240), 20, 180))
    detector = PlacementDetector(ColourClassifier(clip.faces))
    events = run(detector, clip.frames)
    (known,) = detector._known
    view = detector._zone.view(clip.frames[-1])
    known.quad = known.quad + np.float32([7, -5])        # outlined a little off when first seen
    known.face, known.seen = detector._zone.capture(view, known.quad)
    start = len(clip.frames)
    clip.nudge(0, (3, 2), 1)
    for i in range(start, len(clip.frames)):
        events += detector.feed(clip.frames[i], i)
    assert [e.label for e in events] == ["violet"]
    (known,) = detector._known
    now, _ = detector._zone.capture(detector._zone.view(clip.frames[-1]), known.quad)
    a, b = (cv2.cvtColor(x, cv2.COLOR_BGR2GRAY).ravel() for x in (now, known.face))
    assert np.corrcoef(a, b)[0, 1] >= 0.9


class _SecondLook(np.ndarray):
    """Probabilities from the detector's second look (marked so a stub can tell them apart)."""


class _ShyAtFirst(ColourClassifier):
    """Not sure of the `shy` labels at the first reading; names them at the second look."""

    def __init__(self, faces, shy):
        super().__init__(faces)
        self.shy = set(shy)

    def decide(self, probs):
        prediction = super().decide(probs)
        if prediction.label in self.shy and not isinstance(probs, _SecondLook):
            return Prediction(None, prediction.confidence, NOT_SURE)
        return prediction


def _marked_second_look(monkeypatch):
    import vision.reading as reading

    real = reading.second_look
    monkeypatch.setattr(reading, "second_look", lambda clf, frame, quad: real(clf, frame, quad).view(_SecondLook))


def test_a_new_card_not_sure_at_first_but_named_at_the_second_look_is_counted(monkeypatch):
    _marked_second_look(monkeypatch)
    clip = Clip(np.random.default_rng(2), "wood")
    clip.still(5)
    clip.place("blue", card_quad((320, 240), 30, 180))
    clip.place("red", card_quad((200, 230), -20, 170), side="left")
    assert_events_match(run(PlacementDetector(_ShyAtFirst(clip.faces, {"blue"})), clip.frames), clip.events)
    # Named at neither look: the table is asked, once.
    events = run(PlacementDetector(_Unsure(clip.faces)), clip.frames)
    assert [type(e) for e in events] == [Unsure, Unsure]


def test_a_card_uncovered_named_only_at_the_second_look_is_the_card_beneath_not_a_new_one():
    """Frames 7700-7800 of the held-out Vengeance deal video 9303: a 6 laid on a discard is dealt
    away at frame 7738, uncovering nearly all of the discard, whose outline the locator now finds
    a little off its known one. The model is not sure of it as cut there; the second look names
    it, and named it is judged as a named card is: the discard beneath, seen again. (Asked about
    it, the table was prompted for a card nobody dealt; read only when about to prompt, the
    discard was counted again.)"""
    events, truth = _deal_video_stretch("flip7-vengeance", 9303, 7700, 7800)
    assert [label for _, label in truth] == ["6", "6"]
    assert_events_match(events, truth)


def test_a_card_never_named_counts_once_when_named_later(monkeypatch):
    """Vengeance deal video 9503: a just-one-more card, outlined well inside itself, is "not
    sure" (the table is asked to show it again); pushed later and outlined right, it is named:
    that is its count (the table was never given it), once: the card named is known by its
    label from then on (with rules about outlines it was counted four times over that video)."""
    from vision.classifier import NOT_SURE

    clip = Clip(np.random.default_rng(18), "wood")
    clip.still(5)
    clip.place("blue", card_quad((300, 240), 10, 180))
    clip.still(20)
    placed = len(clip.frames)
    clip.nudge(0, (30, 12), 6)
    clip.place("green", card_quad((500, 120), 80, 150), side="top")
    inside = [True]

    class LeaningWhileOff(ColourClassifier):
        def decide(self, probs):
            prediction = super().decide(probs)
            if inside[0] and prediction.label == "blue":
                return Prediction(None, 0.5, NOT_SURE, "blue")
            return prediction

    detector = PlacementDetector(LeaningWhileOff(clip.faces))
    real_locate_changed = detector._locate_changed

    def locate_changed(frame, mask, **kw):          # outlines well inside the card
        found = real_locate_changed(frame, mask, **kw)
        if not inside[0]:
            return found
        return [((q - q.mean(axis=0)) * 0.85 + q.mean(axis=0) + np.float32([10, 0]), s) for q, s in found]

    monkeypatch.setattr(detector, "_locate_changed", locate_changed)
    monkeypatch.setattr(detector, "early_frames", 0)
    events = []
    for i, frame in enumerate(clip.frames):
        inside[0] = i < placed
        events += detector.feed(frame, i)
    assert [type(e) for e in events] == [Unsure, Placement, Placement]
    assert [e.label for e in events[1:]] == ["blue", "green"]


def _pushed_card(seed, kind, after, laid_scale=1.0):
    """A violet card on a `kind` table, then pushed to `after`: (the table, the frames before and
    after the push, and a zone that knows the card as laid, outlined `laid_scale` times its size
    about its centre)."""
    from tests.vision_fixtures import place
    from vision.zone import Zone

    rng = np.random.default_rng(seed)
    table = surface(rng, kind)
    face = Clip(rng, kind).faces["violet"]
    before = card_quad((300, 240), 20, 170)
    frame0, frame1 = table.copy(), table.copy()
    place(frame0, face, before)
    place(frame1, face, after)
    zone = Zone()
    view = zone.view(frame0)
    zone.start(view)
    centre = before.mean(axis=0)
    zone.add(view, (before - centre) * laid_scale + centre, "violet")
    return table, frame0, frame1, zone


def test_a_pushed_card_is_found_by_its_own_picture_near_its_old_place():
    """_pushed_to: the card shifted and turned a little is found where it lies now (its quad
    within a few pixels); a card taken away, or one still where it was, is not 'pushed'."""
    from vision.placement import _pushed_to

    after = card_quad((322, 226), 29, 170)
    table, frame0, frame1, zone = _pushed_card(21, "wood", after)
    [known] = zone.cards
    found = _pushed_to(frame1, known)
    assert found is not None and np.abs(found - after).max() < 6.0, found    # 3.5 % of its length
    assert _pushed_to(table, known) is None                    # taken away: nowhere near
    assert _pushed_to(frame0, known) is None                   # still where it was


def test_a_printed_card_is_fitted_either_way_up_when_its_located_outline_is_far_off(monkeypatch):
    """Zone.fit_printed: located at an outline a fifth too large, a card pushed and turned is
    fitted from a card of the printed size on that outline, either way up. Which way up comes
    from the picture at that outline, a guess for a picture nearly alike turned half round (UNO
    Flip deal video 9303: a `purple-skip-everyone`, its ellipse and arrow turned half round
    nearly themselves, guessed upside down; unfitted, the pushed card was counted again, four
    times in that video)."""
    import vision.zone as zone_module
    from vision.geometry import quad_area, quad_iou
    from vision.zone import Zone, half_turned

    after = card_quad((326, 228), 34, 170)
    _, _, frame1, zone = _pushed_card(23, "cloth", after)
    [printed] = zone.cards
    view = zone.view(frame1)
    centre = after.mean(axis=0)
    located = (after - centre) * 1.1 + centre                   # 21 % too large: no fit from it
    assert quad_area(located) > 1.2 * quad_area(after)
    right_way = zone.best_turn(view, printed, located)
    # ... and the picture search nearby finds nothing better (in that video it found part of
    # the card beneath)
    monkeypatch.setattr(zone_module, "search", lambda picture, look, quad, reach, turn: (quad, -1.0, -1.0))
    for guess in (right_way, half_turned(right_way)):
        monkeypatch.setattr(Zone, "best_turn", lambda self, view, card, quad, guess=guess: guess)
        zone._alignments = {}
        fitted = zone.fit_printed(view, printed, located)
        assert fitted is not None and quad_iou(fitted, after) > 0.9


@pytest.mark.parametrize("outlined", [1.08, 0.94])
def test_a_pushed_card_is_fitted_where_it_lies_though_its_picture_was_cut_a_little_off(outlined):
    """Zone.fit: a card whose picture was cut at an outline a little too large (a strip of the
    table in it) or too small, pushed a few pixels and degrees, is fitted where it lies now,
    its outline keeping its place on the card (only the picture's inside is aligned: the strip
    of table does not move with the card)."""
    from vision.geometry import quad_iou

    after = card_quad((309, 235), 23, 170)
    _, _, frame1, zone = _pushed_card(24, "cloth", after, laid_scale=outlined)
    [known] = zone.cards
    fitted = zone.fit(zone.view(frame1), known, known.quad)
    c1 = after.mean(axis=0)
    assert quad_iou(fitted, (after - c1) * outlined + c1) > 0.97


def test_a_pushed_card_the_locator_cannot_outline_is_still_known(monkeypatch):
    """Two cards of one label, the second over most of the first, the top one pushed where the
    locator finds no outline of it (as with two cards alike overlapping: one outline round
    both): found by its picture, it is not taken for gone, so when it is outlined again after
    the next push it is that card, not a new one."""
    import vision.placement as placement
    from vision.geometry import quad_iou

    clip = Clip(np.random.default_rng(22), "cloth")
    clip.still(5)
    clip.place("orange", card_quad((300, 250), 10, 180))
    clip.place("orange", card_quad((330, 230), 16, 180), side="right")
    hidden_from = len(clip.frames)
    clip.nudge(1, (12, -6), 7)
    hidden_to = len(clip.frames)
    lost = clip.lying[1][1]
    clip.nudge(1, (-8, 10), -9)
    clip.place("blue", card_quad((480, 300), 80, 170), side="right")
    real = placement.locate_candidates
    frame_now = {}

    def blind(roi, **kw):       # after the first push, the pushed card's outline is not found
        found = real(roi, **kw)
        if hidden_from <= frame_now["i"] < hidden_to:
            offset = frame_now["offset"]
            found = [c for c in found if quad_iou(c.quad + offset, lost) < 0.5]
        return found

    original_around = PlacementDetector._locate_around

    def around(self, frame, mask, margin):
        h, w = frame.shape[:2]
        mh, mw = mask.shape
        ys, xs = np.nonzero(mask)
        frame_now["offset"] = np.array([int(max(0, xs.min() * w / mw - margin)),
                                        int(max(0, ys.min() * h / mh - margin))], np.float32)
        return original_around(self, frame, mask, margin)

    monkeypatch.setattr(placement, "locate_candidates", blind)
    monkeypatch.setattr(PlacementDetector, "_locate_around", around)
    events = run(PlacementDetector(ColourClassifier(clip.faces)), clip.frames, frame_now)
    assert_events_match(events, clip.events)


def test_a_card_slid_away_is_not_taken_for_pushed_onto_a_shadow_of_its_picture(monkeypatch):
    """Frames 1213 and 1246 of the held-out deal video flip7 9403: a +8 slid out of the picture.
    Its grey picture alone matches a shadow on the dark cloth 85 px away (normalised correlation
    0.69: it ignores contrast; a search reaching that far found it there). Drawn there in its
    colours it does not fit the picture: it has gone, not been pushed there."""
    import vision.placement as placement
    from vision.classifier import CardClassifier
    from vision.evaluation.evaluate import deal_video

    video = deal_video("flip7", 9403)
    before, after = video.frames[1213], video.frames[1246]
    detector = PlacementDetector(CardClassifier.load("flip7"))
    detector.feed(before, 0)                                   # the cards lying there are known
    (plus8,) = [k for k in detector._known if np.linalg.norm(k.quad.mean(axis=0) - (227, 299)) < 20]
    detector._known.sort(key=lambda k: k is plus8)             # it lies on top (the picture shows it)
    shadow = (plus8.quad + np.float32([-82, -21])).astype(np.float32)
    searched = []
    monkeypatch.setattr(placement, "_pushed_to", lambda frame, known: searched.append(known) or shadow)
    events = [e for i in range(1, 40) for e in detector.feed(after, i)]     # (the hand that was there: gone)
    assert plus8 in searched                                   # the search was asked, and misled
    assert events == [] and all(k is not plus8 for k in detector._known)


def test_a_card_whose_place_did_not_change_is_not_forgotten_for_its_look():
    """A card cannot leave without changing its place: when a card is laid elsewhere, a known
    card whose place shows no change stays known even if its look no longer matches the one
    stored (cut, say, while a card lay over part of it)."""
    clip = Clip(np.random.default_rng(23), "wood")
    clip.still(5)
    clip.place("red", card_quad((220, 240), 15, 170))
    stored = len(clip.frames)
    clip.place("blue", card_quad((450, 250), 75, 170), side="right")
    detector = PlacementDetector(ColourClassifier(clip.faces))
    events = run(detector, clip.frames[:stored])
    detector._known[0].face = np.roll(detector._known[0].face, 12, axis=0)     # a picture gone stale
    for i in range(stored, len(clip.frames)):
        events += detector.feed(clip.frames[i], i)
    assert_events_match(events, clip.events)
    assert sorted(k.label for k in detector._known) == ["blue", "red"]


def test_a_card_read_within_a_larger_outline_that_names_another_card_is_not_the_places_reading():
    """The detector keeps one reading per place as a still photo does (vision.reading): a quad
    within the card's outline (an UNO card's oval, outlined as a card) that names another card,
    surer than the card's outline names the card, does not become the place's reading."""
    from types import SimpleNamespace

    from vision.classifier import NO_CARD

    class TwoCards:
        classes = ("green-7", "green-1", "none")

        def decide(self, probs):
            i = int(np.argmax(probs))
            return Prediction(self.classes[i], float(probs[i])) if i < 2 else Prediction(None, float(probs[i]), NO_CARD)

    card = card_quad((200, 240), 10, 200)
    oval = ((card - card.mean(axis=0)) * 0.7 + card.mean(axis=0)).astype(np.float32)
    detector = PlacementDetector(TwoCards())
    detector._pending = [SimpleNamespace(quad=card, probs=np.array([0.94, 0.03, 0.03])),
                         SimpleNamespace(quad=oval, probs=np.array([0.0, 1.0, 0.0]))]
    detector._confirmed = 1
    kept = detector._one_per_place()
    assert len(kept) == 1 and kept[0][0].quad is card
    assert kept[0][1].label == "green-7" and kept[0][1].confidence == pytest.approx(0.94)
