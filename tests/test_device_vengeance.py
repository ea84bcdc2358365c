"""The device plays Flip 7: Vengeance and its Brutal mode on three buttons: a player then one of
their cards (Steal, Discard), two cards for a Swap, who gets a malus, the Brutal Flip 7 choice,
the flashes, "may not stop" for a Zero holder, the Flip Four odds, and the game picked in the menu.
The table is driven with cards and presses directly (the classifier is not the point here)."""

from pathlib import Path

import numpy as np
import pytest

from device.screens import ChoiceScreen, FlashScreen, MessageScreen, Shown, TurnScreen, render, save_preview
from tests.device_table_helpers import Player, overlay_titles

OUT = Path(__file__).resolve().parent.parent / "out" / "test-screens"


def _three(tmp_path, game="flip7-vengeance") -> Player:
    player = Player(tmp_path, game, ("ann", "ben", "cat"), dealer="cat")
    for label in ("5", "6", "5"):       # the deal: ann, ben, cat
        player.card(label)
    return player


def test_steal_a_player_then_their_card_and_back_steps_back(tmp_path):
    p = _three(tmp_path)
    p.card("steal")                                  # ann steals
    screen = p.shown()
    assert (screen.question, screen.option, screen.detail, screen.position) == ("ann: STEAL from?", "ben", "6", "1/2")
    p.press("next")
    assert p.shown().option == "cat"
    p.press("ok")                                     # cat: now one of cat's cards
    screen = p.shown()
    assert (screen.question, screen.option) == ("STEAL cat's", "5")
    p.press("back")                                   # one level back: the player again, cat still shown
    assert (p.shown().question, p.shown().option) == ("ann: STEAL from?", "cat")
    assert p.table.mode == "play"                     # not the undo prompt
    p.press("ok", "ok")
    assert p.log_lines()[-1] == "take cat 5"
    assert p.table.match.state.rows["ann"] == ["5", "5"]
    assert p.table.match.state.status["ann"] == "busted"
    assert overlay_titles(p.flashes())[:2] == ["STEAL", "BUST!"]


def test_back_on_the_first_level_asks_to_undo(tmp_path):
    p = _three(tmp_path)
    p.card("discard")
    p.press("back")
    assert p.table.mode == "undo"
    p.press("ok")
    assert p.log_lines()[-1] == "undo"
    assert p.table.match.state.pending is None


def test_swap_two_cards_of_two_other_players(tmp_path):
    p = _three(tmp_path)
    p.card("swap")
    assert p.shown().question == "ann: SWAP first card"
    p.choose("ben")
    assert p.shown().question == "SWAP ben's"
    p.choose("6")
    screen = p.shown()
    assert screen.question == "swap ben 6 with?"
    assert screen.position == "1/2"                  # ann's 5 or cat's 5
    p.choose("cat")
    assert p.shown().question == "ben 6 with cat's"
    p.press("back", "back")                           # back to "with whom", then to ben's cards
    assert p.shown().question == "SWAP ben's"
    p.choose("6")
    p.choose("cat")
    p.choose("5")
    assert p.log_lines()[-1] == "swap ben 6 cat 5"
    assert p.table.match.state.rows == {"ann": ["5"], "ben": ["5"], "cat": ["6"]}
    flash = p.flashes()[0]
    assert isinstance(flash, FlashScreen) and flash.title == "SWAP" and flash.detail == "ben gets 5, cat gets 6"


def test_malus_goes_to_the_player_chosen_and_flashes(tmp_path):
    p = _three(tmp_path)
    p.card("-6")
    assert p.shown().question == "ann: -6 to?"
    p.choose("cat")
    assert p.log_lines()[-1] == "target cat"
    assert (p.flashes()[0].title, p.flashes()[0].player) == ("MALUS -6", "cat")


def test_unlucky_7_and_just_one_more_flash(tmp_path):
    p = _three(tmp_path)
    p.card("unlucky-7")                               # ann: her row is wiped
    assert overlay_titles(p.flashes()) == ["UNLUCKY 7"]
    p.card("just-one-more")                           # ben plays it
    p.choose("cat")
    assert "1 MORE" in overlay_titles(p.flashes())


