"""The frame loop with stand-in hardware: buttons drive the game (stop, choose, undo, menu), and a
camera that fails or freezes and a display that raises OSError do not stop it; it recovers."""

import json
import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import device.camera
import device.display
from device import run
from device.buttons import ButtonPress
from device.camera import Camera, CameraError
from device.config import CameraConfig, DeviceConfig
from device.display import Display


class ScriptedDetector:
    """Stands in for vision: a card label at given feed calls."""

    def __init__(self, cards: dict[int, str]):
        self.cards = cards
        self.calls = 0
        self.classifier = "base"
        self.resets = 0

    def reset(self):
        self.resets += 1

    def feed(self, image, index):
        self.calls += 1
        label = self.cards.get(self.calls - 1)
        return [SimpleNamespace(label=label, confidence=0.99)] if label else []

    def finish(self):
        return []


def _replay_args(tmp_path: Path, frames: int, buttons: str, players=("ann", "ben", "cat")):
    import cv2

    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(frames):
        cv2.imwrite(str(folder / f"{i:05d}.png"), np.zeros((8, 8, 3), np.uint8))
    (tmp_path / "buttons.txt").write_text(buttons)
    return SimpleNamespace(camera=f"replay:{folder}", display=f"png:{tmp_path / 'png'}",
                           buttons=f"script:{tmp_path / 'buttons.txt'}", state=str(tmp_path / "state"),
                           game="flip7", players=list(players), json=False, config=None)


def test_buttons_play_the_game(tmp_path):
    # deal 3 5 7 (ann ben cat ... ann is dealer so ben, cat, ann), then a freeze for ben
    cards = {2: "3", 4: "5", 6: "7", 8: "freeze", 20: "9", 30: "2"}
    buttons = "\n".join([
        "10 next", "11 ok",        # ben's freeze: the second option offered (himself)
        "12 ok",                   # cat stops
        "22 back", "23 back",      # undo asked, then kept
        "24 back", "25 ok",        # undo the 9
        "32 back hold", "33 next", "34 next", "35 next", "36 next", "37 next", "38 ok",  # menu > brightness
        "39 next", "40 ok",        # brightness 3 -> 4, saved
    ]) + "\n"
    args = _replay_args(tmp_path, 45, buttons)
    appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector(cards))
    appliance.run()
    log = (tmp_path / "state" / "game.txt").read_text().split("\n")
    assert log[2:] == ["card 3", "card 5", "card 7", "card freeze", "target ben", "stop", "card 9", "undo",
                       "card 2", ""]
    state = appliance.table.match.state
    assert state.status == {"ann": "active", "ben": "frozen", "cat": "stopped"}
    assert state.rows["ann"] == ["7", "2"]
    assert appliance.table.settings.brightness == 4
    assert (tmp_path / "state" / "settings.json").exists()
    assert len(list((tmp_path / "png").glob("*.png"))) > 10


def test_menu_players_starts_a_new_game_and_restart_resumes(tmp_path):
    buttons = "5 back hold\n6 next\n7 ok\n8 next\n9 next\n10 ok\n"   # players: 3 -> 4 -> 5
    args = _replay_args(tmp_path, 20, buttons)
    appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({2: "3", 15: "8"}))
    appliance.run()
    assert appliance.table.match.config.players == ("ann", "ben", "cat", "dan", "eve")
    assert list((tmp_path / "state" / "games").glob("*.txt"))      # the old game is archived
    # started again without --players: the kept 5-player game resumes with its card
    args.players, args.buttons = None, "none"
    again = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    assert again.table.match.config.players == ("ann", "ben", "cat", "dan", "eve")
    assert again.table.match.state.rows["ben"] == ["8"]


class FlakyCamera(Camera):
    """Missing at first, then delivers, freezes for a while, is lost, and comes back."""
    live = True

    def __init__(self):
        self.opens = 0
        self.reads = 0
        self.frozen = threading.Event()
        self.thawed = threading.Event()  # set by the test: the hang lasts as long as it needs, however loaded the machine

    def open(self):
        self.opens += 1
        if self.opens <= 2:
            raise CameraError("unplugged")

    def read(self):
        self.reads += 1
        if self.reads == 30:
            self.frozen.set()
            self.thawed.wait(10)        # the camera hangs inside a read
            self.frozen.clear()
        if self.reads == 60:
            raise CameraError("cable pulled")
        time.sleep(0.01)
        return np.zeros((8, 8, 3), np.uint8)


