"""`tablemate replay` and the table-script parser, against docs/table-script.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rules.events import (Bonus, Card, Caught, Challenge, Color, Draw, Hand, Pass, Penalize, Play,
                          Shuffle, Start, Stop, SwapCards, Take, Target, Top, Uno)
from rules.script import UNDO, ScriptError, format_event, parse_event, parse_script

ROOT = Path(__file__).resolve().parent.parent


def replay(tmp_path: Path, text: str, *flags: str) -> subprocess.CompletedProcess:
    script = tmp_path / "game.txt"
    script.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "device.cli", "replay", str(script), *flags],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


CLEAN = """game flip7
players Ann Ben
dealer ben
card 3
card 2
card 11
stop
stop
"""


def test_json_has_every_field_of_the_contract(tmp_path: Path) -> None:
    result = replay(tmp_path, CLEAN, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["game"] == "flip7" and out["players"] == ["Ann", "Ben"]
    assert out["rounds"] == [{"round": 1, "dealer": "Ben", "scores": {"Ann": 14, "Ben": 2}, "flip7": None, "busted": []}]
    assert out["totals"] == {"Ann": 14, "Ben": 2} and out["winner"] is None and out["errors"] == []
    state = out["state"]
    for key in ("round", "dealer", "turn", "pending", "rows", "status", "bust_odds", "deck_left"):
        assert key in state
    assert state["turn"] == "Ben" and state["round"] == 2
    assert state["bust_odds"] == {"Ben": 0.0}


def test_readable_scoreboard(tmp_path: Path) -> None:
    result = replay(tmp_path, CLEAN)
    assert result.returncode == 0
    assert "Ann" in result.stdout and "totals: Ann 14  Ben 2" in result.stdout


def test_refused_line_is_reported_skipped_and_exit_status_1(tmp_path: Path) -> None:
    text = CLEAN.replace("card 11\n", "card 11\ncard 99\nstop @ann\n")
    result = replay(tmp_path, text, "--json")
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert [e["line"] for e in out["errors"]] == [7, 8]
    assert out["errors"][0]["text"] == "card 99"
    assert out["totals"] == {"Ann": 14, "Ben": 2}, "later lines still apply"


def test_strict_stops_at_the_first_refused_line(tmp_path: Path) -> None:
    text = CLEAN.replace("card 11\n", "card 99\ncard 11\n")
    result = replay(tmp_path, text, "--json", "--strict")
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert [e["line"] for e in out["errors"]] == [6]
    assert out["rounds"] == [] and out["state"]["rows"] == {"Ann": ["3"], "Ben": ["2"]}


@pytest.mark.parametrize("text", [
    "players ann ben\ncard 3\n",                 # no game
    "game poker\nplayers ann\n",                 # unknown game
    "game flip7\ncard 3\n",                      # no players
    "game flip7\nplayers ann ann\n",             # a name twice
    "game uno-flip\nplayers ann\n",              # UNO Flip needs 2 to 10 players
    "",
])
def test_unusable_script_exits_2(tmp_path: Path, text: str) -> None:
    result = replay(tmp_path, text, "--json")
    assert result.returncode == 2
    assert result.stdout == "" and "not a usable table script" in result.stderr


def test_unreadable_file_exits_2(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", str(tmp_path / "missing.txt")],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_header_errors_are_refused_lines() -> None:
    script = parse_script("game flip7\nplayers ann ben\ndealer zed\noption colour red\noption decks 2\ncard 3\ngame flip7\n")
    assert script.config is not None and script.config.dealer is None
    assert script.config.options == {"decks": "2"}
    assert [(e.line, e.error.split(" ")[0]) for e in script.errors] == [(3, "the"), (4, "unknown"), (7, "'game'")]


def test_header_lines_out_of_place_are_refused_not_obeyed() -> None:
    """A second game line does not switch the game, nor a second dealer the dealer; a dealer
    before the players is a refused line (the script stays usable: exit 1, not 2)."""
    script = parse_script("game flip7\ndealer ben\nplayers ann ben\ndealer ben\ngame uno-flip\n"
                          "dealer ann\nplayers cat dan\ncard 3\n")
    assert script.config == parse_script("game flip7\nplayers ann ben\ndealer ben\n").config
    assert [e.line for e in script.errors] == [2, 5, 6, 7]
    assert "after the 'players' line" in script.errors[0].error
    assert "second 'game' line" in script.errors[1].error


def test_names_in_any_alphabet_and_a_byte_order_mark(tmp_path: Path) -> None:
    """UTF-8 text as editors write it: names with letters beyond ASCII, a byte-order mark first."""
    result = replay(tmp_path, "\ufeffgame flip7\nplayers Jörg Zoë Łucja\ncard 3 @zoë\ncard 4\ncard 5\nstop\n", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["players"] == ["Jörg", "Zoë", "Łucja"] and summary["state"]["rows"]["Zoë"] == ["3"]
    assert parse_script("game flip7\nplayers ann b\u00e9n\ncard 3\n\ufeffstop\n").errors == []
    decomposed = parse_script("game flip7\nplayers Zoe\u0308 ann\ncard 3 @zo\u00eb\n")   # e + combining diaeresis
    assert decomposed.config.players == ("Zo\u00eb", "ann") and decomposed.errors == []
    assert parse_script("game flip7\nplayers ann ben\n\ncard 3\n").config.players == ("ann", "ben")
    from rules.core import NAME_RE
    assert NAME_RE.match("ann") and not NAME_RE.match("ann\n")      # a name is one line


def test_keywords_labels_and_names_are_case_insensitive_and_comments_ignored() -> None:
    script = parse_script("GAME Flip7  # a comment\nPlayers Ann Ben\n\n  CARD X2 @ANN # dealt\nStop\n")
    assert script.config.game == "flip7" and script.config.players == ("Ann", "Ben")
    assert [e for _, _, e in script.events] == [Card("x2", "ANN"), Stop()]


EVENTS = [Card("7"), Card("+10", "ann"), Stop(), Stop("ben"), Target("cat"), Take("ann", "lucky-13"),
          SwapCards("ann", "3", "ben", "/2"), Bonus(), Penalize("ben"), Shuffle(), Start("red-5"),
          Play("blue-skip"), Play("wild", "ann"), Color("green"), Draw(), Draw(4), Pass(), Top("teal-flip"),
          Uno("ann"), Caught("ben"), Challenge(True), Challenge(False), Hand("ann", ("red-5", "wild")),
          Hand("ben", ()), UNDO]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: format_event(e))
def test_format_and_parse_round_trip(event) -> None:
    assert parse_event(format_event(event)) == event


@pytest.mark.parametrize("line", ["card", "card 5 ann", "stop ann", "target", "swap a 1 b", "draw x",
                                  "challenge maybe", "flip", "uno", "take ann"])
def test_malformed_lines_say_what_was_expected(line: str) -> None:
    with pytest.raises(ScriptError):
        parse_event(line)


@pytest.mark.parametrize("odd", ["\x0c", "\x85", "\u2028", "\x1c", "\x0b"])
def test_lines_end_only_at_newline_so_refused_lines_keep_their_numbers(odd: str) -> None:
    """The line numbers `grep -n` gives: a form feed or U+2028 in a comment is no line break
    (the comment's tail was read as an event, and every later line numbered one too far)."""
    from rules.script import replay_script

    result = replay_script(parse_script(f"game flip7\r\nplayers ann ben\n# page{odd} break\ncard 5\ncard 99\n"))
    assert [(e.line, e.text) for e in result.errors] == [(5, "card 99")]
