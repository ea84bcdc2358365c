"""The device as people use it at the table and on a laptop (issue 53): each game's player range
is one rule; prompts and menus are not overrun by cards; the card just read is shown; a laptop
without GPIO falls back plainly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from device import run
from device.config import DeviceConfig
from rules.core import GameConfig
from tests.device_table_helpers import Player
from tests.test_device_loop import ScriptedDetector, _replay_args

ROOT = Path(__file__).resolve().parent.parent


# ---- each game's player range: one rule, one message -----------------------------------------

@pytest.mark.parametrize("game, count, message", [
    ("flip7", 1, "flip7 is played by 2 players or more, not 1"),
    ("flip7-vengeance", 1, "flip7-vengeance is played by 2 players or more, not 1"),
    ("uno-flip", 1, "uno-flip is played by 2 to 10 players, not 1"),
    ("uno-flip", 11, "uno-flip is played by 2 to 10 players, not 11"),
])
def test_a_player_count_outside_the_game_is_refused_by_replay_and_run_alike(tmp_path, game, count, message):
    players = [f"p{i}" for i in range(count)]
    with pytest.raises(ValueError, match=message):
        GameConfig(game, tuple(players))
    script = tmp_path / "game.txt"
    script.write_text(f"game {game}\nplayers {' '.join(players)}\n")
    replayed = subprocess.run([sys.executable, "-m", "device.cli", "replay", str(script)],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert replayed.returncode == 2 and message in replayed.stderr
    args = _replay_args(tmp_path, 2, "", players=players)
    args.game = game
    with pytest.raises(ValueError, match=message):
        run.build(args, DeviceConfig(), detector=ScriptedDetector({}))


def test_flip7_beyond_18_players_takes_a_second_deck():
    from rules.match import Match

    assert Match(GameConfig("flip7", tuple(f"p{i}" for i in range(19)))).state.deck_left == 188


@pytest.mark.parametrize("game, offered", [("uno-flip", list(range(2, 11))), ("flip7", list(range(2, 19)))])
def test_the_players_menu_offers_the_games_range(tmp_path, game, offered):
    p = Player(tmp_path, game, ("ann", "ben", "cat"))
    p.press("back hold")
    for _ in range(p.table.flow.menu_items.index("Players")):
        p.press("next")
    p.press("ok")
    seen = []
    for _ in range(len(offered) + 1):
        seen.append(p.table.screen(p.t).option)
        p.press("next")
    assert seen == [f"{n} players" for n in offered[1:] + offered[:2]]
    assert p.table.screen(p.t).position == f"{offered[0]}-{offered[-1]}"


# ---- hazards at the table ---------------------------------------------------------------------

def test_a_card_landing_does_not_dismiss_the_undo_prompt(tmp_path):
    p = Player(tmp_path, "flip7", ("ann", "ben"))
    p.card("5")                     # ben (dealt first: left of the dealer, ann)
    p.card("3")                     # ann; ben on turn
    p.press("back")                 # "Undo? card 3"
    p.card("7")                     # lands while the prompt is open
    screen = p.table.screen(p.t)
    assert screen.title == "Undo?" and screen.lines[0] == "card 3" and "1 card waiting" in screen.lines
    p.press("ok")                   # meant for the prompt: card 3 undone, not ben stopping
    assert p.log_lines()[-3:] == ["card 3", "undo", "card 7"]   # then the waiting card is played
    assert p.table.match.state.rows["ann"] == ["7"] and p.table.match.state.status["ben"] == "active"


def test_cards_wait_while_the_menu_is_open_and_are_played_when_it_closes(tmp_path):
    p = Player(tmp_path, "flip7", ("ann", "ben"))
    p.press("back hold")
    p.card("5")
    p.card("6")
    assert p.table.screen(p.t).title == "MENU · 2 cards waiting"
    assert p.table.match.events == []
    p.press("back")                 # the menu closes
    assert [line for line in p.log_lines() if line.startswith("card")] == ["card 5", "card 6"]


def test_cards_waiting_are_played_when_the_menu_times_out(tmp_path):
    from device.table import CONFIRM_SECONDS

    p = Player(tmp_path, "flip7", ("ann", "ben"))
    p.press("back hold")
    p.card("5")
    p.table.screen(p.t + CONFIRM_SECONDS + 1)
    assert p.table.match.state.rows["ben"] == ["5"]


def test_the_card_just_read_is_shown_in_the_row_it_joined(tmp_path):
    from device.screens import TurnScreen

    p = Player(tmp_path, "flip7", ("ann", "ben"))
    p.card("5")                     # ben's (dealt first), then ann is dealt
    screen = p.table.screen(p.t)
    assert isinstance(screen, TurnScreen) and screen.player == "ben" and screen.row == ("5",)
    assert screen.note == "just read"
    p.card("3")
    assert p.table.screen(p.t).player == "ann" and p.table.screen(p.t).row == ("3",)
    later = p.shown()               # then the screen moves on: whose turn it is (ben)
    assert isinstance(later, TurnScreen) and later.player == "ben" and later.note != "just read"


# ---- a laptop: no GPIO, no OLED ---------------------------------------------------------------

def test_a_laptop_falls_back_to_the_keyboard_and_says_so_in_one_line(tmp_path, monkeypatch, caplog):
    import logging

    import device.buttons_gpio
    import device.display_oled
    from device.buttons import KeyboardButtons

    monkeypatch.setattr(device.buttons_gpio, "gpio_missing", lambda: "no GPIO here (/dev/gpiochip*)")
    monkeypatch.setattr(device.display_oled, "oled_missing", lambda config: "no OLED here (/dev/i2c-1)")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    args = _replay_args(tmp_path, 2, "")
    args.display = args.buttons = None                  # as `tablemate run` with neither given
    with caplog.at_level(logging.INFO):
        appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert said == ["no OLED here (/dev/i2c-1); no GPIO here (/dev/gpiochip*): using --display none and "
                    "--buttons keyboard"]
    assert isinstance(appliance.buttons, KeyboardButtons)
    appliance.held[0].close()


def test_a_laptop_whose_desktop_gives_no_window_plays_without_a_display(tmp_path, monkeypatch, caplog):
    """DISPLAY set but no window possible (no tkinter, a dead X server): the window was only the
    fallback's guess, so the run goes on with no display, said in a line (it exited 2 before)."""
    import logging

    import device.buttons_gpio
    import device.display_oled
    import device.display_window

    monkeypatch.setattr(device.buttons_gpio, "gpio_missing", lambda: "no GPIO here (/dev/gpiochip*)")
    monkeypatch.setattr(device.display_oled, "oled_missing", lambda config: "no OLED here (/dev/i2c-1)")
    monkeypatch.setenv("DISPLAY", ":99")

    def no_window(self):
        raise RuntimeError("no window possible (no graphical session?)")

    monkeypatch.setattr(device.display_window.LaptopWindow, "open", no_window)
    args = _replay_args(tmp_path, 2, "")
    args.display = args.buttons = None
    with caplog.at_level(logging.WARNING):
        appliance = run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("no window possible" in line and "using --display none" in line for line in said), said
    assert args.display == "none"
    appliance.held[0].close()