def test_zero_holder_may_not_stop(tmp_path):
    p = Player(tmp_path, "flip7-vengeance", ("ann", "ben"), dealer="ben")
    p.card("zero")
    p.card("1")
    screen = p.shown()
    assert isinstance(screen, TurnScreen) and screen.player == "ann" and screen.note == "may not stop"
    p.press("ok")
    message = p.flashes()[-1]
    assert isinstance(message, MessageScreen) and message.inverted and message.title == "Can't stop"
    assert "The Zero" in message.lines[0]
    assert p.log_lines()[-1] == "card 1"            # nothing logged


def test_flip_four_shows_its_odds(tmp_path):
    p = _three(tmp_path)
    p.card("flip-four")
    p.choose("ben")
    screen = p.shown()
    assert isinstance(screen, TurnScreen) and screen.player == "ben" and screen.note == "flip 4"
    summary = p.table.match.state.summary()
    assert screen.bust_odds == summary["flip_four_bust_odds"]["ben"]


def _flip7(tmp_path) -> Player:
    p = Player(tmp_path, "flip7-vengeance-brutal", ("ann", "ben", "cat"), dealer="cat")
    for label in ("1", "10", "11", "2"):
        p.card(label)
    p.press("ok", "ok")                               # ben and cat stop
    for label in ("3", "4", "5", "6", "7"):
        p.card(label)                                 # ann: Flip 7
    return p


def test_brutal_flip7_penalize_a_player(tmp_path):
    p = _flip7(tmp_path)
    screen = p.shown()
    assert (screen.question, screen.option) == ("ann: FLIP 7!", "+15 for me")
    p.press("next", "ok")                             # -15 to…
    assert p.shown().question == "ann: -15 to?"
    assert p.shown().position == "1/2"                # not herself
    p.choose("cat")
    assert p.log_lines()[-1] == "penalize cat"
    assert p.table.match.rounds[-1].scores["cat"] == 11 - 15
    assert ("-15", "cat") in [(f.title, f.player) for f in p.flashes() if isinstance(f, FlashScreen)]


def test_brutal_flip7_bonus(tmp_path):
    p = _flip7(tmp_path)
    p.press("ok")
    assert p.log_lines()[-1] == "bonus"
    assert p.table.match.rounds[-1].scores["ann"] == 28 + 15


@pytest.mark.parametrize("steps, game, deck_changes", [
    (1, "flip7-vengeance", True), (2, "flip7-vengeance-brutal", True), (3, "uno-flip", True), (0, "flip7", False)])
def test_game_type_from_the_menu(tmp_path, steps, game, deck_changes):
    p = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    p.card("5")
    p.press("back hold")
    menu = p.table.screen(p.t)
    assert "Game: Flip 7" in menu.items
    p.press(*["next"] * menu.items.index("Game: Flip 7"), "ok")
    p.press(*["next"] * steps, "ok")
    assert p.table.match.config.game == game
    assert p.table.match.events == []
    assert p.log_lines()[0] == f"game {game}"
    assert (p.table.request == "game") == deck_changes


def test_uno_keeps_at_most_ten_players(tmp_path):
    p = Player(tmp_path, "flip7-vengeance", tuple(f"p{i}" for i in range(12)))
    p.press("back hold")
    items = p.table.screen(p.t).items
    p.press(*["next"] * items.index("Game: Vengeance"), "ok", "next", "next", "ok")
    assert p.table.match.config.game == "uno-flip"
    assert len(p.table.match.config.players) == 10


def test_vengeance_screens_render(tmp_path):
    p = _three(tmp_path)
    p.card("swap")
    OUT.mkdir(parents=True, exist_ok=True)
    screens = {"choice-swap": p.shown()}
    p.choose("ben")
    screens["choice-swap-card"] = p.shown()
    screens["flash-malus"] = FlashScreen("MALUS -6", "cat", "gets it")
    screens["flash-swap"] = FlashScreen("SWAP", "ben ⇄ cat", "ben gets 5, cat gets 6")
    screens["turn-zero"] = TurnScreen("ann", 1, ("zero", "lucky-13", "13", "-4"), 26, 120, 0.31, "may not stop")
    for name, screen in screens.items():
        image = render(Shown(screen))
        assert image.size == (128, 64) and image.mode == "1"
        assert 150 < np.asarray(image).sum() < 128 * 64 - 150      # drawn, neither blank nor solid
        save_preview(Shown(screen), OUT / f"vengeance-{name}.png")
    assert isinstance(screens["choice-swap"], ChoiceScreen)


