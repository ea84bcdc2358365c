"""vision.synth.scenes films a discard pile (UNO Flip): cards stay on the pile, a turned pile shows a new
card, a hand is laid out apart; the Flip 7 deal is what it was (the committed evaluations and the
demo video depend on the same seed giving the same video)."""

import numpy as np
import pytest

from vision.synth.scenes import make_deal_video


def test_pile_turned_pile_and_a_hand_laid_out():
    labels = ["red-1", "red-4", "red-4", "red-flip", "purple-6", "purple-2", "blue-3", "wild", "pink-5"]
    landings = ["pile", "pile", "pile", "pile", "new-pile", "pile", "new-apart", "apart", "apart"]
    video = make_deal_video(np.random.default_rng(3), labels, deck="uno-flip", landings=landings,
                            p_pass=0.0, p_nudge=0.0)
    assert [e.label for e in video.events] == labels
    # nothing leaves the pile but when it is turned over, and before the hand is laid out
    assert [(n["kind"], n["label"]) for n in video.notes if n["kind"] != "place"] == \
        [("take-pile", "red-flip"), ("take-pile", "purple-2")]
    assert [n["on_top"] for n in video.notes if n["kind"] == "place"] == \
        [False, True, True, True, False, True, False, False, False]


@pytest.mark.parametrize("labels, landings", [
    (["red-1", "red-2"], ["pile", "apart"]),     # "apart" only within a hand laid out
    (["red-1"], ["apart"]),
    (["red-1", "red-2"], ["pile", "on-top"]),    # no such landing
    (["red-1", "red-2"], ["pile"]),              # one per label
    (["red-1"], ["square"]),                     # "square" only on a pile
    (["red-1", "red-1"], ["new-apart", "square"]),
])
def test_landings_refused(labels, landings):
    with pytest.raises(ValueError):
        make_deal_video(np.random.default_rng(0), labels, deck="uno-flip", landings=landings)


def test_a_card_laid_square_covers_the_top_card_of_the_pile_exactly():
    """"square": the twin lands where the top card lies (after a nudge, where it lies now): the
    still picture after it is the one before, but for the camera's noise and a shadow's rim."""
    labels, landings = ["red-1", "red-4", "red-4"], ["pile", "pile", "square"]
    video = make_deal_video(np.random.default_rng(1), labels, deck="uno-flip", landings=landings,
                            p_pass=0.0, p_nudge=1.0)
    assert [n["kind"] for n in video.notes] == ["place", "nudge", "place", "nudge", "place"]
    lying = video.frames.lying(video.events[2].frame_index)
    assert [c.label for c in lying] == labels and np.array_equal(lying[-1].quad, lying[-2].quad)
    before = video.frames[video.notes[-1]["start"] - 1].astype(int)     # still, the twin nudged
    after = video.frames[len(video.frames) - 1].astype(int)
    assert np.mean(np.abs(before - after).max(axis=2) > 18) < 0.005     # (measured: 0.0016)


def test_flip7_deal_unchanged():
    """The deal of seed 2 as it was before the pile was added (placements, what each segment shows)."""
    video = make_deal_video(np.random.default_rng(2), ["3", "9", "freeze", "12", "3"])
    assert len(video.frames) == 267
    assert [(e.frame_index, e.label) for e in video.events] == \
        [(18, "3"), (42, "9"), (96, "freeze"), (127, "12"), (222, "3")]
    assert [(n["kind"], n["start"]) for n in video.notes] == \
        [("place", 8), ("place", 32), ("slide-away", 63), ("place", 87), ("place", 115), ("slide-away", 142),
         ("hand-pass", 164), ("nudge", 185), ("place", 209), ("slide-away", 238)]
