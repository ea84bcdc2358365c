"""Placement events from a stream of camera frames: one event per card laid in the deal zone.

A state machine, per frame:
- idle: the frame, shrunk to 160x120 grey, is compared with the last stable frame; if (almost)
  nothing changed, nothing else is done (well under a millisecond);
- disturbed: something changed; wait until the picture is still: no change from the previous
  frame nor from the first frame of the still run, for a few frames (a hand slowing down
  moves little per frame but a lot over several). Meanwhile, a new card that already lies
  unchanged for early_frames frames (default 1: the same in two frames in a row) with
  nothing moving over it, beside a hand still withdrawing, is located and, if the model names
  it beyond doubt, reported at once (the table sees it as the hand leaves); the reference
  picture takes it in;
- settled: the frame is compared with the last stable one (colour, 160x120); cards are
  located only around where it changed, with the change itself as a hint: first in a narrow
  margin around it, and in a wide one when that does not account for the change. If part of the
  change is neither a card found now nor the place of a known card, something else (a hand)
  is still there: wait for it to go (for at most max_hand_wait frames). Each changed card is
  classified, upright and turned half round, averaged (over confirm_frames still frames). A
  card-shaped place that changed less than a new card changes its place is still a changed
  card when it lies apart from the known cards and no longer shows what was there (a dark card
  on a dark cloth), or when it reads beyond doubt as none of the known cards under it (+2 on
  +8: same colours, same layout).
- then each changed card is judged against the cards known to lie on the table:
  * a known card that moved (nudged) or is seen again in its place (the card on it left):
    its place is empty now or hidden by it, nearby, and it looks the same (label or picture;
    for a card the model never named, the card it leaned to then, now named): no event. Only
    a card that was in view can have been pushed (not one under the cards over it), and its
    place counts as empty only where the change there is more than the rim of a card laid
    over it or taken off it (or where the sliver bared up to a card that moved no longer shows
    the card); of several cards it could be, the one whose outline it most nearly is.
    A card moved lies over what it now overlaps. A card in view that left its place is also
    looked for nearby by its own picture and colours (turned and shifted a little): found, it
    was pushed and has not gone, even where the locator finds no outline of it (two cards alike
    overlapping give one outline round both), and a reading there not of another label is that
    card. A known card seen in its place where a card of another label lay over it shows that
    card has gone;
  * a change the model is not sure of in nearly the very place of a known card, not changed
    all over, is that card seen again (partly under another, or uncovered): no prompt, and
    it hides none of the cards that were over it;
  * otherwise a new card: `Placement`, or `Unsure` when the classifier will not name it, not
    even at a second look (vision.reading: outlines a little off the located one; a card named
    there is judged as any named card). A card laid on top of another leaves the other
    visible beneath (its place is not vacated), so it counts, even with the same label;
  * a known card whose visible part now shows something else and that was not found
    elsewhere was slid away: no event. One that a new card hides (too little left in view to
    tell) stays known beneath it; one hidden in nearly the very place of a card over it that
    reads the same is a second outline of that card and is dropped. A change of less than
    half a card in which no card is found (a card pushed a little that the locator could not
    outline) forgets nothing.
Where overlapping quads compete (a card and half its picture), the best reading wins.
Nothing here knows any game: labels are opaque strings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.classifier import NOT_SURE
from vision.geometry import CARD_ASPECT, card_transform, intersection_area, quad_area, quad_aspect, quad_iou, warp_card
from vision.locate import locate_candidates
from vision.reading import read_again, read_probabilities


@dataclass(frozen=True)
class Placement:
    label: str
    confidence: float
    quad: np.ndarray
    frame_index: int


@dataclass(frozen=True)
class Unsure:
    frame_index: int
    reason: str            # "not sure" or "no card": the device asks to show the card again
    quad: np.ndarray


VisionEvent = Placement | Unsure


@dataclass
class _Known:
    quad: np.ndarray
    label: str | None
    look: np.ndarray       # small grey crop cut at `quad` for "is it the same picture" checks: the
                           # two change together (a look cut at another outline reads as another picture)
    score: float           # how well its outline was seen (locator score): a worse view never replaces it
    leaning: str | None = None   # unnamed (label None): the card the model leaned to

    @property
    def guess(self) -> str | None:
        """Its label, or for a card the model never named, the card it leaned to."""
        return self.label if self.label is not None else self.leaning


@dataclass
class _Pending:
    quad: np.ndarray
    score: float
    changed: float
    probs: np.ndarray
    crops: list = field(default_factory=list)


IDLE, DISTURBED, CONFIRMING = "idle", "disturbed", "confirming"
# An early read (while the hand withdraws) needs a card-proportioned outline and this confidence.
EARLY_ASPECT_TOLERANCE, EARLY_MIN_CONFIDENCE = 0.12, 0.9
# Search margins around the change, in card lengths: the narrow one first (see _locate_changed).
NARROW_MARGIN, WIDE_MARGIN = 0.3, 0.8
EDGE_PX = 3         # a quad this close to the edge of the searched region may be cut off by it
CUT_CHANGE = 0.2    # a cut-off quad holding this share of change may be the card asked about
NARROW_MIN_SCORE = 0.8  # a changed card found less clearly in the narrow search may be a part of one
log = logging.getLogger(__name__)


class PlacementDetector:
    """feed(frame_bgr, frame_index) -> list of Placement / Unsure events."""

    def __init__(self, classifier, *, tiny_long_side: int = 160, mid_long_side: int = 160,
                 pixel_threshold: int = 18, change_pixels: int = 12, settle_frames: int = 3,
                 confirm_frames: int = 1, max_hand_wait: int = 30, new_fraction: float = 0.35,
                 vacated_fraction: float = 0.35, min_card_frac: float = 0.01, max_card_frac: float = 0.5,
                 early_frames: int = 1):
        self.classifier = classifier
        self.tiny_long_side = tiny_long_side
        self.mid_long_side = mid_long_side
        self.pixel_threshold = pixel_threshold      # grey levels: a tiny-image pixel that changed
        self.change_pixels = change_pixels          # more changed tiny pixels than this = disturbed
        self.settle_frames = settle_frames          # still frames before a change is judged
        self.confirm_frames = confirm_frames        # still frames a new card is classified on
        self.max_hand_wait = max_hand_wait          # frames to wait for a still thing at the border
        self.new_fraction = new_fraction            # share of a card's area that changed = new/moved
        self.vacated_fraction = vacated_fraction    # share of a card's old place changed = it left
        self.min_card_frac = min_card_frac
        self.max_card_frac = max_card_frac
        self.early_frames = early_frames            # a card still this long while a hand moves is read (0: never)
        self.reset()

    def reset(self) -> None:
        """Forget the table: the next frame becomes the reference and its cards are known."""
        self.state = IDLE
        self.step = "idle"
        self._ref_tiny = None
        self._ref_mid = None
        self._prev_tiny = None
        self._still_tiny = None
        self._still = 0
        self._waited = 0
        self._known: list[_Known] = []
        self._pending: list[_Pending] = []
        self._confirmed = 0
        self._mask = None
        self._recent: list[np.ndarray] = []     # the last tiny frames while disturbed
        self._early_tried = 0                   # settled pixels at the last early look
        self._mid_of = None                     # (frame, its shrunk colour copy): made once a frame

    # ------------------------------------------------------------------ per frame
    def feed(self, frame_bgr: np.ndarray, frame_index: int) -> list[VisionEvent]:
        """Events this frame brings. `step` then says what the frame cost: "idle" (nothing
        changed), "watch" (waiting for stillness), "early" (something moves: a card lying still
        beside it may be read), "settled" (still again, and nothing left changed), "locate" (the
        settled frame: locate where it changed, classify), "confirm" (classify again) or "start"
        (the first frame)."""
        self._mid_of = None                  # a camera may hand the same array back, refilled
        tiny = self._tiny(frame_bgr)
        if self._ref_tiny is None:
            self.step = "start"
            self._start(frame_bgr, tiny)
            return []
        self.step = "watch"
        if self.state == IDLE:
            if self._changed(tiny, self._ref_tiny) <= self.change_pixels:
                self.step = "idle"
                return []
            self.state, self._still, self._waited = DISTURBED, 0, 0
            self._prev_tiny = tiny
            self._recent, self._early_tried = [tiny], 0
            return []
        # Still = no change from the last frame, nor from the first frame of the still run (a
        # hand slowing down moves a little each frame and a lot over a few).
        moving = self._changed(tiny, self._prev_tiny) > self.change_pixels
        if not moving and self._still > 0:
            moving = self._changed(tiny, self._still_tiny) > self.change_pixels
        self._prev_tiny = tiny
        self._recent = (self._recent + [tiny])[-(self.early_frames + 1):]
        if moving:
            self.state, self._still, self._pending = DISTURBED, 0, []
            if self.early_frames and len(self._recent) > self.early_frames:
                self.step = "early"
                return self._early(frame_bgr, tiny, frame_index)
            return []
        if self.state == DISTURBED:
            if self._still == 0:
                self._still_tiny = tiny
            self._still += 1
            if self._still < self.settle_frames:
                return []
            self.step = "locate"
            return self._settled(frame_bgr, tiny, frame_index)
        self.step = "confirm"
        return self._confirm(frame_bgr, tiny, frame_index)

    # ------------------------------------------------------------------ stages
    def _start(self, frame, tiny) -> None:
        self._ref_tiny, self._ref_mid = tiny, self._mid(frame)
        self._known = []
        for c in locate_candidates(frame, min_area_frac=self.min_card_frac, max_area_frac=self.max_card_frac):
            prediction = self.classifier.decide(self._probabilities(frame, [c.quad])[0])
            self._known.append(_Known(c.quad, prediction.label, _look(frame, c.quad), c.score, prediction.leaning))
        log.debug("start: cards already on the table %s",
                  [(k.label, k.quad.mean(axis=0).round().tolist()) for k in self._known])

    def _settled(self, frame, tiny, frame_index) -> list[VisionEvent]:
        mid = self._mid(frame)
        mask = self._change_mask(mid)
        if cv2.countNonZero(mask) == 0:
            self.step = "settled"
            self._accept(tiny, mid)          # a hand passed, or the light changed a little
            return []
        cands = self._locate_changed(frame, mask)
        if self._waited < self.max_hand_wait and self._something_else(mask, [q for q, _ in cands], frame.shape):
            self._waited += 1                # a hand lies still in the picture: wait for it to go
            self._still = self.settle_frames - 1
            return []
        self._mask = mask
        self._pending = []
        for quad, score in cands:
            changed = self._mask_share(mask, quad, frame.shape)
            match = self._best_known(quad)
            probs = None
            if changed < self.new_fraction and not self._landed_in_the_open(quad, changed, mid, frame.shape):
                probs = self._relabelled(frame, quad, changed)
                if probs is None:
                    if match is not None and score >= match.score:
                        # A known card, at most slightly moved: its look goes with its outline.
                        match.quad, match.look, match.score = quad, _look(frame, quad), score
                    continue
            if probs is None:
                probs = self._probabilities(frame, [quad])[0]
            self._pending.append(_Pending(quad, score, changed, probs))
        self._confirmed = 1
        self.state = CONFIRMING
        if self.confirm_frames <= 1:
            return self._judge(frame, tiny, mid, frame_index)
        return []

    def _early(self, frame, tiny, frame_index) -> list[VisionEvent]:
        """While a hand is still moving (leaving), a new card that has lain unchanged for
        early_frames frames and that nothing moves over is read now rather than once the whole
        picture is still: the table sees it on the screen as the hand withdraws. Only cards the
        model names are reported here; the reference picture takes each one in, so the still
        picture later finds nothing new there (a card moved after all is then a moved card)."""
        diffs = [cv2.absdiff(tiny, past) > self.pixel_threshold for past in self._recent[:-1]]
        moving = cv2.dilate(np.logical_or.reduce(diffs).astype(np.uint8), np.ones((3, 3), np.uint8))
        mid = self._mid(frame)
        mh, mw = mid.shape[:2]
        moving_mid = cv2.resize(moving, (mw, mh), interpolation=cv2.INTER_NEAREST) * 255
        mask = cv2.bitwise_and(self._change_mask(mid), cv2.bitwise_not(moving_mid))
        count = cv2.countNonZero(mask)
        card_px = self._card_px(mask, frame.shape)
        # Not enough still change for a card, or nothing new since the last look: no work.
        if count < 0.5 * card_px or abs(count - self._early_tried) < 0.15 * card_px:
            return []
        self._early_tried = count
        events: list[VisionEvent] = []
        # A card landing changes nearly all of its place (so the narrow search finds it), and
        # nothing may move over any of it.
        for quad, score in sorted(self._locate_changed(frame, mask, widen=False), key=lambda c: -c[1]):
            if self._mask_share(mask, quad, frame.shape) < 0.8 or self._mask_share(moving_mid, quad, frame.shape) > 0.02:
                continue
            if any(_overlap(quad, e.quad) >= 0.3 for e in events):
                continue
            # Read early only what is beyond doubt: a clear card outline and a confident reading
            # (a card half under the one below, or seen through a shadow, waits for the still picture).
            if abs(quad_aspect(quad) / CARD_ASPECT - 1.0) > EARLY_ASPECT_TOLERANCE:
                continue
            prediction = self.classifier.decide(self._probabilities(frame, [quad])[0])
            if prediction.label is None or prediction.confidence < EARLY_MIN_CONFIDENCE:
                continue                 # not named: the still picture judges it, prompt and all
            if any(k.guess == prediction.label and _overlap(quad, k.quad) >= 0.2 for k in self._known):
                continue                 # that card moved, or its twin on it: the still picture judges it
            log.debug("frame %d: early read %s at %s", frame_index, prediction.label, quad.mean(axis=0).round())
            events.append(Placement(prediction.label, prediction.confidence, quad, frame_index))
            self._known.append(_Known(quad, prediction.label, _look(frame, quad), score))
            self._take_in(quad, frame.shape, tiny, mid)
        return events

    def _take_in(self, quad, shape, tiny, mid) -> None:
        """The reference picture shows the card now (with a small rim for its shadow)."""
        h, w = shape[:2]

        def patched(ref, now):
            rh, rw = ref.shape[:2]
            region = np.zeros((rh, rw), np.uint8)
            poly = np.round(quad * np.array([rw / w, rh / h], np.float32)).astype(np.int32)
            cv2.fillConvexPoly(region, poly, 1)
            cv2.polylines(region, [poly], True, 1, thickness=3)
            out = ref.copy()             # the old reference may be a frame still in use elsewhere
            out[region > 0] = now[region > 0]
            return out
        self._ref_tiny, self._ref_mid = patched(self._ref_tiny, tiny), patched(self._ref_mid, mid)

    def _confirm(self, frame, tiny, frame_index) -> list[VisionEvent]:
        if self._pending:
            for p, probs in zip(self._pending, self._probabilities(frame, [p.quad for p in self._pending])):
                p.probs = p.probs + probs
        self._confirmed += 1
        if self._confirmed < self.confirm_frames:
            return []
        return self._judge(frame, tiny, self._mid(frame), frame_index)

    def _judge(self, frame, tiny, mid, frame_index) -> list[VisionEvent]:
        mask = self._mask
        events: list[VisionEvent] = []
        readings = self._one_per_place()
        # A change the model is not sure of in nearly the very place of a known card, not changed
        # all over (a card landing changes nearly all of its place), is that card seen again
        # (partly under another, or uncovered by one slid off it): no prompt, and it hides nothing.
        again = {}
        for n, (p, prediction) in enumerate(readings):
            if prediction.reason == NOT_SURE and p.changed < SEEN_AGAIN_CHANGE:
                ious = [quad_iou(p.quad, k.quad) for k in self._known]
                best = int(np.argmax(ious)) if ious else -1
                if best >= 0 and ious[best] >= SEEN_AGAIN_IOU and best not in again.values():
                    again[n] = best
        readings = [r for n, r in enumerate(readings) if n not in again]
        # Any other reading the model is not sure of gets a second look (vision.reading) before
        # anything is concluded from it: named now, it is judged as any named card is (moved,
        # uncovered or new), and only a card named at neither look prompts the table.
        readings = [(p, self._second_look(frame, p.quad, prediction, frame_index)) for p, prediction in readings]
        # A known card has left its place when the part of it that was visible (not under a later
        # card) and is not under a changed card now shows something else. A change read as "no
        # card" hides nothing: it is often the very place the card left.
        new_quads = [p.quad for p, prediction in readings
                     if prediction.label is not None or prediction.reason == NOT_SURE]
        # Nor is anything concluded under a card the model is not sure of (its outline may be
        # wrong too): the cards there stay known.
        unsure_quads = [p.quad for p, prediction in readings if prediction.reason == NOT_SURE]
        under_unsure = [any(_overlap(k.quad, q) >= 0.2 for q in unsure_quads) for k in self._known]
        # The part of its place in view is judged without the rim around the new cards (a card
        # laid on another shades a band of it and blurs its own edge into it), unless too
        # little is left then (a card nudged leaves only a sliver of its place bare).
        # But a sliver that changed right up to the new card and no longer shows the card's
        # picture (a nudge moves a card less than that rim) was left too.
        rims = [_grown(q, RIM) for q in new_quads]
        vacated, shares = [], []
        for i, k in enumerate(self._known):
            # (The cards over it with their rims too: one taken off it changes a band round
            # its outline, on the sliver of this one that showed.)
            above = [_grown(a.quad, RIM) for a in self._known[i + 1:]]
            share = self._mask_share(mask, k.quad, frame.shape, minus=rims + above)
            if share < self.vacated_fraction:
                bare = self._mask_share(mask, k.quad, frame.shape, minus=new_quads + above)
                if share < 0 or (bare >= self.vacated_fraction
                                 and _look_kept(frame, k, new_quads + above, SLIVER_VIEW) is False):
                    share = bare
            shares.append(share)
            vacated.append(share >= self.vacated_fraction)
        # A place changed under a card the model is not sure of proves nothing about the cards
        # there (only a card read again elsewhere, by label or look, shows one of them moved).
        left = [v and not u for v, u in zip(vacated, under_unsure)]
        # Only a card that was in view (not under the cards over it) can have been pushed (one
        # uncovered by a card taken off it is seen again, not moved: see _revealed).
        exposed = [_shown(k, [above.quad for above in self._known[i + 1:]], frame.shape) >= MIN_VIEW
                   for i, k in enumerate(self._known)]
        used, on_top, seen = set(again.values()), [], []
        # A card in view whose place it left may have been pushed a little to where the locator
        # finds no outline of it (two cards alike overlapping give one outline round both): it
        # is looked for near its old place by its own picture. Found, it has not left: a reading
        # there not of another label is that card, and it lies over what it now overlaps. (Not
        # one whose very place now reads beyond doubt as no card: it was taken away.)
        empty = [p.quad for p, prediction in readings if prediction.label is None
                 and prediction.reason != NOT_SURE and prediction.confidence >= EMPTY_CONFIDENCE]
        pushed = {}
        stayed = [k.quad for k, gone_from in zip(self._known, left) if not gone_from]
        for i in range(len(left)):
            if (left[i] and exposed[i] and i not in used
                    and not any(quad_iou(q, self._known[i].quad) >= EMPTY_IOU for q in empty)):
                quad = self._pushed(frame, mid, i, stayed + list(pushed.values()))
                if quad is not None:
                    pushed[i] = quad
                    left[i] = False
        for p, prediction in readings:
            look = _look(frame, p.quad)
            # (Named as it, or not named but not "no card" beyond doubt either.)
            its = (prediction.label is not None or prediction.reason == NOT_SURE
                   or prediction.confidence < EMPTY_CONFIDENCE)
            mine = [i for i, quad in pushed.items() if i not in used and quad_iou(p.quad, quad) >= PUSHED_READ_IOU
                    and prediction.label in (None, self._known[i].guess) and its]
            if mine:
                k = self._known[mine[0]]
                used.add(mine[0])
                on_top.append(mine[0])
                if prediction.label is not None:
                    k.label, k.leaning = prediction.label, None
                # The outline read, where it is nearly the place found (not one round it and its twin).
                quad = p.quad if quad_iou(p.quad, pushed[mine[0]]) >= PUSHED_OUTLINE_IOU else pushed[mine[0]]
                k.quad, k.look = quad, _look(frame, quad)
                log.debug("frame %d: changed card %s (%s %.2f) is the %s pushed", frame_index,
                          p.quad.mean(axis=0).round(), prediction.label, prediction.confidence, k.guess)
                continue
            # A change read as "no card" is not a card that moved: often it is the place one left.
            no_card = prediction.label is None and prediction.reason != NOT_SURE
            moved = None if no_card else self._moved_from(p.quad, prediction.label, look, vacated, exposed,
                                                          used | pushed.keys())
            # Seen again in its place; not uncovered by the very card that may be this one, moved.
            revealed = self._revealed(frame, p.quad, prediction.label, p.changed,
                                      [v and i != moved for i, v in enumerate(left)], used)
            # Both a card moved and one seen again in its place (twins, one over the other): the
            # one whose outline it is more nearly.
            if moved is not None and revealed is not None:
                if quad_iou(p.quad, self._known[moved].quad) > quad_iou(p.quad, self._known[revealed].quad):
                    revealed = None
            log.debug("frame %d: changed card %s (changed %.2f, edge score %.2f): %s %.2f %s, moved from %s",
                      frame_index, p.quad.mean(axis=0).round(), p.changed, p.score, prediction.label,
                      prediction.confidence, prediction.reason or "", moved if revealed is None else revealed)
            if revealed is not None:
                used.add(revealed)
                seen.append((revealed, p.quad))
                k = self._known[revealed]
                # Dragged (its old outline no longer shows it): its outline is where it lies now;
                # otherwise keep its outline as first seen.
                if quad_iou(p.quad, k.quad) < 0.7 or not _same_look(_look(frame, k.quad), k.look):
                    k.quad, k.look, k.score = p.quad, look, p.score
                if k.label is None:
                    k.label, k.leaning = prediction.label, None
                continue
            if moved is not None:
                used.add(moved)
                if not vacated[moved]:       # in its place (one moved lies over what it reaches)
                    seen.append((moved, p.quad))
                k = self._known[moved]
                if vacated[moved] or p.score >= k.score:   # in place, only a better view replaces it
                    k.quad, k.look, k.score = p.quad, look, p.score
                if prediction.label is not None:
                    k.label, k.leaning = prediction.label, None
                if vacated[moved]:
                    on_top.append(moved)     # seen whole where it lies now: over what it lies on
                continue
            if not no_card and p.changed < 0.7 and self._under_a_card_that_left(p.quad, left):
                # Uncovered, not dealt: part of it was in view all along (a card landing changes
                # nearly all of its place), and a card that lay over it has gone.
                self._known.append(_Known(p.quad, prediction.label, look, p.score, prediction.leaning))
                continue
            if prediction.label is not None:
                events.append(Placement(prediction.label, prediction.confidence, p.quad, frame_index))
            elif prediction.reason == NOT_SURE or (p.changed >= 0.5 and not self._where_a_card_was(p.quad)):
                # A new card-shaped thing the model will not name: ask to see the card again.
                events.append(Unsure(frame_index, prediction.reason or NOT_SURE, p.quad))
            else:
                continue                     # a change of card shape the model says is no card
            self._known.append(_Known(p.quad, prediction.label, look, p.score, prediction.leaning))
        for i, quad in pushed.items():
            if i not in used:                # pushed where no reading was: its place is the one found
                k = self._known[i]
                k.quad, k.look = quad, _look(frame, quad)
                used.add(i)
                on_top.append(i)
                log.debug("frame %d: the %s was pushed to %s", frame_index, k.guess, quad.mean(axis=0).round())
        # Known cards whose place is empty now and that did not move elsewhere were slid away;
        # so were those in plain view that no longer look like themselves (one that left while
        # hidden under another card, or was never told apart from it, must not linger: a card
        # later dealt to that place would be taken for it). But a card in view until now that a
        # new card hides (too little of it left in view to tell) lies under that card, whatever
        # the rim of the new card did to the sliver of its place left in view.
        fresh = [k.quad for k in self._known[len(left):]]
        covered = [exposed[i] and _shown(k, fresh + [a.quad for a in self._known[i + 1:len(left)]], frame.shape)
                   < MIN_VIEW for i, k in enumerate(self._known[:len(left)])]
        gone = [i < len(left) and left[i] and not covered[i] and i not in used for i in range(len(self._known))]
        # A known card read where a card of another label lay over it shows that that card has
        # gone (a dark card slid off a dark card changes too little of its place to tell).
        for i, quad in seen:
            for j in range(i + 1, len(left)):
                k = self._known[j]
                if j not in used and k.label != self._known[i].label and _overlap(quad, k.quad) >= UNCOVERED_OVERLAP:
                    gone[j] = True
        for i in range(min(len(vacated), len(self._known)) - 1, -1, -1):     # from the top down
            k = self._known[i]
            if i in used or gone[i] or under_unsure[i]:
                continue
            over = [q.quad for j, q in enumerate(self._known[i + 1:], i + 1) if not gone[j]]
            # Only where what shows of it changed now: a card cannot leave without changing its
            # place. (Its look may differ all the same from when it was stored, say by a card
            # that lay over it and left; the card is still there.)
            if self._mask_share(mask, k.quad, frame.shape, minus=over) < LOOK_CHECK_CHANGE:
                continue
            # (Nor with the rims of the cards read now: an outline a little off, as on a card its
            # edge is harder to see, leaves a band of the new card on what shows of this one.)
            if not _looks_like_itself(frame, k, over + [_grown(p.quad, RIM) for p, _ in readings]):
                gone[i] = True
        # Less than half a card's worth of change with no card found in it is a card pushed a
        # little that the locator could not outline (or a crumb, a shadow): it proves nothing,
        # and forgetting the cards there would count the card again when it is next seen.
        if not readings and cv2.countNonZero(mask) < 0.5 * self._card_px(mask, frame.shape):
            gone = [False] * len(gone)
        log.debug("frame %d: known %s gone %s", frame_index,
                  [(k.label, k.quad.mean(axis=0).round().tolist(), f"{'covered ' if c else ''}{'vacated' if v else ''}",
                    round(s, 2)) for k, c, v, s in zip(self._known, covered, vacated, shares)], gone)
        self._known = self._without_doubles([k for i, k in enumerate(self._known) if not gone[i] and i not in on_top]
                                            + [self._known[i] for i in on_top], frame.shape)
        self._accept(tiny, mid)
        return events

    @staticmethod
    def _without_doubles(known, shape) -> list[_Known]:
        """Known cards less those hidden (nearly all under the cards over them) in nearly the
        very place of a card over them that reads the same or was never named: a second outline
        of that card (a part of it taken for a card, or the place it had before a misjudged
        move), not a card of its own. Kept, it would never be seen to go, and a card of its
        label laid there later would be taken for it."""
        keep = []
        for i, k in enumerate(known):
            above = known[i + 1:]
            double = any(quad_iou(k.quad, a.quad) >= DOUBLE_IOU and (k.label is None or k.label == a.label)
                         for a in above)
            if not (double and _shown(k, [a.quad for a in above], shape) < MIN_VIEW):
                keep.append(k)
        return keep

    # ------------------------------------------------------------------ helpers
    def _one_per_place(self):
        """(pending, prediction) with at most one quad per place: where quads overlap (a card
        and half of its picture, a card and the texture around it) the best reading wins: a
        named card, else "not sure", else "no card", then the higher confidence."""
        read = [(p, self.classifier.decide(p.probs / self._confirmed)) for p in self._pending]
        read.sort(key=lambda pr: (pr[1].label is not None, pr[1].reason == NOT_SURE, pr[1].confidence),
                  reverse=True)
        chosen = []
        for p, prediction in read:
            area = quad_area(p.quad)
            if all(intersection_area(p.quad, c.quad) < 0.5 * min(area, quad_area(c.quad))
                   for c, _ in chosen):
                chosen.append((p, prediction))
        return chosen

    def _probabilities(self, frame, quads) -> np.ndarray:
        return read_probabilities(self.classifier, frame, quads)

    def _second_look(self, frame, quad, prediction, frame_index):
        again = read_again(self.classifier, frame, quad, prediction)
        if again is not prediction:
            log.debug("frame %d: second look at %s reads %s %.2f", frame_index, quad.mean(axis=0).round(),
                      again.label, again.confidence)
        return again

    def _accept(self, tiny, mid) -> None:
        self._ref_tiny, self._ref_mid = tiny, mid
        self.state, self._pending, self._mask = IDLE, [], None

    def _tiny(self, frame) -> np.ndarray:
        if self.tiny_long_side == self.mid_long_side:    # the same shrink, once a frame
            return cv2.cvtColor(self._mid(frame), cv2.COLOR_BGR2GRAY)
        return cv2.cvtColor(_shrunk(frame, self.tiny_long_side), cv2.COLOR_BGR2GRAY)

    def _mid(self, frame) -> np.ndarray:
        if self._mid_of is None or self._mid_of[0] is not frame:
            self._mid_of = (frame, _shrunk(frame, self.mid_long_side))
        return self._mid_of[1]

    def _changed(self, a, b) -> int:
        return int(np.count_nonzero(cv2.absdiff(a, b) > self.pixel_threshold))

    def _change_mask(self, mid) -> np.ndarray:
        diff = cv2.absdiff(mid, self._ref_mid).max(axis=2)
        mask = (diff > self.pixel_threshold).astype(np.uint8) * 255
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        # A change smaller than a tenth of the smallest card is noise, a shadow, a crumb.
        _, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
        small = stats[:, cv2.CC_STAT_AREA] < 0.1 * self.min_card_frac * mask.size
        small[0] = False                     # the background
        mask[small[labels]] = 0
        return mask

    def _something_else(self, mask, quads, shape) -> bool:
        """Part of the change is neither a card found now nor the place of a known card: a hand
        (or a sleeve, or an object) still in the picture. Worth waiting for it to go."""
        h, w = shape[:2]
        mh, mw = mask.shape
        scale = np.array([mw / w, mh / h], np.float32)
        card_px = quad_area(np.array(quads[0]) * scale) if quads else 0.02 * mask.size
        return self._unexplained(mask, list(quads) + [k.quad for k in self._known], shape) >= 0.2 * card_px

    def _locate_changed(self, frame, mask, *, widen: bool = True) -> list[tuple[np.ndarray, float]]:
        """Cards located in the changed part of the frame only (plus a margin).

        The change may show only part of a card (where it differs from what lay there), so the
        search may have to reach most of a card's length around it; but the work grows with the
        area searched and the cards lying in it. So a narrow margin is tried first, and (widen)
        the wide one when the narrow search does not account for the change: no changed card
        is found clearly (only parts of one may be) or none at all where half a card's worth
        changed, a card runs into the edge of the searched
        region where its part outside the cards found changed, or change is left that neither a
        card found nor the place of a known card covers."""
        h, w = frame.shape[:2]
        length = self._card_length(h, w)
        found, region = self._locate_around(frame, mask, NARROW_MARGIN * length)
        at_edge = [_at_edge(q, region, (h, w)) for q, _ in found]
        inside = [c for c, edge in zip(found, at_edge) if not edge]
        if not widen:
            return inside
        quads = [q for q, _ in inside]
        # A card cut off by the edge matters when its part outside the cards found changed
        # (not a card beneath the new one, whose uncovered part stays as it was).
        cut = [q for (q, _), edge in zip(found, at_edge)
               if edge and self._mask_share(mask, q, frame.shape, minus=quads) >= CUT_CHANGE]
        changed = [s for q, s in inside if self._mask_share(mask, q, frame.shape) >= self.new_fraction]
        # No changed card at all where half a card's worth changed: the narrow region may cut too
        # close round a card whose border is faint (a dark card on dark cards).
        lost = not changed and cv2.countNonZero(mask) >= 0.5 * self._card_px(mask, frame.shape)
        if (cut or lost or (changed and max(changed) < NARROW_MIN_SCORE)
                or self._unexplained(mask, quads + [k.quad for k in self._known], frame.shape)
                > 0.1 * self._card_px(mask, frame.shape)):
            found, _ = self._locate_around(frame, mask, WIDE_MARGIN * length)
            return found
        return inside

    def _locate_around(self, frame, mask, margin):
        """(cards found, region searched (x0, y0, x1, y1)) in the box around the change."""
        h, w = frame.shape[:2]
        mh, mw = mask.shape
        sx, sy = w / mw, h / mh
        ys, xs = np.nonzero(mask)
        x0 = int(max(0, xs.min() * sx - margin)); x1 = int(min(w, (xs.max() + 1) * sx + margin))
        y0 = int(max(0, ys.min() * sy - margin)); y1 = int(min(h, (ys.max() + 1) * sy + margin))
        roi = frame[y0:y1, x0:x1]
        area = float(roi.shape[0] * roi.shape[1])
        # The mask's pixels under the region at full size (what a nearest-neighbour resize of
        # the whole mask would give there, without making the rest).
        roi_mask = np.ascontiguousarray(mask[np.ix_((np.arange(y0, y1) * mh) // h, (np.arange(x0, x1) * mw) // w)])
        found = locate_candidates(roi, min_area_frac=min(0.9, self.min_card_frac * h * w / area),
                                  max_area_frac=min(1.0, self.max_card_frac * h * w / area),
                                  extra_mask=roi_mask)
        offset = np.array([x0, y0], np.float32)
        return [(c.quad + offset, c.score) for c in found], (x0, y0, x1, y1)

    @staticmethod
    def _unexplained(mask, quads, shape) -> int:
        """Changed pixels (of the mask) outside the quads and their soft rims."""
        h, w = shape[:2]
        mh, mw = mask.shape
        rest = mask.copy()
        scale = np.array([mw / w, mh / h], np.float32)
        for q in quads:
            poly = np.round(q * scale).astype(np.int32)
            cv2.fillConvexPoly(rest, poly, 0)
            cv2.polylines(rest, [poly], True, 0, thickness=3)   # drop shadow and soft rim
        return cv2.countNonZero(rest)

    def _card_px(self, mask, shape) -> float:
        """A card's area in pixels of the (reduced) change mask."""
        h, w = shape[:2]
        return (self._card_length(h, w) * mask.shape[1] / w) ** 2 / 1.4

    def _card_length(self, h, w) -> float:
        """A card's long side in pixels: as the known cards show it, else a typical deal-zone view."""
        if self._known:
            return float(np.median([np.sqrt(quad_area(k.quad) * 1.4) for k in self._known]))
        return 0.45 * min(h, w)

    def _pushed(self, frame, mid, i, taken) -> np.ndarray | None:
        """Where known card i, which left its place, lies now if it was pushed a little: found by
        its picture (_pushed_to), not in a place `taken` (where a card stayed, its twin, or one
        found pushed), and of the colours it showed (the picture alone can match a shadow on the
        cloth)."""
        k = self._known[i]
        quad = _pushed_to(frame, k)
        if quad is None or any(quad_iou(quad, q) >= PUSHED_APART for q in taken):
            return None
        then = self._mean_colour(self._ref_mid, k.quad, frame.shape, [a.quad for a in self._known[i + 1:]])
        if np.abs(then - self._mean_colour(mid, quad, frame.shape)).max() > PUSHED_COLOUR:
            return None
        return quad

    @staticmethod
    def _mean_colour(mid, quad, shape, hidden=()) -> np.ndarray:
        """Mean BGR of a (shrunk colour) picture inside the quad (given in frame pixels), less
        the `hidden` quads (the cards over it), unless they hide all of it."""
        h, w = shape[:2]
        mh, mw = mid.shape[:2]
        scale = np.array([mw / w, mh / h], np.float32)
        region = np.zeros((mh, mw), np.uint8)
        cv2.fillConvexPoly(region, np.round(quad * scale).astype(np.int32), 255)
        shown = region.copy()
        for q in hidden:
            cv2.fillConvexPoly(shown, np.round(q * scale).astype(np.int32), 0)
        return np.array(cv2.mean(mid, shown if cv2.countNonZero(shown) else region)[:3])

    @staticmethod
    def _mask_share(mask, quad, shape, minus=()) -> float:
        """Share of the quad's area (less the `minus` quads) where the mask is set, or -1 when
        too little of it is left to tell."""
        h, w = shape[:2]
        mh, mw = mask.shape
        scale = np.array([mw / w, mh / h], np.float32)
        region = np.zeros_like(mask)
        cv2.fillConvexPoly(region, np.round(quad * scale).astype(np.int32), 255)
        full = cv2.countNonZero(region)
        for q in minus:
            cv2.fillConvexPoly(region, np.round(q * scale).astype(np.int32), 0)
        left = cv2.countNonZero(region)
        if full == 0 or left < 0.03 * full:
            return -1.0
        return cv2.countNonZero(cv2.bitwise_and(region, mask)) / left

    def _relabelled(self, frame, quad, changed) -> np.ndarray | None:
        """A card laid on a known card that looks much like it (+2 on +8: the same colours, the
        same layout) changes less of its place than a new card does; but it reads, beyond
        doubt, as none of the known cards it lies on. Its probabilities then, else None."""
        over = [k for k in self._known if _overlap(quad, k.quad) >= RELABEL_OVERLAP]
        if changed < RELABEL_MIN_CHANGE or not over or any(k.label is None for k in over):
            return None
        probs = self._probabilities(frame, [quad])[0]
        prediction = self.classifier.decide(probs)
        if (prediction.label is None or prediction.confidence < EARLY_MIN_CONFIDENCE
                or any(k.label == prediction.label for k in over)):
            return None
        return probs

    def _landed_in_the_open(self, quad, changed, mid, shape) -> bool:
        """A card laid apart from the known cards that differs little from the table in colour
        (a dark card on a dark cloth) changes less of its place than the change threshold sees,
        yet what its place shows is no longer what it showed (the cloth's pattern is gone)."""
        if changed < OPEN_MIN_CHANGE or any(_overlap(quad, k.quad) >= OPEN_MAX_OVERLAP for k in self._known):
            return False
        h, w = shape[:2]
        mh, mw = mid.shape[:2]
        small = quad * np.array([mw / w, mh / h], np.float32)
        then, now = (_look(img, small, PATCH_SIZE) for img in (self._ref_mid, mid))
        return float((then * now).sum()) < OPEN_KEPT

    def _under_a_card_that_left(self, quad, vacated) -> bool:
        area = quad_area(quad)
        return any(vacated[i] and intersection_area(quad, k.quad) >= 0.25 * area
                   for i, k in enumerate(self._known[:len(vacated)]))

    def _where_a_card_was(self, quad) -> bool:
        """The quad is mostly the place of a known card (one that left leaves its outline in the
        change; one slid off a little leaves much of it)."""
        return any(_overlap(quad, k.quad) >= 0.5 for k in self._known)

    def _best_known(self, quad) -> _Known | None:
        best, best_iou = None, 0.5
        for k in self._known:
            iou = quad_iou(quad, k.quad)
            if iou > best_iou:
                best, best_iou = k, iou
        return best

    def _moved_from(self, quad, label, look, vacated, exposed, used) -> int | None:
        """Index of the known card this one is, moved; None when it is a new card."""
        size = np.sqrt(quad_area(quad))
        centre = quad.mean(axis=0)
        best, best_iou = None, -1.0
        for i, k in enumerate(self._known):
            if i in used or i >= len(vacated):
                continue
            near = np.linalg.norm(k.quad.mean(axis=0) - centre) <= 0.8 * size
            # In its very place: the same card uncovered or relit, if it reads or looks the same
            # (not its place alone: on a discard pile each card lands nearly exactly on the last).
            covered = quad_iou(quad, k.quad) >= 0.9
            if not near or not (vacated[i] and exposed[i] or covered):
                continue
            # Two readings decide; the look only where the model named one of them not (or, for a
            # card it never named, the card it leaned to then, now named: its look was cut at an
            # outline that may have been off, which is often why it was not named).
            named = label is not None and k.label is not None
            if (label == k.label) if named else (_same_look(look, k.look) or (label is not None and label == k.guess)):
                iou = quad_iou(quad, k.quad)
                if iou > best_iou:           # of several that fit, the one whose place it is most
                    best, best_iou = i, iou
        return best

    def _revealed(self, frame, quad, label, changed, vacated, used) -> int | None:
        """Index of the known card this one is, still in its place but seen better now: the same
        label in mostly the same place, and either a card that lay on it has left (or is read
        over with this label, the known card's own picture back in its own place), or only part
        of it changed (a new card of the same label landing there would change nearly all of it).
        A known card the model never named counts with the label it leaned to."""
        if label is None:
            return None
        for i, k in enumerate(self._known):
            if i in used or k.guess != label:
                continue
            iou = quad_iou(quad, k.quad)
            if iou >= 0.7 and changed < 0.7:
                return i
            # A card that lay on it has left: the card seen now in its place is it, uncovered
            # (its outline may differ from the part that showed before).
            uncovered = any(vacated[j] and _overlap(self._known[j].quad, k.quad) >= 0.1
                            for j in range(i + 1, len(vacated)))
            if uncovered and _overlap(quad, k.quad) >= 0.5:
                return i
            # Read in the very place of a card of another label that lay on it (that card cannot
            # be there: its place shows this label), with its own picture back in its own place.
            replaced = any(self._known[j].label not in (None, label) and quad_iou(quad, self._known[j].quad) >= 0.7
                           and _overlap(self._known[j].quad, k.quad) >= 0.1 for j in range(i + 1, len(vacated)))
            if replaced and _overlap(quad, k.quad) >= 0.5 and _same_look(_look(frame, k.quad), k.look, REVEALED_LOOK):
                return i
            # Dragged a little by a card slid off it: still mostly the picture that was there.
            if iou >= 0.3 and changed < 0.5:
                return i
        return None