def _clean_scenarios() -> list[str]:
    """The Vengeance and Brutal scenarios every line of which is accepted, without undo."""
    from rules.script import UNDO, parse_script, replay_script

    found = []
    for path in sorted((Path(__file__).parent / "scenarios").glob("*/*.txt")):
        script = parse_script(path.read_text())
        if script.config.game.startswith("flip7-vengeance") and not script.errors \
                and not replay_script(script).errors and all(e != UNDO for _, _, e in script.events):
            found.append(f"{path.parent.name}/{path.name}")
    return found


@pytest.mark.parametrize("scenario", _clean_scenarios())
def test_button_script_for_a_table_script_plays_it_back(tmp_path, scenario):
    """device/demo.py writes the presses for a script's choices (a video's button script); those
    presses on a table fed the same cards give the same game: log and scores."""
    from device.demo import expected_summary, presses_for_script
    from rules.script import parse_script

    text = (Path(__file__).parent / "scenarios" / scenario).read_text()
    script = parse_script(text)
    config = script.config
    p = Player(tmp_path, config.game, config.players, dealer=config.dealer)
    for label, presses in presses_for_script(text):
        p.card(label)
        p.press(*presses)
    assert p.log_lines()[3:] == [line.split("#", 1)[0].strip() for _, line, _ in script.events]
    assert p.table.match.summary() == expected_summary(text)


# A Vengeance round through the real pipeline (the players seated so the first one deals): a deal,
# a Steal (a player, then their card), a malus given, a Swap of two other players' cards, stops.
VIDEO_SCRIPT = """game flip7-vengeance
players cat ann ben
card 5
card 6
card 12
card steal
take cat 12
card -4
target ben
card swap
swap ann 5 ben 6
card 9
stop
card 3
card 11
stop
stop
"""


@pytest.mark.skipif(not (Path(__file__).resolve().parent.parent / "models" / "flip7-vengeance.onnx").exists(),
                    reason="models/flip7-vengeance.onnx (the Vengeance card classifier) is not built")
def test_vengeance_round_from_video_and_buttons(tmp_path):
    from types import SimpleNamespace

    from device import run
    from device.config import DeviceConfig
    from device.demo import expected_summary, make_game_video

    video = make_game_video(VIDEO_SCRIPT, tmp_path / "video", seed=2, split="train",
                            p_on_top=0.0, p_pass=0.0, p_nudge=0.0)
    args = SimpleNamespace(camera=f"replay:{video.frames_dir}", display="none",
                           buttons=f"script:{video.buttons_path}", state=str(tmp_path / "state"),
                           game="flip7-vengeance", players=["cat", "ann", "ben"], json=True, config=None)
    appliance = run.build(args, DeviceConfig())
    appliance.run()
    assert appliance.table.match.summary() == expected_summary(VIDEO_SCRIPT)
    assert appliance.stats.placements == 9


def test_menu_offers_only_games_with_a_model(tmp_path):
    from types import SimpleNamespace

    from device.run import games_with_a_model

    models = tmp_path / "models"
    models.mkdir()
    (models / "flip7.onnx").write_bytes(b"")
    (models / "flip7-vengeance.onnx").write_bytes(b"")
    games = games_with_a_model(SimpleNamespace(models_dir=str(models)))
    assert games == ("flip7", "flip7-vengeance", "flip7-vengeance-brutal")
    p = Player(tmp_path, "flip7", ("ann", "ben", "cat"))
    p.table.games = games
    p.press("back hold")
    items = p.table.screen(p.t).items
    p.press(*["next"] * items.index("Game: Flip 7"), "ok", "next", "next", "next")   # wraps after Brutal
    assert p.table.screen(p.t).option == "Flip 7"
