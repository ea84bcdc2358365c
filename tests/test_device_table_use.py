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