class FailingDisplay(Display):
    def __init__(self, failures: list[int]):
        self.failures = failures        # shared: how many shows are still to fail
        self.shown = []

    def show(self, image, t):
        if self.failures[0] > 0:
            self.failures[0] -= 1
            raise OSError(121, "Remote I/O error")
        self.shown.append(image)


def test_faults_do_not_stop_the_loop(tmp_path, monkeypatch):
    camera = FlakyCamera()
    failures = [4]
    displays = []

    def open_display():
        displays.append(FailingDisplay(failures))
        return displays[-1]

    monkeypatch.setattr(device.camera, "parse_camera", lambda spec, config: camera)
    monkeypatch.setattr(device.display, "parse_display", lambda spec, config: open_display)
    config = DeviceConfig(camera=CameraConfig(retry_seconds=0.05, stall_seconds=0.3))
    args = SimpleNamespace(camera="fake", display="fake", buttons="none", state=str(tmp_path / "state"),
                           game="flip7", players=["ann", "ben"], json=False, config=None)
    detector = ScriptedDetector({5: "3", 40: "5", 80: "7"})
    appliance = run.build(args, config, detector=detector)
    appliance.display._retry_delay = 0.05
    worker = threading.Thread(target=appliance.run)
    worker.start()
    try:
        assert camera.frozen.wait(10)
        deadline = time.monotonic() + 10
        while appliance.source.status() != "camera not responding" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert appliance.source.status() == "camera not responding"
        appliance.presses.put(ButtonPress("back"))          # handled while the camera hangs
        deadline = time.monotonic() + 10
        while appliance.table.mode != "undo" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert appliance.table.mode == "undo" and camera.frozen.is_set()
        camera.thawed.set()
        appliance.presses.put(ButtonPress("back"))
        deadline = time.monotonic() + 15   # the frames go on, and the display comes back after its faults
        while (detector.calls < 100 or not displays[-1].shown) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        appliance.stopping = True
        worker.join(10)
    assert not worker.is_alive()
    assert camera.opens >= 4                                 # two misses, first open, reopen after loss
    assert appliance.source.status() is None
    assert [str(e) for e in appliance.table.match.events] == ["Card(label='3', to=None)",
                                                              "Card(label='5', to=None)",
                                                              "Card(label='7', to=None)"]
    assert len(displays) >= 2 and displays[-1].shown          # reopened and drawing again
    assert appliance.display.problem is None


def test_systemd_notify_ready_and_watchdog(tmp_path, monkeypatch):
    import socket

    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.5)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "400000")       # ping every 0.1 s at most
    args = _replay_args(tmp_path, 30, "")
    args.camera += "@60"                                # paced: the loop runs for about 0.5 s
    appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    appliance.run()
    messages = []
    try:
        while True:
            messages.append(sock.recv(256).decode())
    except socket.timeout:
        pass
    finally:
        sock.close()
    assert messages[0].startswith("STATUS=") and "READY=1" in messages
    assert messages.index("READY=1") < messages.index("WATCHDOG=1")
    assert messages.count("WATCHDOG=1") >= 3 and messages[-1] == "STOPPING=1"


def test_notify_never_blocks_the_loop(tmp_path, monkeypatch):
    """A manager that does not read its socket must not stall the frame loop."""
    import socket

    from device.sdnotify import Notifier

    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    notifier = Notifier()
    started = time.monotonic()
    for _ in range(2000):
        notifier.status("x" * 100)
    sock.close()
    assert time.monotonic() - started < 2


def test_one_device_per_state_directory(tmp_path):
    args = _replay_args(tmp_path, 3, "")
    first = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    with pytest.raises(run.StateDirInUse, match="another tablemate run"):   # not played on unkept
        run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    first.run()
    run.build(args, DeviceConfig(), detector=ScriptedDetector({})).run()   # free again


