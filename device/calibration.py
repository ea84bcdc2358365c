"""The device's calibration walk: the user shows each card of their deck once, the device learns
its look (vision.adapt) and keeps the profile in the state directory.

A deck the model reads badly is mended by one look at each card, so the walk must be quick and
must never learn a bad photo: a card is taken only once the picture is still, the learning runs on
a thread of its own so the frame loop keeps pinging systemd's watchdog, and the walk's photos are
kept beside the profile so that walking again adds photos and a profile refused after a model
update is made again from them. `CalibrationFlow` is the walk; `load_stored` gives the classifier
to use at start.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from device.buttons import ButtonPress
from device.screens import ChoiceScreen, MessageScreen
from vision.adapt import SUREST_PHOTOS as PHOTOS_PER_CARD   # the newest kept of each card
from vision.files import write_atomically
from vision.geometry import quad_iou
from vision.reading import same_place

log = logging.getLogger(__name__)

PROFILE_FOLDER = "calibration"
# IoU: a quad found where one of the table's fixtures is (CalibrationFlow) is that fixture. (IoU,
# not vision.reading.same_place, which a card laid on a mat would share with the mat.)
SAME_FIXTURE = 0.5


def profile_path(state_dir: str | Path, deck: str) -> Path:
    return Path(state_dir) / PROFILE_FOLDER / f"{deck}.npz"


def photos_folder(profile: Path) -> Path:
    """Where the walk keeps the photos a profile is made from: beside it, named by its deck."""
    return profile.with_suffix("")


def _numbered(where: Path) -> list[Path]:
    """The walk's photos in a card's folder (NNNN.png), oldest first; other files are left alone."""
    return sorted((p for p in where.glob("*.png") if p.stem.isdigit()), key=lambda p: int(p.stem))


def keep_photos(folder: Path, crops: dict, replace: bool = False) -> set:
    """Write each label's new crops into its sub-folder, numbered on from its newest photo; then only
    its newest PHOTOS_PER_CARD are kept (with `replace`, of the new ones alone). Returns the
    labels whose photos could not be written (logged): the caller learns those from memory."""
    import cv2

    from rules.cards import label_to_dirname

    failed = set()
    for label, new in crops.items():
        where = folder / label_to_dirname(label)
        written = False
        try:
            where.mkdir(parents=True, exist_ok=True)
            for leftover in [*where.glob("*.png.tmp"), *where.glob("*.png.part")]:   # a write cut short
                leftover.unlink()                                                       # (.part: before 2026-11-29)
            old = _numbered(where)
            number = int(old[-1].stem) + 1 if old else 1
            for crop in new:
                encoded, data = cv2.imencode(".png", crop, [cv2.IMWRITE_PNG_COMPRESSION, 3])
                if not encoded:
                    raise OSError("the photo could not be encoded")
                # Synced, then named: a cut leaves no half photo, and a pulled plug no empty one.
                write_atomically(where / f"{number:04d}.png", data.tobytes())
                number += 1
            written = True
            # Kept: the newest (of the new ones alone with `replace`). The old go only once the new
            # are there: a cut leaves the card its photos.
            photos = _numbered(where)
            kept = photos[len(old) if replace else 0:][-PHOTOS_PER_CARD:]
            for photo in photos:
                if photo not in kept:
                    photo.unlink()
        except OSError as error:
            log.error("calibration photo of %s not %s in %s: %s", label, "pruned" if written else "kept", where,
                      error)
            if not written:
                failed.add(label)
    return failed


def kept_photos(folder: Path, deck: str, labels=None) -> dict:
    """{label: [crops]} of the photos kept in `folder` (of `labels`, default every label of the
    deck; an unreadable photo is logged and left out)."""
    import cv2

    from rules.cards import DECKS, label_to_dirname

    crops = {}
    for label in labels if labels is not None else DECKS[deck].labels:
        where = folder / label_to_dirname(label)
        for photo in sorted(where.glob("*.png")) if where.is_dir() else ():
            crop = cv2.imread(str(photo))
            if crop is None:
                log.warning("calibration photo %s is unreadable: left out", photo)
                continue
            crops.setdefault(label, []).append(crop)
    return crops


def never_calibrated(deck: str, state_dir: str | Path) -> bool:
    """No profile and no walk's photos kept for `deck`: the device has never learnt its look."""
    path = profile_path(state_dir, deck)
    return not path.exists() and not any(photos_folder(path).glob("*/*.png"))