def _shrunk(frame, long_side: int) -> np.ndarray:
    h, w = frame.shape[:2]
    s = long_side / max(h, w)
    return cv2.resize(frame, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)


def _overlap(a, b) -> float:
    """Intersection of two quads over the smaller one's area."""
    smaller = min(quad_area(a), quad_area(b))
    return intersection_area(a, b) / smaller if smaller > 0 else 0.0


LOOK_SIZE = (24, 34)
# Share of a known card's place that must be in view for what shows there to tell anything.
MIN_VIEW = 0.3
# The band around a new card that its shadow and soft edge change: its quad grown this much.
RIM = 1.25
# A hidden known card whose outline overlaps one over it this much (IoU) may be a second outline of
# it (a twin laid a little off it, or under an outline located between the two, overlaps less).
DOUBLE_IOU = 0.8
# A reading the model is not sure of, overlapping a known card this much (IoU) and changed less
# than this share of its place, is that known card seen again.
SEEN_AGAIN_IOU, SEEN_AGAIN_CHANGE = 0.8, 0.9
# A card-shaped change apart from the known cards (overlapping each less than OPEN_MAX_OVERLAP),
# with at least OPEN_MIN_CHANGE of its place changed, whose place correlates less than OPEN_KEPT
# with what the reference picture showed there (a PATCH_SIZE grey patch), is a new card however
# little its colour differs from the table's.
OPEN_MIN_CHANGE, OPEN_MAX_OVERLAP, OPEN_KEPT, PATCH_SIZE = 0.15, 0.2, 0.5, (12, 17)
# A card-shaped change with at least RELABEL_MIN_CHANGE of its place changed, over known cards
# (each overlapping it at least RELABEL_OVERLAP) of none of which it has the label, is a new card.
RELABEL_MIN_CHANGE, RELABEL_OVERLAP = 0.15, 0.2
# A known card read again (by label) over this share of a card of another label that lay over
# it: that card has gone.
UNCOVERED_OVERLAP = 0.5
# A known card whose picture correlates this much, in its own place, with how it was seen.
REVEALED_LOOK = 0.9
# A known card in view whose look correlates less than this with how it was first seen has gone.
LOOK_KEPT = 0.5
# A known card's look is checked only where at least this share of what shows of it changed.
LOOK_CHECK_CHANGE = 0.05
# Share of a known card's place that must be in view for its look to tell whether a sliver of
# it bared by a card over it (a nudge) is still the card.
SLIVER_VIEW = 0.15