def _a_kept_game_in_a_state_dir_that_cannot_be_written(tmp_path, monkeypatch, buttons=""):
    """A kept game with a torn last line, in a state directory whose writes fail as a card
    remounted read-only does (the tests may run as root, whom permissions do not stop)."""
    import errno

    args = _replay_args(tmp_path, 30, buttons)
    state = Path(args.state)
    state.mkdir()
    (state / "game.txt").write_text("game flip7\nplayers ann ben cat\ncard 3\ncard 5\nca")
    before = {p.name: p.read_bytes() for p in state.iterdir()}

    def read_only(*_args, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    real_open = os.open

    def open_read_only(path, flags, *rest, **kwargs):
        if Path(path).parent == state and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            read_only()
        return real_open(path, flags, *rest, **kwargs)
    monkeypatch.setattr(os, "open", open_read_only)     # (run's probe; the directory's lock still works)
    return args, state, before, read_only


def test_a_state_dir_that_cannot_be_written_plays_on_unkept_and_says_so(tmp_path, monkeypatch):
    """The card gone read-only at boot: the kept game is resumed as its log has it, played on,
    and nothing is written (not even the torn line cut); the display says why first."""
    from PIL import Image

    from device import gamelog

    args, state, before, read_only = _a_kept_game_in_a_state_dir_that_cannot_be_written(
        tmp_path, monkeypatch, "12 ok\n")             # (ben stops: played, not kept)
    for writer in ("write_atomically", "_truncate", "_move_aside"):
        monkeypatch.setattr(gamelog, writer, read_only)
    appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({4: "7"}))
    table = appliance.table
    titles = [o.screen.title for o in table.overlays]
    assert titles[0] == "Not saving" and "Game log" in titles and "Game log repaired" not in titles
    appliance.run()
    assert not table.game_log.keeps and "Read-only file system" in table.game_log.why
    assert table.match.state.rows == {"ann": ["7"], "ben": ["3"], "cat": ["5"]}
    assert table.match.state.status == {"ann": "active", "ben": "stopped", "cat": "active"}
    assert table.game_log.lines == 2 + 2 + 2 and table.refusals == []
    assert {p.name: p.read_bytes() for p in state.iterdir()} == before     # nothing written
    first = Image.open(sorted((tmp_path / "png").glob("*.png"))[0]).convert("L")
    assert first.histogram()[255] > 0.5 * 128 * 64          # the inverted "Not saving" screen


def test_a_game_log_that_cannot_be_read_is_left_alone_and_the_game_played_unkept(tmp_path, monkeypatch):
    """A log the run cannot read (its owner, a failing card) is neither archived nor replaced by
    a new game's: the table plays a new game unkept, and the menu's settings are not written."""
    import errno

    menu_brightness_up = "".join(f"{i} {b}\n" for i, b in enumerate(
        ["back hold", "next", "next", "next", "next", "next", "ok", "next", "ok"], start=5))
    args = _replay_args(tmp_path, 20, menu_brightness_up)
    state = Path(args.state)
    state.mkdir()
    (state / "game.txt").write_text("game flip7\nplayers ann ben cat\ncard 3\n")
    before = {p.name: p.read_bytes() for p in state.iterdir()}
    real_read_bytes = Path.read_bytes

    def read_bytes(path):
        if path.name == "game.txt":
            raise OSError(errno.EACCES, "Permission denied")
        return real_read_bytes(path)
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    table = appliance.table
    assert not table.game_log.keeps and "game log cannot be read" in table.game_log.why
    assert "Permission denied" in table.game_log.why and table.match.events == []
    appliance.run()
    monkeypatch.undo()
    assert table.settings.brightness == 4                 # changed for this run ...
    assert {p.name: p.read_bytes() for p in state.iterdir()} == before     # ... and nothing written


def test_played_unkept_the_game_is_written_out_whole_once_the_directory_can_be_written(tmp_path, monkeypatch):
    """The fault gone (docs/device.md: the service recovers by itself), the next card writes the
    game so far as the log, the table is told, and the game is kept from then on: a restart
    resumes all of it."""
    from device.screens import MessageScreen

    args, state, before, _ = _a_kept_game_in_a_state_dir_that_cannot_be_written(tmp_path, monkeypatch)
    table = run.build(args, DeviceConfig(), detector=ScriptedDetector({})).table
    table.on_card("7", 1.0)                            # ann: played, not kept
    assert not table.game_log.keeps and {p.name: p.read_bytes() for p in state.iterdir()} == before
    monkeypatch.undo()                                  # the card is writable again
    table.on_card("9", 2.0)                             # ben
    assert table.game_log.keeps
    assert "Saving again" in [o.screen.title for o in table.overlays if isinstance(o.screen, MessageScreen)]
    table.on_card("2", 3.0)                             # cat: appended as ever
    table.game_log.close()
    text = (state / "game.txt").read_text()
    assert text == "game flip7\nplayers ann ben cat\ncard 3\ncard 5\ncard 7\ncard 9\ncard 2\n"
    from device import gamelog
    assert gamelog.load(state / "game.txt").match.state.rows == {"ann": ["7"], "ben": ["3", "9"], "cat": ["5", "2"]}


