"""Device parts without a game loop: config, button script, GPIO buttons (gpiozero MockFactory),
screens rendered to images, the game log, the systemd unit."""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from device.buttons import ButtonPress, ScriptButtons, parse_button_script
from device.config import DeviceConfig, example_toml, load_config
from device.screens import (ChoiceScreen, FlashScreen, MenuScreen, MessageScreen, ScoresScreen, Shown,
                            TurnScreen, render)
from rules.script import parse_script, replay_script

REPO = Path(__file__).resolve().parent.parent


# ---- config ---------------------------------------------------------------------------------------

def test_config_defaults_and_override(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(example_toml())
    assert load_config(path) == (DeviceConfig(), [])
    path.write_text('[display]\ndriver = "sh1106"\ni2c_address = 0x3D\n[camera]\nfps = 30\n')
    config, problems = load_config(path)
    assert (config.display.driver, config.display.i2c_address, config.camera.fps) == ("sh1106", 0x3D, 30.0)
    assert config.buttons.ok_pin == 17 and problems == []


def test_config_problems_are_reported_and_defaults_used(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[display\n")
    config, problems = load_config(path)
    assert config == DeviceConfig() and "unreadable" in problems[0]
    path.write_text('[display]\ndriver = "st7735"\n')
    config, problems = load_config(path)
    assert config == DeviceConfig() and any("sh1106" in p for p in problems)
    path.write_text('colour = 1\n[camera]\nwidth = "wide"\n')
    config, problems = load_config(path)
    assert config == DeviceConfig() and len(problems) == 2
    assert load_config(tmp_path / "missing.toml")[1]  # named explicitly: reported


# ---- buttons --------------------------------------------------------------------------------------

def test_button_script(tmp_path):
    path = tmp_path / "buttons.txt"
    path.write_text("# comment\n3 ok\n3 next\n10 back hold\n")
    buttons = ScriptButtons(path)
    assert buttons.due(3) == [ButtonPress("ok"), ButtonPress("next")]
    assert buttons.due(3) == [] and buttons.due(4) == []
    assert buttons.due(10) == [ButtonPress("back", hold=True)]
    with pytest.raises(ValueError, match="line 2"):
        parse_button_script("1 ok\n2 press\n")
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ValueError, match="buttons.txt: not a text file"):
        ScriptButtons(path)


def test_gpio_buttons_press_and_hold():
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    from device.buttons_gpio import GpioButtons
    from device.config import ButtonsConfig

    Device.pin_factory = MockFactory()
    try:
        got = []
        # margins of a good part of a second either side: gpiozero's threads may be late on a loaded machine
        buttons = GpioButtons(ButtonsConfig(hold_seconds=0.6, bounce_seconds=0))
        buttons.start(got.append)
        ok, back = Device.pin_factory.pin(17), Device.pin_factory.pin(22)
        ok.drive_low()
        time.sleep(0.05)
        ok.drive_high()
        back.drive_low()
        time.sleep(1.5)          # past hold_seconds
        back.drive_high()
        deadline = time.monotonic() + 5
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        buttons.close()
        assert got == [ButtonPress("ok"), ButtonPress("back", hold=True)]
    finally:
        Device.pin_factory.close()
        Device.pin_factory = None


# ---- screens --------------------------------------------------------------------------------------

def _lit(image, box=None) -> float:
    region = (image.crop(box) if box else image).convert("L")
    return region.histogram()[255] / (region.width * region.height)


def test_screens_render_as_1bit_128x64(tmp_path):
    screens = [
        TurnScreen("ann", 2, ("3", "7", "11", "+4", "second-chance"), 25, 134, 0.12),
        FlashScreen("BUST!", "cat", "a second 7"),
        ChoiceScreen("ann: FREEZE who?", "ben", "2/3"),
        MessageScreen("Card not sure", ("show it again",), inverted=True),
        ScoresScreen("ROUND 3", (("ann", "+36", 120), ("ben", "bust", 80)), footer="ok: play on"),
        MenuScreen("MENU", ("New game", "Players: 3", "Re-shuffle", "Brightness: 3", "Shut down"), 2),
    ]
    for screen in screens:
        image = render(Shown(screen))
        assert image.mode == "1" and image.size == (128, 64)
        assert 0.03 < _lit(image) < 0.97, screen     # something legible, not blank
    # inverted for warnings: flashes and "not sure" are mostly lit
    assert _lit(render(Shown(screens[1]))) > 0.6 and _lit(render(Shown(screens[3]))) > 0.6


def test_high_bust_odds_are_inverted():
    low = render(Shown(TurnScreen("ann", 1, ("3", "9"), 12, 0, 0.05)))
    high = render(Shown(TurnScreen("ann", 1, ("3", "9"), 12, 0, 0.45)))
    odds_box = (90, 44, 128, 64)
    assert _lit(low, odds_box) < 0.4 < _lit(high, odds_box)


def test_banner_shows_problem():
    plain = render(Shown(MessageScreen("Waiting")))
    banner = render(Shown(MessageScreen("Waiting"), banner="no camera: retrying"))
    assert _lit(banner, (0, 52, 128, 64)) > 0.5 > _lit(plain, (0, 52, 128, 64))


# ---- game log -------------------------------------------------------------------------------------

def _game_log(tmp_path, lines):
    from device.gamelog import GameLog, load
    from rules.core import GameConfig
    from rules.script import parse_event

    config = GameConfig("flip7", ("ann", "ben", "cat"))
    path = tmp_path / "game.txt"
    log = GameLog.start(path, config)
    for line in lines:
        log.append_undo() if line == "undo" else log.append_event(parse_event(line))
    log.close()
    return path, load


def test_log_resumes_exactly(tmp_path):
    path, load = _game_log(tmp_path, ["card 3", "card 5", "card 7", "stop", "undo", "card 9"])
    loaded = load(path)
    assert loaded.problems == []
    assert loaded.match.state.rows == {"ann": ["7"], "ben": ["3", "9"], "cat": ["5"]}


def test_torn_last_line_is_cut(tmp_path):
    path, load = _game_log(tmp_path, ["card 3", "card 5"])
    with open(path, "a") as f:
        f.write("card 1")                       # power lost mid-line
    loaded = load(path)
    assert "torn" in loaded.problems[0] and len(loaded.match.events) == 2
    assert path.read_text().endswith("card 5\n")


def test_a_log_moved_aside_is_the_original_torn_line_and_all(tmp_path):
    path, load = _game_log(tmp_path, ["card 3", "card 5"])
    with open(path, "a") as f:
        f.write("card 99\ncard 1")                # a bad line, then power lost mid-line
    original = path.read_bytes()
    loaded = load(path)
    assert len(loaded.match.events) == 2 and path.read_text().endswith("card 5\n")
    assert [p.read_bytes() for p in tmp_path.glob("game.txt.corrupt-*")] == [original]
    path.write_bytes(b"garbage\ncard 1")
    assert load(path).match is None
    assert b"garbage\ncard 1" in [p.read_bytes() for p in tmp_path.glob("game.txt.corrupt-*")]


def test_corrupt_log_is_moved_aside_and_valid_part_kept(tmp_path):
    path, load = _game_log(tmp_path, ["card 3", "card 5"])
    with open(path, "a") as f:
        f.write("card 99\nc\x00rd 2\ncard 7\n")
    loaded = load(path)
    assert len(loaded.match.events) == 3 and "bad line" in loaded.problems[0]
    aside = list(tmp_path.glob("game.txt.corrupt-*"))
    assert len(aside) == 1 and "card 99" in aside[0].read_text()
    assert load(path).problems == []            # the kept log is clean now
    path.write_text("garbage\n")
    assert load(path).match is None and len(list(tmp_path.glob("game.txt.corrupt-*"))) == 2


def test_write_atomically_replaces_whole_or_not_at_all(tmp_path):
    """The one writer behind the game log, the table settings, profiles and checkpoints."""
    from vision.files import write_atomically

    path = tmp_path / "kept.txt"
    write_atomically(path, "old\n")
    write_atomically(path, "new \u00e9\n", before_replace=lambda: (tmp_path / "seen").write_text(path.read_text()))
    assert path.read_text(encoding="utf-8") == "new \u00e9\n" and (tmp_path / "seen").read_text() == "old\n"

    def refuse():
        raise OSError("no room")
    with pytest.raises(OSError, match="no room"):
        write_atomically(path, b"lost", before_replace=refuse)
    with pytest.raises(OSError):
        write_atomically(tmp_path, b"a folder is not a file")   # the rename fails
    assert path.read_text(encoding="utf-8") == "new \u00e9\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt", "seen"]   # no .tmp left
    assert not tmp_path.with_name(tmp_path.name + ".tmp").exists()


# ---- systemd ---------------------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_service_unit_verifies(tmp_path):
    unit = (REPO / "systemd" / "tablemate.service").read_text()
    # verify checks that ExecStart exists: point it at this checkout's interpreter
    unit = unit.replace("/opt/tablemate/venv/bin/tablemate", shutil.which("python3") or "/usr/bin/python3")
    path = tmp_path / "tablemate.service"
    path.write_text(unit)
    result = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


def test_turn_screen_is_built_when_the_game_changes_not_every_frame(tmp_path):
    """The turn screen's summary carries exact Flip Three odds: build it once per game change."""
    from device_table_helpers import Player

    player = Player(tmp_path, "flip7", ("ann", "ben"))
    calls = []
    flow = player.table.flow
    real = flow.turn_screen
    flow.turn_screen = lambda state, totals: calls.append(1) or real(state, totals)
    try:
        first = [player.table.screen(player.t + k / 30) for k in range(30)]     # a second of frames
        assert len(calls) == 1 and all(s == first[0] for s in first)
        player.card("5")
        player.table.screen(player.t + 60)                          # the row the card joined, a moment
        shown = player.table.screen(player.t + 120)                           # after the card's flash
        assert len(calls) == 2 and shown != first[0]
        player.table.match.undo()
        assert player.table.screen(player.t + 60) == first[0] and len(calls) == 3
    finally:
        del flow.turn_screen


def test_refused_cards_are_kept_as_the_log_lines_they_would_have_been(tmp_path):
    """What `run --json` reports in "errors": a card the rules refuse (the deck's only x2 seen
    again), numbered as `replay --json` numbers the refused lines of the game log with them in."""
    from device_table_helpers import Player

    player = Player(tmp_path, "flip7", ("ann", "ben"))
    player.card("x2")                   # line 3, after the header's two
    player.card("x2")                   # refused: line 4 of the log with it
    player.card("3")                    # log line 4 (5 with the refused line)
    player.press("back", "ok")          # undo the 3: 6
    player.card("x2")                   # refused: 7
    assert player.log_lines()[2:] == ["card x2", "card 3", "undo"]
    errors = [e.to_json() for e in player.table.refusals]
    assert errors == [{"line": 4, "text": "card x2", "error": "no x2 is left in the deck"},
                      {"line": 7, "text": "card x2", "error": "no x2 is left in the deck"}]
    script = "\n".join(player.log_lines()[:3] + ["card x2"] + player.log_lines()[3:] + ["card x2"]) + "\n"
    assert [e.to_json() for e in replay_script(parse_script(script)).errors] == errors


@pytest.mark.parametrize("fails", ["write", "fsync"])
def test_a_card_the_log_could_not_keep_never_reaches_it_later(tmp_path, monkeypatch, fails):
    """A full disk (or an fsync failing after the write): the table says the card was not kept
    and the rules undo it; the line must not linger in a buffer and reach the disk with the next
    card, or the game resumed after a restart would not be the one the table saw."""
    import errno
    import os

    from device import gamelog
    from device_table_helpers import Player, overlay_titles

    player = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    player.card("10")
    real = getattr(os, fails)
    calls = []

    def full(*args):
        calls.append(1)
        if len(calls) == 1:
            if fails == "write":
                real(args[0], args[1][:3])          # a part of the line written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args)

    monkeypatch.setattr(gamelog.os, fails, full)
    player.card("9")
    assert "Storage error" in overlay_titles(player.flashes())
    player.card("8")
    assert player.table.match.state.rows == {"ann": [], "ben": ["10"], "cat": ["8"]}
    assert player.log_lines()[2:] == ["card 10", "card 8"]
    player.table.game_log.close()
    assert gamelog.load(player.log_path).match.state.rows == player.table.match.state.rows


def test_the_menu_says_storage_error_and_keeps_the_game_when_the_card_cannot_be_written(tmp_path, monkeypatch):
    """Brightness, a new game and an undo each write to the state directory: a full or failing
    card is shown ("Storage error"), never a crash, and the game played so far stays as its log
    has it (a new game's log is made before the old one is archived)."""
    import errno

    from device import gamelog
    from device_table_helpers import Player, overlay_titles

    player = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    player.card("10")
    kept = player.log_lines()

    def failing(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(gamelog.os, "fsync", failing)
    items = player.table.flow.menu_items
    player.press("back hold", *["next"] * items.index("Brightness"), "ok", "next", "ok")
    assert player.table.settings.brightness == 4 and not (tmp_path / "settings.json").exists()
    player.press("back hold", "ok", "ok")                      # New game, confirmed
    player.press("back", "ok")                                 # undo the 10
    assert overlay_titles(player.flashes()).count("Storage error") == 3
    assert player.table.match.state.rows["ben"] == ["10"] and player.log_lines() == kept
    assert not (tmp_path / gamelog.ARCHIVE_DIR).exists() and not list(tmp_path.glob("*.tmp"))
    monkeypatch.undo()
    player.press("back hold", "ok", "ok")
    assert player.log_lines() == kept[:2] and len(list((tmp_path / gamelog.ARCHIVE_DIR).iterdir())) == 1


def test_under_systemd_every_line_of_an_error_and_the_fatal_line_carry_its_priority(monkeypatch, capsys):
    """The journal keeps each stderr line as an entry of its own, at the priority its `<N>`
    prefix says (none: information): a traceback's lines and the line `run` ends with too."""
    import logging
    import sys

    from device.logs import say_fatal, setup_logging

    monkeypatch.setenv("JOURNAL_STREAM", "8:1234")
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    setup_logging()
    try:
        raise OSError("camera gone")
    except OSError:
        logging.getLogger("device.camera").exception("camera failed")
    say_fatal("tablemate run: no model")
    lines = capsys.readouterr().err.strip().split("\n")
    assert lines[0] == "<3>device.camera: camera failed" and len(lines) > 3
    assert all(line.startswith("<3>") for line in lines), lines
