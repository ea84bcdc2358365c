"""Placement events from a stream of camera frames: one event per card laid in the deal zone.

Most frames must cost almost nothing, and a card must count once however it arrives (slid onto
another, laid square on its twin, pushed, with a hand passing over it), so `PlacementDetector` does
little until the picture has changed and is still again; then it locates cards only where it
changed, reads them (vision.reading) and lets the zone (vision.zone) explain the change: which
known cards stayed, went or moved, and which are new. Where the still pictures cannot tell (a card
laid square on its identical twin leaves the picture as it was, or changed as by a push), the
frames of motion, kept while the picture moves, are asked whether a copy of the card was carried in
beside it and laid there (vision.carried). A new card is a `Placement`, or `Unsure` when the
classifier will not name it, never a guess. Nothing here knows any game: labels are opaque strings.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

from vision.carried import laid_on_twin, sightings
from vision.classifier import NOT_SURE, Prediction
from vision.geometry import CARD_ASPECT, intersection_area, quad_area, quad_aspect, quad_iou
from vision.light import burnt_out, light_change, relight
from vision.locate import locate_candidates
from vision.reading import inside_another_card, one_per_place, read_again, read_probabilities
from vision.zone import CLASH_IOU, Zone, ZoneCard, search


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
class _Pending:
    quad: np.ndarray
    changed: float          # share of its place that changed
    probs: np.ndarray | float   # the classifier's probabilities, summed over the frames read (0.0: none yet)


@dataclass(eq=False)          # (told apart by identity: it holds arrays)
class _EarlyCard:
    card: ZoneCard          # as read (its picture: it may lie beneath a card laid before the still picture)
    mid: np.ndarray         # the detector's shrunk colour frame it was read on

    @property
    def quad(self) -> np.ndarray:
        return self.card.quad


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
    """feed(frame_bgr, frame_index) -> list of Placement / Unsure events.

    A state machine, per frame:
    - idle: the frame, shrunk to 160x120 grey, is compared with the last stable frame; if (almost)
      nothing changed, nothing else is done (well under a millisecond). If it changed, and the
      change is the light's (smooth over most of the picture: a lamp, a shadow, the camera's
      exposure; vision.light), the frame is seen in the stable frame's light from then on (still
      idle, if that was all; about a millisecond);
    - disturbed: something changed; wait until the picture is still: no change from the previous
      frame nor from the first frame of the still run, for a few frames (a hand slowing down
      moves little per frame but a lot over several). Meanwhile, a new card that already lies
      unchanged for early_frames frames (default 1: the same in two frames in a row) with
      nothing moving over it, beside a hand still withdrawing, is located and, if the model names
      it beyond doubt, reported at once (the table sees it as the hand leaves); the zone takes it in
      when the picture is still (below: a new card found there is that card, reported already).
      Every frame's shrunk colour copy is kept until the picture is still again (the frames of
      motion, at most MOTION_FRAMES: nothing is done with them unless a still picture is in doubt);
    - settled: the frame is compared with the last stable one (colour, 160x120); cards are
      located only around where it changed, with the change itself as a hint: first in a narrow
      margin around it, and in a wide one when that does not account for the change. If part of the
      change is neither a card found now nor the place of a known card, something else (a hand)
      is still there: wait for it to go (for at most max_hand_wait frames). A known card whose
      place changed with no card found on it may have its twin laid square on it (only the parts
      of the picture that differ changed, too little to outline): a card is looked for at its
      outline. Each card found where the picture changed is classified, upright and turned half
      round; one the model will not name is outlined again by the pictures of the cards lying by (a
      part of its picture may have been outlined) and read there, and one it is not sure of by a
      picture of the label it leaned to (its outline may be a little off). If nothing changed (a
      hand passed; or a card was laid square on its twin, pixel for pixel), see below;
    - then the change is explained (vision.zone): the zone holds the table and every card known to
      lie on it, bottom up, each with the picture it showed when it was laid. Each explanation —
      which known cards stayed, went (slid away) or moved (pushed: to an outline found now, or to
      where its own picture is found nearby; turned a little, never to the other way up), and which
      cards found now are new (each drawn at the outline its label's picture gives it: a card of
      that label lying here first, so that a card pushed is weighed as new and as pushed at one
      outline) — is drawn and compared with the picture; the best fit, after a small price per
      happening, is taken. A card slid off another reveals the one beneath as it was laid; a pushed
      card or a twin laid a little off its twin leaves a sliver of what lay under it: the drawing
      tells these from a new card where rules about outlines cannot. A new card is a `Placement`, or
      `Unsure` when the classifier will not name it, not even at a second look (vision.reading:
      outlines a little off the located one); a card asked about that the model names later where it
      lies is a `Placement` then (it counts once). Two cases the drawing cannot tell are asked of
      the frames of motion (vision.carried: was a copy of the card seen carried in beside it,
      its twin lying there as before, and laid there?): a known card that fits where a card of
      its own label is found now, pushed, or its twin laid a little off it (if a copy was laid
      there, it was not pushed); and a change that comes to nothing (no card came, went or
      moved), over a card nothing lies on (if a copy was laid there, its twin lies square on it).
      The reading and the explaining are done at the next frame's call, from the settled frame's
      picture: a placement's work is shared by two frames (see `feed`).
    Where overlapping quads compete (a card and half its picture), the best reading wins.
    """

    def __init__(self, classifier, *, tiny_long_side: int = 160, mid_long_side: int = 160,
                 pixel_threshold: int = 18, change_pixels: int = 12, settle_frames: int = 3,
                 confirm_frames: int = 1, max_hand_wait: int = 30, new_fraction: float = 0.35,
                 min_card_frac: float = 0.01, max_card_frac: float = 0.5, early_frames: int = 1):
        self.classifier = classifier
        self.tiny_long_side = tiny_long_side
        self.mid_long_side = mid_long_side
        self.pixel_threshold = pixel_threshold      # grey levels: a tiny-image pixel that changed
        self.change_pixels = change_pixels          # more changed tiny pixels than this = disturbed
        self.settle_frames = settle_frames          # still frames before a change is judged
        self.confirm_frames = confirm_frames        # still frames a new card is classified on
        self.max_hand_wait = max_hand_wait          # frames to wait for a still thing at the border
        self.new_fraction = new_fraction            # share of a card's area that changed: a card landed there
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
        self._ref_view = None
        self._burnt = None                      # this frame's burnt-out values (vision.light.burnt_out), if relit
        self._prev_tiny = None
        self._still_tiny = None
        self._still = 0
        self._waited = 0
        self._zone = Zone()
        self._pending: list[_Pending] = []
        self._confirmed = 0
        self._mask = None
        self._recent: list[np.ndarray] = []     # the last tiny frames while disturbed
        self._early_tried = 0                   # settled pixels at the last early look
        self._early_cards: list[_EarlyCard] = []  # cards reported early since the picture was last still
        # The shrunk colour frames (frame index, picture) since the picture was last still: what a
        # hand carried in (vision.carried) when the still picture is in doubt.
        self._motion: deque = deque(maxlen=MOTION_FRAMES)
        self._mid_of = None                     # (frame, its shrunk colour copy): made once a frame
        self._owed = None                       # (frame, tiny, mid, index, burnt): a settled change to judge
        self._unread = None                     # a still frame (a copy) whose pending cards are read next call
        self.picture_version = getattr(self, "picture_version", 0) + 1   # moves when the cards known change
        self._accepted_cards: tuple = ()

    # ------------------------------------------------------------------ kept across a restart
    def picture(self) -> tuple[dict, dict[str, np.ndarray]] | None:
        """(plain data, named arrays): the table as the detector knows it, every card lying in the
        zone with its picture (covered ones too), and the reference frame; None while something
        moves. `restore` takes it back: after a restart, a card lying there is not read again."""
        if self.state != IDLE or self._ref_tiny is None:
            return None
        data, arrays = self._zone.to_arrays()
        arrays.update(ref_tiny=self._ref_tiny, ref_mid=self._ref_mid, ref_view=self._ref_view)
        return data, arrays

    def restore(self, data: dict, arrays) -> None:
        """The table as `picture` gave it (ValueError, KeyError or TypeError if it is not one): the
        next frame is compared with its reference as any frame is (a frame of another size starts
        afresh)."""
        zone = Zone.from_arrays(data, arrays)
        refs = [np.asarray(arrays[name], np.uint8) for name in ("ref_tiny", "ref_mid", "ref_view")]
        if refs[0].ndim != 2 or refs[1].shape[:2] != refs[0].shape or refs[2].shape != zone.table.shape:
            raise ValueError("the reference frame is not a picture of the table")
        self.reset()
        self._zone = zone
        self._ref_tiny, self._ref_mid, self._ref_view = refs
        self._accepted_cards = self._cards_key()

    def _cards_key(self) -> tuple:
        return tuple((id(k), k.quad.tobytes()) for k in self._zone.cards)

    @property
    def cards_in_zone(self) -> list[ZoneCard]:
        """The cards known to lie in the zone now, bottom up (a copy: for a view of what was found)."""
        return list(self._zone.cards)

    @property
    def _known(self) -> list[ZoneCard]:
        """The cards known to lie in the zone, bottom up."""
        return self._zone.cards

    # ------------------------------------------------------------------ per frame
    def feed(self, frame_bgr: np.ndarray, frame_index: int) -> list[VisionEvent]:
        """Events this frame brings. `step` then says what the frame cost: "idle" (nothing
        changed), "watch" (waiting for stillness), "early" (something moves: a card lying still
        beside it may be read), "settled" (still again, and nothing left changed), "locate" (the
        settled frame: locate where it changed, classify), "confirm" (classify again), "judge"
        (the frame after the settled one: its change explained, before this frame is looked at
        as any other) or "start" (the first frame).

        A placement's work is shared by two frames so that neither holds up the camera long:
        the settled frame is located, and the next frame's call reads the cards found there and
        explains the change (from the settled frame's picture: the events are the same as if it
        were done at once, one frame later; each carries the settled frame's index). Locating
        and reading in one frame was the costliest frame through a calibration profile, whose
        reading runs the look network and the templates too (bench/vision_bench.py)."""
        owed = self._owed is not None
        judged = self.finish()
        events = self._look(frame_bgr, frame_index)
        if owed:
            self.step = "judge"
        return judged + events

    def finish(self) -> list[VisionEvent]:
        """The events still owed (call it when the stream ends: a change settled on its last
        frame is read and judged only on the next)."""
        self._read_owed()
        if self._owed is None:
            return []
        owed, self._owed = self._owed, None
        self.step = "judge"
        return self._judge(*owed)

    def _look(self, frame_bgr: np.ndarray, frame_index: int) -> list[VisionEvent]:
        self._mid_of = None                  # a camera may hand the same array back, refilled
        tiny = self._tiny(frame_bgr)
        if self._ref_tiny is None or self._ref_tiny.shape != tiny.shape:   # (restored from another camera size)
            if self._ref_tiny is not None:
                self.reset()
            self.step = "start"
            self._start(frame_bgr, tiny)
            return []
        gain = None
        changed = self._changed(tiny, self._ref_tiny)
        if changed > self.change_pixels or self.state != IDLE:
            # Changed from the reference: if by the light (vision.light), the frame is seen in the
            # reference's light from here on (the usual still frame skips this). The small copies
            # first: a still table in a changed light ends there, as idle. Once something moves,
            # every frame's light is measured: a light that changes the colours more than the
            # grey (a warm lamp: blue x0.8, grey x0.98) changes too few grey pixels to be seen, and
            # a picture judged in it unmeasured would be kept as the zone's in another light.
            gain = light_change(self._mid(frame_bgr), self._ref_mid)
            if gain is not None:
                tiny, mid = self._relit(frame_bgr, gain)
                changed = self._changed(tiny, self._ref_tiny)
        self.step = "watch"
        if self.state == IDLE and changed <= self.change_pixels:
            self.step = "idle"
            return []
        # (A new array each frame, the light's measure made it already: keeping it costs nothing.)
        self._motion.append((frame_index, mid if gain is not None else self._mid(frame_bgr)))
        if self.state == IDLE:
            self.state, self._still, self._waited = DISTURBED, 0, 0
            self._prev_tiny = tiny
            self._recent, self._early_tried = [tiny], 0
            return []
        self._burnt = None
        if gain is not None:                 # what follows reads the whole frame: in that light too
            self._burnt = burnt_out(frame_bgr)
            frame_bgr = relight(frame_bgr, gain)
            self._mid_of = (frame_bgr, mid)
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
        self._owe_reading(frame_bgr, tiny, self._mid(frame_bgr), frame_index)
        return []

    # ------------------------------------------------------------------ stages
    def _start(self, frame, tiny) -> None:
        view = self._zone.view(frame)
        self._ref_tiny, self._ref_mid, self._ref_view = tiny, self._mid(frame), view
        self._zone.start(view)
        for c in locate_candidates(frame, min_area_frac=self.min_card_frac, max_area_frac=self.max_card_frac):
            prediction = self.classifier.decide(self._probabilities(frame, [c.quad])[0])
            if prediction.label is not None or prediction.reason == NOT_SURE:    # (not the table's pattern)
                self._zone.add(view, c.quad, prediction.label, prediction.leaning)
        # (What lies under the cards found is not known; the table shows there once they go.)
        self._zone.forget_table_under_cards()
        self._accepted_cards = self._cards_key()
        self.picture_version += 1
        log.debug("start: cards already on the table %s",
                  [(k.label, k.quad.mean(axis=0).round().tolist()) for k in self._known])

    def _settled(self, frame, tiny, frame_index) -> list[VisionEvent]:
        mid = self._mid(frame)
        mask = self._change_mask(mid)
        if cv2.countNonZero(mask) == 0:
            # A hand passed, or the light changed a little; or a card was laid square on its
            # twin, the very picture it showed (seen only while the hand moved, vision.carried).
            self.step = "settled"
            view = self._zone.view(frame)
            events = self._twins_laid_square(frame, view, mid, frame_index, range(len(self._known)))
            self._accept(tiny, mid, view)
            return events
        cands = self._locate_changed(frame, mask)
        cands += self._laid_square_on_known(frame, mask, [q for q, _ in cands])
        if self._waited < self.max_hand_wait and self._something_else(mask, [q for q, _ in cands], frame.shape):
            self._waited += 1                # a hand lies still in the picture: wait for it to go
            self._still = self.settle_frames - 1
            return []
        self._mask = mask
        # Every card found where enough changed is read (a card in its place, unchanged, needs no
        # reading: the explanation keeps it where it lies), at the next call (see feed).
        self._pending = []
        for quad, _ in cands:
            changed = self._mask_share(mask, quad, frame.shape)
            if changed >= READ_MIN_CHANGE:
                self._pending.append(_Pending(quad, changed, 0.0))
        self._confirmed = 0
        self.state = CONFIRMING
        self._owe_reading(frame, tiny, mid, frame_index)
        return []

    def _early(self, frame, tiny, frame_index) -> list[VisionEvent]:
        """While a hand is still moving (leaving), a new card that has lain unchanged for
        early_frames frames and that nothing moves over is read now rather than once the whole
        picture is still: the table sees it on the screen as the hand withdraws. Only cards the
        model names are reported here. The zone takes the card in only when the picture is still
        (no hand near it, its outline sure): there it is explained as any card is, and a new card
        there is this one, reported already."""
        diffs = [cv2.absdiff(tiny, past) > self.pixel_threshold for past in self._recent[:-1]]
        moving = cv2.dilate(np.logical_or.reduce(diffs).astype(np.uint8), np.ones((3, 3), np.uint8))
        mid = self._mid(frame)
        mh, mw = mid.shape[:2]
        moving_mid = cv2.resize(moving, (mw, mh), interpolation=cv2.INTER_NEAREST) * 255
        mask = cv2.bitwise_and(self._change_mask(mid), cv2.bitwise_not(moving_mid))
        # (The cards read already are no longer news while they lie as they were read: one slid
        # away, or covered, since, leaves its place to the next card.)
        read = [e for e in self._early_cards if self._lies_as_read(e, mid, frame.shape)]
        for card in read:
            poly = np.round(card.quad * np.array([mw / frame.shape[1], mh / frame.shape[0]], np.float32)).astype(np.int32)
            cv2.fillConvexPoly(mask, poly, 0)
            cv2.polylines(mask, [poly], True, 0, thickness=3)
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
            if any(_overlap(quad, e.quad) >= 0.3 for e in events + read):
                continue                 # read already
            # Read early only what is beyond doubt: a clear card outline and a confident reading
            # (a card half under the one below, or seen through a shadow, waits for the still picture).
            if abs(quad_aspect(quad) / CARD_ASPECT - 1.0) > EARLY_ASPECT_TOLERANCE:
                continue
            prediction = self.classifier.decide(self._probabilities(frame, [quad])[0])
            if prediction.label is None or prediction.confidence < EARLY_MIN_CONFIDENCE:
                continue                 # not named: the still picture judges it, prompt and all
            # That card moved, or its twin on it: the still picture judges it (a card read early
            # is then taken for it: a twin laid on one before the picture is still is not told apart).
            if any(k.guess == prediction.label and _overlap(quad, k.quad) >= 0.2
                   for k in self._known + [e.card for e in self._early_cards]):
                continue
            log.debug("frame %d: early read %s at %s", frame_index, prediction.label, quad.mean(axis=0).round())
            events.append(Placement(prediction.label, prediction.confidence, quad, frame_index))
        if events:
            # Each kept with its picture: another card may be laid over it before the picture is still.
            view = self._zone.view(frame, self._burnt)
            self._early_cards += [_EarlyCard(ZoneCard(e.quad, e.label, *self._zone.capture(view, e.quad),
                                                      floor=self._zone.floor_of(e.quad)), mid)
                                  for e in events]
        return events

    def _lies_as_read(self, early: _EarlyCard, mid, shape) -> bool:
        """Whether the place of a card read early shows what it showed then (EARLY_MOVED)."""
        return self._mask_share(self._changed_pixels(mid, early.mid), early.quad, shape) < EARLY_MOVED

    def _owe_reading(self, frame, tiny, mid, frame_index) -> None:
        """The pending cards are read in this still frame at the next call, and the change is
        judged from it there once confirm_frames frames are read (copied: a camera may refill
        its array)."""
        self._unread = frame.copy()
        if self._confirmed + 1 >= self.confirm_frames:
            self._owed = (self._unread, tiny, mid, frame_index, self._burnt)

    def _read_owed(self) -> None:
        """The pending cards read in the still frame that owes their reading, all in one batch."""
        if self._unread is None:
            return
        frame, self._unread = self._unread, None
        if self._pending:
            for p, probs in zip(self._pending, self._probabilities(frame, [p.quad for p in self._pending])):
                p.probs = p.probs + probs
        self._confirmed += 1

    def _judge(self, frame, tiny, mid, frame_index, burnt) -> list[VisionEvent]:
        """Explain the change (vision.zone) and report the new cards."""
        mask = self._mask
        zone = self._zone
        view = zone.view(frame, burnt)
        readings = [self._outlined_by_pictures_here(frame, view, p, prediction)
                    for p, prediction in self._one_per_place()]
        # A new card is a card found now that the model names or is not sure of; one it reads as
        # no card only where nearly all of its place changed (a card-shaped thing laid there).
        candidates = [(p, prediction) for p, prediction in readings
                      if prediction.label is not None or prediction.reason == NOT_SURE
                      or p.changed >= UNNAMED_NEW_CHANGE]
        changed = cv2.resize(mask, (view.shape[1], view.shape[0]), interpolation=cv2.INTER_NEAREST) > 0
        # The known cards in play: those whose place changed, or that a card found now overlaps.
        touched = [i for i, k in enumerate(self._known)
                   if self._mask_share(mask, k.quad, frame.shape) >= TOUCHED_CHANGE
                   or any(_overlap(k.quad, p.quad) > 0.05 for p, _ in readings)]
        # Only a card nothing lies on can have been pushed (a hand moves the uppermost card).
        poses = {i: self._poses(frame, view, i, readings, mask) for i in touched
                 if self._shown(i, frame.shape) >= PUSHABLE_SHOWN}
        # Each card found, drawn as new, at its true outline: where the printing of its label,
        # seen before, fits it (a card of that label lying here now first, nearest first: seen in
        # this light, and what a pushed card's own pose is fitted by, so the two are weighed at
        # the same outline); else its outline moved out to where the card really ends (against
        # the picture before the change).
        outlines = []
        for p, prediction in candidates:
            fitted = None
            for printed in zone.printings(prediction.label, p.quad):
                fitted = zone.fit_printed(view, printed, p.quad)
                if fitted is not None:
                    break
            if fitted is None:
                fitted = zone.outline(view, self._ref_view, p.quad)
            outlines.append(fitted)
        pushed = self._pushed_or_laid(frame, mid, poses, candidates, outlines)
        candidates = [c for n, c in enumerate(candidates) if n not in pushed]
        outlines = [q for n, q in enumerate(outlines) if n not in pushed]
        explanation = zone.explain(view, changed, touched, poses,
                                   [(q, self._reading_key(prediction, q)) for q, (p, prediction) in zip(outlines, candidates)])
        log.debug("frame %d: known %s; found %s; explained: gone %s, moved %s, new %s (misfit %.2f)", frame_index,
                  [(k.guess, k.quad.mean(axis=0).round().tolist()) for k in self._known],
                  [(_said(prediction), round(prediction.confidence, 2),
                    p.quad.mean(axis=0).round().tolist(), round(p.changed, 2)) for p, prediction in candidates],
                  [self._known[i].guess for i in explanation.gone],
                  {self._known[i].guess: q.mean(axis=0).round().tolist() for i, q in explanation.moved.items()},
                  [candidates[c][1].label or candidates[c][1].reason for c in explanation.new], explanation.misfit)
        for i, quad in explanation.moved.items():
            self._known[i].moved_to(quad)
        # A card the model was never sure of (the table was asked to show it again) that it now
        # names where the card lies is counted now: shown again, or seen whole at last.
        events: list[VisionEvent] = []
        for i, k in enumerate(self._known):
            if k.label is None and i not in explanation.gone:
                named = [prediction for p, prediction in readings
                         if prediction.label is not None and quad_iou(p.quad, k.quad) >= NAMED_AGAIN_IOU]
                if named:
                    k.label, k.leaning = named[0].label, None
                    zone.keep_printing(k)
                    events.append(Placement(named[0].label, named[0].confidence, k.quad, frame_index))
        # A card in play that stayed may yet have been pushed by a pixel or two (within what the
        # drawing forgives): its outline follows its picture, so the two stay true to the view.
        # (Only one nothing lies on now: the picture of a card half hidden fits anywhere.)
        over_now = list(explanation.moved.values()) + [outlines[c] for c in explanation.new]
        for i in touched:
            if i in poses and i not in explanation.gone and i not in explanation.moved:
                k = self._known[i]
                above = [a.quad for j, a in enumerate(self._known[i + 1:], i + 1) if j not in explanation.gone]
                if not any(intersection_area(k.quad, q) > 0 for q in above + over_now):
                    k.moved_to(zone.fit(view, k, k.quad))
        stayed = [k for i, k in enumerate(self._known) if i not in explanation.gone and i not in explanation.moved]
        moved = [self._known[i] for i in sorted(explanation.moved)]
        # A card moved is seen anew where it lies (on top: but for the cards moved or laid over
        # it now): its picture is cut again at its outline, so the two stay true to each other
        # however often it is pushed.
        new_quads = [outlines[c] for c in explanation.new]
        for n, k in enumerate(moved):
            k.face, k.seen = zone.capture(view, k.quad, over=[a.quad for a in moved[n + 1:]] + new_quads)
            k.floor = zone.floor_of(k.quad)
            k.forget_look()
        zone.cards = stayed + moved
        for c in explanation.new:
            p, prediction = candidates[c]
            # The cards read early here, in the order read: this card is the last of them read as
            # it is (reported while the hand withdrew), or, if none is, a card laid over them before
            # the picture was ever still. The others lie beneath it, as each was seen when read
            # (one slid away meanwhile is found gone when the zone next looks there).
            here = [e for e in self._early_cards if _overlap(e.quad, outlines[c]) >= EARLY_SAME]
            self._early_cards = [e for e in self._early_cards if all(e is not h for h in here)]
            same = [e for e in here if _is_early_card(e.card, prediction)]
            unchanged = [] if same else [e for e in here if self._lies_as_read(e, mid, frame.shape)]
            if unchanged:
                # Read as another label, but its place looks as when it was read: the same card,
                # one of the two readings wrong (it keeps the one reported).
                log.debug("frame %d: %s where %s was read early, unchanged since", frame_index,
                          _said(prediction), unchanged[-1].card.label)
                same = unchanged[-1:]
            for e in here:
                if not same or e is not same[-1]:
                    log.debug("frame %d: %s read early lies beneath %s", frame_index, e.card.label, _said(prediction))
                    zone.cards.append(e.card)
            if same:
                zone.add(view, outlines[c], same[-1].card.label)
                continue
            if explanation.hidden.get(c, 0.0) >= HIDDEN_ALL_ALONG:
                # Uncovered, not dealt: it lay under cards that were there when the zone was first
                # seen, and what showed of it did not change.
                zone.add(view, outlines[c], prediction.label, prediction.leaning)
                continue
            if prediction.label is None:
                # Not named: a second look (outlines a little off this one) before asking the table.
                prediction = self._second_look(frame, p.quad, prediction, frame_index)
            if prediction.label is not None:
                events.append(Placement(prediction.label, prediction.confidence, outlines[c], frame_index))
            else:
                events.append(Unsure(frame_index, prediction.reason or NOT_SURE, outlines[c]))
            zone.add(view, outlines[c], prediction.label, prediction.leaning)
        # A change that comes to nothing (no card came, went or moved: a hand passed, a card was
        # pushed by a pixel) may be a card laid square on its twin, too near its picture for the
        # still pictures to tell.
        if not (events or explanation.new or explanation.gone or explanation.moved):
            events += self._twins_laid_square(frame, view, mid, frame_index, range(len(zone.cards)))
        zone.update_table(view)
        self._accept(tiny, mid, view)
        return events

    def _pushed_or_laid(self, frame, mid, poses, candidates, outlines) -> set[int]:
        """A known card that may have been pushed to where a card of its own label is found now,
        or had its twin laid there, a little off it: the sliver of it left showing is what a push
        leaves too, so the still pictures hardly tell (and not at all when it lay square on its
        twin: pushed off it, the twin shows beneath as a new card would leave it). The frames of
        motion tell (vision.carried): if a copy of it was carried in beside it and laid there, it
        was not pushed, and those poses are dropped from `poses` (the explanation weighs the card
        found as new); if not, and it lay square on its twin, it was pushed: the candidates found
        there are returned, not to be weighed as new cards."""
        pushed = set()
        for i, quads in poses.items():
            k = self._known[i]
            if k.guess is None:
                continue
            twins = [c for c, (_, prediction) in enumerate(candidates) if prediction.label == k.guess]
            clash = {c: [n for n, q in enumerate(quads) if quad_iou(q, outlines[c]) >= CLASH_IOU] for c in twins}
            clash = {c: ns for c, ns in clash.items() if ns}
            if not clash:
                continue
            track = next((track for track in (self._copy_laid(frame, mid, outlines[c], k.quad) for c in clash)
                          if track), None)
            if track:
                log.debug("%s at %s: a copy was carried in and laid by it, not it pushed: %s", k.guess,
                          k.quad.mean(axis=0).round().tolist(), _track(track))
                dropped = {n for ns in clash.values() for n in ns}
                poses[i] = [q for n, q in enumerate(quads) if n not in dropped]
            elif any(j.guess == k.guess and quad_iou(j.quad, k.quad) >= SQUARE_IOU for j in self._known[:i]):
                log.debug("%s at %s, square on its twin: pushed, no copy was carried in", k.guess,
                          k.quad.mean(axis=0).round().tolist())
                pushed.update(clash)
        return pushed

    def _twins_laid_square(self, frame, view, mid, frame_index, which) -> list[VisionEvent]:
        """Cards laid square on their twins among the known cards `which`: a card nothing lies on,
        whose place the motion passed over (COVERED_IN_MOTION) and whose copy was carried in beside
        it and laid there (vision.carried). Each is read where it lies and counted (a Placement, or
        Unsure if the model will not name it), and lies on its twin in the zone from now on."""
        events: list[VisionEvent] = []
        covered = None
        for i in list(which):
            k = self._known[i]
            if self._shown(i, frame.shape) < PUSHABLE_SHOWN:
                continue
            if covered is None:
                covered = self._covered_in_motion()
            if self._mask_share(covered, k.quad, frame.shape) < COVERED_IN_MOTION:
                continue
            track = self._copy_laid(frame, mid, k.quad, k.quad)
            if not track:
                continue
            prediction = self.classifier.decide(self._probabilities(frame, [k.quad])[0])
            log.debug("frame %d: %s laid square on its twin at %s (its copy seen carried in: %s)", frame_index,
                      _said(prediction), k.quad.mean(axis=0).round().tolist(), _track(track))
            if prediction.label is not None:
                events.append(Placement(prediction.label, prediction.confidence, k.quad.copy(), frame_index))
            else:
                events.append(Unsure(frame_index, prediction.reason or NOT_SURE, k.quad.copy()))
            # It lies on its twin showing the twin's picture (the still picture is as it was).
            self._zone.cards.append(ZoneCard(k.quad.copy(), prediction.label, k.face.copy(), k.seen.copy(),
                                             prediction.leaning, None if k.floor is None else k.floor.copy()))
        return events

    def _copy_laid(self, frame, mid, at, twin) -> list:
        """Where the picture of the card lying at `at` in the shrunk settled frame `mid` was seen
        away from its twin at `twin` in the frames of motion (vision.carried), if that is a copy
        carried in and laid there; else []."""
        track = sightings(list(self._motion), self._ref_mid, mid, at, twin, mid.shape[1] / frame.shape[1],
                          self.pixel_threshold)
        if track:
            log.debug("the picture of the card at %s seen away from its twin at %s: %s",
                      at.mean(axis=0).round().tolist(), twin.mean(axis=0).round().tolist(), _track(track))
        # (The cards beneath the twin, a pile, are where a copy laid on it comes from too.)
        lying = [k.quad for k in self._known if k.quad is not twin and _overlap(k.quad, twin) < 0.3]
        return track if laid_on_twin(track, lying) else []

    def _covered_in_motion(self) -> np.ndarray:
        """Where the frames of motion differed from the still picture before (255), in any of
        them: what the hand, and what it carried, passed over (shrunk frame size)."""
        covered = np.zeros(self._ref_mid.shape[:2], np.uint8)
        for _, moving in self._motion:
            covered = cv2.bitwise_or(covered, self._changed_pixels(moving, self._ref_mid))
        return covered

    def _outlined_by_pictures_here(self, frame, view, p, prediction):
        """(pending, prediction) for a card found that the model will not name where enough of
        its place changed for a card laid there: it may be outlined by a part of its picture (a
        frame printed inside the card) or cut off. Its outline is fitted by the pictures of the
        cards lying here (nearest first, one per label, the label the model leaned to first: a
        card dealt is often the twin of one lying by), and where a fit is read as a card, that
        outline and reading stand. Else the card is as found.

        A card the model is not sure of is fitted by a picture of the label it leaned to however
        little of its place changed: a dark card laid on dark cards and a dark cloth changes the
        picture only in part, and its outline found a little off is read "not sure"."""
        if prediction.label is not None:
            return p, prediction
        labels = [prediction.leaning] if prediction.leaning is not None else []   # (not sure only)
        centre = p.quad.mean(axis=0)
        if p.changed >= UNNAMED_NEW_CHANGE:
            for k in sorted(self._known, key=lambda k: float(np.linalg.norm(k.quad.mean(axis=0) - centre))):
                if k.label is not None and k.label not in labels:
                    labels.append(k.label)
        for label in labels[:PICTURES_TRIED]:
            printings = self._zone.printings(label, p.quad)
            fitted = self._zone.fit_printed(view, printings[0], p.quad) if printings else None
            if fitted is None:
                continue
            probs = self._probabilities(frame, [fitted])[0]
            again = self.classifier.decide(probs)
            if again.label is not None:
                log.debug("card found at %s, %s, outlined by a picture of %s: %s %.2f", centre.round(),
                          prediction.reason, label, again.label, again.confidence)
                return _Pending(fitted, p.changed, probs * self._confirmed), again
        return p, prediction

    def _shown(self, i, shape) -> float:
        """Share of known card i's place not under the known cards over it."""
        h, w = shape[:2]
        k = self._known[i]
        box = np.zeros((h // 4, w // 4), np.uint8)
        cv2.fillConvexPoly(box, np.round(k.quad / 4).astype(np.int32), 1)
        whole = cv2.countNonZero(box)
        for a in self._known[i + 1:]:
            cv2.fillConvexPoly(box, np.round(a.quad / 4).astype(np.int32), 0)
        return cv2.countNonZero(box) / whole if whole else 0.0

    def _reading_key(self, prediction: Prediction, quad: np.ndarray) -> str:
        """How a card found is priced as new (vision.zone.PRICE_NEW): named as a label no known
        card near it bears, it cannot be one of them found again or pushed, and need not explain
        as much to be new (a +6 laid square on a +2 of the same layout changes only the numeral:
        flip7 9203, frame 3875, was missed). A known card never named nor leaned to may be any."""
        if prediction.label is None:
            return prediction.reason
        if any(k.guess in (None, prediction.label) and _within_push(k.quad, quad) for k in self._known):
            return "named"
        return "named anew"

    def _poses(self, frame, view, i, readings, mask) -> list[np.ndarray]:
        """Where known card i may lie now if it was pushed: at an outline found nearby that is
        not read as another card, or where its own picture is found nearby (the locator finds
        no outline of a card pushed onto its twin: one outline round both)."""
        k = self._known[i]
        poses = []
        for p, prediction in readings:
            if prediction.label is not None and k.guess is not None and prediction.label != k.guess:
                continue
            if not _within_push(k.quad, p.quad) or quad_iou(p.quad, k.quad) >= SAME_PLACE_IOU:
                continue
            pose = self._zone.fit_printed(view, k, p.quad)
            pose = pose if pose is not None else self._zone.fit(view, k, self._zone.best_turn(view, k, p.quad))
            # A hand pushing a card shifts it and turns it a little, never round to the other way
            # up: a card of its picture the other way up where it lay is its twin laid on it.
            if _turn(k.quad, pose) <= PUSH_MAX_TURN:
                poses.append(pose)
        over = [a.quad for a in self._known[i + 1:]]
        if self._mask_share(mask, k.quad, frame.shape, minus=over) >= PUSH_SEARCH_CHANGE:
            found = _pushed_to(frame, k)
            if found is not None:
                found = self._zone.fit(view, k, found)
                if not any(quad_iou(found, q) >= SAME_PLACE_IOU for q in poses):
                    poses.append(found)
        return poses

    # ------------------------------------------------------------------ helpers
    def _one_per_place(self):
        """(pending, prediction) with at most one quad per place: where quads overlap (a card
        and half of its picture, a card and the texture around it) the best reading wins
        (vision.reading.one_per_place), a card named within a larger outline that names another
        first made "not sure" (vision.reading.inside_another_card), as in a still photo."""
        quads = [p.quad for p in self._pending]
        read = inside_another_card(quads, [self.classifier.decide(p.probs / self._confirmed) for p in self._pending])
        return [(self._pending[i], read[i]) for i in one_per_place(quads, read)]

    def _probabilities(self, frame, quads) -> np.ndarray:
        return read_probabilities(self.classifier, frame, quads)

    def _second_look(self, frame, quad, prediction, frame_index):
        again = read_again(self.classifier, frame, quad, prediction)
        if again is not prediction:
            log.debug("frame %d: second look at %s reads %s %.2f", frame_index, quad.mean(axis=0).round(),
                      again.label, again.confidence)
        return again

    def _accept(self, tiny, mid, view) -> None:
        """The picture is still and explained: it becomes the reference (small grey, shrunk colour,
        and the zone's view of it: what the table showed before the next change)."""
        self._ref_tiny, self._ref_mid, self._ref_view = tiny, mid, view
        self.state, self._pending, self._mask, self._early_cards = IDLE, [], None, []
        self._motion.clear()
        key = self._cards_key()
        if key != self._accepted_cards:
            self._accepted_cards = key
            self.picture_version += 1

    def _relit(self, frame, gain) -> tuple[np.ndarray, np.ndarray]:
        """(tiny, mid) of the frame in the reference's light (vision.light), from its small copies
        (as _tiny makes them: the mid copy when they are of one size)."""
        mid = relight(self._mid(frame), gain, self._ref_mid)
        small = mid if self.tiny_long_side == self.mid_long_side else relight(_shrunk(frame, self.tiny_long_side), gain)
        return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), mid

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

    def _changed_pixels(self, mid, before) -> np.ndarray:
        """255 where a colour of the shrunk frame differs from `before` by more than pixel_threshold."""
        b, g, r = cv2.split(cv2.absdiff(mid, before))     # (numpy's max over channels is slow)
        return cv2.threshold(cv2.max(cv2.max(b, g), r), self.pixel_threshold, 255, cv2.THRESH_BINARY)[1]

    def _change_mask(self, mid) -> np.ndarray:
        mask = self._changed_pixels(mid, self._ref_mid)
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

    def _laid_square_on_known(self, frame, mask, found) -> list[tuple[np.ndarray, float]]:
        """Cards laid (nearly) square on a known card that look like it (its twin, perhaps the
        other way up): the picture there changes but hardly the outline, so the locator, which
        scores an outline by its share of the change, finds none. Where enough of a known card's
        place changed and no card found now overlaps it, a card is looked for at its outline
        without the change as a hint. (A card slid off from there leaves the card beneath or the
        table: read as such, the explanation weighs it as any card found.)"""
        extra = []
        for i, k in enumerate(self._known):
            if (any(_overlap(q, k.quad) > LAID_ON_OVERLAP for q in found + [q for q, _ in extra])
                    or self._mask_share(mask, k.quad, frame.shape) < LAID_ON_CHANGE
                    or self._shown(i, frame.shape) < PUSHABLE_SHOWN):   # under another: laid on, it shows on that
                continue
            margin = LAID_ON_MARGIN * np.sqrt(quad_area(k.quad) * CARD_ASPECT)
            (x0, y0), (x1, y1) = k.quad.min(axis=0) - margin, k.quad.max(axis=0) + margin
            near = [(q, s) for q, s in self._locate_in(frame, (int(x0), int(y0), int(x1) + 1, int(y1) + 1))[0]
                    if quad_iou(q, k.quad) >= LAID_ON_IOU]
            if near:
                extra.append(max(near, key=lambda c: c[1]))
        if extra:
            log.debug("cards looked for where known cards lie: %s", [q.mean(axis=0).round().tolist() for q, _ in extra])
        return extra

    def _locate_around(self, frame, mask, margin):
        """(cards found, region searched (x0, y0, x1, y1)) in the box around the change."""
        h, w = frame.shape[:2]
        mh, mw = mask.shape
        sx, sy = w / mw, h / mh
        ys, xs = np.nonzero(mask)
        region = (int(xs.min() * sx - margin), int(ys.min() * sy - margin),
                  int((xs.max() + 1) * sx + margin), int((ys.max() + 1) * sy + margin))
        return self._locate_in(frame, region, mask)

    def _locate_in(self, frame, region, mask=None):
        """(cards found, region searched) in the region (x0, y0, x1, y1), clipped to the frame;
        with the change mask as a hint (keeping quads nested in others, see locate_candidates)
        if given. (A card's size bounds are the frame's, as a share of the region.)"""
        h, w = frame.shape[:2]
        x0, y0 = max(0, region[0]), max(0, region[1])
        x1, y1 = min(w, region[2]), min(h, region[3])
        roi = frame[y0:y1, x0:x1]
        area = float(roi.shape[0] * roi.shape[1])
        hint = {}
        if mask is not None:
            # The mask's pixels under the region at full size (what a nearest-neighbour resize of
            # the whole mask would give there, without making the rest). (Rows, then columns: the
            # same pixels as one np.ix_ index, 4x faster.)
            mh, mw = mask.shape
            rows = mask[(np.arange(y0, y1) * mh) // h]
            hint = dict(extra_mask=np.ascontiguousarray(rows[:, (np.arange(x0, x1) * mw) // w]), keep_nested=True)
        found = locate_candidates(roi, min_area_frac=min(0.9, self.min_card_frac * h * w / area),
                                  max_area_frac=min(1.0, self.max_card_frac * h * w / area), **hint)
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


class StillPicture:
    """Whether the camera's picture has stopped changing, with PlacementDetector's thresholds and
    rule: the frame shrunk to grey, more than `change_pixels` of its pixels changed by more than
    `pixel_threshold` grey levels = moving; still = unchanged from the frame before and from the
    first frame of the still run (a hand slowing down moves a little each frame and a lot over a
    few) for `frames` frames in a row (the detector judges a change after 3, settle_frames; a card
    to be photographed needs less, and the user presses `ok` after it anyway). For a caller that
    only needs to know when a card lies still (the calibration walk): the detector keeps its own,
    which also follows the light."""

    def __init__(self, frames: int = 2, long_side: int = 160, pixel_threshold: int = 18, change_pixels: int = 12):
        self.frames, self.long_side = frames, long_side
        self.pixel_threshold, self.change_pixels = pixel_threshold, change_pixels
        self._previous = self._first = None
        self._still = 0

    def feed(self, frame_bgr: np.ndarray) -> bool:
        tiny = cv2.cvtColor(_shrunk(frame_bgr, self.long_side), cv2.COLOR_BGR2GRAY)
        moving = self._previous is None or self._previous.shape != tiny.shape or self._changed(tiny, self._previous)
        if not moving and self._still > 0:
            moving = self._changed(tiny, self._first)
        if moving:
            self._still = 0
        else:
            self._first = tiny if self._still == 0 else self._first
            self._still += 1
        self._previous = tiny
        return self._still >= self.frames

    def _changed(self, a: np.ndarray, b: np.ndarray) -> bool:
        return int(np.count_nonzero(cv2.absdiff(a, b) > self.pixel_threshold)) > self.change_pixels


def _shrunk(frame, long_side: int) -> np.ndarray:
    h, w = frame.shape[:2]
    s = long_side / max(h, w)
    return cv2.resize(frame, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)


def _overlap(a, b) -> float:
    """Intersection of two quads over the smaller one's area."""
    smaller = min(quad_area(a), quad_area(b))
    return intersection_area(a, b) / smaller if smaller > 0 else 0.0


# A card found where less than this share of its place changed is not read: a known card in its
# place (the explanation keeps it there).
READ_MIN_CHANGE = 0.15
# A card laid square on a known card is looked for (_laid_square_on_known) where at least
# LAID_ON_CHANGE of the known card's place changed and no card found overlaps it by more than
# LAID_ON_OVERLAP (of the smaller), in a margin of LAID_ON_MARGIN card lengths round it, at an
# outline of at least LAID_ON_IOU with its own.
LAID_ON_CHANGE, LAID_ON_OVERLAP, LAID_ON_MARGIN, LAID_ON_IOU = 0.15, 0.05, 0.5, 0.7
# A card nothing lies on whose place differed this much from the still picture before, over the
# frames of motion, may have had its twin laid square on it (_twins_laid_square).
COVERED_IN_MOTION = 0.2
# A card lies square on its twin where their outlines overlap this much (IoU).
SQUARE_IOU = 0.85
# The frames of motion kept (_motion): 3 s at 15 frames a second.
MOTION_FRAMES = 45
# A card found that the model reads as no card is a new card only where this share of its place
# changed (a card-shaped thing laid there: the table is asked to show it again).
UNNAMED_NEW_CHANGE = 0.5
# A card found that the model will not name is outlined by the pictures of at most this many
# labels of the cards lying here (_outlined_by_pictures_here).
PICTURES_TRIED = 3
# A new card on what the zone never saw (vision.zone.Explanation.hidden) that did not change
# elsewhere, over at least this share of its place, lay there all along.
HIDDEN_ALL_ALONG = 0.85
# A new card overlapping a card read early this much (of the smaller) is that card unless it is
# read as another label where the early card's place changed since (EARLY_MOVED).
EARLY_SAME = 0.5
# A card read early whose place changed this much since (of its pixels in the shrunk colour
# frame) no longer lies as it was read: its place is news again.
EARLY_MOVED = 0.3
# A card never named, read in nearly its very place (IoU), is named by that reading.
NAMED_AGAIN_IOU = 0.7
# A known card is in play when this share of its place changed (or a card found overlaps it).
TOUCHED_CHANGE = 0.03
# A known card may have been pushed to an outline found at most this far (centre to centre, in
# card lengths) that is not its very place (IoU below SAME_PLACE_IOU).
PUSH_FAR, SAME_PLACE_IOU = 0.8, 0.9
# A card pushed turns by at most this many degrees (the other way up is another card).
PUSH_MAX_TURN = 90.0
# A card may have been pushed only if at least this share of it is not under the cards over it.
PUSHABLE_SHOWN = 0.75
# Its own picture is looked for nearby where at least this share of what showed of it changed.
PUSH_SEARCH_CHANGE = 0.1

# A pushed card is looked for shifted up to PUSH_REACH of its length and turned up to PUSH_TURN
# degrees; found where its picture correlates at least PUSHED_LOOK with how it was seen, and by
# PUSHED_BETTER more than in its old place.
PUSH_REACH, PUSH_TURN, PUSHED_LOOK, PUSHED_BETTER = 0.3, 16.0, 0.65, 0.1


def _within_push(known_quad: np.ndarray, quad: np.ndarray) -> bool:
    """Whether quad's centre lies within PUSH_FAR card lengths of the known card's."""
    length = np.sqrt(quad_area(known_quad) * CARD_ASPECT)
    return bool(np.linalg.norm(quad.mean(axis=0) - known_quad.mean(axis=0)) <= PUSH_FAR * length)


def _pushed_to(frame, known: ZoneCard) -> np.ndarray | None:
    """Where a known card pushed a little lies now, found by its own picture (vision.zone.search,
    shifted up to PUSH_REACH of its length and turned up to PUSH_TURN degrees), or None: found
    where its picture correlates at least PUSHED_LOOK with its look, and by PUSHED_BETTER more
    than in its old place."""
    quad, corr, here = search(frame, known.look, known.quad, PUSH_REACH, PUSH_TURN)
    if corr < max(PUSHED_LOOK, here + PUSHED_BETTER):
        return None
    return quad


def _is_early_card(early: ZoneCard, prediction: Prediction) -> bool:
    """Whether the card found where a card was read early is that card: not read as another
    label. (Not named, it is taken for the early card, read beyond doubt: a card's own picture
    correlates too little between a frame with a hand leaving and the still one to tell.)"""
    return prediction.label is None or prediction.label == early.label


def _track(track) -> str:
    """Sightings (vision.carried) as the logs show them: frame, card lengths off, correlation,
    "beside" where the twin showed beside it, "untouched" where nothing had touched it yet."""
    return ", ".join(f"frame {s.frame_index} {s.distance:.2f} ({s.correlation:.2f}{' beside' if s.beside else ''}"
                     f"{', untouched' if s.untouched else ''})" for s in track)


def _said(prediction: Prediction) -> str:
    """A reading as the logs show it: the label, or the reason with the card leaned to."""
    if prediction.label is not None:
        return prediction.label
    return f"{prediction.reason} ({prediction.leaning}?)" if prediction.leaning else str(prediction.reason)


def _turn(a, b) -> float:
    """Degrees (0-180) between the ways two outlines face (from each one's first to its second
    corner: the corner order says which way up the picture lies)."""
    (ax, ay), (bx, by) = a[1] - a[0], b[1] - b[0]
    return float(abs(np.degrees(np.arctan2(ax * by - ay * bx, ax * bx + ay * by))))


def _at_edge(quad, region, size) -> bool:
    """The quad reaches the edge of the searched region (x0, y0, x1, y1) where that is not the
    frame's edge (size (h, w)): the card may go on beyond it."""
    h, w = size
    x0, y0, x1, y1 = region
    (qx0, qy0), (qx1, qy1) = quad.min(axis=0), quad.max(axis=0)
    return bool((x0 > 0 and qx0 < x0 + EDGE_PX) or (y0 > 0 and qy0 < y0 + EDGE_PX)
                or (x1 < w and qx1 > x1 - EDGE_PX) or (y1 < h and qy1 > y1 - EDGE_PX))