def test_an_unkept_log_written_out_replaces_archives_or_moves_aside_what_was_there(tmp_path, monkeypatch):
    from device import gamelog
    from rules.core import GameConfig

    config = GameConfig("flip7", ("ann", "ben"))
    header = ["game flip7", "players ann ben"]
    cases = {"yes": "game flip7\nplayers ann ben\ncard 3\nca",          # its start, torn
             "repaired": "game flip7\nplayers ann ben\ncard 3\ncard 99\n",  # its start, a bad line
             "no": "game uno-flip\nplayers cy di\n",                      # another game
             "unread": "game flip7\nplayers ann ben\n"}
    for continues, old in cases.items():
        folder = tmp_path / continues
        folder.mkdir()
        path = folder / "game.txt"
        path.write_text(old)
        unkept = gamelog.UnkeptLog(path, header + ["card 3", "card 4"], "the card was read-only", continues)
        if continues == "unread":                       # not yet readable: nothing changes
            real = Path.read_bytes
            monkeypatch.setattr(Path, "read_bytes", lambda p: (_ for _ in ()).throw(OSError(5, "I/O error"))
                                if p.name == "game.txt" else real(p))
            assert unkept.recovered() is None and sorted(os.listdir(folder)) == ["game.txt"]
            monkeypatch.undo()
        kept = unkept.recovered()
        assert kept is not None and kept.lines == 4
        kept.append_event(gamelog.parse_script("game flip7\nplayers ann ben\ncard 5\n").events[0][2])
        kept.close()
        assert path.read_text() == "game flip7\nplayers ann ben\ncard 3\ncard 4\ncard 5\n"
        elsewhere = {p.name: p.read_text() for p in folder.glob("game.txt.corrupt-*")}
        elsewhere.update({p.name: p.read_text() for p in (folder / "games").glob("*.txt")})
        assert list(elsewhere.values()) == ([] if continues == "yes" else [old]), continues
    assert gamelog.UnkeptLog.start(tmp_path / "x" / "game.txt", config, "gone").recovered() is None  # no folder


def test_a_new_game_unkept_is_said_again(tmp_path, monkeypatch):
    from device.screens import MessageScreen

    args, state, before, _ = _a_kept_game_in_a_state_dir_that_cannot_be_written(tmp_path, monkeypatch)
    args.players = ["ann", "ben"]                # another game than the kept one: a new one
    appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    table = appliance.table
    assert table.match.events == [] and not table.game_log.keeps
    titles = [o.screen.title for o in table.overlays if isinstance(o.screen, MessageScreen)]
    assert titles[0] == "Not saving"
    table.overlays.clear()
    table._new_game(("ann", "ben", "cat"), 0.0)
    assert [o.screen.title for o in table.overlays].count("Not saving") == 1 and not table.game_log.keeps
    appliance.run()
    assert {p.name: p.read_bytes() for p in state.iterdir()} == before


def test_corrupt_config_is_shown_and_defaults_used(tmp_path, capsys):
    from PIL import Image

    from device.cli import main

    config = tmp_path / "config.toml"
    config.write_text("[display\nbroken = ")
    args = _replay_args(tmp_path, 40, "")
    status = main(["run", "--game", "flip7", "--players", "ann", "ben", "--camera", args.camera,
                   "--display", args.display, "--buttons", "none", "--state", args.state,
                   "--config", str(config), "--json"])
    assert status == 0 and json.loads(capsys.readouterr().out)["players"] == ["ann", "ben"]
    first = Image.open(sorted((tmp_path / "png").glob("*.png"))[0]).convert("L")
    assert first.histogram()[255] > 0.5 * 128 * 64          # the inverted "Config error" screen


class LearningWalk:
    """Stands in for a calibration walk: `ok` starts its learning on a thread (`seconds` long,
    then a result), `back` held while it learns leaves it (finished, still learning)."""
    finished, result, learning, saved = False, None, None, False

    def __init__(self, seconds: float = 0.5):
        self.seconds = seconds

    def on_frame(self, image):
        pass

    def on_button(self, press):
        if press.button == "ok" and self.learning is None:
            self.learning = threading.Thread(target=self._learn)
            self.learning.start()
        elif press.button == "back" and press.hold and self.learning is not None:
            self.finished = True

    def _learn(self):
        time.sleep(self.seconds)
        self.result, self.saved = "calibrated", True

    @property
    def still_learning(self):
        return self.learning is not None and self.learning.is_alive()

    def screen(self):
        from device.screens import MessageScreen

        return MessageScreen("LEARNING", ())

    def join(self, timeout=None):
        self.learning.join(timeout)