# A pushed card is looked for shifted up to PUSH_REACH of its length and turned up to PUSH_TURN
# degrees; found where its picture correlates at least PUSHED_LOOK with how it was seen, not in
# the place of another card in view (IoU under PUSHED_APART: its twin), and by PUSHED_BETTER more
# than in its old place. A reading with IoU PUSHED_READ_IOU with where it was found is that card.
PUSH_REACH, PUSH_TURN, PUSHED_LOOK, PUSHED_APART, PUSHED_BETTER, PUSHED_READ_IOU = 0.3, 16.0, 0.65, 0.8, 0.1, 0.5
# ...and its outline, where it is at least this near (IoU) the place found, is the card's.
PUSHED_OUTLINE_IOU = 0.8
# A card whose place reads as no card with this confidence, in nearly the very outline it had
# (IoU), was taken away: it is not looked for as pushed.
EMPTY_CONFIDENCE, EMPTY_IOU = 0.9, 0.7
# A pushed card's mean colour where it was found differs from where it lay by at most this much
# (grey levels, any channel).
PUSHED_COLOUR = 30
# The coarse search's step and blur, in card lengths.
PUSH_STEP, PUSH_BLUR = 0.06, 0.045


def _pushed_to(frame, known: _Known) -> np.ndarray | None:
    """Where a known card pushed a little lies now, found by its own picture (see PUSH_REACH),
    or None. The look's sample points are moved as the card would be (turned about its centre,
    shifted), all poses of a stage sampled in one remap: first coarsely, every third point of the
    look on the picture and the look both blurred (a sharp picture matches only within a pixel or
    two: a coarse grid would miss it), then finely round the best, sharp, every other point; the
    pose found is judged on the whole look. Only the part of the frame the card can have reached
    is looked at."""
    w, h = LOOK_SIZE
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    inverse = np.linalg.inv(card_transform(known.quad, LOOK_SIZE))
    points = cv2.perspectiveTransform(np.stack([xs, ys], axis=-1).reshape(-1, 1, 2), inverse).reshape(h, w, 2)
    length = float(np.sqrt(quad_area(known.quad) * 1.4))
    reach = PUSH_REACH * length
    fh, fw = frame.shape[:2]
    x0, y0 = (np.maximum(known.quad.min(axis=0) - reach - 0.2 * length, 0)).astype(int)
    x1, y1 = (np.minimum(known.quad.max(axis=0) + reach + 0.2 * length, [fw, fh])).astype(int)
    origin = np.array([x0, y0], np.float32)
    grey = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    centre = known.quad.mean(axis=0) - origin
    blur = PUSH_BLUR * length
    # (The blurred picture needs no more than a quarter of the pixels.)
    small = cv2.resize(grey, (max(1, grey.shape[1] // 4), max(1, grey.shape[0] // 4)), interpolation=cv2.INTER_AREA)
    blurred = cv2.GaussianBlur(small, (0, 0), blur / 4)
    soft = cv2.GaussianBlur(known.look, (0, 0), blur * h / length)

    def best_of(image, target, rel, angles, shifts, scale=1.0):
        a = np.deg2rad(np.asarray(angles, np.float32))
        cos, sin = np.cos(a)[:, None] * scale, np.sin(a)[:, None] * scale
        turned_x = cos * rel[None, :, 0] - sin * rel[None, :, 1]                        # (A, N)
        turned_y = sin * rel[None, :, 0] + cos * rel[None, :, 1]
        moved = (centre + np.asarray(shifts, np.float32)) * np.float32(scale)          # (S, 2)
        map_x = (turned_x[:, None, :] + moved[None, :, 0, None]).reshape(-1, len(rel))  # (A * S, N)
        map_y = (turned_y[:, None, :] + moved[None, :, 1, None]).reshape(-1, len(rel))
        values = cv2.remap(image, map_x.astype(np.float32), map_y.astype(np.float32), cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
        # Normalised correlation with the zero-mean target, without centring every row.
        target = target - target.mean()
        n = values.shape[1]
        sums = values.sum(axis=1)
        spread = np.einsum("ij,ij->i", values, values) - sums * sums / n
        corr = values @ target / (np.sqrt(np.maximum(spread, 1e-6)) * np.linalg.norm(target) + 1e-6)
        best = int(np.argmax(corr))
        return float(corr[best]), float(angles[best // len(shifts)]), np.asarray(shifts[best % len(shifts)], np.float32)

    def grid(step, reach):
        ticks = np.arange(-reach, reach + 1e-6, step)
        return [(dx, dy) for dy in ticks for dx in ticks]

    def relative(every):         # every `every`-th sample point of the look, about the card's centre
        return points[::every, ::every].reshape(-1, 2) - origin - centre

    look = known.look
    step = PUSH_STEP * length
    _, angle, shift = best_of(blurred, soft[::3, ::3].ravel(), relative(3),
                              np.arange(-PUSH_TURN, PUSH_TURN + 1e-6, 8.0), grid(step, reach), scale=0.25)
    _, angle, shift = best_of(grey, look[::2, ::2].ravel(), relative(2), angle + np.arange(-4.0, 4.1, 2.0),
                              [tuple(shift + d) for d in grid(step / 4, step / 2)])
    # Judged on the whole look, found and where it was.
    corr, _, _ = best_of(grey, look.ravel(), relative(1), [angle], [tuple(shift)])
    here, _, _ = best_of(grey, look.ravel(), relative(1), [0.0], [(0.0, 0.0)])
    if corr < max(PUSHED_LOOK, here + PUSHED_BETTER):     # found, and better than where it was
        return None
    a = np.deg2rad(angle)
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    return ((known.quad - known.quad.mean(axis=0)) @ turn.T + known.quad.mean(axis=0) + shift).astype(np.float32)


def _grown(quad, factor) -> np.ndarray:
    """The quad scaled about its centre."""
    c = quad.mean(axis=0)
    return ((quad - c) * factor + c).astype(np.float32)


def _looks_like_itself(frame, known: _Known, over) -> bool:
    """The part of a known card not under the `over` quads still shows what it showed when it
    was seen; too little in view to tell counts as yes."""
    return _look_kept(frame, known, over, MIN_VIEW) is not False


def _look_kept(frame, known: _Known, over, min_view: float) -> bool | None:
    """Whether the part of a known card not under the `over` quads still shows what it showed
    when it was seen (normalised correlation of the grey look over that part); None when less
    than `min_view` of it is in view."""
    visible = _visible(known, over, frame.shape)
    if visible.mean() < min_view:
        return None
    now, then = _look(frame, known.quad)[visible], known.look[visible]
    a, b = now - now.mean(), then - then.mean()
    scale = float(np.linalg.norm(a) * np.linalg.norm(b))
    return scale > 0 and float((a * b).sum()) / scale >= LOOK_KEPT


def _visible(known: _Known, over, shape) -> np.ndarray:
    """Which cells of the known card's look are not under the `over` quads."""
    h, w = shape[:2]
    hidden = np.zeros((h, w), np.uint8)
    for q in over:
        cv2.fillConvexPoly(hidden, np.round(q).astype(np.int32), 255)
    matrix = card_transform(known.quad, LOOK_SIZE)
    return cv2.warpPerspective(255 - hidden, matrix, LOOK_SIZE, flags=cv2.INTER_NEAREST) > 0


def _shown(known: _Known, over, shape) -> float:
    """Share of the known card's place not under the `over` quads."""
    return float(_visible(known, over, shape).mean())


def _look(frame, quad, size=LOOK_SIZE) -> np.ndarray:
    """The card's picture as a small grey crop, centred and of unit length (so the sum of two
    looks' product is their normalised correlation; a flat crop is all zeros)."""
    crop = warp_card(frame, quad, size=size)
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grey -= grey.mean()
    return grey / (np.linalg.norm(grey) + 1e-6)


def _same_look(a, b, threshold: float = 0.8) -> bool:
    """Same picture, upright or turned half round (normalised correlation)."""
    return max(float((a * b).sum()), float((a * b[::-1, ::-1]).sum())) >= threshold


def _at_edge(quad, region, size) -> bool:
    """The quad reaches the edge of the searched region (x0, y0, x1, y1) where that is not the
    frame's edge (size (h, w)): the card may go on beyond it."""
    h, w = size
    x0, y0, x1, y1 = region
    (qx0, qy0), (qx1, qy1) = quad.min(axis=0), quad.max(axis=0)
    return bool((x0 > 0 and qx0 < x0 + EDGE_PX) or (y0 > 0 and qy0 < y0 + EDGE_PX)
                or (x1 < w and qx1 > x1 - EDGE_PX) or (y1 < h and qy1 > y1 - EDGE_PX))
