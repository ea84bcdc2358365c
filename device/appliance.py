"""The frame loop: camera frames -> placement detector -> table (rules + log) -> display, with the
buttons drained between frames. During a calibration walk (menu: Calibrate, device/calibration.py)
frames and buttons go to the walk instead, and its screens are shown. The table offers that walk itself (a
first start with a deck never calibrated, a run of "not sure": device/table.py) where the loop
has a walk to start.

Nothing slow or fallible runs on this thread except the detector: the camera is read on its own
thread (device/camera.py FrameSource) and the display is drawn on its own (device/display.py
DisplayWorker), so a camera that hangs or an I2C error never stops the game or the buttons. The
loop tells systemd it is ready once the first frame arrives and pings the watchdog as long as it
runs and the camera thread is not stuck inside a read.
"""

from __future__ import annotations

import collections
import logging
import queue
import time
from dataclasses import dataclass, field

from device.buttons import Buttons, ButtonPress
from device.camera import FrameSource
from device.display import DisplayWorker
from device.screens import Shown
from device.sdnotify import Notifier
from device.table import MESSAGE_SECONDS, Table

log = logging.getLogger(__name__)

IDLE_WAIT = 0.05           # seconds the loop waits for a frame before handling buttons anyway
STUCK_READ_SECONDS = 30.0  # a camera read blocked this long: stop pinging the watchdog (restart)
STOP_LEARNING_SECONDS = 60.0  # at a stop, the longest a calibration walk's learning is waited for


@dataclass
class LoopStats:
    frames: int = 0
    placements: int = 0
    unsure: int = 0
    presses: int = 0
    detector_errors: int = 0
    # the last hour or so at 15 fps: a service runs for days
    detect_seconds: collections.deque = field(default_factory=lambda: collections.deque(maxlen=50_000))


