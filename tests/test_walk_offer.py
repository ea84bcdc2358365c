"""The device leads the user to the calibration walk: at the first start with a deck it has never
learnt (once per deck, kept in the settings) and after a run of "not sure" readings; the walk
reads each card seen back as the game reads it now. Scripted buttons and replayed frames."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from device import run
from device.buttons import ButtonPress
from device.calibration import CalibrationFlow, photos_folder, profile_path
from device.config import DeviceConfig
from device.screens import MessageScreen
from device.table import UNSURE_OFFER_SECONDS, UNSURE_RUN
from device_table_helpers import Player
from rules.cards import DECKS
from vision.classifier import NOT_SURE, Prediction

REPO = Path(__file__).resolve().parent.parent
CARDS = len(DECKS["flip7"].labels)


class Detector:
    """Stands in for vision: at given feed calls a card label, or None for a "not sure"."""

    def __init__(self, readings: dict[int, str | None]):
        self.readings = readings
        self.calls = 0
        self.classifier = "model"

    def reset(self):
        pass

    def feed(self, image, index):
        self.calls += 1
        if self.calls - 1 not in self.readings:
            return []
        label = self.readings[self.calls - 1]
        if label is None:
            return [SimpleNamespace(reason=NOT_SURE)]
        return [SimpleNamespace(label=label, confidence=0.99)]

    def finish(self):
        return []


class Walk:
    """Stands in for a calibration walk: stays on its first screen (frames and buttons taken)."""
    finished, result, still_learning = False, None, False

    def __init__(self, pick):
        self.pick = pick
        self.presses = []

    def on_frame(self, image):
        pass

    def on_button(self, press):
        self.presses.append(press.button)

    def screen(self):
        return MessageScreen(f"CALIBRATE 1/{CARDS}", ("show: 0 — ok", "no card yet"))

    def join(self, timeout=None):
        pass


def _args(tmp_path: Path, frames: int, buttons: str, **changes):
    import cv2

    folder = tmp_path / "frames"
    if not folder.exists():
        folder.mkdir()
        for i in range(frames):
            cv2.imwrite(str(folder / f"{i:05d}.png"), np.zeros((8, 8, 3), np.uint8))
    (tmp_path / "buttons.txt").write_text(buttons)
    return SimpleNamespace(**{**dict(camera=f"replay:{folder}", display="none",
                                     buttons=f"script:{tmp_path / 'buttons.txt'}", state=str(tmp_path / "state"),
                                     game="flip7", players=["ann", "ben", "cat"], json=False, config=None,
                                     profile=None), **changes})


@pytest.fixture
def own_vision(monkeypatch):
    """`run` makes its own vision (so it has a calibration walk to offer), stood in for: the
    detector is given readings, each walk started is kept."""
    made = SimpleNamespace(readings={}, walks=[], detector=None)

    def make_detector(game, config, profile=None, state_dir=None, rebuild=True):
        made.detector = Detector(made.readings)
        return made.detector, None

    def calibration_starter(detector, game, state_dir):
        def start(pick):
            made.walks.append(Walk(pick))
            return made.walks[-1]
        return start

    monkeypatch.setattr(run, "make_detector", make_detector)
    monkeypatch.setattr(run, "calibration_starter", calibration_starter)
    return made


def _offered(tmp_path: Path) -> list:
    return json.loads((tmp_path / "state" / "settings.json").read_text())["offered"]


# -- at the first start ------------------------------------------------------------------------------

@pytest.mark.skipif(not (REPO / "models" / "flip7.onnx").exists(), reason="models/flip7.onnx is not built")
def test_the_first_start_with_a_deck_never_learnt_offers_the_walk_and_ok_starts_it(tmp_path):
    appliance = run.build(_args(tmp_path, 12, "3 ok\n"), DeviceConfig())    # the real vision and walk
    screen = appliance.table.screen(0.0)
    assert screen == MessageScreen("NEW DECK?", (f"ok: learn it ({CARDS} cards)", "next: play now"))
    appliance.run()
    walk = appliance.calibration
    assert isinstance(walk, CalibrationFlow) and not walk.picking      # the whole deck, from its first card
    assert walk.screen().title == f"CALIBRATE 1/{CARDS}"
    assert appliance.table.offer is None and _offered(tmp_path) == ["flip7"]


@pytest.mark.parametrize("button", ["next", "back"])
def test_a_declined_offer_is_not_made_again_after_a_restart(tmp_path, own_vision, button):
    appliance = run.build(_args(tmp_path, 10, f"3 {button}\n"), DeviceConfig())
    assert appliance.table.offer is not None
    appliance.run()
    assert not own_vision.walks and appliance.table.offer is None and not appliance.table.match.events
    assert appliance.table.mode == "play" and _offered(tmp_path) == ["flip7"]
    again = run.build(_args(tmp_path, 10, ""), DeviceConfig())    # rebooted: the same game, still no card
    assert again.table.offer is None
    again.held[0].close()
    other = run.build(_args(tmp_path, 10, "", game="flip7-vengeance"), DeviceConfig())
    assert other.table.offer is not None                          # another deck is asked about once too
    other.held[0].close()


def test_a_deck_learnt_or_given_a_profile_or_a_game_under_way_is_not_offered_the_walk(tmp_path, own_vision):
    path = profile_path(tmp_path / "state", "flip7")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"a stored profile")
    appliance = run.build(_args(tmp_path, 10, ""), DeviceConfig())
    assert appliance.table.offer is None
    appliance.held[0].close()
    path.unlink()
    (photos_folder(path) / "7").mkdir(parents=True)               # a walk's photos, its profile to be made again
    (photos_folder(path) / "7" / "0001.png").write_bytes(b"")
    appliance = run.build(_args(tmp_path, 10, ""), DeviceConfig())
    assert appliance.table.offer is None
    appliance.held[0].close()
    (photos_folder(path) / "7" / "0001.png").unlink()
    appliance = run.build(_args(tmp_path, 10, "", profile=str(tmp_path / "mine.npz")), DeviceConfig())
    assert appliance.table.offer is None
    appliance.held[0].close()
    (tmp_path / "state" / "game.txt").write_text("game flip7\nplayers ann ben cat\ncard 5\n")
    appliance = run.build(_args(tmp_path, 10, ""), DeviceConfig())   # a game under way resumes as it was
    assert appliance.table.match.events and appliance.table.offer is None
    appliance.held[0].close()
    # A detector given from outside (a test's, no calibration walk to start): nothing to offer.
    appliance = run.build(_args(tmp_path, 10, "", state=str(tmp_path / "fresh")), DeviceConfig(),
                          detector=Detector({}))
    assert appliance.table.offer is None
    appliance.held[0].close()


def test_a_card_played_while_the_offer_shows_is_applied_and_declines_it(tmp_path, own_vision):
    own_vision.readings.update({2: "3"})
    appliance = run.build(_args(tmp_path, 12, "6 ok\n"), DeviceConfig())   # ok after the card: the game's
    appliance.run()
    assert [e.label for e in appliance.table.match.events] == ["3"]
    assert appliance.table.offer is None and not own_vision.walks and _offered(tmp_path) == ["flip7"]
    assert (tmp_path / "state" / "game.txt").read_text().splitlines()[2:] == ["card 3"]


def test_the_offer_shows_after_the_problems_queued_before_it(tmp_path, own_vision):
    appliance = run.build(_args(tmp_path, 10, ""), DeviceConfig())
    table = appliance.table
    table.show_problem("Config error", "line 1")          # (as `tablemate run` shows a config's problems)
    assert table.screen(0.0).title == "Config error"
    table.on_button(ButtonPress("ok"), 0.5)               # pressed before the offer is seen: not an answer
    assert table.request is None and table.offer is not None
    table.screen(100.0)                                   # (what that ok said: ben cannot stop yet)
    assert table.screen(200.0).title == "NEW DECK?"       # an offer made at a start waits to be answered
    table.on_button(ButtonPress("ok"), 200.5)
    assert table.request == "calibrate" and table.offer is None
    appliance.held[0].close()


def test_a_deck_chosen_in_the_menu_and_never_learnt_is_offered_the_walk_too(tmp_path, own_vision):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "settings.json").write_text('{"offered": ["flip7"]}')
    game = "2 back hold\n" + "".join(f"{3 + k} next\n" for k in range(6)) + "9 ok\n10 next\n11 ok\n"  # Vengeance
    # "New game" shows 3 s (to frame 56 at a replay's 15 fps), then the offer.
    appliance = run.build(_args(tmp_path, 70, game + "60 ok\n"), DeviceConfig())
    assert appliance.table.offer is None
    appliance.run()
    assert appliance.table.match.config.game == "flip7-vengeance" and len(own_vision.walks) == 1
    assert _offered(tmp_path) == ["flip7", "flip7-vengeance"]


# -- after a run of "not sure" -----------------------------------------------------------------------

def _unsure(player: Player, times: int) -> None:
    for _ in range(times):
        player.t += 1.0
        player.table.on_unsure(player.t)


def test_readings_not_sure_in_a_row_offer_the_walk_and_a_card_read_resets_the_run(tmp_path):
    player = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    player.table.can_calibrate = True
    player.card("3")
    _unsure(player, UNSURE_RUN - 1)
    player.card("5")                                      # read surely: the run starts again
    _unsure(player, UNSURE_RUN - 1)
    assert player.table.offer is None
    _unsure(player, 1)
    assert player.shown() == MessageScreen("CARDS NOT SURE", ("ok: learn this deck", "next: play on"))
    player.press("ok")
    assert player.table.request == "calibrate" and player.table.offer is None
    assert player.table.match.state.rows["ann"] == []      # ok took the offer: no one stopped


def test_a_declined_offer_waits_for_a_card_read_and_another_run(tmp_path):
    player = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    player.table.can_calibrate = True
    player.card("3")
    _unsure(player, UNSURE_RUN)
    assert player.shown().title == "CARDS NOT SURE"
    player.press("next")                                  # play on
    assert player.table.offer is None and getattr(player.shown(), "title", None) != "CARDS NOT SURE"
    _unsure(player, 3 * UNSURE_RUN)                       # no nagging at every card
    assert player.table.offer is None
    player.card("5")
    _unsure(player, UNSURE_RUN)
    assert player.table.offer is not None                 # a card read, then another run
    assert not (tmp_path / "settings.json").exists()      # (only the first start's offer is kept)


def test_an_offer_not_yet_on_screen_or_left_unanswered_leaves_the_buttons_to_the_game(tmp_path):
    player = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    player.table.can_calibrate = True
    for label in ("3", "5", "7"):                         # the deal: ben, cat, ann; ben on turn
        player.card(label)
    player.shown()
    _unsure(player, UNSURE_RUN)
    assert player.table.screen(player.t).title == "Card not sure"   # shown first: the offer waits
    player.press("ok")                                    # ben stops: the game's ok, not the offer's
    assert player.table.request is None and player.table.match.state.status["ben"] == "stopped"
    assert player.shown().title == "CARDS NOT SURE"       # after ben's flash
    player.t += UNSURE_OFFER_SECONDS                      # nobody answers: the game comes back
    assert getattr(player.table.screen(player.t), "title", None) != "CARDS NOT SURE" and player.table.offer is None
    player.press("ok")
    assert player.table.request is None and player.table.match.state.status["cat"] == "stopped"


def test_without_a_walk_to_start_a_run_of_not_sure_only_asks_to_show_the_cards_again(tmp_path):
    player = Player(tmp_path, "flip7", ("ann", "ben", "cat"))     # (a table without a calibration starter)
    _unsure(player, 2 * UNSURE_RUN)
    assert player.table.offer is None and player.table.screen(player.t).title == "Card not sure"


def test_the_frame_loop_offers_the_walk_after_a_run_of_not_sure_and_ok_starts_it(tmp_path, own_vision):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "settings.json").write_text('{"offered": ["flip7"]}')   # asked at its first start
    own_vision.readings.update({2: "3", 4: None, 6: None, 8: None})   # frames 4, 6, 8: "not sure"
    # The last "Card not sure" shows 3 s from frame 8 (at a replay's 15 fps: to frame 53), then the offer.
    appliance = run.build(_args(tmp_path, 70, "56 ok\n"), DeviceConfig())
    assert appliance.table.offer is None
    appliance.run()
    assert len(own_vision.walks) == 1 and appliance.calibration is own_vision.walks[0]
    assert not own_vision.walks[0].pick and [e.label for e in appliance.table.match.events] == ["3"]


# -- the walk reads each card back ---------------------------------------------------------------------

class Reader:
    """Stands in for the classifier the game reads with now: says `reading` of every card."""

    def __init__(self, reading: Prediction):
        self.reading = reading
        self.reads = 0

    def probabilities(self, crops):
        self.reads += 1
        return np.zeros((len(crops), 2), np.float32)

    def decide(self, probs):
        return self.reading


def _frame_with(label: str, seed: int) -> np.ndarray:
    from vision.synth.scenes import make_scene

    frame, _ = make_scene(np.random.default_rng(seed), [label], "flip7", size=(640, 480), split="heldout")
    return frame


def test_the_walk_reads_each_card_seen_back_as_the_game_reads_it_now(tmp_path):
    reader = Reader(Prediction("7", 0.97))
    flow = CalibrationFlow("model", "flip7", profile_path(tmp_path, "flip7"), reader=reader)
    assert flow.screen().lines == ("show: 0 — ok", "no card yet")
    seven = _frame_with("7", 1)
    for _ in range(5):                                    # still: seen from the third frame on
        flow.on_frame(seven)
    assert flow.screen().lines == ("show: 0 — ok", "card seen", "read as 7")
    assert reader.reads == 1                              # read once, not at every frame it lies still
    reader.reading = Prediction(None, 0.4, NOT_SURE, leaning="1")
    flow.on_button(ButtonPress("next"))                   # (that was not a 0)
    flow.on_frame(np.zeros((480, 640, 3), np.uint8))      # the zone cleared
    one = _frame_with("1", 2)
    for _ in range(3):
        flow.on_frame(one)
    assert flow.screen().lines == ("show: 1 — ok", "card seen", "read: not sure")
    flow.on_button(ButtonPress("ok"))                     # taken as it is shown: the walk goes on
    assert len(flow.crops["1"]) == 1 and flow.screen().lines == ("show: 2 — ok", "take it away")
    from device.screens import Shown, render
    render(Shown(flow.screen()))


def test_the_devices_walk_reads_back_with_the_detectors_classifier(tmp_path):
    reader = Reader(Prediction("7", 0.97))
    detector = SimpleNamespace(classifier=SimpleNamespace(base="model", reader=reader))
    walk = run.calibration_starter(detector, "flip7", tmp_path)(pick=False)
    assert walk.base == "model" and walk.reader is detector.classifier