def load_stored(base, deck: str, state_dir: str | Path, rebuild: bool = True):
    """(classifier, problem or None): the base classifier read through the deck's stored profile
    if there is one and it fits. A profile refused (corrupt, or made for another model or look
    network, say before an update) is never used: it is made again from the walk's photos kept
    beside it, if there are any (and `rebuild`: not in the frame loop, where UNO Flip's deck
    would hold up the watchdog's pings on a Pi), else reported and the cards read by the model
    alone."""
    from vision.adapt import CalibratedClassifier, Profile, ProfileError, calibrate

    path = profile_path(state_dir, deck)
    folder = photos_folder(path)
    has_photos = any(folder.glob("*/*.png"))
    if not path.exists() and not has_photos:
        return base, None
    problem = f"no profile at {path}"
    if path.exists():
        try:
            return CalibratedClassifier(base, Profile.load(path), deck, source=f"profile {path}"), None
        except ProfileError as error:
            problem = str(error)
    if not rebuild and has_photos:
        log.error("%s", problem)
        return base, f"calibration not used: {problem}; made again from its photos at the next start"
    try:
        crops = kept_photos(folder, deck)
        if crops:
            profile = calibrate(base, deck, crops)
            log.warning("%s; made again from the %d photos kept in %s", problem, sum(map(len, crops.values())),
                        folder)
            try:
                profile.save(path)
            except OSError as error:    # (a card gone read-only: made again at each start meanwhile)
                log.error("the calibration made again is used but not saved to %s: %s", path, error)
            return CalibratedClassifier(base, profile, deck, source=f"profile {path}"), None
    except Exception as error:  # noqa: BLE001 - whatever fails here, the device starts with the model alone
        log.exception("the calibration could not be made again from the photos in %s", folder)
        problem = f"{problem}; not made again from its photos: {error}"
    log.error("%s", problem)
    return base, f"calibration not used: {problem}"