class Appliance:
    def __init__(self, source: FrameSource, detector, table: Table, display: DisplayWorker,
                 buttons: Buttons, notifier: Notifier | None = None, held: list | None = None,
                 start_calibration=None, vision_for=None, read_hand=None, first_start=None, view=None,
                 resume=None):
        self.source = source
        self.detector = detector
        self.table = table
        self.display = display
        self.buttons = buttons
        self.notifier = notifier or Notifier()
        self.held = held or []          # closed when the loop ends (the state directory's lock)
        self.start_calibration = start_calibration   # pick: bool -> CalibrationFlow; None: not available
        self.calibration = None
        # A walk left learning (back held): joined at a stop like a walk under way, so its profile
        # is saved; its classifier is used once learnt unless the deck changed meanwhile.
        self.left_learning = None
        self.use_when_learnt = False
        # game -> (detector, start_calibration, problem or None): the vision of another deck; None: keep
        self.vision_for = vision_for
        # (image, classifier) -> (labels, unreadable count): a hand laid out under the camera
        # game -> whether its deck is new here (device/run.py first_start): the walk is offered
        self.first_start = first_start
        self.read_hand = read_hand or _read_hand
        self.view = view            # device/laptop_view.py LaptopView: the window's panes, the preview pictures
        self.resume = resume            # device/resume.py: the zone's picture and the choice shown, kept
        self.presses: queue.Queue[ButtonPress] = queue.Queue()
        self.stats = LoopStats()
        self.stopping = False
        self.t = 0.0

    @property
    def start_calibration(self):
        return self._start_calibration

    @start_calibration.setter
    def start_calibration(self, start) -> None:
        # The table offers the walk only where one can be started (a deck's vision may have none).
        self._start_calibration = start
        self.table.can_calibrate = start is not None

    def run(self) -> None:
        """Until a replay ends, the table asks to shut down, or `stopping` is set."""
        self.display.start()
        self.buttons.start(self.presses.put)
        self.source.start()
        ready = False
        self.notifier.status("waiting for the camera")
        try:
            while not self.stopping:
                frame = self.source.get(IDLE_WAIT)
                if frame is not None:
                    self.t = frame.t
                    if not ready:
                        self.notifier.ready()
                        self.notifier.status("playing")
                        ready = True
                    self._process(frame)
                elif self.source.camera.live:
                    self.t = time.monotonic()
                elif self.source.drained():
                    self._on_events(self.detector.finish(), self.t, -1)   # a card settled on the last frame
                    break
                self._drain_buttons()
                self._keep_for_a_restart()
                if self.table.request == "shutdown":
                    self.display.post(Shown(self.table.screen(self.t)), self.t)
                    break
                self._calibration_step()
                screen = self.calibration.screen() if self.calibration else self.table.screen(self.t)
                self.display.post(Shown(screen, self._banner()), self.t)
                self._show_view("on_table", self.table.match)
                if self.source.read_blocked_for() < STUCK_READ_SECONDS:
                    self.notifier.watchdog()
        finally:
            self.notifier.stopping()
            # A walk still learning saves its profile before the state directory's lock goes.
            for walk in (self.calibration, self.left_learning):
                if walk is not None:
                    walk.join(STOP_LEARNING_SECONDS)
            self.source.stop()
            self.buttons.close()
            self.display.close()
            for resource in self.held:
                resource.close()

    def _process(self, frame) -> None:
        self.stats.frames += 1
        if self.calibration is not None:
            try:
                self.calibration.on_frame(frame.image)
            except Exception:  # as for the detector: one odd frame must not end the walk
                log.exception("calibration failed on frame %d", frame.index)
            for press in self.buttons.due(frame.index):
                self._press(press, frame.t)
            self._show_view("on_frame", frame, [], self.detector)
            return
        if self.table.request == "scan hand":
            self._scan_hand(frame)
        started = time.perf_counter()
        try:
            events = self.detector.feed(frame.image, frame.index)
        except Exception:  # a vision bug on one odd frame must not end the game
            self.stats.detector_errors += 1
            log.exception("placement detector failed on frame %d", frame.index)
            events = []
        self.stats.detect_seconds.append(time.perf_counter() - started)
        self._on_events(events, frame.t, frame.index)
        self._show_view("on_frame", frame, events, self.detector)
        for press in self.buttons.due(frame.index):
            self._press(press, frame.t)
        self._keep_for_a_restart()

    def _keep_for_a_restart(self) -> None:
        if self.resume is not None and self.table.game_log.keeps:
            self.resume.keep_picture(self.detector)
            self.resume.keep_choice(self.table.choice_path, self.table.game_log.lines)

    def _show_view(self, what: str, *args) -> None:
        """Hand the laptop view what it shows; a fault there must not end the game."""
        if self.view is None:
            return
        try:
            getattr(self.view, what)(*args)
        except Exception:
            log.exception("the laptop view failed (%s)", what)
            self.view = None

    def _on_events(self, events, t: float, index: int) -> None:
        """The detector's events, delivered with frame `index` (-1: at the end of the stream)."""
        for event in events:
            label = getattr(event, "label", None)
            if label is not None:
                self.stats.placements += 1
                log.debug("frame %d: placement %s (%.2f)", index, label, event.confidence)
                self.table.on_card(label, t)
            else:
                self.stats.unsure += 1
                log.info("frame %d: card not sure (%s)", index, event.reason)
                self.table.on_unsure(t)

    def _drain_buttons(self) -> None:
        while True:
            try:
                press = self.presses.get_nowait()
            except queue.Empty:
                return
            self._press(press, self.t)

    def _press(self, press: ButtonPress, t: float) -> None:
        self.stats.presses += 1
        if self.calibration is not None:
            self.calibration.on_button(press)
        else:
            self.table.on_button(press, t)

    def _scan_hand(self, frame) -> None:
        self.table.request = None
        try:
            labels, unsure = self.read_hand(frame.image, self.detector.classifier)
        except Exception:  # as for the detector: a bad frame is a prompt to try again, not the end
            log.exception("reading the hand failed on frame %d", frame.index)
            labels, unsure = [], 1
        log.info("frame %d: hand read %s (%d not sure)", frame.index, " ".join(labels) or "empty", unsure)
        self.table.on_hand_read(labels, unsure, frame.t)
        self.detector.reset()        # the laid hand is not a play; the pile is watched afresh

    def _switch_game(self) -> None:
        """A new game of another deck (menu: Game): its classifier and calibration."""
        self.table.request = None
        if self.vision_for is None:
            return
        game = self.table.match.config.game
        self.use_when_learnt = False         # a walk left learning was of the deck before
        try:
            self.detector, self.start_calibration, problem = self.vision_for(game)
        except Exception as error:  # a missing model: the game is still kept, cards just are not read
            log.exception("no vision for %s", game)
            problem = str(error)
        if problem:
            self.table.show_problem("Vision", problem)
        if self.start_calibration is not None and self.first_start is not None and self.first_start(game):
            self.table.offer_calibration("new deck")   # a deck first played here, chosen in the menu

    def _calibration_step(self) -> None:
        """Start a walk the menu asked for; end a finished one (its classifier goes to the
        detector, and the detector takes the table as it is now for its reference)."""
        request = self.table.request
        if request == "game":
            self._switch_game()
        if request in ("calibrate", "calibrate card"):
            self.table.request = None
            if self.start_calibration is None:
                self.table.show_problem("Calibrate", "not available with this detector")
            else:
                self.calibration = self.start_calibration(pick=request == "calibrate card")
                log.info("calibration walk started")
        if self.calibration is not None and self.calibration.finished:
            walk, self.calibration = self.calibration, None
            if walk.result is not None:
                self.detector.classifier = walk.result
            elif walk.still_learning:
                self.left_learning, self.use_when_learnt = walk, True
            self.detector.reset()
            self.table.show(walk.screen(), MESSAGE_SECONDS)
        if self.left_learning is not None and not self.left_learning.still_learning:
            walk, self.left_learning = self.left_learning, None
            if walk.result is not None and self.use_when_learnt:
                self.detector.classifier = walk.result
                if walk.saved:
                    log.info("the calibration left learning is saved and in use")
                else:   # (its summary, "USED, NOT SAVED", was not seen: the walk was left)
                    log.warning("the calibration left learning is in use but not saved")
                    self.table.show(walk.screen(), MESSAGE_SECONDS)

    def _banner(self) -> str:
        problem = self.source.status() or self.display.problem
        return problem or ""


def _read_hand(image, classifier):
    from device.handscan import read_hand

    return read_hand(image, classifier)