def test_the_machines_own_hardware_is_used_where_it_is_there(monkeypatch):
    import device.buttons_gpio
    import device.display_oled

    monkeypatch.setattr(device.buttons_gpio, "gpio_missing", lambda: None)
    monkeypatch.setattr(device.display_oled, "oled_missing", lambda config: None)
    assert run.what_this_machine_has(None, None, DeviceConfig()) == ("oled", "gpio")
    assert run.what_this_machine_has("none", "script:b.txt", DeviceConfig()) == ("none", "script:b.txt")


def test_a_resumed_game_is_named_with_where_it_was_kept(tmp_path, caplog):
    import logging

    args = _replay_args(tmp_path, 6, "")
    run.build(args, DeviceConfig(), detector=ScriptedDetector({1: "3"})).run()
    again = tmp_path / "again"
    again.mkdir()
    args = _replay_args(again, 2, "")
    args.state = str(tmp_path / "state")
    with caplog.at_level(logging.INFO):
        run.build(args, DeviceConfig(), detector=ScriptedDetector({})).held[0].close()
    assert (f"resuming the game kept in {tmp_path / 'state' / 'game.txt'}: flip7, ann ben cat, round 1, 1 event "
            "(--state DIR keeps another)") in caplog.messages


def test_a_missing_button_script_is_named(tmp_path):
    from device.buttons import parse_buttons
    from device.config import ButtonsConfig

    with pytest.raises(OSError, match=f"button script {tmp_path / 'nope.txt'}: No such file or directory"):
        parse_buttons(f"script:{tmp_path / 'nope.txt'}", ButtonsConfig())