class CalibrationFlow:
    """The walk, one label at a time: on_frame(image), on_button(press), screen().

    Screens (OLED): "CALIBRATE 3/22" / "show: 7 — ok" / "card seen", "hold still", "no card yet" or
    "take it away"; under "card seen", what the device reads the card as now ("read as 7", "read: not
    sure", "read: no card"), so the user sees at a glance which cards the walk mends. A card is seen only once the picture has been still for a few frames
    (vision.placement.StillPicture): a photo taken as the hand lets go of the card, smeared or with
    fingers on it, would be the label's only sample. Buttons: `ok` takes the card lying in the deal
    zone for the label shown (only when a card is seen), cut where the deck's model reads it as
    that label (vision.reading.outline_read_as over the still photo's outlines, found once per
    card laid; else at the largest card found), and goes on; after a card is taken (or a
    label skipped with a card in view), the next is only seen once the zone has been clear for a
    frame, so a card left lying is never learnt as the next label; `next` skips this label (a label never shown keeps its old samples, or is read by the
    model alone as far as it reads the cards shown: vision.adapt); `back` returns to the previous label; `back` held stops without saving. After the last
    label the profile is written (atomically) and `finished` is set; `result` holds the calibrated
    classifier for the placement detector. On the device (`background=True`) the learning runs on a
    thread of its own while the screen says "LEARNING", so the frame loop goes on pinging systemd's
    watchdog (UNO Flip's 108 cards take 3.8 s of compute with one photo each and 6.3 s with three on
    the development machine's two cores, bench/vision_bench.py --deck uno-flip; more on a Pi); meanwhile frames are not looked at and buttons not taken, but `back` held leaves
    the walk (the profile is saved when the learning ends and used from the next start). A stop of
    the appliance waits for the learning (device/appliance.py), so the profile is saved.

    The photos are kept beside the profile, in the folder `tablemate calibrate --from` reads
    (photos_folder: one sub-folder per label), the newest PHOTOS_PER_CARD of each card: walking the
    deck again adds a photo of each card shown, and each card shown is learnt from every photo kept
    of it (vision.adapt.calibrate, updating the stored profile; without a profile that fits, every
    card is learnt from its kept photos). One walk reads a deck as "1 sample" does in models/calibration.md,
    three walks as "3 samples" (one photo is often enough, and a deck whose look-alike numerals one
    photo catches badly reads surer with three). The summary says how many photos each card has.

    Re-calibrating one card: `CalibrationFlow(..., pick=True)` first shows "which card?" and `next`
    cycles the labels, `ok` picks one; only that label is learnt again, from the new photo alone (its
    old photos are dropped: a card read wrongly may owe it to one of them), the others are kept.
    A label of the stored profile without kept photos (a profile made before the photos were kept)
    keeps its samples.

    How the appliance wires it (device/table.py menu item and device/appliance.py frame loop, owned
    by the device engineer):
      * on the menu's "Calibrate" item, or the walk offered taken (device/table.py): flow =
        CalibrationFlow(base_classifier, deck, profile_path(state_dir, deck), background=True,
        reader=detector.classifier) (device/run.py calibration_starter); ("Calibrate card": pick=True)
      * while the flow runs: each frame -> flow.on_frame(image); each press -> flow.on_button(press);
        the display shows flow.screen() instead of the table's screen;
      * when flow.finished: if flow.result is not None, replace the detector's classifier with it
        (detector.classifier = flow.result); show flow.screen() (the summary) a few seconds.
    At start, `load_stored(base_classifier, deck, state_dir)` gives the classifier to use: the stored
    profile's when there is one that fits the model; one that does not (say, after an update of the
    models) is made again from the photos kept; without photos, the base one and a problem to show.
    """

    def __init__(self, base, deck: str, path: str | Path, pick: bool = False, background: bool = False,
                 reader=None):
        from rules.cards import DECKS

        self.base = base
        # What the device reads cards with now (a stored profile's, else the model): a card seen is
        # read back with it. (The walk learns over `base`, not a profile on top of a profile.)
        self.reader = reader if reader is not None else base
        self.deck = deck
        self.path = Path(path)
        self.labels = list(DECKS[deck].labels)
        self.index = 0
        self.picking = pick
        self.one_card = pick         # learn one card again: from its new photo alone
        # Learn on a thread of its own (the device: UNO Flip's deck takes seconds, more on a Pi,
        # and the frame loop must go on pinging the watchdog); `learning` meanwhile.
        self.background = background
        self.learning: threading.Thread | None = None
        self.crops: dict[str, list] = {}
        self.current = None          # the crop of the card now lying still in view, or None
        self.read_as = None          # ... and the reader's Prediction of it (once per still card)
        self.in_view = False         # a card is in view (still or not)
        self.cleared = True          # the zone was clear since the last card was taken
        # What the locator outlines on the table itself (a mat, a square of a checked cloth): the
        # quads seen away from the card when it was taken. They are no card, and a zone showing
        # only them is clear (else a busy cloth would keep the walk at "take it away").
        self._fixtures: list = []
        self._seen: list = []        # the quads of the last frame, less the fixtures
        self._cut_at = None          # ... and where the card lying still is cut (_outline_of_shown)
        self._still = None           # vision.placement.StillPicture, made at the first frame
        self.finished = False
        self.result = None           # the CalibratedClassifier once learnt
        self.saved = False           # ... and its profile saved (not: a card gone read-only)
        self.summary = ""

    # -- inputs ----------------------------------------------------------------------------------

    def on_frame(self, frame_bgr) -> None:
        """Keep the crop of the card in view once the picture is still (else None): cut where the
        deck's model reads the label asked for (_outline_of_shown), else at the largest card found."""
        import cv2

        from vision.geometry import warp_card
        from vision.locate import find_cards
        from vision.placement import StillPicture

        if self.finished or self.picking or self.learning:
            return
        self._still = self._still or StillPicture()
        still = self._still.feed(frame_bgr)
        quads = [q for q in find_cards(frame_bgr) if all(quad_iou(q, f) < SAME_FIXTURE for f in self._fixtures)]
        self._seen = quads
        self.cleared = self.cleared or not quads
        self.in_view = bool(quads) and self.cleared
        quad = max(quads, key=cv2.contourArea) if self.in_view and still else None
        was_seen = self.current is not None
        if quad is None:
            self.current = self.read_as = self._cut_at = None
            return
        if not was_seen:        # once per card laid still: where it is cut, and its read-back
            self._cut_at = self._outline_of_shown(frame_bgr, quad)
            self.read_as = self._read(frame_bgr, quad)   # (at the card found, as the game reads it)
        self.current = warp_card(frame_bgr, self._cut_at)

    def on_button(self, press: ButtonPress) -> None:
        if self.finished:
            return
        if self.learning:
            if press.button == "back" and press.hold:   # leave it learning: its profile is saved when done
                self.summary, self.finished = "left learning: used once saved", True
            return
        if press.button == "back" and press.hold:
            self._finish(save=False)
        elif self.picking:
            if press.button == "next":
                self.index = (self.index + 1) % len(self.labels)
            elif press.button == "ok":
                self.labels = [self.labels[self.index]]
                self.index, self.picking = 0, False
            elif press.button == "back":
                self._finish(save=False)
        elif press.button == "ok":
            if self.current is not None:
                self.crops.setdefault(self.labels[self.index], []).append(self.current)
                self._fixtures += [q for q in self._seen if not same_place(q, self._cut_at)]
                self.current, self.read_as, self.in_view, self.cleared = None, None, False, False  # the next label needs the zone cleared first
                self._advance()
        elif press.button == "next":
            if self.in_view:            # the card lying there was the skipped label's, not the next one's
                self.current, self.read_as, self.in_view, self.cleared = None, None, False, False
            self._advance()
        elif press.button == "back":
            self.index = max(0, self.index - 1)
            self.crops.pop(self.labels[self.index], None)
            self.current = self.read_as = self._cut_at = None   # a card lying there is cut again for this label

    # -- output ----------------------------------------------------------------------------------

    @property
    def still_learning(self) -> bool:
        """Its learning thread has not ended (a walk left learning is finished, yet still learns)."""
        return self.learning is not None and self.learning.is_alive()

    def screen(self):
        if self.learning and not self.finished:
            return MessageScreen("LEARNING", (f"{len(self.crops)} cards, please wait", "back held: leave it"))
        if self.finished:
            # (Another walk adds to the photos kept: none were, if the profile could not be saved.)
            surer = self.saved and min(self.result.profile.counts.values()) < PHOTOS_PER_CARD
            title = ("CALIBRATED" if self.saved else "USED, NOT SAVED") if self.result is not None else \
                "LEARNING" if self.still_learning else "NOT SAVED"
            return MessageScreen(title,
                                 (self.summary, "again: reads surer") if surer else (self.summary,))
        label = self.labels[self.index]
        if self.picking:
            return ChoiceScreen("calibrate which card?", label, f"{self.index + 1}/{len(self.labels)}")
        seen = ("card seen" if self.current is not None else "hold still" if self.in_view
                else "no card yet" if self.cleared else "take it away")
        lines = (f"show: {label} — ok", seen)
        if self.current is not None and self.read_as is not None:
            reading = self.read_as
            lines += (f"read as {reading.label}" if reading.label is not None else
                      f"read: {reading.reason or 'not sure'}",)
        return MessageScreen(f"CALIBRATE {self.index + 1}/{len(self.labels)}", lines)

    # -- inner -----------------------------------------------------------------------------------

    def _outline_of_shown(self, frame_bgr, largest):
        """Where the card shown is cut: the largest outline the deck's model reads as the label
        asked for (vision.reading.outline_read_as, among the still photo's outlines away from the
        table's fixtures), else the largest card found (`largest`). The model, not the profile
        read by now: a card a profile misreads (cut badly by an earlier walk) would be cut where
        that profile reads it, as badly again."""
        from vision.reading import outline_read_as, photo_candidates

        try:
            outlines = [c.quad for c in photo_candidates(frame_bgr)
                        if all(quad_iou(c.quad, f) < SAME_FIXTURE for f in self._fixtures)]
            found = outline_read_as(self.base, frame_bgr, self.labels[self.index], outlines)
        except Exception:  # noqa: BLE001 - the largest card found is the walk's crop as before
            log.exception("the card seen in the calibration walk could not be outlined by its reading")
            found = None
        return largest if found is None else found

    def _read(self, frame_bgr, quad):
        """The reader's reading of the card at `quad` (None if it fails: the walk goes on)."""
        from vision.reading import read_cards

        try:
            return read_cards(self.reader, frame_bgr, [quad])[0]
        except Exception:  # noqa: BLE001 - a read-back is a hint; the walk must not stop for it
            log.exception("the card seen in the calibration walk could not be read back")
            return None

    def _advance(self) -> None:
        self.index += 1
        if self.index >= len(self.labels):
            self._finish(save=True)

    def join(self, timeout: float | None = None) -> None:
        """Wait until the walk's learning (on its own thread) is done, at most `timeout` seconds."""
        if self.learning is not None:
            self.learning.join(timeout)

    def _finish(self, save: bool) -> None:
        if not save or not self.crops:
            self.summary = "stopped, nothing changed"
            self.finished = True
            return
        if self.background:
            self.learning = threading.Thread(target=self._learn, name="calibration", daemon=True)
            self.learning.start()
        else:
            self._learn()

    def _learn(self) -> None:
        """Keep the photos, make and save the profile; `finished` set last (the frame loop hands
        `result` to the detector once it sees it; a walk left with `back` held is finished already,
        and the frame loop hands its result over once this thread ends, unless the deck changed)."""
        try:
            self._make_profile()
        except Exception as error:  # noqa: BLE001 - the walk ends, the game goes on with the model it had
            log.exception("calibration failed")
            self.result, self.summary = None, f"failed: {error}"[:60]
        self.finished = True

    def _make_profile(self) -> None:
        from vision.adapt import CalibratedClassifier, Profile, ProfileError, calibrate, look_model_for

        try:
            look = look_model_for(self.base, "calibration")
        except ProfileError as error:
            log.error("%s", error)
            self.summary = "failed: no look model"
            return
        previous = None
        if self.path.exists():
            try:
                previous = Profile.load(self.path)
                previous.check_matches(self.base, look, self.deck, f"profile {self.path}")
            except ProfileError as error:
                log.warning("the stored profile is replaced: %s", error)
                previous = None
        folder = photos_folder(self.path)
        failed = keep_photos(folder, self.crops, replace=self.one_card)
        # The cards shown now, each from every photo kept of it; the others keep their samples in
        # the stored profile (its parameters too, unless the whole deck was shown), or, with no
        # profile to update, come from their kept photos.
        crops = kept_photos(folder, self.deck, None if previous is None else list(self.crops))
        for label in failed:
            kept = [] if self.one_card else crops.get(label, [])
            crops[label] = (kept + self.crops[label])[-PHOTOS_PER_CARD:]
        profile = calibrate(self.base, self.deck, crops, update=previous, look=look)
        try:
            profile.save(self.path)
            saved = True
        except OSError as error:    # (a card gone read-only: the walk is used now, lost at a restart)
            log.error("calibration not saved to %s: %s; used until the next start", self.path, error)
            saved = False
        self.saved = saved          # (before `result`: the frame loop reads both from its thread)
        self.result = CalibratedClassifier(self.base, profile, self.deck, source=f"profile {self.path}")
        missing = profile.missing()
        photos = sorted(set(profile.counts.values()))
        each = f"{photos[0]} photo{'s' if photos[0] > 1 else ''} each" if len(photos) == 1 else \
            f"{photos[0]}-{photos[-1]} photos each"
        self.summary = f"{len(self.crops)} learnt, {each}" + (f", {len(missing)} not shown" if missing else "")
        if saved:
            log.info("calibration saved to %s: %s (photos kept in %s)", self.path, self.summary, folder)
