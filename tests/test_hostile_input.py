"""Hostile input (issue 52): lines and files made to break the reader. Every refusal is in the
project's words, shortened, with its line number; nothing recorded is lost; nothing raises."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.core import GameConfig
from rules.script import ScriptError, format_header, parse_event, parse_script, replay_script

ROOT = Path(__file__).resolve().parent.parent
GAMES = {"flip7": ("ann", "ben", "cat", "dan"), "flip7-vengeance": ("ann", "ben", "cat"),
         "flip7-vengeance-brutal": ("ann", "ben", "cat"), "uno-flip": ("ann", "ben", "cat")}
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("word", ["\u00b2", "\u0663", "\uff13", "9" * 40, "0", "-1", "1e3", "1000"])
def test_draw_takes_ascii_digits_within_bounds(word):
    with pytest.raises(ScriptError, match="whole number from 1 to 999"):
        parse_event(f"draw {word}")
    with pytest.raises(ScriptError, match="a word of 5,000 characters"):
        parse_event(f"draw {'9' * 5000}")
    assert parse_event("draw 3").n == 3


def test_a_refused_number_is_said_in_the_projects_words_with_its_line(tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("game uno-flip\nplayers ann ben\ndraw \u00b2\ndraw " + "9" * 5000 + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", str(script), "--json"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 1, result.stderr
    errors = json.loads(result.stdout)["errors"]
    assert [e["line"] for e in errors] == [3, 4]
    assert "whole number" in errors[0]["error"] and "a word of 5,000 characters" in errors[1]["error"]
    assert all(len(e["text"]) <= 80 and len(e["error"]) < 120 for e in errors)


def test_option_numbers_are_ascii_too():
    script = parse_script("game flip7\nplayers ann ben\noption decks \u00b2\noption decks 2\n")
    assert script.errors[0].line == 3 and "option decks must be a whole number from 1 to 4" in script.errors[0].error
    assert script.config.options == {"decks": "2"}


def test_long_lines_are_refused_and_shown_shortened(tmp_path):
    long = "hand ann " + "x" * 1_000_000
    script = parse_script(f"game uno-flip\nplayers ann ben\n{long}\nplayers {'a' * 100_000}\n")
    assert [e.line for e in script.errors] == [3, 4]
    assert all(len(e.text) <= 80 and len(e.error) < 200 for e in script.errors)
    path = tmp_path / "s.txt"
    path.write_text(f"game flip7\nplayers ann ben\ncard {'9' * 1_000_000}\n")
    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", str(path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 1 and "line 3" in result.stderr and len(result.stderr) < 2000


def test_a_log_line_that_cannot_be_parsed_is_set_aside_and_play_goes_on(tmp_path):
    from device.gamelog import load

    path = tmp_path / "game.txt"
    path.write_text("game uno-flip\nplayers ann ben\nstart red-3\ndraw \u00b2\ndraw\n", encoding="utf-8")
    loaded = load(path)
    assert loaded.match is not None and len(loaded.match.events) == 2
    assert "bad line" in loaded.problems[0] and "line 4" in loaded.problems[0]
    assert path.read_text(encoding="utf-8").splitlines()[-2:] == ["start red-3", "draw"]
    assert len(list(tmp_path.glob("game.txt.corrupt-*"))) == 1


# ---- fuzz ------------------------------------------------------------------------------------
LOOKALIKES = ["\u00b2", "\u0663", "\uff11", "\u2460", "\u00bd", "\u0000", "\r", "\ufeff", "\u2028", "\x0c",
              "\u0301", "\ud7ff", "#", "@", "-", "9" * 5000, "x" * 20_000]
WORDS = ["card", "stop", "target", "take", "swap", "bonus", "penalize", "shuffle", "undo", "start", "play",
         "color", "draw", "pass", "top", "uno", "caught", "challenge", "hand", "game", "players", "dealer",
         "option", "decks", "ann", "@ben", "cat", "7", "12", "freeze", "flip-three", "second-chance", "red-3",
         "wild", "guilty", "x2", "+4", "0", "-1", "1" * 40]
word = st.one_of(st.sampled_from(WORDS), st.sampled_from(LOOKALIKES), st.text(max_size=6))
line = st.one_of(st.lists(word, max_size=6).map(" ".join), st.text(max_size=30))


@FUZZ
@given(game=st.sampled_from(sorted(GAMES)), lines=st.lists(line, max_size=25), crlf=st.booleans())
def test_fuzzed_scripts_never_raise(game, lines, crlf):
    text = "\n".join(format_header(GameConfig(game, GAMES[game])) + lines)
    script = parse_script(text.replace("\n", "\r\n") if crlf else text)
    assert script.config is not None
    result = replay_script(script)
    result.match.summary()
    assert all(len(e.text) <= 80 and len(e.error) < 300 for e in result.errors)


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes_never_raise(data):
    script = parse_script(data.decode("utf-8", errors="replace"))
    if script.config is not None:
        replay_script(script)


@FUZZ
@given(game=st.sampled_from(sorted(GAMES)), tail=st.binary(max_size=300))
def test_the_log_loader_keeps_the_valid_part_of_any_log(tmp_path_factory, game, tail):
    from device.gamelog import load

    folder = tmp_path_factory.mktemp("log")
    path = folder / "game.txt"
    header = ("\n".join(format_header(GameConfig(game, GAMES[game]))) + "\n").encode()
    path.write_bytes(header + tail)
    loaded = load(path)
    if loaded.match is not None:
        assert loaded.match.config.game == game
        again = load(path)              # the log left is clean: read again, nothing to repair
        assert again.problems == [] and again.match.events == loaded.match.events


@pytest.mark.parametrize("frame", ["\u00b2", "9" * 5000])
def test_button_script_frames_are_ascii_numbers_in_bounds(frame):
    from device.buttons import parse_button_script

    with pytest.raises(ValueError, match="line 2: the frame must be a whole number"):
        parse_button_script(f"1 ok\n{frame} next\n")


# ---- config and settings ---------------------------------------------------------------------
@pytest.mark.parametrize("text, bad", [
    ("[buttons]\nok_pin = 999\n", "buttons.ok_pin 999 is not 0..27"),
    ("[buttons]\nhold_seconds = -1\n", "buttons.hold_seconds -1.0 is not"),
    ("[display]\nflash_seconds = nan\n", "display.flash_seconds nan is not"),
    ("[display]\nflash_seconds = -5\n", "display.flash_seconds -5.0 is not"),
    ("[display]\ni2c_address = 0x1FF\n", "display.i2c_address 511 is not"),
    ("[camera]\nfps = inf\n", "camera.fps inf is not"),
    ("[buttons]\nok_pin = 27\n", "must differ"),
    ('[game]\ngame = "poker"\n', "game.game 'poker' is not one of"),
    ('state_dir = "a\\u0000b"\n', "NUL"),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deep"),
    ("[camera]\nwidth = 1" + "0" * 5000 + "\n", "unreadable"),
])
def test_each_bad_config_value_is_reported_and_its_default_used(tmp_path, text, bad):
    from device.config import DeviceConfig, load_config

    path = tmp_path / "config.toml"
    path.write_text("[display]\nbrightness = 2\n" + text if text.startswith("[b") else text)
    config, problems = load_config(path)
    assert any(bad in p for p in problems), problems
    assert config.buttons == DeviceConfig().buttons and config.camera == DeviceConfig().camera
    assert config.display.flash_seconds == 1.6 and config.game.game == "flip7"
    assert all(len(p) < 300 for p in problems)
    if text.startswith("[b"):       # the good values beside a bad one are kept
        assert config.display.brightness == 2


def test_a_nesting_bomb_of_settings_is_the_configs(tmp_path):
    from device.table import Settings

    path = tmp_path / "settings.json"
    path.write_text("[" * 100_000)
    assert Settings.load(path, 3, 4) == Settings(3, 4)


toml_value = st.recursive(st.one_of(st.integers(), st.floats(), st.text(max_size=8), st.booleans()),
                          lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                  st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                          max_leaves=8)
CONFIG_KEYS = ["buttons", "display", "camera", "game", "state_dir", "ok_pin", "hold_seconds", "flash_seconds",
               "i2c_address", "fps", "width", "names", "players", "game", "brightness", "rotate", "driver"]


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(repr(value), repr(value))
    return json.dumps(value) if isinstance(value, str) else str(value)


@FUZZ
@given(sections=st.dictionaries(st.sampled_from(CONFIG_KEYS), st.dictionaries(st.sampled_from(CONFIG_KEYS),
                                                                              toml_value, max_size=4), max_size=4),
       junk=st.binary(max_size=60))
def test_fuzzed_config_and_settings_never_stop_the_device(tmp_path_factory, sections, junk):
    from device.config import RANGES, DeviceConfig, load_config
    from device.table import Settings

    folder = tmp_path_factory.mktemp("config")
    path = folder / "config.toml"
    path.write_text("".join(f"{k} = {_toml(v)}\n" for k, v in sections.items()), encoding="utf-8")
    for data in (path.read_bytes(), path.read_bytes() + junk):
        path.write_bytes(data)
        config, problems = load_config(path)
        assert isinstance(config, DeviceConfig)
        for name, (low, high) in RANGES.items():
            section, key = name.split(".")
            assert low <= getattr(getattr(config, section), key) <= high
    settings = folder / "settings.json"
    settings.write_bytes(json.dumps(sections).encode() + junk)
    kept = Settings.load(settings, 3, 4)
    assert 1 <= kept.brightness <= 4 and 2 <= kept.players <= 18


# ---- the device's start ----------------------------------------------------------------------
def _device_args(tmp_path):
    from types import SimpleNamespace

    import cv2
    import numpy as np

    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(3):
        cv2.imwrite(str(frames / f"{i}.png"), np.zeros((8, 8, 3), np.uint8))
    return SimpleNamespace(camera=f"replay:{frames}", display="none", buttons="none", state=str(tmp_path / "state"),
                           game="flip7", players=["ann", "ben"], json=False, config=None)


class _NoVision:
    classifier = "base"

    def reset(self):
        pass

    def feed(self, image, index):
        return []

    def finish(self):
        return []


def test_a_long_line_in_the_log_is_shown_and_said_shortened(tmp_path, caplog):
    from device import run
    from device.config import DeviceConfig
    from device.screens import MessageScreen, render
    from device.screens import Shown

    args = _device_args(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    (state / "game.txt").write_text("game flip7\nplayers ann ben\ncard 5\ncard " + "7" * 5_000_000 + "\n"
                                    "card " + "x" * 9_000 + "\n")
    appliance = run.build(args, DeviceConfig(), detector=_NoVision())
    table = appliance.table
    assert len(table.match.events) == 1
    texts = [line for o in table.overlays if isinstance(o.screen, MessageScreen) for line in o.screen.lines]
    assert texts and all(len(text) <= 240 for text in texts)
    for overlay in table.overlays:
        render(Shown(overlay.screen, ""))
    assert max(len(r.getMessage()) for r in caplog.records) < 1000
    appliance.run()


def test_a_full_card_at_the_start_plays_on_unkept_naming_the_directory(tmp_path, monkeypatch):
    import errno

    from device import gamelog, run
    from device.config import DeviceConfig
    from device.screens import MessageScreen

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(gamelog, "write_atomically", full)
    args = _device_args(tmp_path)
    appliance = run.build(args, DeviceConfig(), detector=_NoVision())
    table = appliance.table
    assert not table.game_log.keeps
    shown = [(o.screen.title, " ".join(o.screen.lines)) for o in table.overlays if isinstance(o.screen, MessageScreen)]
    assert shown[0][0] == "Not saving" and str(tmp_path / "state") in shown[0][1] and "full" in shown[0][1]
    appliance.run()
    monkeypatch.undo()
    assert table.game_log.recovered() is not None     # room again: the game is written out whole