CALIBRATE_CARD = "4 back hold\n" + "".join(f"{5 + k} next\n" for k in range(4)) + "9 ok\n"   # the menu's entry


def test_a_stop_waits_for_a_calibration_walk_still_learning(tmp_path):
    """The replay ends (or the service is stopped) while a walk learns on its thread: the stop waits
    for it, so its profile is saved before the state directory is let go."""
    walk = LearningWalk()
    appliance = run.build(_replay_args(tmp_path, 14, CALIBRATE_CARD + "11 ok\n"), DeviceConfig(),
                          detector=ScriptedDetector({}))
    appliance.start_calibration = lambda pick: walk
    started = time.monotonic()
    appliance.run()
    assert walk.learning is not None and walk.saved and time.monotonic() - started >= 0.4


def test_calibration_walk_from_the_menu(tmp_path):
    """Menu > Calibrate card: frames and buttons go to the walk, then the game goes on."""
    from device.calibration import CalibrationFlow

    walks = []

    def start_calibration(pick):
        walks.append(CalibrationFlow("base", "flip7", tmp_path / "profile.npz", pick=pick))
        return walks[-1]

    buttons = "4 back hold\n" + "".join(f"{5 + k} next\n" for k in range(4)) + "9 ok\n"   # Calibrate card
    buttons += "11 next\n12 next\n13 back\n"     # which card? 0 -> 1 -> 2, then leave without saving
    detector = ScriptedDetector({2: "3", 30: "5"})
    appliance = run.build(_replay_args(tmp_path, 40, buttons), DeviceConfig(), detector=detector)
    appliance.start_calibration = start_calibration
    appliance.run()
    assert len(walks) == 1 and walks[0].finished and walks[0].result is None
    assert detector.resets == 1 and detector.classifier == "base"
    assert detector.calls == 40 - (14 - 10)          # the walk had the frames from 10 to 13
    assert [e.label for e in appliance.table.match.events] == ["3", "5"]


def test_settings_out_of_the_menus_range_are_the_configs(tmp_path, caplog):
    """A brightness the OLED has no contrast for would end its thread unseen, and 0 players
    would refuse every start (a restart loop): such values are the config's, said in the journal."""
    from device.table import Settings

    path = tmp_path / "settings.json"
    path.write_text('{"brightness": 7, "players": 0}')
    assert Settings.load(path, 3, 4) == Settings(3, 4) and "brightness 7 is not 1..4" in caplog.text
    path.write_text('{"brightness": 2, "players": "six"}')
    assert Settings.load(path, 3, 4) == Settings(2, 4)
    path.write_text('[1, 2]')
    assert Settings.load(path, 3, 4) == Settings(3, 4)
    path.write_text('{"brightness": 1, "players": 18}')
    assert Settings.load(path, 3, 4) == Settings(1, 18)


def test_a_run_refused_for_its_model_or_profile_leaves_the_kept_game(tmp_path, capsys):
    """Checked before the game log is touched: a profile of another deck, or no model, stops
    the run with a message (status 2, no traceback), and the kept game is resumed by the next
    run as it was, not archived for an empty game of the other deck."""
    from device.cli import main

    args = _replay_args(tmp_path, 3, "")
    defaults = tmp_path / "defaults.toml"   # not /etc/tablemate/config.toml, should the machine have one
    defaults.write_text("")
    common = ["--camera", args.camera, "--display", "none", "--buttons", "none", "--state", args.state,
              "--config", str(defaults)]
    assert main(["run", "--game", "flip7", "--players", "ann", "ben"] + common) == 0
    game_txt = Path(args.state) / "game.txt"
    with open(game_txt, "a") as f:
        f.write("card 7\ncard 9\n")
    kept = game_txt.read_text()
    profile = tmp_path / "other.npz"
    profile.write_bytes(b"not a profile")
    assert main(["run", "--game", "uno-flip", "--players", "ann", "ben", "--profile", str(profile)] + common) == 2
    assert "tablemate run:" in capsys.readouterr().err
    config = tmp_path / "config.toml"
    config.write_text(f'models_dir = "{tmp_path / "no-models"}"\n')
    assert main(["run", "--game", "uno-flip", "--players", "ann", "ben"] + common + ["--config", str(config)]) == 2
    assert "not found" in capsys.readouterr().err
    assert game_txt.read_text() == kept and not (Path(args.state) / "games").exists()


