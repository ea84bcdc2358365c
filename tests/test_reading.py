"""The placement detector's reading of a card (vision.reading): both ways up, and a second look
at outlines a little off the located one for a card the model is not sure of."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.vision_fixtures import card_quad
from vision.reading import NEARBY_OUTLINES, nearby_outlines

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real"


def _turned(quad, angle_deg, about):
    t = np.radians(angle_deg)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], np.float32)
    return (quad - about) @ rot.T + about


def test_nearby_outlines_start_with_the_located_one_and_stay_close_to_it():
    quad = card_quad((320, 240), 25, 200)
    outlines = nearby_outlines(quad)
    assert len(outlines) == len(NEARBY_OUTLINES)
    assert np.allclose(outlines[0], quad)
    for outline in outlines:
        # every corner within 5 % of the card's long side of the located one
        assert np.abs(outline - quad).max() <= 0.05 * 200
        assert np.allclose(outline.mean(axis=0), quad.mean(axis=0), atol=0.04 * 200)


def test_nearby_outlines_follow_the_card_not_the_picture_axes():
    """Shifted along the card's own sides: the outlines of a turned card are the outlines of
    the card, turned (the second look is the same at any rotation)."""
    quad = card_quad((320, 240), 0, 200)
    about = np.array([320, 240], np.float32)
    turned = [_turned(o, 70, about) for o in nearby_outlines(quad)]
    assert all(np.allclose(a, b, atol=1e-3) for a, b in zip(nearby_outlines(_turned(quad, 70, about)), turned))


def test_an_outline_moved_along_a_skewed_quads_sides_keeps_its_shape_where_unscaled():
    """moved_outlines on a quad whose corners are not right angles (a card seen at a slant): no
    move gives the quad itself, the same scale along both sides the quad scaled about its centre,
    a scale along one side stretches it along that side alone, and shifts move it along each."""
    from vision.reading import moved_outlines

    quad = np.array([[100, 100], [230, 130], [215, 300], [80, 280]], np.float32)
    centre, along, across = quad.mean(axis=0), quad[1] - quad[0], quad[3] - quad[0]
    same, scaled, stretched, shifted = moved_outlines(quad, [(1, 1, 0, 0), (1.2, 1.2, 0, 0), (1.5, 1, 0, 0),
                                                             (1, 1, 0.1, -0.2)])
    assert np.allclose(same, quad, atol=1e-3)
    assert np.allclose(scaled, (quad - centre) * 1.2 + centre, atol=1e-3)
    assert np.allclose(stretched[1] - stretched[0], 1.5 * along, atol=1e-3)
    assert np.allclose(stretched[3] - stretched[0], across, atol=1e-3)
    assert np.allclose(shifted, quad + 0.1 * along - 0.2 * across, atol=1e-3)


def test_a_card_cut_a_little_off_is_named_at_the_second_look():
    """The committed flip7 model, on the deal video the model card reports (seed 9503, held-out
    fonts and tables): an `11` at frame 4952, at the locator's own outline there, is "not sure" as
    cut there, and read `11` from the outlines around it. (The model before the printed faces
    were dealt in was not sure of a `4` at frame 11288 with one corner moved 15 px; this one reads
    that `4` at once.)"""
    from vision.classifier import NOT_SURE, CardClassifier
    from vision.evaluation.evaluate import deal_video
    from vision.reading import read_probabilities, second_look

    frame = deal_video("flip7", 9503).frames[4952]
    located = np.array([[349.0, 125.2], [401.2, 196.1], [308.8, 264.3], [256.5, 193.4]], np.float32)
    classifier = CardClassifier.load("flip7")
    first = classifier.decide(read_probabilities(classifier, frame, [located])[0])
    assert first.label is None and first.reason == NOT_SURE
    assert classifier.decide(second_look(classifier, frame, located)).label == "11"


def test_one_reading_is_kept_per_place_the_surest_first():
    """Of quads overlapping by half the smaller one's area (a card, a part of its picture, an
    outline round it and its neighbour) the reading kept is a named card over "not sure" over
    "no card", then the more confident; a quad at another place keeps its own."""
    from vision.classifier import NO_CARD, NOT_SURE, Prediction
    from vision.reading import one_per_place

    card = card_quad((200, 240), 10, 200)
    part = ((card - card.mean(axis=0)) * 0.6 + card.mean(axis=0)).astype(np.float32)   # its picture
    round_both = ((card - card.mean(axis=0)) * 1.3 + card.mean(axis=0) + (30, 0)).astype(np.float32)
    elsewhere = card_quad((500, 240), 80, 180)
    quads = [round_both, part, card, elsewhere]
    readings = [Prediction(None, 0.9, NO_CARD), Prediction(None, 0.5, NOT_SURE, "7"), Prediction("7", 0.6),
                Prediction(None, 0.8, NO_CARD)]
    assert one_per_place(quads, readings) == [2, 3]
    readings[2] = Prediction(None, 0.4, NOT_SURE, "7")       # no card named there: the surer "not sure"
    assert one_per_place(quads, readings) == [1, 3]


def test_a_card_named_within_a_larger_outline_naming_another_card_is_not_sure():
    """A place holds one card: where a quad lies within a larger one that names another card (an
    UNO card's oval outlined as a card reads its tilted 7 as a 1, surer than the card's own outline
    reads the 7), the smaller one is "not sure", leaning to its card, so the place keeps the larger
    outline's reading; an outer outline that agrees, or names no card, leaves it named, as does
    another card overlapping it (one laid across another is two cards, not a picture on one), and
    a card at another place keeps its own."""
    from vision.classifier import NO_CARD, NOT_SURE, Prediction
    from vision.reading import inside_another_card, one_per_place, same_place

    card = card_quad((200, 240), 10, 200)
    oval = ((card - card.mean(axis=0)) * 0.7 + card.mean(axis=0)).astype(np.float32)
    elsewhere = card_quad((500, 240), 80, 180)
    quads = [card, oval, elsewhere]
    readings = [Prediction("green-7", 0.94), Prediction("green-1", 1.0), Prediction("red-2", 0.97)]
    assert one_per_place(quads, readings) == [1, 2]         # the surer, the oval, before
    read = inside_another_card(quads, readings)
    assert read == [readings[0], Prediction(None, 1.0, NOT_SURE, "green-1"), readings[2]]
    assert one_per_place(quads, read) == [2, 0]              # the card's own outline now
    for outer in (Prediction("green-1", 0.8), Prediction(None, 0.9, NO_CARD), Prediction(None, 0.5, NOT_SURE, "green-7")):
        assert inside_another_card(quads, [outer] + readings[1:]) == [outer] + readings[1:]
    across = card_quad((230, 250), 25, 200)             # another card laid over most of this one
    assert same_place(card, across)
    two = [Prediction("green-7", 0.94), Prediction("red-5", 0.99)]
    assert inside_another_card([card, across], two) == two


class _ByColour:
    """A stand-in classifier of one card, "7", read by the crop's dominant colour: green a sure 7,
    blue a 7 named by the model's own bar but below FALLBACK_CONFIDENCE, red no card. It keeps
    the mean colour of every crop it was asked to read."""
    classes = ("7", "none")
    spec = SimpleNamespace(classes=classes, none_index=1)

    def __init__(self):
        self.seen = []

    def probabilities(self, crops):
        out = []
        for crop in crops:
            mean = crop.reshape(-1, 3).mean(axis=0)
            self.seen.append(int(mean.argmax()))
            out.append({1: [0.95, 0.05], 0: [0.75, 0.25]}.get(int(mean.argmax()), [0.0, 1.0]))
        return np.array(out, np.float32)

    def decide(self, probs):
        from vision.classifier import reject_rule

        return reject_rule(probs, self.classes, 1, 0.6, 0.3)


class _MaskSeeing:
    """A stand-in card mask network (vision.card_mask.CardMask) that sees a card over every
    outline at `share` (its probability averaged over the outline's face); it counts the outlines
    it was asked about."""

    def __init__(self, share: float):
        self.share = share
        self.asked = 0

    def card_share(self, photo_bgr, quads):
        self.asked += len(quads)
        return np.full(len(quads), self.share, np.float32)


def test_a_fallback_outline_is_read_only_where_nothing_is_named_and_names_a_card_only_when_sure(monkeypatch):
    """read_photo: the locator's fallbacks (vision.locate.Candidate.fallback: cards found that
    suppression dropped) are read only at places none of its other quads named a card, and name
    one only at FALLBACK_CONFIDENCE; below it they are "not sure" (here the card mask network
    sees no card over them: see the next test for where it does)."""
    import cv2

    from vision import reading
    from vision.classifier import NOT_SURE
    from vision.locate import Candidate
    from vision.reading import FALLBACK_CONFIDENCE, read_photo

    monkeypatch.setattr(reading, "card_mask", lambda: _MaskSeeing(0.0))

    assert 0.75 < FALLBACK_CONFIDENCE
    frame = np.zeros((480, 760, 3), np.uint8)
    places = {}
    for name, x, inner_colour, outer_colour in (("square", 130, (0, 255, 0), (0, 0, 255)),
                                                ("named", 380, (0, 255, 0), (0, 255, 0)),
                                                ("unsure", 630, (255, 0, 0), (0, 0, 255))):
        outer = card_quad((x, 240), 0, 220)
        inner = ((outer - outer.mean(axis=0)) * 0.5 + outer.mean(axis=0)).astype(np.float32)
        cv2.fillConvexPoly(frame, np.round(outer).astype(np.int32), outer_colour)
        cv2.fillConvexPoly(frame, np.round(inner).astype(np.int32), inner_colour)
        places[name] = (outer, inner)
    candidates = [Candidate(outer, 1.0) for outer, _ in places.values()]
    candidates += [Candidate(inner, 0.9, fallback=True) for _, inner in places.values()]
    classifier = _ByColour()
    read = read_photo(classifier, frame, candidates)
    assert len(read) == 3                                       # one reading per place
    by_place = {name: next(p for q, p in read if np.allclose(q.mean(axis=0), outer.mean(axis=0)))
                for name, (outer, _) in places.items()}
    assert by_place["square"].label == "7"                      # the square reads no card, the card in it a 7
    assert by_place["named"].label == "7"
    assert by_place["unsure"].label is None and by_place["unsure"].reason == NOT_SURE
    # the three outer quads and two fallbacks read, each both ways up; not the fallback at the named place
    assert len(classifier.seen) == 2 * 5



def test_an_outline_found_at_another_tone_is_a_place_only_where_it_names_a_card(monkeypatch):
    """read_photo: a fallback found at another tone of the photo (Candidate.only_if_named) that
    names no card at FALLBACK_CONFIDENCE is no place at all (an empty table's scan lists nothing),
    where a locator's fallback reads "not sure"; one that names a card is read as any fallback.
    (The card mask network sees no card over them.)"""
    import cv2

    from vision import reading
    from vision.locate import Candidate
    from vision.reading import read_photo

    monkeypatch.setattr(reading, "card_mask", lambda: _MaskSeeing(0.0))

    frame = np.zeros((480, 520, 3), np.uint8)
    quads = {}
    for name, x, colour in (("blue", 130, (255, 0, 0)), ("green", 390, (0, 255, 0))):
        quads[name] = card_quad((x, 240), 0, 220)
        cv2.fillConvexPoly(frame, np.round(quads[name]).astype(np.int32), colour)
    read = read_photo(_ByColour(), frame, [Candidate(q, 0.9, fallback=True, only_if_named=True) for q in quads.values()])
    assert [(p.label, np.allclose(q, quads["green"])) for q, p in read] == [("7", True)]
    read = read_photo(_ByColour(), frame, [Candidate(quads["blue"], 0.9, fallback=True)])
    assert [p.label for _, p in read] == [None] and read[0][1].reason == "not sure"


class _Sure:
    """A stand-in classifier of one card, "7", named at `confidence` on every crop (by the
    model's own bar, 0.6)."""
    classes = ("7", "none")
    spec = SimpleNamespace(classes=classes, none_index=1)

    def __init__(self, confidence: float):
        self.confidence = confidence

    def probabilities(self, crops):
        return np.array([[self.confidence, 1.0 - self.confidence]] * len(crops), np.float32)

    def decide(self, probs):
        from vision.classifier import reject_rule

        return reject_rule(probs, self.classes, 1, 0.6, 0.3)


@pytest.mark.parametrize("only_if_named", [False, True])
def test_a_fallback_named_below_the_fallback_bar_names_its_card_where_the_card_mask_sees_a_card(monkeypatch, only_if_named):
    """read_photo: a fallback the model names at SEEN_CONFIDENCE or more, yet below
    FALLBACK_CONFIDENCE, names its card where the card mask network sees a card over it
    (MASK_SEES_CARD); where it sees less, or the model is less sure than SEEN_CONFIDENCE, it does
    not (a "not sure" place, or none for an outline that is a place only where it names a card).
    The network is asked only about such fallbacks."""
    from vision import reading
    from vision.locate import Candidate
    from vision.reading import FALLBACK_CONFIDENCE, MASK_SEES_CARD, SEEN_CONFIDENCE, read_photo

    assert SEEN_CONFIDENCE < 0.85 < FALLBACK_CONFIDENCE and MASK_SEES_CARD < 0.9
    frame = np.full((480, 520, 3), 128, np.uint8)
    candidates = [Candidate(card_quad((260, 240), 0, 220), 0.9, fallback=True, only_if_named=only_if_named)]

    def read(confidence, share):
        mask = _MaskSeeing(share)
        monkeypatch.setattr(reading, "card_mask", lambda: mask)
        return [p for _, p in read_photo(_Sure(confidence), frame, candidates)], mask.asked

    named, asked = read(0.85, 0.9)
    assert [p.label for p in named] == ["7"] and asked == 1
    for confidence, share in ((0.85, MASK_SEES_CARD - 0.1), (SEEN_CONFIDENCE - 0.05, 0.9)):
        places, _ = read(confidence, share)
        if only_if_named:
            assert places == []
        else:
            assert [(p.label, p.reason) for p in places] == [(None, "not sure")]
    assert read(0.95, 0.0)[0][0].label == "7" and read(0.95, 0.0)[1] == 0   # sure: the network not asked


def test_a_card_named_below_the_fallback_bar_where_the_card_mask_sees_no_card_is_not_sure(monkeypatch):
    """read_photo: a located quad (no fallback) the model names below FALLBACK_CONFIDENCE, where
    the card mask network sees no card over it (less than MASK_SEES_NO_CARD), is "not sure",
    leaning to the card: the table's pattern read as a card. Where the network sees a card, or
    the model is sure, the card is named; the network is asked only about the unsure readings."""
    from vision import reading
    from vision.locate import Candidate
    from vision.reading import FALLBACK_CONFIDENCE, MASK_SEES_NO_CARD, read_photo

    assert 0.85 < FALLBACK_CONFIDENCE and 0.0 < MASK_SEES_NO_CARD < 0.5
    frame = np.full((480, 520, 3), 128, np.uint8)
    candidates = [Candidate(card_quad((260, 240), 0, 220), 0.9)]

    def read(confidence, share):
        mask = _MaskSeeing(share)
        monkeypatch.setattr(reading, "card_mask", lambda: mask)
        return [p for _, p in read_photo(_Sure(confidence), frame, candidates)], mask.asked

    places, asked = read(0.85, MASK_SEES_NO_CARD - 0.1)
    # (asked again by the search round the place left unread, reading.searched: it sees no card)
    assert [(p.label, p.reason, p.leaning) for p in places] == [(None, "not sure", "7")] and asked == 2
    places, asked = read(0.85, 0.5)
    assert [p.label for p in places] == ["7"] and asked == 1
    places, asked = read(0.95, 0.0)
    assert [p.label for p in places] == ["7"] and asked == 0                  # sure: the network not asked


class _ByGreenShare:
    """A stand-in classifier of one card, "7": a green card, named the surer the more of the crop
    is the card's green (a crop a tenth of the card off, with the table in it, is no card)."""
    classes = ("7", "none")
    spec = SimpleNamespace(classes=classes, none_index=1)

    def probabilities(self, crops):
        green = np.array([((c[..., 1] > 200) & (c[..., 2] < 60)).mean() for c in crops])
        return np.stack([green ** 8, 1.0 - green ** 8], axis=1).astype(np.float32)

    def decide(self, probs):
        from vision.classifier import reject_rule

        return reject_rule(probs, self.classes, 1, 0.6, 0.3)


def test_a_place_left_unread_where_the_card_mask_sees_a_card_is_searched_to_the_cards_outline(monkeypatch):
    """read_photo: the only outline at a place a seventh of the card off (a card on a card, a
    blurred one), read as no card, is moved (reading.searched) to where the card is read: named
    at FALLBACK_CONFIDENCE at an outline close to the card's. Where the card mask network sees no
    card over it, it is not searched."""
    import cv2

    from vision import reading
    from vision.geometry import quad_iou
    from vision.locate import Candidate
    from vision.reading import FALLBACK_CONFIDENCE, read_photo

    frame = np.full((480, 640, 3), 128, np.uint8)
    card = card_quad((320, 240), 20, 210)
    cv2.fillConvexPoly(frame, np.round(card).astype(np.int32), (0, 255, 0))
    along, across = card[1] - card[0], card[3] - card[0]
    off = (card + 0.15 * along - 0.1 * across).astype(np.float32)
    classifier = _ByGreenShare()
    assert classifier.decide(classifier.probabilities([reading.warp_card(frame, off)])[0]).label is None

    monkeypatch.setattr(reading, "card_mask", lambda: _MaskSeeing(0.9))
    [(quad, reading_there)] = read_photo(classifier, frame, [Candidate(off, 0.9)])
    assert reading_there.label == "7" and reading_there.confidence >= FALLBACK_CONFIDENCE
    assert quad_iou(quad, card) > 0.85 > quad_iou(off, card)

    monkeypatch.setattr(reading, "card_mask", lambda: _MaskSeeing(0.0))
    [(quad, reading_there)] = read_photo(classifier, frame, [Candidate(off, 0.9)])
    assert reading_there.label is None and np.allclose(quad, off)
    # Asked not to search (real_eval's photos): the place is left as read.
    monkeypatch.setattr(reading, "card_mask", lambda: _MaskSeeing(0.9))
    [(quad, reading_there)] = read_photo(classifier, frame, [Candidate(off, 0.9)], search=False)
    assert reading_there.label is None and np.allclose(quad, off)


def test_a_walk_cuts_the_card_shown_at_the_largest_outline_read_as_that_card():
    """outline_read_as: of a larger outline round the card and the table, the card's own and its
    panel, the card's is the largest read as the card asked for (both ways up, at
    SHOWN_CONFIDENCE); outlines none of which reads as it, a label the classifier does not know, or
    no outlines, give None."""
    import cv2

    from vision.reading import outline_read_as

    frame = np.full((480, 640, 3), 128, np.uint8)
    card = card_quad((320, 240), 20, 200)
    cv2.fillConvexPoly(frame, np.round(card).astype(np.int32), (0, 255, 0))
    centre = card.mean(axis=0)
    around, panel = (centre + 1.3 * (card - centre)).astype(np.float32), (centre + 0.6 * (card - centre)).astype(np.float32)
    classifier = _ByGreenShare()
    assert np.allclose(outline_read_as(classifier, frame, "7", [around, panel, card]), card)
    assert outline_read_as(classifier, frame, "7", [around]) is None
    assert outline_read_as(classifier, frame, "8", [around, panel, card]) is None   # a label it does not know
    assert outline_read_as(classifier, frame, "7", []) is None


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_walk_cut_where_the_card_is_read_does_not_teach_a_card_its_twins_look(monkeypatch):
    """A printed Flip 7 `+6` on a tuning capture (real_eval --tuning-captures, seed 703003) after
    one look at each card. The walk's +6 lay where the largest card located was its printed panel
    (IoU 0.79): learnt from that crop, the +6's templates scored the +8 above it, and the search
    round the capture's unread place named it a +8 at 1.0. Cut where the model reads the +6
    (outline_read_as), the walk's crops read the capture as a +6."""
    from vision.adapt import CalibratedClassifier, calibrate
    from vision.classifier import CardClassifier
    from vision.evaluation import real_eval
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("flip7", REAL / real_eval.ART_FOLDERS["flip7"])
    base = CardClassifier.load("flip7")
    seed = real_eval.TUNING_SEED + 1000 * sorted(faces).index("+6") + 3
    frame, quad = real_eval.capture("flip7", faces, "+6", seed, "heldout")
    found = real_eval.located_candidates(frame, quad)

    def read_after_walk():
        walked = CalibratedClassifier(base, calibrate(base, "flip7", real_eval.calibration_crops("flip7", faces, 1, base)),
                                      "flip7")
        return real_eval.read_place(walked, frame, found).label

    assert read_after_walk() == "+6"
    monkeypatch.setattr("vision.reading.outline_read_as", lambda *_args: None)   # the largest card located
    assert read_after_walk() == "+8"


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_card_in_glare_that_the_templates_nearly_name_is_read_after_a_walk(monkeypatch):
    """A printed Flip 7 `flip-three` on a tuning capture (real_eval --tuning-captures, seed 718014),
    a lamp's glare over its middle and a hand beside it, after one look at each card: the templates
    score it below card_score, but within vision.adapt.LEANED_SLACK (0.4) of it, their likeliest
    card, the one the trusted model leans to and version 5's reading names: read. Within 0.3, as
    before 2026-12-05, it was refused."""
    from vision import adapt
    from vision.adapt import CalibratedClassifier, calibrate
    from vision.classifier import CardClassifier
    from vision.evaluation import real_eval
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("flip7", REAL / real_eval.ART_FOLDERS["flip7"])
    base = CardClassifier.load("flip7")
    seed = real_eval.TUNING_SEED + 1000 * sorted(faces).index("flip-three") + 14
    frame, quad = real_eval.capture("flip7", faces, "flip-three", seed, "heldout")
    found = real_eval.located_candidates(frame, quad)
    walked = CalibratedClassifier(base, calibrate(base, "flip7", real_eval.calibration_crops("flip7", faces, 1, base)),
                                  "flip7")
    assert real_eval.read_place(walked, frame, found).label == "flip-three"
    monkeypatch.setattr(adapt, "LEANED_SLACK", 0.3)
    assert real_eval.read_place(walked, frame, found).label is None


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_washed_out_card_is_outlined_by_the_card_mask_network_with_the_photos_highlights_deepened(monkeypatch):
    """A printed Flip 7 `7` on a tuning capture (real_eval --tuning-captures, seed 715013), washed
    out by the light: in the photo itself no outline comes nearer the card than IoU 0.6, and the
    card is not read. The card mask network, shown the photo with its highlights deepened
    (MASK_TONES), outlines it at IoU 0.9 or more: a fallback no search starts from, read a 7 out of
    the box."""
    from vision import reading
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import ART_FOLDERS, TUNING_SEED, capture, located_candidates, read_place
    from vision.geometry import quad_iou
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("flip7", REAL / ART_FOLDERS["flip7"])
    base = CardClassifier.load("flip7")
    frame, quad = capture("flip7", faces, "7", TUNING_SEED + 1000 * sorted(faces).index("7") + 13, "heldout")
    found = located_candidates(frame, quad)
    best = max(found, key=lambda c: quad_iou(c.quad, quad))
    assert quad_iou(best.quad, quad) >= 0.9 and best.fallback and not best.search_start
    assert read_place(base, frame, found).label == "7"

    monkeypatch.setattr(reading, "MASK_TONES", ())
    found = located_candidates(frame, quad)
    assert max(quad_iou(c.quad, quad) for c in found) < 0.6
    assert read_place(base, frame, found).label is None


def test_a_search_that_walks_onto_a_card_named_already_leaves_its_place_unread(monkeypatch):
    """reading.searched: a place left unread whose search ends at a place named already (the card
    beside it) keeps its own reading; elsewhere it takes the search's."""
    from vision import reading
    from vision.classifier import NOT_SURE, Prediction

    named = card_quad((200, 240), 0, 200)
    unread = card_quad((420, 240), 0, 200)
    places = [(named, Prediction("7", 0.99)), (unread, Prediction(None, 0.4, NOT_SURE, "7"))]
    monkeypatch.setattr(reading, "search_place", lambda classifier, image, outlines: (named + 5, Prediction("7", 0.95)))
    assert reading.searched(None, None, [], places) == places
    monkeypatch.setattr(reading, "search_place", lambda classifier, image, outlines: (unread + 5, Prediction("7", 0.95)))
    (_, first), (quad, second) = reading.searched(None, None, [], places)
    assert first.label == second.label == "7" and np.allclose(quad, unread + 5)


def test_a_place_is_searched_only_from_the_outlines_a_search_may_start_from(monkeypatch):
    """reading.searched: the card mask network's outlines at other tones of the photo
    (Candidate.search_start False) are not starts of a place's search; the others at the place are."""
    from vision import reading
    from vision.classifier import NO_CARD, Prediction
    from vision.locate import Candidate

    place = card_quad((320, 240), 0, 200)
    toned, located = Candidate(place + 3, 0.9, fallback=True, only_if_named=True, search_start=False), Candidate(place, 0.8)
    asked = []
    monkeypatch.setattr(reading, "search_place", lambda classifier, image, outlines: asked.append(outlines))
    reading.searched(None, None, [toned, located], [(place, Prediction(None, 1.0, NO_CARD))])
    assert len(asked) == 1 and len(asked[0]) == 1 and np.allclose(asked[0][0], place)


def test_a_dark_card_the_photo_outlines_only_with_its_shadows_lifted_is_read_there_as_a_fallback():
    """photo_candidates also locates the photo with its shadows lifted (OTHER_TONES): a dark
    UNO Flip card on a dotted cloth under a hand (a rendered scene, the "heldout" split's cloth)
    has no outline the locator finds in the photo itself, and is read at the lifted one; the
    outlines new at other tones are fallbacks (read where nothing is named), a place only where
    they name a card."""
    from vision.classifier import CardClassifier
    from vision.geometry import quad_iou
    from vision.locate import locate_candidates
    from vision.reading import SAME_OUTLINE, photo_candidates, read_photo
    from vision.synth.scenes import make_scene

    frame, cards = make_scene(np.random.default_rng(41), ["purple-4"], "uno-flip", split="heldout",
                              extra_cards=False)
    card = cards[0].quad
    classifier = CardClassifier.load("uno-flip")
    plain = locate_candidates(frame, keep_nested=True)
    assert not any(p.label for _, p in read_photo(classifier, frame, plain))
    candidates = photo_candidates(frame)
    assert all(np.array_equal(a.quad, b.quad) and a.fallback == b.fallback for a, b in zip(candidates, plain))
    lifted = candidates[len(plain):]
    assert lifted and all(c.fallback and c.only_if_named for c in lifted)
    assert all(quad_iou(c.quad, p.quad) < SAME_OUTLINE for c in lifted for p in plain)
    named = [(q, p) for q, p in read_photo(classifier, frame, candidates) if p.label]
    assert [p.label for _, p in named] == ["purple-4"] and quad_iou(named[0][0], card) > 0.9


def test_the_card_mask_networks_outlines_follow_the_locators_as_fallbacks(monkeypatch):
    """photo_candidates ends with the card mask network's outlines (vision.card_mask) that no
    outline found already is (IoU < SAME_OUTLINE): fallbacks, a place only where they name a card."""
    import cv2

    import vision.reading as reading
    from vision.locate import locate_candidates

    frame = np.full((480, 640, 3), 60, np.uint8)
    cv2.fillConvexPoly(frame, np.round(card_quad((200, 240), 10, 220)).astype(np.int32), (230, 235, 240))
    found = locate_candidates(frame, keep_nested=True)
    assert found                                                  # the drawn card is found by its edges
    elsewhere = card_quad((480, 240), 0, 200)

    class Mask:
        def outlines(self, photo, on_sides=False):
            return [(found[0].quad + 1.0, 0.9), (elsewhere, 0.8)]   # the card again, and somewhere new

    monkeypatch.setattr(reading, "card_mask", lambda: Mask())
    candidates = reading.photo_candidates(frame)
    assert np.array_equal(candidates[-1].quad, elsewhere)
    assert candidates[-1].fallback and candidates[-1].only_if_named
    assert sum(np.array_equal(c.quad, found[0].quad + 1.0) for c in candidates) == 0


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_card_whose_edges_drown_in_a_dotted_cloth_is_found_by_the_card_mask_network():
    """A tuning capture of the printed Flip 7 faces (real_eval --tuning-captures): an 8 on a pink
    dotted cloth in a hand's shadow. The locator finds nothing over it at any tone of the photo;
    the card mask network outlines it, and the photo is read as an 8 there."""
    import cv2

    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import TUNING_SEED, capture
    from vision.geometry import quad_iou
    from vision.locate import locate_candidates
    from vision.reading import _TONES, photo_candidates, read_photo
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("flip7", REAL / "flip7-art")
    label = "8"
    frame, card = capture("flip7", faces, label, TUNING_SEED + 1000 * sorted(faces).index(label) + 11, "heldout")
    for image in [frame] + [cv2.LUT(frame, tone) for tone in _TONES]:
        assert all(quad_iou(c.quad, card) < 0.5 for c in locate_candidates(image, keep_nested=True))
    read = read_photo(CardClassifier.load("flip7"), frame, photo_candidates(frame))
    assert [(p.label, quad_iou(q, card) > 0.85) for q, p in read if quad_iou(q, card) > 0.3] == [("8", True)]


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_card_run_together_with_the_card_beneath_is_found_on_the_sides_of_the_card_masks_region(monkeypatch):
    """A tuning capture of the printed Flip 7 faces (real_eval --tuning-captures): a 12 lying
    over another card on a checked cloth, a hand on it. The card mask network marks the two as one
    region; a card standing on a stretch of its side is the 12's outline, and the photo is read as
    a 12 there. With the regions' rectangles alone it is not read."""
    import vision.reading as reading
    from vision.card_mask import card_mask
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import TUNING_SEED, capture
    from vision.geometry import quad_iou
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("flip7", REAL / "flip7-art")
    label = "12"
    frame, card = capture("flip7", faces, label, TUNING_SEED + 1000 * sorted(faces).index(label) + 1, "heldout")
    classifier = CardClassifier.load("flip7")

    def read_here():
        return [(p.label, quad_iou(q, card) > 0.85) for q, p in reading.read_photo(classifier, frame)
                if quad_iou(q, card) > 0.3 and p.label is not None]

    assert read_here() == [("12", True)]

    class RectanglesOnly:
        def outlines(self, photo, on_sides=False):
            return card_mask().outlines(photo)

        def card_share(self, photo, quads):
            return card_mask().card_share(photo, quads)

    monkeypatch.setattr(reading, "card_mask", lambda: RectanglesOnly())
    # The search round a place left unread (reading.searched) finds it too, at a looser outline;
    # without it, nothing names the 12.
    assert read_here() == [("12", False)]
    monkeypatch.setattr(reading, "searched", lambda classifier, image, candidates, places: places)
    assert read_here() == []


@pytest.mark.skipif(not (REAL / "uno-flip-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_card_whose_picture_is_outlined_as_a_card_too_is_not_misread_after_a_walk():
    """A printed UNO Flip green 7 on a tuning capture (real_eval --tuning-captures, seed 720001):
    the locator outlines the card and, as a card too, the oval on it. After one look at each card
    the oval's crop reads as a green 1 at 1.0, surer than the card's own outline reads the 7 (0.94):
    the place is read at the card's outline (before, the table was told a green 1)."""
    from vision.adapt import CalibratedClassifier, calibrate
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import (ART_FOLDERS, TUNING_SEED, calibration_crops, capture,
                                             located_candidates)
    from vision.reading import read_photo
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("uno-flip", REAL / ART_FOLDERS["uno-flip"])
    base = CardClassifier.load("uno-flip")
    walked = CalibratedClassifier(base, calibrate(base, "uno-flip", calibration_crops("uno-flip", faces, 1, base)), "uno-flip")
    seed = TUNING_SEED + 1000 * sorted(faces).index("green-7") + 1
    frame, quad = capture("uno-flip", faces, "green-7", seed, "heldout")
    places = read_photo(walked, frame, located_candidates(frame, quad))
    assert places and places[0][1].label == "green-7"
    assert all(p.label in (None, "green-7") for _, p in places)


@pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                    reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")
def test_a_card_whose_outlines_are_all_a_little_off_is_read_after_the_search(monkeypatch):
    """A printed Flip 7 `7` on a tuning capture (real_eval --tuning-captures, seed 715048), on a
    card beneath, in a washed-out light: every outline the locator and the card mask network find
    over it reads "no card" out of the box. The search round the place (reading.searched) reads it
    a 7 at an outline close to the card's."""
    import vision.reading as reading
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import TUNING_SEED, capture, located_candidates, read_place
    from vision.geometry import quad_iou
    from vision.synth.printed import load_printed_faces

    faces = load_printed_faces("flip7", REAL / "flip7-art")
    frame, card = capture("flip7", faces, "7", TUNING_SEED + 1000 * sorted(faces).index("7") + 48, "heldout")
    classifier = CardClassifier.load("flip7")
    candidates = located_candidates(frame, card)
    [(quad, place)] = [(q, p) for q, p in reading.read_photo(classifier, frame, candidates)
                       if p.label is not None and quad_iou(q, card) > 0.3]
    assert place.label == "7" and quad_iou(quad, card) > 0.8
    monkeypatch.setattr(reading, "searched", lambda classifier, image, candidates, places: places)
    assert read_place(classifier, frame, candidates).label is None