def test_a_replay_skips_an_unreadable_image_and_never_plays_a_frame_twice(tmp_path, caplog):
    """A bad file in a recording is a frame lost, said in the journal: the replay does not start
    again from its first frame (every card of the game would be dealt again), and opened again
    it goes on where it was."""
    import cv2

    from device.camera import FrameSource, ReplayCamera

    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(6):
        cv2.imwrite(str(folder / f"{i:03d}.png"), np.full((8, 8, 3), i * 10, np.uint8))
    (folder / "003.png").write_bytes(b"")
    source = FrameSource(ReplayCamera(folder), CameraConfig())
    source.start()
    seen = []
    deadline = time.monotonic() + 10
    while not source.drained() and time.monotonic() < deadline:
        frame = source.get(0.1)
        if frame is not None:
            seen.append(int(frame.image[0, 0, 0]))
    source.stop()
    assert seen == [0, 10, 20, 40, 50] and "003.png" in caplog.text

    camera = ReplayCamera(folder)
    camera.open()
    first = [int(camera.read()[0, 0, 0]) for _ in range(2)]
    camera.close()
    camera.open()
    assert first + [int(camera.read()[0, 0, 0])] == [0, 10, 20]


@pytest.mark.parametrize("recording", ["empty folder", "not a video"])
def test_a_replay_that_cannot_be_opened_ends_the_run_with_a_message(tmp_path, capsys, recording):
    from device.cli import main

    path = tmp_path / "rec"
    if recording == "empty folder":
        path.mkdir()
    else:
        path = tmp_path / "rec.mp4"
        path.write_bytes(b"no video here")
    status = main(["run", "--game", "flip7", "--players", "ann", "ben", "--camera", f"replay:{path}",
                   "--display", "none", "--buttons", "none", "--state", str(tmp_path / "state")])
    assert status == 2 and str(path) in capsys.readouterr().err


def test_a_walk_left_learning_is_saved_at_a_stop_and_used_once_learnt(tmp_path):
    """"back held: leave it" while a walk learns: the game goes on at once; the stop still waits
    for the learning (hardware.md: the calibration is saved), and until then the profile
    learnt is handed to the detector as soon as it is ready."""
    for seconds, frames in ((0.6, 14), (0.05, 60)):
        walk = LearningWalk(seconds)
        detector = ScriptedDetector({})
        (tmp_path / str(frames)).mkdir()
        args = _replay_args(tmp_path / str(frames), frames, CALIBRATE_CARD + "11 ok\n12 back hold\n")
        args.camera += "@30"                                    # in real time: 2 s for 60 frames
        appliance = run.build(args, DeviceConfig(), detector=detector)
        appliance.start_calibration = lambda pick: walk
        appliance.run()
        assert walk.saved, seconds                              # the stop waited for it
        if frames == 60:                                        # learnt while the game went on
            assert detector.classifier == "calibrated"


class UnsavedWalk(LearningWalk):
    def _learn(self):
        time.sleep(self.seconds)
        self.result = "calibrated"             # learnt, the profile not saved (a card gone read-only)

    def screen(self):
        from device.screens import MessageScreen

        return MessageScreen("LEARNING" if self.still_learning else "USED, NOT SAVED", ())


def test_a_walk_left_learning_and_not_saved_says_so_once_learnt(tmp_path):
    """Its own summary was never seen (the walk was left): the table is shown it then."""
    walk = UnsavedWalk(0.05)
    detector = ScriptedDetector({})
    args = _replay_args(tmp_path, 60, CALIBRATE_CARD + "11 ok\n12 back hold\n")
    args.camera += "@30"
    appliance = run.build(args, DeviceConfig(), detector=detector)
    appliance.start_calibration = lambda pick: walk
    shown = []
    show = appliance.table.show
    appliance.table.show = lambda screen, *rest: (shown.append(screen), show(screen, *rest))
    appliance.run()
    assert detector.classifier == "calibrated"
    assert [getattr(s, "title", None) for s in shown][-1] == "USED, NOT SAVED"
